/// The glyphs and escape sequences the terminal controllers draw with, resolved for one terminal.
///
/// The defaults are plain Unicode glyphs and no color; `CastStyleConfig` styles produce richer values
/// (`ControllerStyle(resolved:terminal:)`), and `NO_COLOR` or non-TTY output keeps them plain.
public struct ControllerStyle: Sendable, Hashable {
    /// Button glyphs by name: `play`, `pause`, `stop`, `skipNext`, `skipPrevious`, `rewind`, `forward`,
    /// `muteOn`, `muteOff`, `subtitles`, `queue`, `live`, `ad`, `cast`.
    public var glyphs: [String: String]
    /// Escape sequence starting heading text (empty for none).
    public var heading: String
    /// Escape sequence starting body text.
    public var body: String
    /// Escape sequence starting captions (positions, hints).
    public var caption: String
    /// Escape sequence starting button glyphs.
    public var button: String
    /// Escape sequences for the filled and unfilled parts of progress bars.
    public var progressFilled: String
    /// Escape sequence for the unfilled part of progress bars.
    public var progressUnfilled: String
    /// Escape sequence for ad markers on progress bars.
    public var progressAd: String
    /// Resets attributes; empty when colors are off.
    public var reset: String

    /// Plain glyphs, no color.
    public static let plain = ControllerStyle(
        glyphs: [
            "play": "▶", "pause": "⏸", "stop": "⏹", "skipNext": "⏭", "skipPrevious": "⏮", "rewind": "⏪",
            "forward": "⏩", "muteOn": "🔇", "muteOff": "🔊", "subtitles": "CC", "queue": "☰", "live": "● LIVE",
            "ad": "AD", "cast": "⎚",
        ],
        heading: "",
        body: "",
        caption: "",
        button: "",
        progressFilled: "",
        progressUnfilled: "",
        progressAd: "",
        reset: ""
    )

    /// Creates a style.
    public init(
        glyphs: [String: String],
        heading: String,
        body: String,
        caption: String,
        button: String,
        progressFilled: String,
        progressUnfilled: String,
        progressAd: String,
        reset: String
    ) {
        self.glyphs = glyphs
        self.heading = heading
        self.body = body
        self.caption = caption
        self.button = button
        self.progressFilled = progressFilled
        self.progressUnfilled = progressUnfilled
        self.progressAd = progressAd
        self.reset = reset
    }

    /// The glyph called `name`, or `fallback`.
    public func glyph(_ name: String, fallback: String = "?") -> String {
        glyphs[name] ?? ControllerStyle.plain.glyphs[name] ?? fallback
    }

    /// `text` wrapped in `sequence` and a reset (unchanged when colors are off).
    public func paint(_ text: String, _ sequence: String) -> String {
        sequence.isEmpty ? text : sequence + text + reset
    }

    /// A progress bar `width` cells wide for `fraction` (0…1).
    public func progressBar(fraction: Double, width: Int, isAd: Bool = false) -> String {
        let cells = max(0, width)
        let filled = min(cells, max(0, Int((fraction.isFinite ? fraction : 0) * Double(cells))))
        let usesColor = !progressFilled.isEmpty
        let full = String(repeating: usesColor ? " " : "█", count: filled)
        let empty = String(repeating: usesColor ? " " : "░", count: cells - filled)
        return paint(full, isAd ? progressAd : progressFilled) + paint(empty, progressUnfilled)
    }
}
