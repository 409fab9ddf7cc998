import Testing

@testable import CastControllers

/// Lines cut to the terminal's width, colours kept: a wrapped line made the mini controller's redraws pile up.
@Suite struct TerminalTextTests {
    @Test func plainTextIsCutAtTheWidth() {
        #expect(TerminalText.clipped("space play/pause  ←/→ seek", toColumns: 10) == "space play\u{1B}[0m")
        #expect(TerminalText.clipped("short", toColumns: 10) == "short")
    }

    @Test func escapeSequencesAreKeptAndTakeNoCells() {
        let styled = "\u{1B}[1;33m▶\u{1B}[0m Movie"
        #expect(TerminalText.clipped(styled, toColumns: 7) == styled)
        #expect(TerminalText.clipped(styled, toColumns: 4) == "\u{1B}[1;33m▶\u{1B}[0m Mo\u{1B}[0m")
    }

    @Test func wideCharactersTakeTwoCells() {
        #expect(TerminalText.clipped("東京タワー", toColumns: 5) == "東京\u{1B}[0m")
        #expect(TerminalText.cells("e") == 1 && TerminalText.cells("\u{301}") == 0 && TerminalText.cells("🎬") == 2)
    }
}
