// swift-cast — Apache-2.0

extension DocumentSchema {
    /// The option-profile schema (`urn:swift-cast:profile:1`).
    static let profile = DocumentSchema(
        xsd: profileXSD,
        kind: "profile",
        rootElement: "castProfile",
        namespace: CastProfile.namespace
    )

    /// The style schema (`urn:swift-cast:style:1`).
    static let style = DocumentSchema(
        xsd: styleXSD,
        kind: "style",
        rootElement: "castViews",
        namespace: CastStyle.namespace
    )
}

// The XSDs are the files `profile.xsd` and `style.xsd` beside this one, compiled into the module by SwiftPM
// (`.embedInCode` in Package.swift) rather than shipped as a resource bundle: the product is one static binary,
// and a bundle directory next to it would not be installed.

/// The XML Schema every profile is validated against before it is mapped (`Schemas/profile.xsd`).
let profileXSD = String(decoding: PackageResources.profile_xsd, as: UTF8.self)

/// The XML Schema every style document is validated against before it is mapped (`Schemas/style.xsd`).
let styleXSD = String(decoding: PackageResources.style_xsd, as: UTF8.self)
