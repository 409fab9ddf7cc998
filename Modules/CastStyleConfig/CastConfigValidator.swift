// swift-cast — Apache-2.0

/// The kind of a configuration document, told apart by its root element.
public struct CastConfigDocumentKind: Sendable, Hashable, CustomStringConvertible {
    private enum Base: String, Hashable, Sendable {
        case profile, style
    }

    private let base: Base

    private init(_ base: Base) {
        self.base = base
    }

    /// An option profile: `<castProfile xmlns="urn:swift-cast:profile:1">` (see ``CastProfile``).
    public static let profile = CastConfigDocumentKind(.profile)
    /// A style: `<castViews xmlns="urn:swift-cast:style:1">` (see ``CastStyle``).
    public static let style = CastConfigDocumentKind(.style)

    /// `profile` or `style`.
    public var description: String { base.rawValue }
}

/// `cast config validate FILE`: checks a profile or style document completely, whichever it is.
public enum CastConfigValidator {
    /// Validates the document at `path` as what its root element says it is: a profile with everything it extends
    /// and the style it names, every value checked; a style with everything it extends.
    ///
    /// - Returns: The document's kind.
    /// - Throws: ``CastConfigError`` for the first problem, with file, line and column; unknown root elements fail
    ///   with ``CastConfigError/Code/wrongDocumentKind``.
    @discardableResult
    public static func validate(
        contentsOfFile path: String,
        limits: DocumentLimits = DocumentLimits()
    ) throws(CastConfigError) -> CastConfigDocumentKind {
        let bytes = try DocumentLoader.read(path, limits: limits)
        let (schema, _) = try DocumentLoader.parseAnyKind(bytes, file: path, limits: limits)
        if schema.kind == DocumentSchema.profile.kind {
            _ = try CastProfile(contentsOfFile: path, limits: limits).resolved(limits: limits)
            return .profile
        }
        _ = try CastStyle(contentsOfFile: path, limits: limits)
        return .style
    }
}
