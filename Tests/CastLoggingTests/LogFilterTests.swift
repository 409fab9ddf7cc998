// swift-cast — Apache-2.0

import CastLogging
import Logging
import Testing

@Suite("LogFilter")
struct LogFilterTests {
    @Test("a literal rule beats every glob, whatever the order")
    func literalBeatsGlob() {
        let filter = LogFilter(categoryLevels: [
            .init("CastSession.Reconnect", level: .error),
            .init("CastSession*", level: .trace),
            .init("*Reconnect", level: .debug),
        ])
        #expect(filter.level(forCategory: "CastSession.Reconnect") == .error)
        #expect(filter.level(forCategory: "CastSession.Channel") == .trace)
    }

    @Test("a longer glob beats a shorter one, whatever the order")
    func longerGlobWins() {
        for rules in [
            [LogFilter.CategoryRule("CastSession*", level: .trace), .init("Cast*", level: .warning)],
            [LogFilter.CategoryRule("Cast*", level: .warning), .init("CastSession*", level: .trace)],
        ] {
            let filter = LogFilter(categoryLevels: rules)
            #expect(filter.level(forCategory: "CastSession.Channel") == .trace)
            #expect(filter.level(forCategory: "CastMedia") == .warning)
        }
    }

    @Test("equally specific rules: the one added later wins")
    func tieGoesToLater() {
        var filter = LogFilter()
        filter.setLevel(.debug, forCategory: "Cast*Channel")
        filter.setLevel(.warning, forCategory: "CastSession*")
        #expect(filter.level(forCategory: "CastSession.Channel") == .warning)

        filter.setLevel(.trace, forCategory: "Cast*Channel")
        #expect(filter.level(forCategory: "CastSession.Channel") == .trace)

        filter.setLevel(.error, forCategory: "CastMedia")
        filter.setLevel(.notice, forCategory: "CastMedia")
        #expect(filter.level(forCategory: "CastMedia") == .notice)
    }

    @Test("no matching rule falls back to minimumLevel")
    func fallback() {
        let filter = LogFilter(minimumLevel: .notice, categoryLevels: [.init("CastSession*", level: .trace)])
        #expect(filter.level(forCategory: "CastMedia") == .notice)
        #expect(LogFilter().level(forCategory: "anything") == .info)
    }

    @Test("allows combines disabled, level and message patterns")
    func allows() throws {
        var filter = LogFilter(categoryLevels: [.init("CastTransport.Heartbeat", level: .warning)])
        #expect(filter.allows(.warning, category: "CastTransport.Heartbeat", message: "late PONG"))
        #expect(!filter.allows(.notice, category: "CastTransport.Heartbeat", message: "late PONG"))
        #expect(filter.allows(.info, category: "CastMedia", message: "loaded"))

        try filter.addMessagePattern("PONG")
        #expect(!filter.allows(.error, category: "CastMedia", message: "loaded"))
        #expect(filter.allows(.error, category: "CastMedia", message: "no PONG"))

        filter.isDisabled = true
        #expect(!filter.allows(.critical, category: "CastMedia", message: "no PONG"))
        #expect(!LogFilter.disabled.allows(.critical, category: "CastApp", message: "x"))
    }

    @Test("no message patterns: every message passes")
    func noPatterns() {
        #expect(LogFilter().allowsMessage(""))
        #expect(LogFilter().allowsMessage("anything at all"))
    }

    @Test("message patterns: search anywhere, case-sensitive unless asked, any one suffices")
    func messagePatterns() throws {
        let filter = LogFilter(messagePatterns: [
            try .init("heartbeat", caseInsensitive: true),
            try .init("^PING \\d+$"),
        ])
        #expect(filter.allowsMessage("missed HEARTBEAT from device"))
        #expect(filter.allowsMessage("PING 42"))
        #expect(!filter.allowsMessage("ping 42"))
        #expect(!filter.allowsMessage("PING 42 again"))
        #expect(!filter.allowsMessage("media loaded"))
    }

    @Test("an invalid message pattern is rejected when created, naming the pattern and the reason")
    func invalidPattern() throws {
        let error = try #require(throws: CastLoggingError.self) {
            try LogFilter.MessagePattern("[unclosed")
        }
        #expect(error.code == .invalidPattern)
        #expect(error.message.contains("[unclosed"))
        #expect(error.message.contains("expected ']'"))
    }

    @Test("message patterns compare by text and flag")
    func patternEquality() throws {
        #expect(try LogFilter.MessagePattern("a") == LogFilter.MessagePattern("a"))
        #expect(try LogFilter.MessagePattern("a") != LogFilter.MessagePattern("a", caseInsensitive: true))
        #expect(try LogFilter.MessagePattern("a", caseInsensitive: true).description == "/a/i")
    }
}
