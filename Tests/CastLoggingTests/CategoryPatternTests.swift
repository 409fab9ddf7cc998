// swift-cast — Apache-2.0

import CastLogging
import Testing

@Suite("CategoryPattern")
struct CategoryPatternTests {
    @Test(
        "glob matching",
        arguments: [
            ("CastSession", "CastSession", true),
            ("CastSession", "CastSession.Reconnect", false),
            ("CastSession", "castsession", false),
            ("", "", true),
            ("", "CastApp", false),
            ("*", "", true),
            ("*", "CastTransport.Heartbeat", true),
            ("**", "", true),
            ("?", "", false),
            ("?", "a", true),
            ("??", "ab", true),
            ("*?", "", false),
            ("Cast?ession", "CastSession", true),
            ("Cast?ession", "Castession", false),
            ("CastSession*", "CastSession", true),
            ("CastSession*", "CastSession.Reconnect", true),
            ("CastSession*", "CastMedia", false),
            ("Cast*Channel", "CastTransport.Channel", true),
            ("Cast*Channel", "CastSession.Channel", true),
            ("Cast*Channel", "CastSession.Channels", false),
            ("*.Channel", "CastTransport.Channel", true),
            ("*.Channel", "Channel", false),
            ("*ab", "aab", true),
            ("a*b", "aXbYb", true),
            ("a*b", "aXbYc", false),
            ("a*b*c", "abc", true),
            ("a*b*c", "acb", false),
        ]
    )
    func matching(pattern: String, category: String, expected: Bool) {
        #expect(CategoryPattern(pattern).matches(category) == expected)
    }

    @Test("pathological globs run in linear-ish time", .timeLimit(.minutes(1)))
    func pathological() {
        // Backtracking would take astronomically long on this input: the time limit is the guard.
        let pattern: CategoryPattern = "a*a*a*a*b"
        let noMatch = String(repeating: "a", count: 100_000)
        let match = noMatch + "b"
        #expect(!pattern.matches(noMatch))
        #expect(pattern.matches(match))
    }

    @Test("literal detection")
    func literal() {
        #expect(CategoryPattern("CastSession.Reconnect").isLiteral)
        #expect(CategoryPattern("").isLiteral)
        #expect(!CategoryPattern("CastSession*").isLiteral)
        #expect(!CategoryPattern("Cast?ession").isLiteral)
    }

    @Test("specificity: literal beats any glob, then more literal characters win")
    func specificity() {
        let literal = CategoryPattern("Cast").specificity
        let longGlob = CategoryPattern("CastSession.Reconnec?").specificity
        let shortGlob = CategoryPattern("Cast*").specificity
        #expect(literal > longGlob)
        #expect(longGlob > shortGlob)
        #expect(CategoryPattern("Cast*Channel").specificity == CategoryPattern("CastSession*").specificity)
        #expect(CategoryPattern("*").specificity.literalCharacterCount == 0)
    }
}
