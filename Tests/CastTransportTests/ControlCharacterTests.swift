import Testing

@testable import CastTransport

/// Names and titles from the network lose their control characters before they are shown: a title with a
/// terminal's escape sequences once cleared the screen of `cast remote` and retitled its window.
@Suite struct ControlCharacterTests {
    @Test func escapesBellsNewlinesAndC1BecomeSpaces() {
        #expect(
            "Evil\u{1B}[2J\u{1B}]0;pwned\u{07}Title\nfake line".withoutControlCharacters
                == "Evil [2J ]0;pwned Title fake line"
        )
        #expect("a\u{7F}b\u{9B}c\r\td".withoutControlCharacters == "a b c  d")
    }

    @Test func printableTextIsLeftAsItIs() {
        let text = "Café — 東京 🎬 \u{A0}ok"
        #expect(text.withoutControlCharacters == text)
    }
}
