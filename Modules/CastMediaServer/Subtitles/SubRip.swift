/// SubRip (`.srt`) to WebVTT.
///
/// SubRip has no specification, and files in the wild differ from the usual shape (a cue number, a timing line
/// `00:01:02,345 --> 00:01:04,000`, text lines, a blank line) in every way: numbers missing or garbled, `.` for
/// `,`, hours left out, coordinates after the timing, blank lines doubled or missing, HTML-like tags and
/// SubStation Alpha overrides in the text. The reader accepts all of that; a cue whose timing line cannot be read
/// is reported with its line number and skipped, and the cues around it are kept.
///
/// A cue ends at a blank line, at a line that is a valid timing line, or at a cue number followed by one (files
/// with a missing blank line). Its text keeps `<b>`, `<i>` and `<u>`; other tags (`<font>` first) and `{\…}`
/// overrides are removed, their text kept; `<br>` breaks the line.
enum SubRip {
    /// Reads the cues of SubRip text (already decoded, `\n` line endings).
    static func parse(_ text: String) -> ParsedSubtitles {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var parsed = ParsedSubtitles()
        var index = 0
        while index < lines.count {
            if SubtitleLine.isBlank(lines[index]) {
                index += 1
                continue
            }
            guard let timingIndex = timingLine(ofBlockAt: index, in: lines) else {
                parsed.report(line: index + 1, "no timing line before \(ParsedSubtitles.quoted(lines[index]))")
                index = endOfCue(after: index, in: lines)
                continue
            }
            index = endOfCue(after: timingIndex, in: lines)
            guard let times = timing(lines[timingIndex]) else {
                let quoted = ParsedSubtitles.quoted(lines[timingIndex])
                parsed.report(line: timingIndex + 1, "unreadable timing line \(quoted)")
                continue
            }
            parsed.add(
                start: times.start,
                end: times.end,
                text: cueText(lines[(timingIndex + 1)..<index]),
                line: timingIndex + 1
            )
        }
        return parsed
    }

    /// The start and end, in milliseconds, of a timing line: `start --> end`, anything after `end` (coordinates)
    /// ignored; `nil` when the line is not one.
    static func timing(_ line: Substring) -> (start: Int, end: Int)? {
        guard let arrow = line.firstRange(of: "-->") else { return nil }
        let end = SubtitleLine.trimmed(line[arrow.upperBound...]).prefix { !$0.isWhitespace }
        guard let startTime = SubtitleTimestamp.milliseconds(SubtitleLine.trimmed(line[..<arrow.lowerBound])),
            let endTime = SubtitleTimestamp.milliseconds(end)
        else { return nil }
        return (startTime, endTime)
    }

    /// The index of the line that should be the timing line of the block whose first non-blank line is at `index`:
    /// that line itself, or the next one after a cue number (or anything) when it has an arrow. `nil` when the
    /// block does not look like a cue at all.
    private static func timingLine(ofBlockAt index: Int, in lines: [Substring]) -> Int? {
        let line = lines[index]
        if line.contains("-->") { return index }
        if index + 1 < lines.count, !SubtitleLine.isBlank(lines[index + 1]),
            lines[index + 1].contains("-->") || isCueNumber(line)
        {
            return index + 1
        }
        // A timing line with a broken arrow ("00:00:01,000 -> 00:00:02,000") is still reported as a timing line.
        let trimmed = SubtitleLine.trimmed(line)
        if let first = trimmed.unicodeScalars.first, ("0"..."9").contains(first), trimmed.contains(":") {
            return index
        }
        return nil
    }

    /// The index just past the cue (or broken block) whose last known line is at `index`.
    private static func endOfCue(after index: Int, in lines: [Substring]) -> Int {
        var next = index + 1
        while next < lines.count {
            let line = lines[next]
            if SubtitleLine.isBlank(line) || timing(line) != nil { return next }
            if isCueNumber(line), next + 1 < lines.count, timing(lines[next + 1]) != nil { return next }
            next += 1
        }
        return lines.count
    }

    private static func isCueNumber(_ line: Substring) -> Bool {
        let trimmed = SubtitleLine.trimmed(line)
        return !trimmed.isEmpty && trimmed.unicodeScalars.allSatisfy { ("0"..."9").contains($0) }
    }

    // MARK: - Cue text

    /// WebVTT cue text for the text lines of a cue.
    static func cueText(_ lines: ArraySlice<Substring>) -> String {
        var builder = CueTextBuilder()
        var isDrawing = false
        for (offset, line) in lines.enumerated() {
            if offset > 0 { builder.lineBreak() }
            appendMarkup(SubtitleLine.trimmed(line), to: &builder, isDrawing: &isDrawing)
        }
        return builder.finish()
    }

    /// One line of SubRip text with its tags and overrides.
    private static func appendMarkup(_ line: Substring, to builder: inout CueTextBuilder, isDrawing: inout Bool) {
        let scalars = line.unicodeScalars
        // Knowing where the last "}" is keeps a line of many unclosed "{\" linear.
        let lastBrace = scalars.lastIndex(of: "}")
        var chunk = String.UnicodeScalarView()
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let next = scalars.index(after: index)
            if scalar == "<", let (tag, end) = tag(in: scalars, at: index) {
                builder.flush(&chunk, isDrawing: isDrawing)
                switch tag {
                case .style(let style, isClosing: false): builder.open(style)
                case .style(let style, isClosing: true): builder.close(style)
                case .lineBreak: builder.lineBreak()
                case .other: break
                }
                index = end
                continue
            }
            if scalar == "{", let lastBrace, next < lastBrace, scalars[next] == "\\",
                let close = scalars[next...].firstIndex(of: "}")
            {
                builder.flush(&chunk, isDrawing: isDrawing)
                SubStationAlpha.applyOverrides(Substring(scalars[next..<close]), to: &builder, isDrawing: &isDrawing)
                index = scalars.index(after: close)
                continue
            }
            chunk.append(scalar)
            index = next
        }
        builder.flush(&chunk, isDrawing: isDrawing)
    }

    /// What an HTML-like tag in SubRip text does.
    enum Tag: Equatable {
        /// `<b>`, `<i>`, `<u>` and their closing tags, without attributes.
        case style(CueTextBuilder.Style, isClosing: Bool)
        /// `<br>` or `<br/>`.
        case lineBreak
        /// Anything else (`<font color="…">`, `<span>`, …): removed, its text kept.
        case other
    }

    /// The tag starting at the `<` at `start`, and the index past its `>`; `nil` when the `<` starts no tag
    /// (`I <3 you`, `a < b`), so it is text.
    ///
    /// A tag is `<`, an optional `/`, a name starting with an ASCII letter, then `>`, `/>`, or whitespace and
    /// attributes up to `>` on the same line.
    static func tag(
        in scalars: Substring.UnicodeScalarView,
        at start: Substring.UnicodeScalarView.Index
    ) -> (Tag, end: Substring.UnicodeScalarView.Index)? {
        let endIndex = scalars.endIndex
        var index = scalars.index(after: start)
        var isClosing = false
        if index < endIndex, scalars[index] == "/" {
            isClosing = true
            index = scalars.index(after: index)
        }
        guard index < endIndex, isASCIILetter(scalars[index]) else { return nil }
        let nameStart = index
        while index < endIndex, isNameCharacter(scalars[index]) {
            index = scalars.index(after: index)
        }
        let name = String(Substring(scalars[nameStart..<index])).lowercased()
        var isSelfClosing = false
        var hasAttributes = false
        if index < endIndex, scalars[index] == "/" {
            isSelfClosing = true
            index = scalars.index(after: index)
        }
        guard index < endIndex else { return nil }
        if scalars[index] != ">" {
            guard scalars[index].properties.isWhitespace else { return nil }
            while index < endIndex, scalars[index] != ">" {
                if scalars[index] == "<" { return nil }
                if !scalars[index].properties.isWhitespace && scalars[index] != "/" { hasAttributes = true }
                index = scalars.index(after: index)
            }
            guard index < endIndex else { return nil }
        }
        let end = scalars.index(after: index)
        // A class suffix (`<i.yellow>`, WebVTT style) does not change what the tag is.
        let base = name.prefix { $0 != "." }
        switch base {
        case "b" where !hasAttributes && !isSelfClosing: return (.style(.bold, isClosing: isClosing), end)
        case "i" where !hasAttributes && !isSelfClosing: return (.style(.italic, isClosing: isClosing), end)
        case "u" where !hasAttributes && !isSelfClosing: return (.style(.underline, isClosing: isClosing), end)
        case "br": return (.lineBreak, end)
        default: return (.other, end)
        }
    }

    private static func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    /// Letters, digits, and the `.` of WebVTT classes, `-` and `_` of custom names.
    private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        isASCIILetter(scalar) || ("0"..."9").contains(scalar) || scalar == "." || scalar == "-" || scalar == "_"
    }
}
