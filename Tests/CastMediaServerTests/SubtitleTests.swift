import CastTransport
import Foundation
import Testing

@testable import CastMediaServer

// MARK: - Helpers

/// The bytes of `text` in UTF-16, optionally with a byte order mark.
private func utf16(_ text: String, bigEndian: Bool, byteOrderMark: Bool) -> [UInt8] {
    var bytes: [UInt8] = byteOrderMark ? (bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]) : []
    for unit in text.utf16 {
        let high = UInt8(unit >> 8)
        let low = UInt8(unit & 0xFF)
        bytes += bigEndian ? [high, low] : [low, high]
    }
    return bytes
}

private func convert(_ text: String, _ format: SubtitleFormat) throws -> ConvertedSubtitles {
    try SubtitleConverter.webVTT(from: Array(text.utf8), format: format)
}

/// The error a conversion throws, or `nil` when it succeeds.
private func conversionError(_ bytes: [UInt8], _ format: SubtitleFormat) -> CastMediaServerError? {
    do {
        _ = try SubtitleConverter.webVTT(from: bytes, format: format)
        return nil
    } catch {
        return error
    }
}

/// Checks what every converted document must be: the header, then cues of a timing line and at least one non-empty
/// text line, in order of start time, with no `-->` in the text, only `&amp;`, `&lt;`, `&gt;` entities, and only
/// `<b>`, `<i>`, `<u>` tags, properly nested.
private func expectWellFormedWebVTT(_ document: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(document.hasPrefix("WEBVTT\n\n"), "no header: \(document)", sourceLocation: sourceLocation)
    let body = document.dropFirst("WEBVTT\n\n".count)
    guard !body.isEmpty else { return }
    #expect(body.hasSuffix("\n\n"), "a cue does not end with a blank line", sourceLocation: sourceLocation)
    let timing = /^(\d{2,}):([0-5]\d):([0-5]\d)\.(\d{3}) --> (\d{2,}):([0-5]\d):([0-5]\d)\.(\d{3})$/
    var previousStart = -1
    for block in body.dropLast(2).split(separator: "\n\n", omittingEmptySubsequences: false) {
        let lines = block.split(separator: "\n", omittingEmptySubsequences: false)
        guard let match = lines.first.flatMap({ try? timing.wholeMatch(in: $0) }) else {
            Issue.record("not a timing line: \(lines.first ?? "")", sourceLocation: sourceLocation)
            continue
        }
        func milliseconds(_ parts: (Substring, Substring, Substring, Substring)) -> Int {
            let values = [parts.0, parts.1, parts.2, parts.3].map { Int($0) ?? 0 }
            return ((values[0] * 60 + values[1]) * 60 + values[2]) * 1000 + values[3]
        }
        let start = milliseconds((match.1, match.2, match.3, match.4))
        let end = milliseconds((match.5, match.6, match.7, match.8))
        #expect(end > start, "\(lines[0])", sourceLocation: sourceLocation)
        #expect(start >= previousStart, "cues out of order at \(lines[0])", sourceLocation: sourceLocation)
        previousStart = start
        let text = lines.dropFirst()
        #expect(!text.isEmpty, "a cue without text", sourceLocation: sourceLocation)
        for line in text {
            let isBlank = line.allSatisfy { $0.isWhitespace }
            #expect(!isBlank, "an empty line in a cue", sourceLocation: sourceLocation)
            #expect(!line.contains("-->"), "--> in cue text: \(line)", sourceLocation: sourceLocation)
        }
        expectValidMarkup(text.joined(separator: "\n"), sourceLocation: sourceLocation)
    }
}

private func expectValidMarkup(_ text: String, sourceLocation: SourceLocation) {
    var open: [String] = []
    var rest = Substring(text)
    while let special = rest.firstIndex(where: { $0 == "<" || $0 == ">" || $0 == "&" }) {
        rest = rest[special...]
        if let tag = rest.prefixMatch(of: /<(\/?)([biu])>/) {
            if tag.1.isEmpty {
                #expect(
                    !open.contains(String(tag.2)),
                    "\(tag.2) nested in itself: \(text)",
                    sourceLocation: sourceLocation
                )
                open.append(String(tag.2))
            } else {
                #expect(open.last == String(tag.2), "misnested </\(tag.2)>: \(text)", sourceLocation: sourceLocation)
                open.removeLast()
            }
            rest = rest[tag.range.upperBound...]
        } else if let entity = rest.prefixMatch(of: /&(amp|lt|gt);/) {
            rest = rest[entity.range.upperBound...]
        } else {
            Issue.record("unescaped \(rest.prefix(1)) in \(text)", sourceLocation: sourceLocation)
            rest = rest.dropFirst()
        }
    }
    #expect(open.isEmpty, "unclosed tags \(open) in \(text)", sourceLocation: sourceLocation)
}

// MARK: - Decoding

@Suite struct SubtitleTextTests {
    @Test func utf8WithByteOrderMarkAndCRLF() {
        let text = SubtitleText(decoding: [0xEF, 0xBB, 0xBF] + Array("one\r\ntwo\r\n\r\nthree".utf8))
        #expect(text.string == "one\ntwo\n\nthree")
        #expect(text.encoding == .utf8)
        #expect(text.lines == ["one", "two", "", "three"])
    }

    @Test func loneCarriageReturnsAndMixedEndings() {
        let text = SubtitleText(decoding: Array("a\rb\r\nc\n\rd\r\re".utf8))
        #expect(text.string == "a\nb\nc\n\nd\n\ne")
    }

    @Test func utf8WithoutByteOrderMark() {
        let text = SubtitleText(decoding: Array("Grüße, 日本語 🎬".utf8))
        #expect(text.string == "Grüße, 日本語 🎬")
        #expect(text.encoding == .utf8)
    }

    @Test(arguments: [(false, true), (true, true), (false, false), (true, false)])
    func decodesUTF16(bigEndian: Bool, byteOrderMark: Bool) {
        let source = "1\r\n00:00:01,000 --> 00:00:02,000\r\nGrüße 日本 🎬\r\n"
        let text = SubtitleText(decoding: utf16(source, bigEndian: bigEndian, byteOrderMark: byteOrderMark))
        #expect(text.string == "1\n00:00:01,000 --> 00:00:02,000\nGrüße 日本 🎬\n")
        #expect(text.encoding == (bigEndian ? .utf16BigEndian : .utf16LittleEndian))
    }

    @Test func utf16WithAnOddByteCountDropsTheLastByte() {
        let text = SubtitleText(decoding: [0xFF, 0xFE, 0x41, 0x00, 0x42])
        #expect(text.string == "A")
    }

    @Test func latin1AndWindows1252() {
        // "Café – “ok” €" in Windows-1252: é is 0xE9, the dash 0x96, the quotes 0x93/0x94, the euro 0x80.
        let bytes: [UInt8] = [0x43, 0x61, 0x66, 0xE9, 0x20, 0x96, 0x20, 0x93, 0x6F, 0x6B, 0x94, 0x20, 0x80]
        let text = SubtitleText(decoding: bytes)
        #expect(text.string == "Café – “ok” €")
        #expect(text.encoding == .windows1252)
    }

    @Test func byteOrderMarksInsideTheTextAreDropped() {
        #expect(SubtitleText(decoding: Array("a\u{FEFF}b\r\u{FEFF}\nc".utf8)).string == "ab\nc")
    }

    @Test func emptyInput() {
        let text = SubtitleText(decoding: [])
        #expect(text.string.isEmpty)
        #expect(text.lines == [""])
    }
}

// MARK: - Timestamps

@Suite struct SubtitleTimestampTests {
    @Test(arguments: [
        ("00:01:02,345", 62_345), ("00:01:02.345", 62_345), ("1:02:03,4", 3_723_400), ("01:02,345", 62_345),
        ("0:00:01.5", 1_500), ("0:00:01.05", 1_050), ("0:00:01.50", 1_500), ("00:00:02", 2_000),
        ("123:00:00,000", 442_800_000), ("9:59:59.99", 35_999_990), ("0:0:0,0", 0),
    ])
    func readsTimestamps(text: String, milliseconds: Int) {
        #expect(SubtitleTimestamp.milliseconds(Substring(text)) == milliseconds)
    }

    @Test(arguments: [
        "", "00", "00:60:00,000", "00:00:60,000", "00:00:01,0000", "00:00:01,", "a:00:00,000", "-1:00:00,000",
        "12345678:00:00,000", "00:00:00:01,000", "00:000:01,000", "00:00: 01,000", "00:00:01,5e", "٠٠:٠٠:٠١,٠٠٠",
    ])
    func rejectsMalformedTimestamps(text: String) {
        #expect(SubtitleTimestamp.milliseconds(Substring(text)) == nil)
    }

    @Test(arguments: [
        (0, "00:00:00.000"), (62_345, "00:01:02.345"), (3_723_400, "01:02:03.400"),
        (360_000_000, "100:00:00.000"), (-5, "00:00:00.000"),
    ])
    func writesWebVTTTimestamps(milliseconds: Int, text: String) {
        #expect(SubtitleTimestamp.webVTT(milliseconds) == text)
    }
}

// MARK: - SubRip

@Suite struct SubRipTests {
    @Test func convertsAPlainFile() throws {
        let source = """
            1
            00:00:01,000 --> 00:00:02,500
            Hello <b>world</b>

            2
            00:00:03,000 --> 00:00:04,000
            Line one
            Line two

            """
        let converted = try convert(source, .subRip)
        #expect(
            converted.webVTT
                == "WEBVTT\n\n00:00:01.000 --> 00:00:02.500\nHello <b>world</b>\n\n"
                + "00:00:03.000 --> 00:00:04.000\nLine one\nLine two\n\n"
        )
        #expect(converted.cueCount == 2)
        #expect(converted.problems.isEmpty)
    }

    @Test(arguments: [
        ("00:01:02,345 --> 00:01:04,000", 62_345, 64_000),
        ("00:01:02.345 --> 00:01:04.000", 62_345, 64_000),
        ("00:01:02,345-->00:01:04,000", 62_345, 64_000),
        ("  00:01:02,345   -->\t00:01:04,000  ", 62_345, 64_000),
        ("00:01:02,345 --> 00:01:04,000 X1:100 X2:200 Y1:10 Y2:20", 62_345, 64_000),
        ("01:02,345 --> 01:04,000", 62_345, 64_000),
        ("0:01:02,3 --> 0:01:04,12", 62_300, 64_120),
        ("100:00:00,000 --> 100:00:01,000", 360_000_000, 360_001_000),
        ("00:01:02 --> 00:01:04", 62_000, 64_000),
    ])
    func readsTimingLines(line: String, start: Int, end: Int) throws {
        let times = try #require(SubRip.timing(Substring(line)))
        #expect(times.start == start)
        #expect(times.end == end)
    }

    @Test(arguments: [
        "00:01:02,345 -> 00:01:04,000", "00:61:02,345 --> 00:01:04,000", "00:01:02,3456 --> 00:01:04,000",
        "A --> B", "00:01:02,345 -->", "--> 00:01:04,000", "1 00:01:02,345 --> 00:01:04,000",
        "-00:00:01,000 --> 00:00:02,000", "00:01:02,345 — 00:01:04,000", "Hello there",
    ])
    func rejectsBrokenTimingLines(line: String) {
        #expect(SubRip.timing(Substring(line)) == nil)
    }

    @Test func toleratesSloppyLayout() throws {
        // No numbers, garbage numbers, doubled blank lines, trailing whitespace, whitespace-only separator lines,
        // a missing blank line between cues, cues out of order, and no newline at the end of the file.
        let source = [
            "00:00:05,000 --> 00:00:06,000   ",
            "No number   ",
            "",
            "",
            "   ",
            "#2",
            "00:00:01,000 --> 00:00:02,000",
            "Garbage number",
            "\t",
            "three",
            "00:00:03,000 --> 00:00:04,000 X1:1 X2:2 Y1:3 Y2:4",
            "Third",
            "42",
            "00:00:07,000 --> 00:00:08,000",
            "No blank line before",
            "00:00:09,000 --> 00:00:10,000",
            "No number and no blank line before",
            "  last line  ",
        ].joined(separator: "\n")
        let converted = try convert(source, .subRip)
        #expect(converted.problems.isEmpty, "\(converted.problems)")
        #expect(
            converted.webVTT == """
                WEBVTT

                00:00:01.000 --> 00:00:02.000
                Garbage number

                00:00:03.000 --> 00:00:04.000
                Third

                00:00:05.000 --> 00:00:06.000
                No number

                00:00:07.000 --> 00:00:08.000
                No blank line before

                00:00:09.000 --> 00:00:10.000
                No number and no blank line before
                last line


                """
        )
        expectWellFormedWebVTT(converted.webVTT)
    }

    /// A file with one of each kind of broken cue; the line of each is the line a text editor shows.
    static let malformedCorpus = [
        "1",  // 1
        "00:00:01,000 --> 00:00:02,000",  // 2
        "First",  // 3
        "",  // 4
        "2",  // 5
        "00:00:03,000 -> 00:00:04,000",  // 6: a broken arrow
        "Broken arrow",  // 7
        "",  // 8
        "3",  // 9
        "00:00:06,000 --> 00:00:05,000",  // 10: ends before it starts
        "Backwards",  // 11
        "",  // 12
        "4",  // 13
        "00:00:07,000 --> 00:00:08,000",  // 14
        "Fourth",  // 15
        "",  // 16
        "",  // 17
        "Stray text without a timing line",  // 18
        "",  // 19
        "5",  // 20
        "00:00:09,abc --> 00:00:10,000",  // 21: not a time
        "Bad fraction",  // 22
        "",  // 23
        "6",  // 24
        "00:00:11,000 --> 00:00:12,000",  // 25
        "Sixth",  // 26
        "7",  // 27: no blank line before this cue
        "00:01:00,000 --> 00:01:00,000",  // 28: lasts no time
        "Zero",  // 29
        "8",  // 30: no blank line before this cue either
        "00:02:00,000 --> 00:02:01,000",  // 31
        "Last, no newline at the end",  // 32
    ]

    @Test(arguments: ["\n", "\r\n", "\r"])
    func skipsBrokenCuesAndReportsTheirLines(lineEnding: String) throws {
        let bytes = Array(Self.malformedCorpus.joined(separator: lineEnding).utf8)
        let converted = try SubtitleConverter.webVTT(from: bytes, format: .subRip)
        #expect(converted.problems.map(\.line) == [6, 10, 18, 21, 28])
        #expect(converted.problems[0].reason.contains("00:00:03,000 -> 00:00:04,000"))
        #expect(converted.problems[1].reason.contains("before it starts"))
        #expect(converted.problems[2].reason.contains("no timing line"))
        #expect(converted.problems[4].reason.contains("no time"))
        #expect(converted.problems[0].description.hasPrefix("line 6: "))
        #expect(converted.cueCount == 4)
        #expect(
            converted.webVTT == """
                WEBVTT

                00:00:01.000 --> 00:00:02.000
                First

                00:00:07.000 --> 00:00:08.000
                Fourth

                00:00:11.000 --> 00:00:12.000
                Sixth

                00:02:00.000 --> 00:02:01.000
                Last, no newline at the end


                """
        )
        expectWellFormedWebVTT(converted.webVTT)
    }

    @Test func aCueNumberWithoutATimingLineIsReportedAtTheLineThatShouldBeIt() throws {
        let source = "1\n00:00:01,000 --> 00:00:02,000\nOK\n\n2\nMissing timing\n\n3\n"
        let converted = try convert(source, .subRip)
        #expect(converted.problems.map(\.line) == [6, 8])
        #expect(converted.cueCount == 1)
    }

    @Test(arguments: [
        ("<b>Bold</b> and <i>italic</i> and <u>under</u>", "<b>Bold</b> and <i>italic</i> and <u>under</u>"),
        ("<B>Loud</B> <I>lean</I>", "<b>Loud</b> <i>lean</i>"),
        ("<font color=\"#ff0000\">Red</font> text", "Red text"),
        ("<font face=\"Arial\" size=\"12\">A</font><FONT COLOR=red>B</FONT>", "AB"),
        ("<span class=\"x\">S</span> <c.yellow>class</c>", "S class"),
        ("<i.loud>classy</i>", "<i>classy</i>"),
        ("{\\an8}Top", "Top"),
        ("{\\an8}{\\i1}Sign{\\i0}", "<i>Sign</i>"),
        ("a{\\b1}b{\\b0}c", "a<b>b</b>c"),
        ("{not an override}", "{not an override}"),
        ("Tom & Jerry", "Tom &amp; Jerry"),
        ("a < b > c", "a &lt; b &gt; c"),
        ("I <3 you", "I &lt;3 you"),
        ("He said --> go", "He said --&gt; go"),
        ("-->", "--&gt;"),
        ("<<i>>", "&lt;<i>&gt;</i>"),
        ("&amp;", "&amp;amp;"),
        ("<i>unclosed", "<i>unclosed</i>"),
        ("stray</b> close", "stray close"),
        ("<b><i>both</b> italic</i>", "<b><i>both</i></b> <i>italic</i>"),
        ("<i>a</i><i>b</i>", "<i>ab</i>"),
        ("<i><i>double</i> still</i> plain", "<i>double still</i> plain"),
        ("<b attr>not bold</b>", "not bold"),
        ("<i/>no", "no"),
        ("<i>Line one\nLine two</i>", "<i>Line one\nLine two</i>"),
        ("<i></i>\nText", "Text"),
        ("Text\n<font color=red></font>\nMore", "Text\nMore"),
        ("<i>Text\n</i>", "<i>Text</i>"),
        ("  padded  \n\ttabbed\t", "padded\ntabbed"),
        ("one<br>two<BR/>three<br />four", "one\ntwo\nthree\nfour"),
        ("<font color=\"red\"", "&lt;font color=\"red\""),
        ("{\\p1}m 0 0 l 1 1{\\p0}after", "after"),
    ])
    func convertsCueText(source: String, expected: String) {
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        let text = SubRip.cueText(lines[...])
        #expect(text == expected)
        expectValidMarkup(text, sourceLocation: #_sourceLocation)
    }

    @Test func cuesWithOnlyMarkupAreDroppedWithoutAReport() throws {
        let source =
            "1\n00:00:01,000 --> 00:00:02,000\n<font color=red></font>\n\n2\n00:00:03,000 --> 00:00:04,000\nKept\n"
        let converted = try convert(source, .subRip)
        #expect(converted.cueCount == 1)
        #expect(converted.problems.isEmpty)
        #expect(converted.webVTT == "WEBVTT\n\n00:00:03.000 --> 00:00:04.000\nKept\n\n")
    }

    @Test func aTextLineWithAnArrowIsText() throws {
        let source = "1\n00:00:01,000 --> 00:00:02,000\nLeft --> right\n<i>Then --> this</i>\n"
        let converted = try convert(source, .subRip)
        #expect(converted.problems.isEmpty)
        #expect(converted.webVTT.hasSuffix("\nLeft --&gt; right\n<i>Then --&gt; this</i>\n\n"))
        expectWellFormedWebVTT(converted.webVTT)
    }

    @Test func encodingsEndToEnd() throws {
        let source = "1\r\n00:00:01,000 --> 00:00:02,000\r\nCafé, Grüße, 日本\r\n"
        let expected = "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nCafé, Grüße, 日本\n\n"
        let utf16LittleEndian = utf16(source, bigEndian: false, byteOrderMark: true)
        #expect(try SubtitleConverter.webVTT(from: utf16LittleEndian, format: .subRip).webVTT == expected)
        let bomless = utf16(source, bigEndian: false, byteOrderMark: false)
        #expect(try SubtitleConverter.webVTT(from: bomless, format: .subRip).webVTT == expected)
        let withMark = [0xEF, 0xBB, 0xBF] + Array(source.utf8)
        #expect(try SubtitleConverter.webVTT(from: withMark, format: .subRip).webVTT == expected)
    }

    @Test func latin1File() throws {
        // "Café" with é as the single byte 0xE9, which is not valid UTF-8.
        let bytes = Array("1\n00:00:01,000 --> 00:00:02,000\nCaf".utf8) + [0xE9] + Array("\n".utf8)
        let converted = try SubtitleConverter.webVTT(from: bytes, format: .subRip)
        #expect(converted.webVTT == "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nCafé\n\n")
    }
}

// MARK: - SubStation Alpha

@Suite struct SubStationAlphaTests {
    static let script = [
        "[Script Info]",  // 1
        "; a comment",  // 2
        "Title: Test",  // 3
        "ScriptType: v4.00+",  // 4
        "",  // 5
        "[V4+ Styles]",  // 6
        "Format: Name, Fontname, Fontsize",  // 7
        "Style: Default,Arial,20",  // 8
        "",  // 9
        "[Events]",  // 10
        "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text",  // 11
        "Dialogue: 0,0:00:05.00,0:00:06.50,Default,,0,0,0,,Second, with commas, many",  // 12
        "Comment: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,A comment",  // 13
        "Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,{\\i1}First{\\i0} line\\Nsecond\\nthird\\hword",  // 14
        "Dialogue: 0,0:00:0x.00,0:00:03.00,Default,,0,0,0,,Bad start",  // 15
        "Dialogue: 0,0:00:04.00,0:00:03.00,Default,,0,0,0,,Backwards",  // 16
        "Dialogue: 0,0:00:04.00",  // 17
        "Dialogue: 0,0:00:07.00,0:00:08.00,Default,,0,0,0,,{\\pos(10,20)\\b1}Bold{\\b0} & <tag> --> x",  // 18
        "Dialogue: 0,0:00:09.00,0:00:10.00,Default,,0,0,0,,{\\p1}m 0 0 l 100 0 100 100{\\p0}",  // 19
        "Dialogue: 0,0:00:11.00,0:00:12.0x,Default,,0,0,0,,Bad end",  // 20
        "Just some words",  // 21
    ]

    @Test(arguments: ["\n", "\r\n"])
    func convertsAScript(lineEnding: String) throws {
        let converted = try convert(Self.script.joined(separator: lineEnding), .subStationAlpha)
        #expect(converted.problems.map(\.line) == [15, 16, 17, 20, 21])
        #expect(converted.problems[0].reason.contains("start time"))
        #expect(converted.problems[1].reason.contains("before it starts"))
        #expect(converted.problems[2].reason.contains("2 fields"))
        #expect(converted.problems[3].reason.contains("end time"))
        #expect(converted.cueCount == 3)
        #expect(
            converted.webVTT == """
                WEBVTT

                00:00:01.000 --> 00:00:02.000
                <i>First</i> line
                second
                third word

                00:00:05.000 --> 00:00:06.500
                Second, with commas, many

                00:00:07.000 --> 00:00:08.000
                <b>Bold</b> &amp; &lt;tag&gt; --&gt; x


                """
        )
        expectWellFormedWebVTT(converted.webVTT)
    }

    @Test func customFormatOrder() throws {
        let source = [
            "[Events]",
            "Format: End, Start, Style, Layer, Text",
            "Dialogue: 0:00:04.00,0:00:03.00,Default,0,Hi, there, friend",
            "Dialogue: 0:00:02.00 , 0:00:01.00 ,Default,0,  Spaces around  ",
        ].joined(separator: "\n")
        let converted = try convert(source, .subStationAlpha)
        #expect(converted.problems.isEmpty)
        #expect(
            converted.webVTT
                == "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nSpaces around\n\n"
                + "00:00:03.000 --> 00:00:04.000\nHi, there, friend\n\n"
        )
    }

    @Test func textNeedNotBeLast() throws {
        let source = "[Events]\nFormat: Text, Start, End\nDialogue: Hello,0:00:01.00,0:00:02.00\n"
        let converted = try convert(source, .subStationAlpha)
        #expect(converted.webVTT == "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHello\n\n")
    }

    @Test func substationAlphaVersion4AndNoFormatLine() throws {
        let ssa = """
            [Script Info]
            ScriptType: v4.00

            [events]
            Format: Marked, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
            Dialogue: Marked=0,0:00:01.00,0:00:02.00,Default,,0000,0000,0000,,SSA text
            """
        #expect(try convert(ssa, .subStationAlpha).webVTT == "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nSSA text\n\n")
        let noFormat = "[Events]\nDialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,Default fields, ok\n"
        #expect(
            try convert(noFormat, .subStationAlpha).webVTT
                == "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nDefault fields, ok\n\n"
        )
    }

    @Test func aFormatLineWithoutTheNeededFieldsIsReported() {
        let source = [
            "[Events]",  // 1
            "Format: Layer, Style, Text",  // 2
            "Dialogue: 0,Default,Hello",  // 3
        ].joined(separator: "\n")
        let parsed = SubStationAlpha.parse(source)
        #expect(parsed.problems.map(\.line) == [2, 3])
        #expect(parsed.cues.isEmpty)
        #expect(conversionError(Array(source.utf8), .subStationAlpha)?.code == .invalidSubtitles)
    }

    @Test func dialogueOutsideTheEventsSectionIsIgnored() throws {
        let source = """
            [Events]
            Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,Inside
            [Fonts]
            Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,Outside
            """
        let converted = try convert(source, .subStationAlpha)
        #expect(converted.cueCount == 1)
        #expect(converted.problems.isEmpty)
    }

    @Test(arguments: [
        ("{\\i1}a{\\i0}", "<i>a</i>"),
        ("{\\i1}never closed", "<i>never closed</i>"),
        ("{\\b1}{\\i1}x{\\b0}y{\\r}z", "<b><i>x</i></b><i>y</i>z"),
        ("{\\b700}heavy{\\b400} light", "<b>heavy</b> light"),
        ("{\\u1}u{\\u0}", "<u>u</u>"),
        ("{\\t(0,500,\\i1)}animated", "animated"),
        ("{\\fnArial\\fs20\\c&H00FF00&\\1a&H80&}styled", "styled"),
        ("{\\iclip(1,2,3,4)}clip", "clip"),
        ("{\\bord2\\blur3\\be1}fx", "fx"),
        ("{\\i1}{\\rDefault}x", "x"),
        ("\\N\\Nleading breaks", "leading breaks"),
        ("a\\N\\N\\Nb", "a\nb"),
        ("a \\N b", "a\nb"),
        ("x\\N{\\i1}\\Ny", "x\n<i>y</i>"),
        ("{\\i1}a\\N{\\i0}", "<i>a</i>"),
        ("{\\i1}a\\Nb{\\i0}", "<i>a\nb</i>"),
        ("unclosed {brace", "unclosed {brace"),
        ("{{\\i1}x", "<i>x</i>"),
        ("{comment text}visible", "visible"),
        ("back\\slash \\", "back\\slash \\"),
        ("{\\p1}m 0 0 l 1 1{\\p0}after", "after"),
        ("{\\an8}<b>not a tag</b>", "&lt;b&gt;not a tag&lt;/b&gt;"),
        ("{\\i1}", ""),
    ])
    func convertsText(source: String, expected: String) {
        let text = SubStationAlpha.cueText(Substring(source))
        #expect(text == expected)
        expectValidMarkup(text, sourceLocation: #_sourceLocation)
    }
}

// MARK: - Converter

@Suite struct SubtitleConverterTests {
    @Test(arguments: [
        ("vtt", SubtitleFormat.webVTT), ("VTT", .webVTT), (".srt", .subRip), ("Srt", .subRip),
        ("ass", .subStationAlpha), ("SSA", .subStationAlpha),
    ])
    func formatsFromExtensions(fileExtension: String, format: SubtitleFormat) {
        #expect(SubtitleFormat(fileExtension: fileExtension) == format)
    }

    @Test(arguments: ["", "txt", "sub", "srt.bak", "..srt", "ttml"])
    func unknownExtensions(fileExtension: String) {
        #expect(SubtitleFormat(fileExtension: fileExtension) == nil)
    }

    @Test func webVTTIsPassedThroughDecodedAndNormalized() throws {
        let source =
            "WEBVTT\r\n\r\nNOTE a note\r\n\r\n00:00:01.000 --> 00:00:02.000 line:0\r\nHi\r\n\r\n"
            + "intro\r\n00:00:03.000 --> 00:00:04.000\r\n<v Bob>Yo\r\n"
        let converted = try SubtitleConverter.webVTT(from: [0xEF, 0xBB, 0xBF] + Array(source.utf8), format: .webVTT)
        #expect(
            converted.webVTT
                == "WEBVTT\n\nNOTE a note\n\n00:00:01.000 --> 00:00:02.000 line:0\nHi\n\n"
                + "intro\n00:00:03.000 --> 00:00:04.000\n<v Bob>Yo\n"
        )
        #expect(converted.cueCount == 2)
        #expect(converted.problems.isEmpty)
        let utf16Bytes = utf16(source, bigEndian: true, byteOrderMark: true)
        #expect(try SubtitleConverter.webVTT(from: utf16Bytes, format: .webVTT).webVTT == converted.webVTT)
    }

    @Test(arguments: ["WEBVTT", "WEBVTT\n", "WEBVTT - A title\n\n", "WEBVTT\tx\n"])
    func webVTTWithoutCuesIsValid(source: String) throws {
        let converted = try convert(source, .webVTT)
        #expect(converted.cueCount == 0)
        #expect(converted.webVTT == source)
    }

    @Test(arguments: ["", "\n", "WEBVTTX\n", " WEBVTT\n", "webvtt\n", "1\n00:00:01,000 --> 00:00:02,000\nSRT\n"])
    func webVTTWithoutItsHeaderIsRejected(source: String) {
        #expect(conversionError(Array(source.utf8), .webVTT)?.code == .invalidSubtitles)
    }

    @Test(arguments: [SubtitleFormat.subRip, .subStationAlpha])
    func emptyFilesHaveNoCues(format: SubtitleFormat) throws {
        for source in ["", "\n\n", " \r\n\t\r\n", "\u{FEFF}"] {
            let converted = try convert(source, format)
            #expect(converted.webVTT == "WEBVTT\n\n")
            #expect(converted.cueCount == 0)
            #expect(converted.problems.isEmpty)
        }
        let converted = try SubtitleConverter.webVTT(from: [], format: format)
        #expect(converted.webVTT == "WEBVTT\n\n")
    }

    @Test func eventsWithoutDialogueHaveNoCues() throws {
        let converted = try convert("[Script Info]\nTitle: x\n\n[Events]\nFormat: Start, End, Text\n", .subStationAlpha)
        #expect(converted.cueCount == 0)
        #expect(converted.webVTT == "WEBVTT\n\n")
    }

    @Test(arguments: SubtitleFormat.allCases)
    func binaryGarbageIsRejected(format: SubtitleFormat) {
        let png: [UInt8] = [
            0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
            0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x08, 0x06, 0x00, 0x00, 0x00, 0x5C, 0x72, 0xA8,
        ]
        let error = conversionError(png, format)
        #expect(error?.code == .invalidSubtitles)
        // A valid-looking file with a NUL in it is binary data all the same.
        let withNUL = Array("WEBVTT\n\n1\n00:00:01,000 --> 00:00:02,000\nA\0B\n".utf8)
        #expect(conversionError(withNUL, format)?.code == .invalidSubtitles)
        #expect(conversionError(withNUL, format)?.message.contains("binary") == true)
    }

    @Test func aFileWhoseEveryCueIsBrokenIsRejected() {
        let source = "1\n00:00:0x,000 --> 00:00:02,000\nA\n\n2\n00:00:05,000 --> 00:00:04,000\nB\n"
        let error = conversionError(Array(source.utf8), .subRip)
        #expect(error?.code == .invalidSubtitles)
        #expect(error?.message.contains("line 2") == true, "\(String(describing: error))")
    }

    @Test func proseIsNotSubtitles() {
        let prose = Array("Dear diary,\nToday I wrote no subtitles.\n".utf8)
        #expect(conversionError(prose, .subRip)?.code == .invalidSubtitles)
        #expect(conversionError(prose, .subStationAlpha)?.code == .invalidSubtitles)
        #expect(conversionError(prose, .webVTT)?.code == .invalidSubtitles)
    }

    @Test func aSubRipFileIsNotSubStationAlpha() {
        let srt = Array("1\n00:00:01,000 --> 00:00:02,000\nHi\n".utf8)
        #expect(conversionError(srt, .subStationAlpha)?.message.contains("[Events]") == true)
    }

    /// Deterministic mutations of valid files: whatever comes in, the converter either throws
    /// `invalidSubtitles` or writes a well-formed document.
    @Test func mutatedInputsGiveWellFormedOutput() {
        var generator = SplitMix64(seed: 0x5EED_CA57)
        let seeds: [(SubtitleFormat, String)] = [
            (.subRip, SubRipTests.malformedCorpus.joined(separator: "\n")),
            (
                .subRip,
                "1\n00:00:01,000 --> 00:00:02,000\n<b>a</b> <i>b</i> {\\an8}c & d\n\n2\n00:00:03,000 --> 00:00:04,000\nx\n"
            ),
            (.subStationAlpha, SubStationAlphaTests.script.joined(separator: "\n")),
        ]
        let fragments = [
            "<", ">", "</", "<i>", "</b>", "{", "}", "{\\", "\\N", "-->", "\n", "\n\n", ",", ":", "&", "\0",
        ]
        var converted = 0
        for round in 0..<300 {
            let (format, seed) = seeds[round % seeds.count]
            var bytes = Array(seed.utf8)
            for _ in 0..<(1 + Int(generator.next() % 6)) {
                let position = Int(generator.next() % UInt64(bytes.count + 1))
                switch generator.next() % 3 {
                case 0:
                    let fragment = fragments[Int(generator.next() % UInt64(fragments.count))]
                    bytes.insert(contentsOf: Array(fragment.utf8), at: position)
                case 1:
                    let length = min(Int(generator.next() % 8), bytes.count - position)
                    bytes.removeSubrange(position..<(position + length))
                default:
                    if position < bytes.count { bytes[position] = UInt8(truncatingIfNeeded: generator.next()) }
                }
            }
            do {
                let result = try SubtitleConverter.webVTT(from: bytes, format: format)
                expectWellFormedWebVTT(result.webVTT)
                #expect(result.webVTT.components(separatedBy: " --> ").count - 1 == result.cueCount)
                converted += 1
            } catch {
                #expect(error.code == .invalidSubtitles)
            }
        }
        // Most mutations leave some cues readable: the well-formedness checks above did run.
        #expect(converted > 200)
    }
}

// MARK: - Sidecar files

@Suite struct SidecarSubtitleTests {
    @Test func findsSubtitlesNextToTheMedia() throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("cast-sidecars-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = [
            "movie.mkv", "movie.srt", "movie.ass", "movie.en.srt", "movie.eng.srt", "movie.fr.vtt", "movie.pt-BR.ass",
            "movie.English.forced.SRT", "Movie.de.ssa", "movie.sdh.srt", "movie.de.txt", "movie.nfo", "other.srt",
            "moviex.srt", "movie.srt.bak", "movie2.en.srt",
        ]
        for file in files {
            #expect(FileManager.default.createFile(atPath: folder + "/" + file, contents: Data("x".utf8)))
        }
        try FileManager.default.createDirectory(atPath: folder + "/movie.es.srt", withIntermediateDirectories: false)

        let found = SidecarSubtitle.find(forMediaAt: folder + "/movie.mkv")
        let expected: [SidecarSubtitle] = [
            SidecarSubtitle(path: folder + "/movie.srt", format: .subRip),
            SidecarSubtitle(path: folder + "/movie.ass", format: .subStationAlpha),
            SidecarSubtitle(path: folder + "/Movie.de.ssa", format: .subStationAlpha, language: "de"),
            SidecarSubtitle(path: folder + "/movie.en.srt", format: .subRip, language: "en"),
            SidecarSubtitle(path: folder + "/movie.eng.srt", format: .subRip, language: "en"),
            SidecarSubtitle(
                path: folder + "/movie.English.forced.SRT",
                format: .subRip,
                language: "en",
                title: "forced"
            ),
            SidecarSubtitle(path: folder + "/movie.fr.vtt", format: .webVTT, language: "fr"),
            SidecarSubtitle(path: folder + "/movie.pt-BR.ass", format: .subStationAlpha, language: "pt-BR"),
            SidecarSubtitle(path: folder + "/movie.sdh.srt", format: .subRip, title: "sdh"),
        ]
        #expect(found == expected)
    }

    @Test func aMissingFolderHasNoSidecars() {
        #expect(SidecarSubtitle.find(forMediaAt: "/nonexistent-\(UUID().uuidString)/movie.mkv").isEmpty)
        #expect(SidecarSubtitle.find(forMediaAt: "/nonexistent-\(UUID().uuidString)/").isEmpty)
    }

    @Test(
        arguments: [
            ("movie.srt", "movie", SubtitleFormat.subRip, nil, nil),
            ("movie.2024.en.srt", "movie.2024", .subRip, "en", nil),
            ("movie.en.sdh.vtt", "movie", .webVTT, "en", "sdh"),
            ("movie.forced.fr.ass", "movie", .subStationAlpha, "fr", "forced"),
            ("movie.fr.en.srt", "movie", .subRip, "fr", "en"),
            ("movie.commentary.director.srt", "movie", .subRip, nil, "commentary director"),
            ("MOVIE.SSA", "movie", .subStationAlpha, nil, nil),
            ("Ünïcode.de.srt", "ünïcode", .subRip, "de", nil),
        ] as [(String, String, SubtitleFormat, String?, String?)]
    )
    func readsNames(name: String, baseName: String, format: SubtitleFormat, language: String?, title: String?) throws {
        let sidecar = try #require(SidecarSubtitle.sidecar(named: name, mediaBaseName: baseName))
        #expect(sidecar.path == name)
        #expect(sidecar.format == format)
        #expect(sidecar.language == language)
        #expect(sidecar.title == title)
    }

    @Test(arguments: [
        ("movie.txt", "movie"), ("movie", "movie"), ("movie.", "movie"), ("moviesrt", "movie"), ("movie2.srt", "movie"),
        ("other.srt", "movie"), ("movie.srt.gz", "movie"),
    ])
    func ignoresOtherNames(name: String, baseName: String) {
        #expect(SidecarSubtitle.sidecar(named: name, mediaBaseName: baseName) == nil)
    }

    @Test(arguments: [
        ("en", "en"), ("EN", "en"), ("eng", "en"), ("fre", "fr"), ("ger", "de"), ("deu", "de"), ("tlh", "tlh"),
        ("pt-BR", "pt-BR"), ("pt_br", "pt-BR"), ("zh-hant", "zh-Hant"), ("es-419", "es-419"),
        ("zh-Hans-CN", "zh-Hans-CN"), ("english", "en"), ("French", "fr"), ("GERMAN", "de"), ("spanish", "es"),
        ("español", "es"),
    ])
    func readsLanguages(word: String, tag: String) {
        #expect(SidecarSubtitle.languageTag(Substring(word)) == tag)
    }

    @Test(arguments: ["forced", "sdh", "cc", "x", "e1", "12", "en-", "en-b", "en-US-x-y", "e-US", "default", ""])
    func rejectsNonLanguages(word: String) {
        #expect(SidecarSubtitle.languageTag(Substring(word)) == nil)
    }

    @Test func baseNames() {
        #expect(SidecarSubtitle.baseName(of: "movie.mkv") == "movie")
        #expect(SidecarSubtitle.baseName(of: "my.movie.2024.mp4") == "my.movie.2024")
        #expect(SidecarSubtitle.baseName(of: "movie") == "movie")
        #expect(SidecarSubtitle.baseName(of: ".hidden") == ".hidden")
    }
}

/// Sidecar files that cannot be used: the cast goes on without them, and says which and why, as it does for a
/// broken cue.
@Suite struct UnusableSidecarTests {
    private static func castable(_ movie: String) async throws -> CastableFile {
        try await withMediaServer(reaching: "127.0.0.1") { server in
            try await server.castableFile(movie, device: DeviceMediaSupport(), contentType: "video/mp4")
        }
    }

    @Test func aSidecarThatIsNotSubtitlesIsSkippedWithAWarning() async throws {
        let folder = try TemporaryFolder()
        let movie = try folder.write("y.mp4", patternBytes(100))
        try folder.write("y.fr.srt", "1\n00:00:01,000 --> 00:00:02,000\nSalut\n")
        let broken = try folder.write("y.en.srt", [0x89, 0x50, 0x4E, 0x47, 0x00, 0x00, 0x00, 0x0D])
        let file = try await Self.castable(movie)
        #expect(file.media.tracks?.map(\.language) == ["fr"])
        #expect(file.warnings.count == 1)
        #expect(file.warnings.first?.hasPrefix(broken + ": ") == true, "\(file.warnings)")
        #expect(file.warnings.first?.contains("binary data") == true, "\(file.warnings)")
    }

    /// A named pipe beside the media is no sidecar: reading it would block the cast for ever.
    @Test(.timeLimit(.minutes(1))) func aNamedPipeIsNoSidecar() async throws {
        let folder = try TemporaryFolder()
        let movie = try folder.write("y.mp4", patternBytes(100))
        #expect(mkfifo(folder.path + "/y.en.srt", 0o644) == 0)
        let file = try await Self.castable(movie)
        #expect(file.media.tracks == nil)
    }

    /// Mode 000 keeps an unprivileged user out (root reads it all the same, so the test needs one).
    @Test(.enabled(if: getuid() != 0)) func anUnreadableSidecarIsSkippedWithAWarning() async throws {
        let folder = try TemporaryFolder()
        let movie = try folder.write("y.mp4", patternBytes(100))
        let locked = try folder.write("y.en.srt", "1\n00:00:01,000 --> 00:00:02,000\nHello\n")
        chmod(locked, 0)
        // The test command's unprivileged run keeps CAP_DAC_READ_SEARCH, which reads it all the same (access(2)
        // does not say so: it checks the real user, not the capabilities an open uses).
        let probe = open(locked, O_RDONLY)
        if probe >= 0 {
            close(probe)
            return
        }
        let file = try await Self.castable(movie)
        #expect(file.media.tracks == nil)
        #expect(file.warnings.count == 1)
        #expect(file.warnings.first?.hasPrefix(locked + ": cannot be read") == true, "\(file.warnings)")
        #expect(file.warnings.first?.contains(String(cString: strerror(EACCES))) == true, "\(file.warnings)")
    }
}
