// swift-cast — Apache-2.0

/// A style with GCKUIStyle's cascade applied: what each view actually looks like.
///
/// For every attribute of a view, the value comes from the nearest of: the view itself, its parent, … ,
/// `castViews`, and finally the built-in default (``StyleAttributes/builtInDefault``).
///
/// ```swift
/// let style = try CastStyle(contentsOfFile: "Tools/profiles/styles/solarized.xml").resolved()
/// let mini = style.attributes(for: .miniController)
/// print(mini.glyph(.play), mini.progressFilledColor)
/// print(style.dump())                      // what `cast config show --style` prints
/// ```
public struct ResolvedStyle: Sendable, Hashable {
    /// One resolved attribute of one view and where its value came from: a row of ``ResolvedStyle/dump()``.
    public struct Entry: Sendable, Hashable {
        /// The view.
        public var view: StyleView
        /// The attribute's XML name, e.g. `bodyTextColor`, or `glyph.play` for glyphs.
        public var attribute: String
        /// The resolved value as a document would write it, e.g. `#eee8d5`, `bold 18pt`, `▶`.
        public var value: String
        /// The view whose declaration supplied the value; `nil` when it is the built-in default.
        public var declaringView: StyleView?
        /// The document and line of that declaration; `nil` for defaults and styles built in code.
        public var file: String?
        /// The line of that declaration.
        public var line: Int?

        /// Where the value came from: `default`, `castViews`, or `castViews (solarized.xml:3)`.
        public var origin: String {
            guard let declaringView else { return "default" }
            guard let file else { return declaringView.name }
            let name = file.split(separator: "/").last.map(String.init) ?? file
            return "\(declaringView.name) (\(name)\(line.map { ":\($0)" } ?? ""))"
        }
    }

    /// The declarations being resolved.
    public var style: CastStyle
    /// What applies where nothing is declared.
    public var defaults: StyleAttributes

    /// Resolves `style` over `defaults`.
    public init(_ style: CastStyle = .builtIn, defaults: StyleAttributes = .builtInDefault) {
        self.style = style
        self.defaults = defaults
    }

    /// No declarations: every view gets the built-in defaults.
    public static let builtIn = ResolvedStyle()

    /// The attributes `view` is drawn with.
    public func attributes(for view: StyleView) -> StyleAttributes {
        var attributes = defaults
        // Root first, so nearer views override farther ones.
        for level in (view.ancestors.reversed() + [view]) {
            if let declared = style.declarations[level] {
                attributes = attributes.applying(declared)
            }
        }
        return attributes
    }

    /// Every attribute and glyph of `view`, resolved, with where each value came from.
    public func entries(for view: StyleView) -> [Entry] {
        let resolved = attributes(for: view)
        let chain = [view] + view.ancestors
        var result: [Entry] = []
        for attribute in StyleAttributeName.allCases {
            let source = chain.first { style.declarations[$0]?[attribute] != nil }
            result.append(entry(view, attribute.rawValue, resolved[attribute].description, source))
        }
        for glyph in ButtonGlyph.allGlyphs {
            let source = chain.first { style.declarations[$0]?.glyphs[glyph] != nil }
            result.append(entry(view, "glyph.\(glyph.name)", resolved.glyph(glyph), source))
        }
        return result
    }

    /// ``entries(for:)`` for every view, in ``StyleView/allViews`` order.
    public var entries: [Entry] {
        StyleView.allViews.flatMap(entries(for:))
    }

    /// A printable listing of every view's resolved attributes and their origins, for `cast config show --style`:
    ///
    /// ```
    /// castViews.mediaControllers.miniController
    ///   backgroundColor        #073642     miniController (solarized.xml:14)
    ///   bodyTextColor          #839496     castViews (solarized.xml:3)
    ///   headingTextFont        bold        default
    /// ```
    public func dump() -> String {
        var lines: [String] = []
        if !style.paths.isEmpty {
            lines.append("# style: " + style.paths.joined(separator: " → "))
        }
        for view in StyleView.allViews {
            lines.append(view.path)
            let rows = entries(for: view)
            let nameWidth = rows.map(\.attribute.count).max() ?? 0
            let valueWidth = rows.map(\.value.count).max() ?? 0
            for row in rows {
                lines.append(
                    "  " + row.attribute.padded(to: nameWidth) + "  " + row.value.padded(to: valueWidth) + "  "
                        + row.origin
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    private func entry(_ view: StyleView, _ attribute: String, _ value: String, _ source: StyleView?) -> Entry {
        let location = source.flatMap { style.origins[$0]?[attribute] }
        return Entry(
            view: view,
            attribute: attribute,
            value: value,
            declaringView: source,
            file: location?.file,
            line: location?.line
        )
    }
}

extension String {
    /// The string followed by spaces up to `width` characters.
    func padded(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
