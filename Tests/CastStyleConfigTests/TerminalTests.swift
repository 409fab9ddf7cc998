// swift-cast — Apache-2.0

import CastStyleConfig
import Testing

@Suite("Colors")
struct CastColorTests {
    @Test(
        "accepted forms",
        arguments: [
            ("#f80", CastColor(red: 0xFF, green: 0x88, blue: 0x00)),
            ("#FF8800", CastColor(red: 0xFF, green: 0x88, blue: 0x00)),
            ("#ff880080", CastColor(red: 0xFF, green: 0x88, blue: 0x00, alpha: 0x80)),
            ("  steelblue ", CastColor(red: 0x46, green: 0x82, blue: 0xB4)),
            ("RebeccaPurple", CastColor(red: 0x66, green: 0x33, blue: 0x99)),
            ("grey", CastColor(red: 0x80, green: 0x80, blue: 0x80)),
            ("lightgoldenrodyellow", CastColor(red: 0xFA, green: 0xFA, blue: 0xD2)),
            ("transparent", CastColor.transparent),
        ]
    )
    func parse(text: String, expected: CastColor) {
        #expect(CastColor(parsing: text) == expected)
    }

    @Test(
        "rejected forms",
        arguments: ["", "#", "#12", "#1234", "#12345", "#1234567", "#GGG", "blu", "rgb(0,0,0)", "# fff"]
    )
    func reject(text: String) {
        #expect(CastColor(parsing: text) == nil)
    }

    @Test("the full CSS named-color list: 148 names, gray and grey both")
    func namedColors() {
        #expect(CastColor.namedColors.count == 148)
        for (gray, grey) in [("gray", "grey"), ("darkslategray", "darkslategrey"), ("lightgray", "lightgrey")] {
            #expect(CastColor.namedColors[gray] == CastColor.namedColors[grey])
        }
        #expect(CastColor.namedColors["aqua"] == CastColor.namedColors["cyan"])
        #expect(CastColor.namedColors["fuchsia"] == CastColor.namedColors["magenta"])
        #expect(CastColor.namedColors.keys.allSatisfy { $0 == $0.lowercased() })
    }

    @Test("description writes #rrggbb, adding alpha only when not opaque")
    func description() {
        #expect(CastColor(red: 1, green: 0xAB, blue: 0xFF).description == "#01abff")
        #expect(CastColor(red: 0, green: 0, blue: 0, alpha: 0x80).description == "#00000080")
    }
}

@Suite("Terminal colors")
struct TerminalTests {
    @Test(
        "mode detection",
        arguments: [
            ([String: String](), false, TerminalColorMode.none),
            (["COLORTERM": "truecolor", "TERM": "xterm-256color"], false, .none),
            (["COLORTERM": "truecolor", "TERM": "xterm-256color", "NO_COLOR": "1"], true, .none),
            (["TERM": "dumb", "COLORTERM": "truecolor"], true, .none),
            (["COLORTERM": "truecolor", "TERM": "xterm"], true, .trueColor),
            (["COLORTERM": "24bit"], true, .trueColor),
            (["COLORTERM": "TrueColor"], true, .trueColor),
            (["TERM": "xterm-256color"], true, .ansi256),
            (["TERM": "screen-256color", "COLORTERM": "yes"], true, .ansi256),
            (["TERM": "xterm"], true, .ansi16),
            ([:], true, .ansi16),
            // no-color.org: an empty NO_COLOR does not disable color.
            (["NO_COLOR": "", "TERM": "xterm-256color"], true, .ansi256),
        ]
    )
    func detect(environment: [String: String], isTTY: Bool, expected: TerminalColorMode) {
        #expect(TerminalColorMode.detect(environment: environment, isTTY: isTTY) == expected)
    }

    @Test("24-bit, 256 and 16 colors, foreground and background")
    func escapes() {
        let orange = CastColor(red: 0xFF, green: 0x88, blue: 0x00)
        #expect(TerminalStyler(mode: .trueColor).escape(foreground: orange) == "\u{1B}[38;2;255;136;0m")
        #expect(TerminalStyler(mode: .trueColor).escape(background: orange) == "\u{1B}[48;2;255;136;0m")
        #expect(TerminalStyler(mode: .ansi256).escape(foreground: orange) == "\u{1B}[38;5;208m")
        #expect(TerminalStyler(mode: .ansi256).escape(background: orange) == "\u{1B}[48;5;208m")
        #expect(TerminalStyler(mode: .ansi16).escape(foreground: CastColor(parsing: "red")) == "\u{1B}[91m")
        #expect(TerminalStyler(mode: .ansi16).escape(foreground: CastColor(parsing: "#cd0000")) == "\u{1B}[31m")
        #expect(TerminalStyler(mode: .ansi16).escape(background: CastColor(parsing: "navy")) == "\u{1B}[44m")
        #expect(TerminalStyler(mode: .ansi16).escape(background: CastColor(parsing: "white")) == "\u{1B}[107m")
    }

    @Test("font attributes come first, then colors")
    func attributes() {
        let font = FontStyle(isBold: true, isItalic: true, isUnderlined: true, isDim: true, family: "Menlo", size: "12")
        let styler = TerminalStyler(mode: .trueColor)
        #expect(
            styler.escape(
                foreground: .init(red: 1, green: 2, blue: 3),
                background: .init(red: 4, green: 5, blue: 6),
                font: font
            )
                == "\u{1B}[1;2;3;4;38;2;1;2;3;48;2;4;5;6m"
        )
        #expect(styler.escape(font: FontStyle(isBold: true)) == "\u{1B}[1m")
        #expect(styler.escape() == "")
        #expect(styler.reset == "\u{1B}[0m")
    }

    @Test("transparent colors and the none mode write nothing")
    func nothing() {
        let styler = TerminalStyler(mode: .trueColor)
        #expect(styler.escape(foreground: .transparent, background: .transparent) == "")
        #expect(styler.paint("x", foreground: .transparent) == "x")
        let none = TerminalStyler(mode: .none)
        #expect(none.escape(foreground: CastColor(parsing: "red"), font: FontStyle(isBold: true)) == "")
        #expect(none.paint("x", foreground: CastColor(parsing: "red")) == "x")
        #expect(none.reset == "")
        #expect(TerminalStyler(mode: .ansi16).paint("x", font: FontStyle(isBold: true)) == "\u{1B}[1mx\u{1B}[0m")
    }

    @Test(
        "256-color matching uses the cube or the gray ramp, whichever is nearer",
        arguments: [
            ("#000000", 16), ("#ffffff", 231), ("#ff0000", 196), ("#00ff00", 46), ("#0000ff", 21),
            ("#808080", 244), ("#121212", 233), ("#5f87af", 67), ("#eeeeee", 255),
        ]
    )
    func palette256(hex: String, index: Int) throws {
        let color = try #require(CastColor(parsing: hex))
        #expect(TerminalStyler.paletteIndex256(for: color) == index)
    }

    @Test(
        "16-color matching uses xterm's palette",
        arguments: [
            ("black", 0), ("#cd0000", 1), ("green", 2), ("#00cd00", 2), ("silver", 7), ("gray", 8), ("red", 9),
            ("yellow", 11), ("white", 15),
        ]
    )
    func palette16(name: String, index: Int) throws {
        let color = try #require(CastColor(parsing: name))
        #expect(TerminalStyler.paletteIndex16(for: color) == index)
    }

    @Test("a resolved style renders through the styler")
    func styledText() throws {
        let style = try CastStyle(
            xml: ##"<castViews xmlns="urn:swift-cast:style:1" headingTextColor="#ff0000""##
                + #" headingTextFont="bold underline"/>"#
        ).resolved()
        let mini = style.attributes(for: .miniController)
        let styler = TerminalStyler(mode: .ansi256)
        #expect(
            styler.paint("Title", foreground: mini.headingTextColor, font: mini.headingTextFont)
                == "\u{1B}[1;4;38;5;196mTitle\u{1B}[0m"
        )
    }
}

@Suite("Durations")
struct ConfigDurationTests {
    @Test(
        "parse",
        arguments: [
            ("5s", Duration.seconds(5)), ("500ms", .milliseconds(500)), ("1.5s", .milliseconds(1500)),
            ("2m", .seconds(120)), ("1h", .seconds(3600)), ("0.1s", .milliseconds(100)), (" 10s ", .seconds(10)),
            ("0s", .zero), ("0.001s", .milliseconds(1)), ("1.25ms", .microseconds(1250)),
        ]
    )
    func parse(text: String, expected: Duration) {
        #expect(ConfigDuration.parse(text) == expected)
    }

    @Test("reject", arguments: ["5", "s", "-1s", "1.s", ".5s", "1e3ms", "5 s", "5sec", "1..2s", "", "2000000s"])
    func reject(text: String) {
        #expect(ConfigDuration.parse(text) == nil)
    }

    @Test(
        "format uses the largest exact unit",
        arguments: [
            (Duration.seconds(10), "10s"), (.milliseconds(500), "500ms"), (.milliseconds(1500), "1.5s"),
            (.seconds(120), "2m"), (.seconds(7200), "2h"), (.zero, "0s"), (.seconds(90), "90s"),
            (.microseconds(1250), "0.00125s"),
        ]
    )
    func format(duration: Duration, expected: String) {
        #expect(ConfigDuration.format(duration) == expected)
        #expect(ConfigDuration.parse(expected) == duration)
    }
}
