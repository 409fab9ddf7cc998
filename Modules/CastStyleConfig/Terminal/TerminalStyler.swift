// swift-cast — Apache-2.0

/// Turns colors and font attributes into SGR escape sequences for one ``TerminalColorMode``.
///
/// ```swift
/// let styler = TerminalStyler(mode: .detect(environment: ProcessInfo.processInfo.environment))
/// let mini = style.attributes(for: .miniController)
/// print(styler.paint("Big Buck Bunny", foreground: mini.headingTextColor, font: mini.headingTextFont))
/// ```
///
/// Colors are matched to the nearest palette entry in ``TerminalColorMode/ansi256`` and
/// ``TerminalColorMode/ansi16`` modes (by distance in RGB). A transparent color (``CastColor/isVisible`` false)
/// writes nothing, so the terminal's own color shows. In ``TerminalColorMode/none`` every function returns empty
/// strings and ``paint(_:foreground:background:font:)`` returns the text unchanged.
public struct TerminalStyler: Sendable, Hashable {
    /// The terminal's capability.
    public var mode: TerminalColorMode

    /// A styler for `mode`.
    public init(mode: TerminalColorMode) {
        self.mode = mode
    }

    /// `ESC[0m`, or empty in ``TerminalColorMode/none``.
    public var reset: String {
        mode == .none ? "" : "\u{1B}[0m"
    }

    /// The sequence that starts text in these colors and attributes; empty when there is nothing to set.
    ///
    /// - Parameters:
    ///   - foreground: The text color; `nil` or transparent leaves it alone.
    ///   - background: The background color; `nil` or transparent leaves it alone.
    ///   - font: Bold, italic, underline and dim become SGR 1, 3, 4 and 2; family and size are ignored.
    public func escape(foreground: CastColor? = nil, background: CastColor? = nil, font: FontStyle = .regular) -> String
    {
        guard mode != .none else { return "" }
        var parameters: [String] = []
        if font.isBold { parameters.append("1") }
        if font.isDim { parameters.append("2") }
        if font.isItalic { parameters.append("3") }
        if font.isUnderlined { parameters.append("4") }
        if let foreground, foreground.isVisible {
            parameters.append(colorParameters(foreground, isBackground: false))
        }
        if let background, background.isVisible {
            parameters.append(colorParameters(background, isBackground: true))
        }
        return parameters.isEmpty ? "" : "\u{1B}[" + parameters.joined(separator: ";") + "m"
    }

    /// `text` between ``escape(foreground:background:font:)`` and ``reset``; unchanged when the escape is empty.
    public func paint(
        _ text: String,
        foreground: CastColor? = nil,
        background: CastColor? = nil,
        font: FontStyle = .regular
    ) -> String {
        let start = escape(foreground: foreground, background: background, font: font)
        return start.isEmpty ? text : start + text + reset
    }

    /// The SGR parameters selecting `color` in this mode, e.g. `38;2;255;0;0`, `38;5;196` or `91`.
    public func colorParameters(_ color: CastColor, isBackground: Bool) -> String {
        if mode == .trueColor {
            return "\(isBackground ? 48 : 38);2;\(color.red);\(color.green);\(color.blue)"
        }
        if mode == .ansi256 {
            return "\(isBackground ? 48 : 38);5;\(Self.paletteIndex256(for: color))"
        }
        let index = Self.paletteIndex16(for: color)
        let base = index < 8 ? (isBackground ? 40 : 30) : (isBackground ? 100 : 90)
        return String(base + index % 8)
    }

    /// The nearest xterm 256-color index: the 6×6×6 cube (16–231) or the gray ramp (232–255), whichever is closer.
    public static func paletteIndex256(for color: CastColor) -> Int {
        let levels = [0, 95, 135, 175, 215, 255]
        func nearestLevel(_ value: UInt8) -> Int {
            levels.indices.min { abs(levels[$0] - Int(value)) < abs(levels[$1] - Int(value)) } ?? 0
        }
        let (r, g, b) = (nearestLevel(color.red), nearestLevel(color.green), nearestLevel(color.blue))
        let cubeIndex = 16 + 36 * r + 6 * g + b
        let cubeDistance = distance(color, (levels[r], levels[g], levels[b]))
        let average = (Int(color.red) + Int(color.green) + Int(color.blue)) / 3
        let grayStep = min(23, max(0, (average - 8 + 5) / 10))
        let grayLevel = 8 + 10 * grayStep
        let grayDistance = distance(color, (grayLevel, grayLevel, grayLevel))
        return grayDistance < cubeDistance ? 232 + grayStep : cubeIndex
    }

    /// The nearest of the 16 standard colors (xterm's default palette), 0–15.
    public static func paletteIndex16(for color: CastColor) -> Int {
        palette16.indices.min { distance(color, palette16[$0]) < distance(color, palette16[$1]) } ?? 7
    }

    /// xterm's default values for the 16 standard colors.
    private static let palette16: [(Int, Int, Int)] = [
        (0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205),
        (229, 229, 229), (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255), (255, 0, 255),
        (0, 255, 255), (255, 255, 255),
    ]

    private static func distance(_ color: CastColor, _ other: (Int, Int, Int)) -> Int {
        let dr = Int(color.red) - other.0
        let dg = Int(color.green) - other.1
        let db = Int(color.blue) - other.2
        return dr * dr + dg * dg + db * db
    }
}
