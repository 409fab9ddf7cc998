/// A subtitle file format the media server accepts.
///
/// Cast receivers show WebVTT text tracks only, so every other format is converted before it is served
/// (``SubtitleConverter``).
public enum SubtitleFormat: String, Sendable, CaseIterable {
    /// WebVTT (`.vtt`): served as read, once decoded to UTF-8.
    case webVTT
    /// SubRip (`.srt`), the most common download.
    case subRip
    /// SubStation Alpha (`.ssa`) and its successor Advanced SubStation Alpha (`.ass`), common in anime releases.
    case subStationAlpha

    /// The format a file name extension stands for: `vtt`, `srt`, `ass` or `ssa`, in any case, with or without
    /// the leading dot; `nil` for anything else.
    public init?(fileExtension: String) {
        var name = fileExtension.lowercased()
        if name.hasPrefix(".") { name.removeFirst() }
        switch name {
        case "vtt": self = .webVTT
        case "srt": self = .subRip
        case "ass", "ssa": self = .subStationAlpha
        default: return nil
        }
    }

    /// The name used in messages.
    var displayName: String {
        switch self {
        case .webVTT: "WebVTT"
        case .subRip: "SubRip"
        case .subStationAlpha: "SubStation Alpha"
        }
    }
}

/// A part of a subtitle file that was left out of the conversion, and why.
///
/// One broken cue should not cost the viewer the whole film, so converters skip it and say where it was: the line
/// number lets the user fix the file in any text editor.
public struct SubtitleProblem: Sendable, Hashable, CustomStringConvertible {
    /// The 1-based line of the source file the problem was found on, as editors count lines.
    public var line: Int
    /// What is wrong, in words for a log message.
    public var reason: String

    /// Creates a problem report.
    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }

    /// `line N: reason`, as `cast play` reports it.
    public var description: String { "line \(line): \(reason)" }
}

/// Subtitles converted to WebVTT, ready to serve as `text/vtt; charset=utf-8`.
public struct ConvertedSubtitles: Sendable, Hashable {
    /// The WebVTT document.
    public var webVTT: String
    /// How many cues the document has.
    public var cueCount: Int
    /// What was skipped: broken cues and lines, in source order. Empty for WebVTT input, which is passed through.
    public var problems: [SubtitleProblem]

    /// Creates a conversion result.
    public init(webVTT: String, cueCount: Int, problems: [SubtitleProblem]) {
        self.webVTT = webVTT
        self.cueCount = cueCount
        self.problems = problems
    }
}

/// Converts subtitle files to WebVTT, the only text track format Cast receivers show.
public enum SubtitleConverter {
    /// Converts the bytes of a subtitle file to a WebVTT document.
    ///
    /// The encoding is detected (UTF-8, UTF-16 with or without byte order mark, Windows-1252). Cues that cannot be
    /// read are skipped and listed in ``ConvertedSubtitles/problems``, so one bad timing line does not lose a film's
    /// subtitles. WebVTT input is passed through once its header is checked. A file that is empty (or holds only
    /// whitespace, or only a WebVTT header) converts to a WebVTT document without cues.
    ///
    /// This function takes any bytes: it is the entry point for fuzzing the subtitle parsers.
    ///
    /// - Throws: ``CastMediaServerError/Code/invalidSubtitles`` when the bytes are binary data, when WebVTT input
    ///   lacks its `WEBVTT` header, when a SubStation Alpha file has no `[Events]` section, or when cues were
    ///   found but none of them could be read.
    public static func webVTT(
        from bytes: [UInt8],
        format: SubtitleFormat
    ) throws(CastMediaServerError) -> ConvertedSubtitles {
        let text = SubtitleText(decoding: bytes).string
        let name = format.displayName
        if text.unicodeScalars.contains("\0") {
            throw CastMediaServerError(.invalidSubtitles, "this is not a \(name) file: it holds binary data")
        }
        let parsed: ParsedSubtitles
        switch format {
        case .webVTT:
            return try passingThrough(text)
        case .subRip:
            parsed = SubRip.parse(text)
        case .subStationAlpha:
            parsed = SubStationAlpha.parse(text)
        }
        if !parsed.isRecognized && !SubtitleLine.isBlank(text) {
            throw CastMediaServerError(.invalidSubtitles, "this is not a \(name) file: it has no [Events] section")
        }
        if parsed.cues.isEmpty, let first = parsed.problems.first {
            let count = parsed.problems.count
            throw CastMediaServerError(
                .invalidSubtitles,
                "no cue of this \(name) file could be read (\(count) skipped; \(first))"
            )
        }
        return ConvertedSubtitles(
            webVTT: document(parsed.cues),
            cueCount: parsed.cues.count,
            problems: parsed.problems
        )
    }

    /// WebVTT input, decoded and with `\n` line endings, checked for its header.
    private static func passingThrough(_ text: String) throws(CastMediaServerError) -> ConvertedSubtitles {
        let header = "WEBVTT"
        // The header may be followed by a space or tab and a title, or end its line.
        let afterHeader = text.dropFirst(header.count).first
        guard text.hasPrefix(header), [nil, " ", "\t", "\n"].contains(afterHeader) else {
            throw CastMediaServerError(.invalidSubtitles, "this is not a WebVTT file: it does not start with WEBVTT")
        }
        // "-->" can only appear on timing lines in a valid document: cue text and comments may not contain it.
        let cueCount = text.split(separator: "\n").count { $0.contains("-->") }
        return ConvertedSubtitles(webVTT: text, cueCount: cueCount, problems: [])
    }

    /// The WebVTT document for converted cues, in order of start time (cues starting together keep their order).
    static func document(_ cues: [SubtitleCue]) -> String {
        let ordered = cues.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }
        var document = "WEBVTT\n\n"
        for (_, cue) in ordered {
            document += SubtitleTimestamp.webVTT(cue.start) + " --> " + SubtitleTimestamp.webVTT(cue.end) + "\n"
            document += cue.text + "\n\n"
        }
        return document
    }
}

// MARK: - Shared by the converters

/// A cue on its way to WebVTT.
struct SubtitleCue: Sendable, Hashable {
    /// When it appears, in milliseconds from the start of the media.
    var start: Int
    /// When it goes, in milliseconds; after ``start``.
    var end: Int
    /// The text in WebVTT cue text syntax: escaped, tags balanced, no blank line, no `-->`.
    var text: String
}

/// What a converter read from a file: the cues it could read and the problems it skipped.
struct ParsedSubtitles: Sendable, Hashable {
    var cues: [SubtitleCue] = []
    var problems: [SubtitleProblem] = []
    /// Whether the text had the structure of the format at all (for SubStation Alpha: an `[Events]` section).
    var isRecognized = true

    mutating func report(line: Int, _ reason: String) {
        problems.append(SubtitleProblem(line: line, reason: reason))
    }

    /// Adds a cue read on `line`, or reports it when it ends before it starts or lasts no time. A cue whose text
    /// is empty (markup only) is dropped without a report: there is nothing to show, and nothing wrong with it.
    mutating func add(start: Int, end: Int, text: String, line: Int) {
        guard end > start else {
            let times = "starts at \(SubtitleTimestamp.webVTT(start)), ends at \(SubtitleTimestamp.webVTT(end))"
            report(
                line: line,
                end < start ? "the cue ends before it starts (\(times))" : "the cue lasts no time (\(times))"
            )
            return
        }
        guard !text.isEmpty else { return }
        cues.append(SubtitleCue(start: start, end: end, text: text))
    }

    /// A source line for a problem report: quoted, shortened when long.
    static func quoted(_ line: Substring) -> String {
        let trimmed = SubtitleLine.trimmed(line)
        let shown = trimmed.count > 48 ? String(trimmed.prefix(47)) + "…" : String(trimmed)
        return "“\(shown)”"
    }
}

/// Timestamps as subtitle formats write them.
enum SubtitleTimestamp {
    /// Milliseconds from `[H…:]M:S[(,|.)f]`: hours have 1 to 7 digits and may be left out, minutes and seconds 1 or
    /// 2 digits below 60, the fraction 1 to 3 digits (`5` is 500 ms, `05` is 50 ms). SubRip uses `,` before the
    /// fraction, SubStation Alpha `.` and two digits; both are accepted in both.
    static func milliseconds(_ text: Substring) -> Int? {
        let fields = text.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard fields.count == 2 || fields.count == 3, let last = fields.last else { return nil }
        let secondsAndFraction = last.split(maxSplits: 1, omittingEmptySubsequences: false) {
            $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: ".")
        }
        guard let hours = fields.count == 3 ? number(fields[0], digits: 1...7) : 0,
            let minutes = number(fields[fields.count - 2], digits: 1...2), minutes < 60,
            let seconds = number(secondsAndFraction[0], digits: 1...2), seconds < 60
        else { return nil }
        var fraction = 0
        if secondsAndFraction.count == 2 {
            let digits = secondsAndFraction[1]
            guard let value = number(digits, digits: 1...3) else { return nil }
            fraction = value * [100, 10, 1][digits.count - 1]
        }
        return ((hours * 60 + minutes) * 60 + seconds) * 1000 + fraction
    }

    /// `HH:MM:SS.mmm`, hours with more digits past 99.
    static func webVTT(_ milliseconds: Int) -> String {
        let time = max(0, milliseconds)
        let hours = time / 3_600_000
        return padded(hours, 2) + ":" + padded(time / 60_000 % 60, 2) + ":" + padded(time / 1000 % 60, 2) + "."
            + padded(time % 1000, 3)
    }

    private static func number(_ digits: some Collection<UInt8>, digits range: ClosedRange<Int>) -> Int? {
        guard range.contains(digits.count) else { return nil }
        var value = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// Builds WebVTT cue text from text runs, line breaks and style changes, so that the result is always valid.
///
/// Source formats are sloppy in ways WebVTT is not: tags left open or closed in the wrong order, lines that end
/// up empty once markup is removed (an empty line would end the cue), `<`, `&` and `-->` in the text. The builder
/// escapes text, opens `<b>`, `<i>` and `<u>` only just before text that needs them and closes them properly
/// nested, drops empty lines, and trims each line.
struct CueTextBuilder {
    /// The styles WebVTT cue text can carry.
    enum Style: Int, CaseIterable, Sendable {
        case bold, italic, underline

        var tag: String {
            switch self {
            case .bold: "b"
            case .italic: "i"
            case .underline: "u"
            }
        }
    }

    private var text = ""
    /// How many times each style is opened in the source (tags may nest); a style applies while above zero.
    private var depths = [Int](repeating: 0, count: Style.allCases.count)
    /// The tags written and not yet closed, outermost first.
    private var written: [Style] = []
    private var lineHasText = false
    private var pendingBreak = false
    private var pendingSpace = ""

    /// A SubRip-style opening tag: styles nest.
    mutating func open(_ style: Style) { depths[style.rawValue] += 1 }

    /// A SubRip-style closing tag; one that was never opened does nothing.
    mutating func close(_ style: Style) { depths[style.rawValue] = max(0, depths[style.rawValue] - 1) }

    /// A SubStation Alpha-style switch: the style is on or off, whatever came before.
    mutating func set(_ style: Style, isOn: Bool) { depths[style.rawValue] = isOn ? max(1, depths[style.rawValue]) : 0 }

    /// Every style off.
    mutating func removeStyles() { depths = depths.map { _ in 0 } }

    /// Ends the line; several breaks in a row, or breaks before any text, make no empty line.
    mutating func lineBreak() {
        if lineHasText { pendingBreak = true }
        lineHasText = false
        pendingSpace = ""
    }

    /// Appends the text gathered since the last markup and empties it; text in drawing mode (`\p1`) is dropped.
    mutating func flush(_ chunk: inout String.UnicodeScalarView, isDrawing: Bool) {
        if !chunk.isEmpty && !isDrawing { append(String(chunk)) }
        chunk = String.UnicodeScalarView()
    }

    /// Appends text as shown (it is escaped here). Whitespace at the start and end of a line is dropped.
    mutating func append(_ chunk: String) {
        let scalars = chunk.unicodeScalars
        let isSpace: (Unicode.Scalar) -> Bool = { $0.properties.isWhitespace }
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
            let last = scalars.lastIndex(where: { !isSpace($0) })
        else {
            if lineHasText { pendingSpace += chunk }
            return
        }
        if lineHasText { pendingSpace += String(Substring(scalars[..<first])) }
        closeTagsNoLongerApplying()
        if pendingBreak {
            text += "\n"
            pendingBreak = false
        }
        text += pendingSpace
        openTagsNowApplying()
        for scalar in scalars[first...last] {
            switch scalar {
            case "&": text += "&amp;"
            case "<": text += "&lt;"
            case ">": text += "&gt;"
            default: text.unicodeScalars.append(scalar)
            }
        }
        pendingSpace = String(Substring(scalars[scalars.index(after: last)...]))
        lineHasText = true
    }

    /// The cue text, every tag closed; empty when no text was appended.
    mutating func finish() -> String {
        for style in written.reversed() { text += "</\(style.tag)>" }
        written = []
        return text
    }

    /// Closes the innermost written tags down to the outermost one whose style ended; those still applying are
    /// reopened by ``openTagsNowApplying()``.
    private mutating func closeTagsNoLongerApplying() {
        guard let index = written.firstIndex(where: { depths[$0.rawValue] == 0 }) else { return }
        for style in written[index...].reversed() { text += "</\(style.tag)>" }
        written.removeSubrange(index...)
    }

    private mutating func openTagsNowApplying() {
        for style in Style.allCases where depths[style.rawValue] > 0 && !written.contains(style) {
            text += "<\(style.tag)>"
            written.append(style)
        }
    }
}

/// Whitespace handling for source lines; a namespace, so that other parsers of the module keep their own helpers.
enum SubtitleLine {
    /// The line without whitespace at either end.
    static func trimmed(_ line: Substring) -> Substring {
        guard let first = line.firstIndex(where: { !$0.isWhitespace }),
            let last = line.lastIndex(where: { !$0.isWhitespace })
        else { return line[line.endIndex...] }
        return line[first...last]
    }

    /// Whether the line is empty or whitespace only.
    static func isBlank(_ line: some StringProtocol) -> Bool { line.allSatisfy(\.isWhitespace) }
}
