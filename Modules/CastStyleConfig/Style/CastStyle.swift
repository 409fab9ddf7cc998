// swift-cast — Apache-2.0

/// A style document (the GCKUIStyle replacement): colors, fonts and glyphs declared per view.
///
/// ## The document
///
/// ```xml
/// <castViews xmlns="urn:swift-cast:style:1" bodyTextColor="#eee8d5" headingTextFont="bold">
///   <glyphs play="▶" pause="⏸"/>
///   <deviceControllers>
///     <castDialog/> <connectionController/> <noDevicesScreen/>
///   </deviceControllers>
///   <mediaControllers progressFilledColor="#268bd2">
///     <miniController backgroundColor="#073642"/>
///     <expandedController/> <queueView/>
///   </mediaControllers>
///   <introductoryOverlay/>
/// </castViews>
/// ```
///
/// Every view element (see ``StyleView``) is optional and may carry any of these attributes, and one `<glyphs>`
/// child:
///
/// | Attribute | Value | Built-in default |
/// |---|---|---|
/// | `backgroundColor`, `iconTintColor` | color | transparent (the terminal's own) |
/// | `headingTextColor`, `bodyTextColor`, `captionTextColor`, `buttonTextColor` | color | transparent |
/// | `headingTextFont` | font | `bold` |
/// | `bodyTextFont` | font | `normal` |
/// | `captionTextFont` | font | `dim` |
/// | `buttonTextFont` | font | `bold` |
/// | `progressFilledColor` | color | `#4285f4` |
/// | `progressUnfilledColor` | color | `#5f6368` |
/// | `progressBufferedColor` | color | `#9aa0a6` |
/// | `progressAdMarkerColor` | color | `#fbbc04` |
///
/// - Colors: `#RGB`, `#RRGGBB`, `#RRGGBBAA`, a CSS color name or `transparent` (see ``CastColor``).
/// - Fonts: words among `bold`, `italic`, `underline`, `dim`, `normal`, a size (`18pt`) and a family
///   (`'Roboto Condensed'`) (see ``FontStyle``).
/// - `<glyphs>` attributes, 1–16 characters each: `play`, `pause`, `stop`, `skipNext`, `skipPrevious`, `rewind`,
///   `forward`, `muteOn`, `muteOff`, `subtitles`, `queue`, `live`, `ad`, `cast`, `repeatAll`, `repeatOne`,
///   `repeatOff`, `shuffle`, `volumeUp`, `volumeDown` (defaults in ``StyleAttributes/glyphs``).
/// - The root may say `extends="base.xml"` (relative to this document): the base's declarations apply first and
///   this document's override them, view by view and attribute by attribute.
///
/// Resolution (``ResolvedStyle``) cascades as GCKUIStyle does: an attribute set on a view wins over the same
/// attribute on any ancestor, which wins over the built-in default.
public struct CastStyle: Sendable, Hashable {
    /// The namespace of style documents.
    public static let namespace = "urn:swift-cast:style:1"

    /// What the documents declare, per view; views that declare nothing may be absent.
    public var declarations: [StyleView: StyleDeclarations]
    /// The documents this style was read from, base-most first; empty for styles built in code.
    public var paths: [String]
    /// Where each declaration was made: view → attribute name (or `glyph.NAME`) → location.
    var origins: [StyleView: [String: DocumentLocation]] = [:]

    /// A style built in code (or, with no arguments, one that declares nothing: the built-in look).
    public init(declarations: [StyleView: StyleDeclarations] = [:]) {
        self.declarations = declarations
        self.paths = []
    }

    /// Declares nothing; resolves to the built-in defaults.
    public static let builtIn = CastStyle()

    /// Loads the style document at `path` and the documents it extends, validating each against the style schema.
    ///
    /// - Throws: ``CastConfigError`` naming the file, line and column of the first problem; never falls back.
    public init(contentsOfFile path: String, limits: DocumentLimits = DocumentLimits()) throws(CastConfigError) {
        let chain = try DocumentLoader.loadChain(path: path, as: .style, limits: limits)
        try self.init(chain: chain)
    }

    /// Parses a style document held in memory; `file` names it in errors and anchors a relative `extends`.
    public init(xml: String, file: String = "style.xml", limits: DocumentLimits = DocumentLimits())
        throws(CastConfigError)
    {
        let root = try DocumentLoader.parse(Array(xml.utf8), file: file, as: .style, limits: limits)
        let chain = try DocumentLoader.followExtends(
            from: DocumentLoader.Document(path: file, root: root),
            as: .style,
            limits: limits
        )
        try self.init(chain: chain)
    }

    private init(chain: [DocumentLoader.Document]) throws(CastConfigError) {
        self.init()
        paths = chain.map(\.path)
        for document in chain {
            try merge(document.root, as: .castViews)
        }
    }

    /// The cascade over these declarations.
    public func resolved() -> ResolvedStyle {
        ResolvedStyle(self)
    }

    /// Adds what `element` (the element of `view`) declares, overriding earlier declarations.
    private mutating func merge(_ element: ConfigElement, as view: StyleView) throws(CastConfigError) {
        var declared = declarations[view] ?? StyleDeclarations()
        for attribute in element.attributes {
            guard let name = StyleAttributeName(rawValue: attribute.name) else { continue }  // `extends`
            declared[name] = try Self.value(of: attribute, as: name, on: element.name)
            origins[view, default: [:]][name.rawValue] = attribute.location
        }
        for child in element.children where child.name == "glyphs" {
            for attribute in child.attributes {
                guard let glyph = ButtonGlyph.named(attribute.name) else { continue }
                declared.glyphs[glyph] = attribute.value
                origins[view, default: [:]]["glyph.\(glyph.name)"] = attribute.location
            }
        }
        declarations[view] = declared
        for child in element.children {
            if let childView = StyleView.named(child.name) {
                try merge(child, as: childView)
            }
        }
    }

    private static func value(
        of attribute: ConfigElement.Attribute,
        as name: StyleAttributeName,
        on element: String
    ) throws(CastConfigError) -> StyleValue {
        if name.isFont {
            guard let font = FontStyle(parsing: attribute.value) else {
                throw CastConfigError(
                    .invalidValue,
                    "element '\(element)': attribute '\(attribute.name)' must be a font like \"bold 18pt 'Noto Sans'\" "
                        + "(found '\(attribute.value)': an unterminated quote or nothing at all)",
                    at: attribute.location
                )
            }
            return .font(font)
        }
        guard let color = CastColor(parsing: attribute.value) else {
            var message =
                "element '\(element)': attribute '\(attribute.name)' must be a color: #RGB, #RRGGBB, "
                + "#RRGGBBAA or a CSS color name; '\(attribute.value)' is not a CSS color name"
            if let suggestion = CastColor.closestName(to: attribute.value) {
                message += " (did you mean '\(suggestion)'?)"
            }
            throw CastConfigError(.invalidValue, message, at: attribute.location)
        }
        return .color(color)
    }
}

extension CastColor {
    /// The CSS color name nearest to `text` by edit distance, if one is within two edits.
    static func closestName(to text: String) -> String? {
        let target = Array(text.lowercased())
        var best: (name: String, distance: Int)? = nil
        for name in namedColors.keys.sorted() {
            let distance = editDistance(Array(name), target)
            if distance <= 2, distance < (best?.distance ?? .max) {
                best = (name, distance)
            }
        }
        return best?.name
    }

    private static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, left) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, right) in b.enumerated() {
                current[j + 1] = Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (left == right ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
