/// SubStation Alpha (`.ssa`) and Advanced SubStation Alpha (`.ass`) to WebVTT.
///
/// Only the `[Events]` section matters: its `Format:` line names the fields of each `Dialogue:` line, in an order
/// files are free to change, and the reader finds `Start`, `End` and `Text` by name (before any `Format:` line,
/// the usual ten fields are assumed). `Text` is normally the last field, and splitting stops at it, so it keeps its
/// commas. Times are `H:MM:SS.cc`.
///
/// Styles, positions, karaoke and drawings cannot be shown by a Cast receiver's WebVTT renderer: override blocks
/// `{…}` are removed, except that italic, bold and underline switches (`{\i1}`, `{\b1}`, `{\u1}`, `{\r}`) become
/// `<i>`, `<b>`, `<u>`, and drawings (`{\p1}`) are dropped with their commands. `\N` and `\n` break the line,
/// `\h` is a space. `Comment:` and other event lines are ignored; a `Dialogue:` line that cannot be read is
/// reported with its line number and skipped.
enum SubStationAlpha {
    /// Reads the dialogue events of SubStation Alpha text (already decoded, `\n` line endings).
    ///
    /// ``ParsedSubtitles/isRecognized`` says whether an `[Events]` section was found.
    static func parse(_ text: String) -> ParsedSubtitles {
        var parsed = ParsedSubtitles()
        parsed.isRecognized = false
        var isInEvents = false
        var format: EventFormat? = .standard
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = offset + 1
            let line = SubtitleLine.trimmed(rawLine)
            if line.isEmpty || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                isInEvents = line.lowercased() == "[events]"
                if isInEvents { parsed.isRecognized = true }
                continue
            }
            guard isInEvents else { continue }
            guard let colon = line.firstIndex(of: ":") else {
                parsed.report(line: number, "not an event line: \(ParsedSubtitles.quoted(line))")
                continue
            }
            let value = line[line.index(after: colon)...]
            switch SubtitleLine.trimmed(line[..<colon]).lowercased() {
            case "format":
                format = EventFormat(value)
                if format == nil {
                    parsed.report(line: number, "the Format line does not name the Start, End and Text fields")
                }
            case "dialogue":
                guard let format else {
                    parsed.report(line: number, "no Format line naming Start, End and Text before this dialogue")
                    continue
                }
                readDialogue(value, format: format, line: number, into: &parsed)
            default:
                // Comment, Picture, Sound, Movie, Command: nothing to show.
                continue
            }
        }
        return parsed
    }

    /// Where the fields of a `Dialogue:` line are, from the `Format:` line.
    struct EventFormat: Sendable, Hashable {
        var fieldCount: Int
        var start: Int
        var end: Int
        var text: Int

        /// SSA v4 (`Marked, Start, End, …, Text`) and ASS v4+ (`Layer, Start, End, …, Text`) alike.
        static let standard = EventFormat(fieldCount: 10, start: 1, end: 2, text: 9)

        init(fieldCount: Int, start: Int, end: Int, text: Int) {
            self.fieldCount = fieldCount
            self.start = start
            self.end = end
            self.text = text
        }

        /// The format of a `Format:` line's value (`Layer, Start, End, Style, …, Text`), names in any case;
        /// `nil` when Start, End or Text is missing.
        init?(_ value: Substring) {
            let names = value.split(separator: ",", omittingEmptySubsequences: false).map {
                SubtitleLine.trimmed($0).lowercased()
            }
            guard let start = names.firstIndex(of: "start"), let end = names.firstIndex(of: "end"),
                let text = names.firstIndex(of: "text")
            else { return nil }
            self.init(fieldCount: names.count, start: start, end: end, text: text)
        }
    }

    private static func readDialogue(
        _ value: Substring,
        format: EventFormat,
        line: Int,
        into parsed: inout ParsedSubtitles
    ) {
        // Text is the last field: splitting at most fieldCount - 1 times leaves its commas alone.
        let fields = value.split(separator: ",", maxSplits: format.fieldCount - 1, omittingEmptySubsequences: false)
        guard fields.count == format.fieldCount else {
            parsed.report(
                line: line,
                "the dialogue has \(fields.count) fields, the Format line names \(format.fieldCount)"
            )
            return
        }
        guard let start = SubtitleTimestamp.milliseconds(SubtitleLine.trimmed(fields[format.start])) else {
            parsed.report(line: line, "unreadable start time \(ParsedSubtitles.quoted(fields[format.start]))")
            return
        }
        guard let end = SubtitleTimestamp.milliseconds(SubtitleLine.trimmed(fields[format.end])) else {
            parsed.report(line: line, "unreadable end time \(ParsedSubtitles.quoted(fields[format.end]))")
            return
        }
        parsed.add(start: start, end: end, text: cueText(fields[format.text]), line: line)
    }

    // MARK: - Text

    /// WebVTT cue text for the Text field of a dialogue line.
    static func cueText(_ text: Substring) -> String {
        var builder = CueTextBuilder()
        var isDrawing = false
        let scalars = text.unicodeScalars
        // Knowing where the last "}" is keeps a line of many unclosed "{" linear.
        let lastBrace = scalars.lastIndex(of: "}")
        var chunk = String.UnicodeScalarView()
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let next = scalars.index(after: index)
            if scalar == "{", let lastBrace, index < lastBrace, let close = scalars[next...].firstIndex(of: "}") {
                builder.flush(&chunk, isDrawing: isDrawing)
                applyOverrides(Substring(scalars[next..<close]), to: &builder, isDrawing: &isDrawing)
                index = scalars.index(after: close)
                continue
            }
            if scalar == "\\", next < scalars.endIndex {
                switch scalars[next] {
                case "N", "n":
                    builder.flush(&chunk, isDrawing: isDrawing)
                    builder.lineBreak()
                    index = scalars.index(after: next)
                    continue
                case "h":
                    chunk.append(" ")
                    index = scalars.index(after: next)
                    continue
                default:
                    break
                }
            }
            chunk.append(scalar)
            index = next
        }
        builder.flush(&chunk, isDrawing: isDrawing)
        return builder.finish()
    }

    /// Applies what WebVTT can show of an override block (the text between `{` and `}`): `\i`, `\b`, `\u` switch
    /// styles, `\r` resets them, `\p` enters or leaves drawing mode. Every other tag, and the arguments in
    /// parentheses of `\t(…)`, `\pos(…)`, `\clip(…)`, are ignored, as is text that is not a tag (a comment).
    static func applyOverrides(_ block: Substring, to builder: inout CueTextBuilder, isDrawing: inout Bool) {
        let scalars = block.unicodeScalars
        var index = scalars.startIndex
        while index < scalars.endIndex {
            guard scalars[index] == "\\" else {
                index = scalars.index(after: index)
                continue
            }
            index = scalars.index(after: index)
            let nameStart = index
            while index < scalars.endIndex, ("a"..."z").contains(scalars[index]) || ("A"..."Z").contains(scalars[index])
            {
                index = scalars.index(after: index)
            }
            let name = String(Substring(scalars[nameStart..<index]))
            let argumentStart = index
            while index < scalars.endIndex, scalars[index] != "\\", scalars[index] != "(" {
                index = scalars.index(after: index)
            }
            let argument = Int(SubtitleLine.trimmed(Substring(scalars[argumentStart..<index]))) ?? 0
            if index < scalars.endIndex, scalars[index] == "(" {
                index = indexPastParentheses(in: scalars, at: index)
            }
            switch name {
            case "i": builder.set(.italic, isOn: argument != 0)
            case "u": builder.set(.underline, isOn: argument != 0)
            // `\b1` is bold, `\b0` normal; other values are font weights (100 to 900).
            case "b": builder.set(.bold, isOn: argument == 1 || argument >= 600)
            case "p": isDrawing = argument > 0
            // `\r` and `\rStyleName`: no other tag starts with "r".
            case let name where name.hasPrefix("r"): builder.removeStyles()
            default: break
            }
        }
    }

    /// The index past the `)` matching the `(` at `start`, or the end when it is not closed.
    private static func indexPastParentheses(
        in scalars: Substring.UnicodeScalarView,
        at start: Substring.UnicodeScalarView.Index
    ) -> Substring.UnicodeScalarView.Index {
        var depth = 0
        var index = start
        while index < scalars.endIndex {
            if scalars[index] == "(" { depth += 1 }
            if scalars[index] == ")" { depth -= 1 }
            index = scalars.index(after: index)
            if depth == 0 { return index }
        }
        return index
    }
}
