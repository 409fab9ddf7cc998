// swift-cast — Apache-2.0

/// A text "font" in a style: terminal attributes, plus a family and size kept for renderers that can use them.
///
/// Written as space-separated words in any order, CSS-shorthand style:
///
/// - `bold`, `italic`, `underline`, `dim`: terminal attributes (SGR 1, 3, 4, 2);
/// - `normal` (or `regular`): none of them, which is how a view turns off what an ancestor set;
/// - a size: a number with an optional unit, `18`, `18pt`, `1.2em`, `14px` — kept as written;
/// - anything else is the family; multi-word families are quoted, `'Roboto Condensed'` or `"Noto Sans"`.
///
/// A font on a view replaces the font of the same role on its ancestors as a whole, as `UIFont` values do in
/// GCKUIStyle: `bold` on the mini controller is not combined with `italic` from `castViews`.
public struct FontStyle: Sendable, Hashable, CustomStringConvertible {
    /// SGR 1.
    public var isBold = false
    /// SGR 3.
    public var isItalic = false
    /// SGR 4.
    public var isUnderlined = false
    /// SGR 2 (faint).
    public var isDim = false
    /// The font family as written, without quotes; `nil` when none was given.
    public var family: String?
    /// The size as written, e.g. `18pt`; `nil` when none was given.
    public var size: String?

    /// No attributes, no family, no size.
    public init(
        isBold: Bool = false,
        isItalic: Bool = false,
        isUnderlined: Bool = false,
        isDim: Bool = false,
        family: String? = nil,
        size: String? = nil
    ) {
        self.isBold = isBold
        self.isItalic = isItalic
        self.isUnderlined = isUnderlined
        self.isDim = isDim
        self.family = family
        self.size = size
    }

    /// Plain text.
    public static let regular = FontStyle()

    /// Parses the shorthand above; `nil` for an empty string or an unterminated quote.
    public init?(parsing text: String) {
        var words: [String] = []
        var current = ""
        var quote: Character? = nil
        var quoted = false
        for character in text {
            if let open = quote {
                if character == open {
                    quote = nil
                } else {
                    current.append(character)
                }
            } else if character == "'" || character == "\"" {
                quote = character
                quoted = true
            } else if character.isWhitespace {
                if !current.isEmpty || quoted {
                    words.append(quoted ? "\u{0}" + current : current)
                }
                current = ""
                quoted = false
            } else {
                current.append(character)
            }
        }
        guard quote == nil else { return nil }
        if !current.isEmpty || quoted {
            words.append(quoted ? "\u{0}" + current : current)
        }
        guard !words.isEmpty else { return nil }
        var familyWords: [String] = []
        for word in words {
            if word.hasPrefix("\u{0}") {
                familyWords.append(String(word.dropFirst()))
                continue
            }
            switch word.lowercased() {
            case "bold": isBold = true
            case "italic": isItalic = true
            case "underline", "underlined": isUnderlined = true
            case "dim", "faint": isDim = true
            case "normal", "regular": break
            default:
                if Self.isSize(word) {
                    size = word
                } else {
                    familyWords.append(word)
                }
            }
        }
        family = familyWords.isEmpty ? nil : familyWords.joined(separator: " ")
    }

    /// The shorthand that parses back to this value, e.g. `bold underline 18pt 'Roboto Condensed'`, or `normal`.
    public var description: String {
        var words: [String] = []
        if isBold { words.append("bold") }
        if isItalic { words.append("italic") }
        if isUnderlined { words.append("underline") }
        if isDim { words.append("dim") }
        if let size { words.append(size) }
        if let family { words.append(family.contains(" ") ? "'\(family)'" : family) }
        return words.isEmpty ? "normal" : words.joined(separator: " ")
    }

    /// Whether `word` is a number with an optional alphabetic or `%` unit: `18`, `18pt`, `1.5em`, `120%`.
    private static func isSize(_ word: String) -> Bool {
        let number = word.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unit = word.dropFirst(number.count)
        guard let first = number.first, first.isNumber, number.filter({ $0 == "." }).count <= 1 else {
            return false
        }
        return unit.allSatisfy { $0.isASCII && $0.isLetter } || unit == "%"
    }
}
