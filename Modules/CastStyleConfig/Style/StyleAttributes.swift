// swift-cast — Apache-2.0

/// What a style document declares for one view; `nil` (or a missing glyph) means "inherit".
public struct StyleDeclarations: Sendable, Hashable {
    /// Behind the view's content.
    public var backgroundColor: CastColor?
    /// Icons (the Cast button, device icons).
    public var iconTintColor: CastColor?
    /// Titles.
    public var headingTextColor: CastColor?
    /// Ordinary text.
    public var bodyTextColor: CastColor?
    /// Secondary text: positions, hints, device status.
    public var captionTextColor: CastColor?
    /// Button glyphs and labels.
    public var buttonTextColor: CastColor?
    /// Titles' font.
    public var headingTextFont: FontStyle?
    /// Ordinary text's font.
    public var bodyTextFont: FontStyle?
    /// Secondary text's font.
    public var captionTextFont: FontStyle?
    /// Buttons' font.
    public var buttonTextFont: FontStyle?
    /// The played part of a progress bar.
    public var progressFilledColor: CastColor?
    /// The unplayed part of a progress bar.
    public var progressUnfilledColor: CastColor?
    /// The buffered-but-unplayed part of a progress bar.
    public var progressBufferedColor: CastColor?
    /// Ad-break markers on a progress bar (and the bar during an ad).
    public var progressAdMarkerColor: CastColor?
    /// Button glyphs set on this view.
    public var glyphs: [ButtonGlyph: String] = [:]

    /// Nothing declared.
    public init() {}

    /// Whether nothing is declared.
    public var isEmpty: Bool { self == StyleDeclarations() }
}

/// A view's resolved style: every attribute has a value, from the view, an ancestor or the built-in default.
///
/// Colors that are ``CastColor/transparent`` mean "the terminal's own color"; the built-in defaults use that for
/// text and background, so an unstyled terminal keeps its theme.
public struct StyleAttributes: Sendable, Hashable {
    /// Behind the view's content. Defaults to transparent.
    public var backgroundColor: CastColor
    /// Icons. Defaults to transparent.
    public var iconTintColor: CastColor
    /// Titles. Defaults to transparent.
    public var headingTextColor: CastColor
    /// Ordinary text. Defaults to transparent.
    public var bodyTextColor: CastColor
    /// Secondary text. Defaults to transparent.
    public var captionTextColor: CastColor
    /// Button glyphs and labels. Defaults to transparent.
    public var buttonTextColor: CastColor
    /// Titles' font. Defaults to `bold`.
    public var headingTextFont: FontStyle
    /// Ordinary text's font. Defaults to `normal`.
    public var bodyTextFont: FontStyle
    /// Secondary text's font. Defaults to `dim`.
    public var captionTextFont: FontStyle
    /// Buttons' font. Defaults to `bold`.
    public var buttonTextFont: FontStyle
    /// The played part of a progress bar. Defaults to `#4285f4`.
    public var progressFilledColor: CastColor
    /// The unplayed part of a progress bar. Defaults to `#5f6368`.
    public var progressUnfilledColor: CastColor
    /// The buffered part of a progress bar. Defaults to `#9aa0a6`.
    public var progressBufferedColor: CastColor
    /// Ad markers. Defaults to `#fbbc04`.
    public var progressAdMarkerColor: CastColor
    /// Every button glyph. Defaults: play `▶`, pause `⏸`, stop `⏹`, skipNext `⏭`, skipPrevious `⏮`, rewind `⏪`,
    /// forward `⏩`, muteOn `🔇`, muteOff `🔊`, subtitles `CC`, queue `☰`, live `● LIVE`, ad `AD`, cast `⎚`,
    /// repeatAll `🔁`, repeatOne `🔂`, repeatOff `⇥`, shuffle `🔀`, volumeUp `+`, volumeDown `−`.
    public var glyphs: [ButtonGlyph: String]

    /// The glyph for `button` (never empty: every glyph has a default).
    public func glyph(_ button: ButtonGlyph) -> String {
        glyphs[button] ?? StyleAttributes.builtInDefault.glyphs[button] ?? button.name
    }

    /// ``glyphs`` keyed by attribute name (`play`, `skipNext`, …), for renderers that look glyphs up by string.
    public var glyphsByName: [String: String] {
        Dictionary(uniqueKeysWithValues: glyphs.map { ($0.key.name, $0.value) })
    }

    /// What every view gets when no document says otherwise.
    public static let builtInDefault = StyleAttributes(
        backgroundColor: .transparent,
        iconTintColor: .transparent,
        headingTextColor: .transparent,
        bodyTextColor: .transparent,
        captionTextColor: .transparent,
        buttonTextColor: .transparent,
        headingTextFont: FontStyle(isBold: true),
        bodyTextFont: .regular,
        captionTextFont: FontStyle(isDim: true),
        buttonTextFont: FontStyle(isBold: true),
        progressFilledColor: CastColor(red: 0x42, green: 0x85, blue: 0xF4),
        progressUnfilledColor: CastColor(red: 0x5F, green: 0x63, blue: 0x68),
        progressBufferedColor: CastColor(red: 0x9A, green: 0xA0, blue: 0xA6),
        progressAdMarkerColor: CastColor(red: 0xFB, green: 0xBC, blue: 0x04),
        glyphs: [
            .play: "▶", .pause: "⏸", .stop: "⏹", .skipNext: "⏭", .skipPrevious: "⏮", .rewind: "⏪", .forward: "⏩",
            .muteOn: "🔇", .muteOff: "🔊", .subtitles: "CC", .queue: "☰", .live: "● LIVE", .ad: "AD", .cast: "⎚",
            .repeatAll: "🔁", .repeatOne: "🔂", .repeatOff: "⇥", .shuffle: "🔀", .volumeUp: "+", .volumeDown: "−",
        ]
    )

    /// Creates resolved attributes.
    public init(
        backgroundColor: CastColor,
        iconTintColor: CastColor,
        headingTextColor: CastColor,
        bodyTextColor: CastColor,
        captionTextColor: CastColor,
        buttonTextColor: CastColor,
        headingTextFont: FontStyle,
        bodyTextFont: FontStyle,
        captionTextFont: FontStyle,
        buttonTextFont: FontStyle,
        progressFilledColor: CastColor,
        progressUnfilledColor: CastColor,
        progressBufferedColor: CastColor,
        progressAdMarkerColor: CastColor,
        glyphs: [ButtonGlyph: String]
    ) {
        self.backgroundColor = backgroundColor
        self.iconTintColor = iconTintColor
        self.headingTextColor = headingTextColor
        self.bodyTextColor = bodyTextColor
        self.captionTextColor = captionTextColor
        self.buttonTextColor = buttonTextColor
        self.headingTextFont = headingTextFont
        self.bodyTextFont = bodyTextFont
        self.captionTextFont = captionTextFont
        self.buttonTextFont = buttonTextFont
        self.progressFilledColor = progressFilledColor
        self.progressUnfilledColor = progressUnfilledColor
        self.progressBufferedColor = progressBufferedColor
        self.progressAdMarkerColor = progressAdMarkerColor
        self.glyphs = glyphs
    }

    /// These attributes with everything `declarations` sets replaced.
    func applying(_ declarations: StyleDeclarations) -> StyleAttributes {
        var result = self
        for attribute in StyleAttributeName.allCases {
            if let value = declarations[attribute] {
                result[attribute] = value
            }
        }
        result.glyphs.merge(declarations.glyphs) { _, declared in declared }
        return result
    }
}

/// A color or font value of a style attribute, for code that handles attributes generically.
enum StyleValue: Sendable, Hashable, CustomStringConvertible {
    case color(CastColor)
    case font(FontStyle)

    var description: String {
        switch self {
        case .color(let color): color == .transparent ? "transparent" : color.description
        case .font(let font): font.description
        }
    }
}

/// The color and font attributes every view has, by their XML names.
enum StyleAttributeName: String, CaseIterable, Sendable {
    case backgroundColor, iconTintColor, headingTextColor, bodyTextColor, captionTextColor, buttonTextColor
    case headingTextFont, bodyTextFont, captionTextFont, buttonTextFont
    case progressFilledColor, progressUnfilledColor, progressBufferedColor, progressAdMarkerColor

    /// Whether the attribute holds a font (else a color).
    var isFont: Bool { rawValue.hasSuffix("Font") }
}

extension StyleDeclarations {
    subscript(attribute: StyleAttributeName) -> StyleValue? {
        get {
            switch attribute {
            case .backgroundColor: backgroundColor.map(StyleValue.color)
            case .iconTintColor: iconTintColor.map(StyleValue.color)
            case .headingTextColor: headingTextColor.map(StyleValue.color)
            case .bodyTextColor: bodyTextColor.map(StyleValue.color)
            case .captionTextColor: captionTextColor.map(StyleValue.color)
            case .buttonTextColor: buttonTextColor.map(StyleValue.color)
            case .headingTextFont: headingTextFont.map(StyleValue.font)
            case .bodyTextFont: bodyTextFont.map(StyleValue.font)
            case .captionTextFont: captionTextFont.map(StyleValue.font)
            case .buttonTextFont: buttonTextFont.map(StyleValue.font)
            case .progressFilledColor: progressFilledColor.map(StyleValue.color)
            case .progressUnfilledColor: progressUnfilledColor.map(StyleValue.color)
            case .progressBufferedColor: progressBufferedColor.map(StyleValue.color)
            case .progressAdMarkerColor: progressAdMarkerColor.map(StyleValue.color)
            }
        }
        set {
            let color: CastColor? = if case .color(let value) = newValue { value } else { nil }
            let font: FontStyle? = if case .font(let value) = newValue { value } else { nil }
            switch attribute {
            case .backgroundColor: backgroundColor = color
            case .iconTintColor: iconTintColor = color
            case .headingTextColor: headingTextColor = color
            case .bodyTextColor: bodyTextColor = color
            case .captionTextColor: captionTextColor = color
            case .buttonTextColor: buttonTextColor = color
            case .headingTextFont: headingTextFont = font
            case .bodyTextFont: bodyTextFont = font
            case .captionTextFont: captionTextFont = font
            case .buttonTextFont: buttonTextFont = font
            case .progressFilledColor: progressFilledColor = color
            case .progressUnfilledColor: progressUnfilledColor = color
            case .progressBufferedColor: progressBufferedColor = color
            case .progressAdMarkerColor: progressAdMarkerColor = color
            }
        }
    }
}

extension StyleAttributes {
    subscript(attribute: StyleAttributeName) -> StyleValue {
        get {
            switch attribute {
            case .backgroundColor: .color(backgroundColor)
            case .iconTintColor: .color(iconTintColor)
            case .headingTextColor: .color(headingTextColor)
            case .bodyTextColor: .color(bodyTextColor)
            case .captionTextColor: .color(captionTextColor)
            case .buttonTextColor: .color(buttonTextColor)
            case .headingTextFont: .font(headingTextFont)
            case .bodyTextFont: .font(bodyTextFont)
            case .captionTextFont: .font(captionTextFont)
            case .buttonTextFont: .font(buttonTextFont)
            case .progressFilledColor: .color(progressFilledColor)
            case .progressUnfilledColor: .color(progressUnfilledColor)
            case .progressBufferedColor: .color(progressBufferedColor)
            case .progressAdMarkerColor: .color(progressAdMarkerColor)
            }
        }
        set {
            switch (attribute, newValue) {
            case (.backgroundColor, .color(let value)): backgroundColor = value
            case (.iconTintColor, .color(let value)): iconTintColor = value
            case (.headingTextColor, .color(let value)): headingTextColor = value
            case (.bodyTextColor, .color(let value)): bodyTextColor = value
            case (.captionTextColor, .color(let value)): captionTextColor = value
            case (.buttonTextColor, .color(let value)): buttonTextColor = value
            case (.headingTextFont, .font(let value)): headingTextFont = value
            case (.bodyTextFont, .font(let value)): bodyTextFont = value
            case (.captionTextFont, .font(let value)): captionTextFont = value
            case (.buttonTextFont, .font(let value)): buttonTextFont = value
            case (.progressFilledColor, .color(let value)): progressFilledColor = value
            case (.progressUnfilledColor, .color(let value)): progressUnfilledColor = value
            case (.progressBufferedColor, .color(let value)): progressBufferedColor = value
            case (.progressAdMarkerColor, .color(let value)): progressAdMarkerColor = value
            default: preconditionFailure("\(attribute) cannot hold \(newValue)")
            }
        }
    }
}
