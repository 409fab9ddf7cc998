// swift-cast — Apache-2.0

import CastLogging
import Logging
import Testing

@Suite("LogFilter command-line parsing")
struct LogFilterCommandLineTests {
    @Test("no options give the default filter")
    func defaults() throws {
        #expect(try LogFilter(level: nil, filterSpec: nil) == LogFilter())
        #expect(try LogFilter(level: nil, filterSpec: "") == LogFilter())
        #expect(try LogFilter(level: nil, filterSpec: "  ") == LogFilter())
    }

    @Test(
        "--log-level accepts every swift-log level, case-insensitively",
        arguments: [
            ("trace", Logger.Level.trace), ("debug", .debug), ("info", .info), ("notice", .notice),
            ("warning", .warning), ("error", .error), ("critical", .critical), ("DEBUG", .debug),
            (" Warning ", .warning),
        ]
    )
    func level(name: String, expected: Logger.Level) throws {
        let filter = try LogFilter(level: name, filterSpec: nil)
        #expect(filter.minimumLevel == expected)
        #expect(!filter.isDisabled)
    }

    @Test("--log-level off lets nothing through")
    func off() throws {
        let filter = try LogFilter(level: "off", filterSpec: "CastSession*=trace")
        #expect(filter.isDisabled)
        #expect(!filter.allows(.critical, category: "CastSession", message: "x"))
    }

    @Test("category rules keep their order and patterns")
    func categoryRules() throws {
        let filter = try LogFilter(level: "notice", filterSpec: "CastSession*=debug, Cast*Channel=TRACE")
        #expect(filter.minimumLevel == .notice)
        #expect(
            filter.categoryLevels == [
                .init("CastSession*", level: .debug),
                .init("Cast*Channel", level: .trace),
            ]
        )
        #expect(filter.messagePatterns.isEmpty)
        #expect(filter.level(forCategory: "CastTransport.Channel") == .trace)
        #expect(filter.level(forCategory: "CastSession.Reconnect") == .debug)
        #expect(filter.level(forCategory: "CastMedia") == .notice)
    }

    @Test("message patterns: flags, commas and escaped slashes inside the slashes")
    func messagePatterns() throws {
        let filter = try LogFilter(level: nil, filterSpec: "/heartbeat/i,/a{1,3}b/ , CastMedia=error,/x\\/y/")
        #expect(
            filter.messagePatterns == [
                try .init("heartbeat", caseInsensitive: true),
                try .init("a{1,3}b"),
                try .init("x\\/y"),
            ]
        )
        #expect(filter.categoryLevels == [.init("CastMedia", level: .error)])
        #expect(filter.allowsMessage("HeartBeat"))
        #expect(filter.allowsMessage("caab"))
        #expect(filter.allowsMessage("x/y"))
        #expect(!filter.allowsMessage("Heart beat"))
    }

    @Test(
        "errors name the offending item and carry a specific code",
        arguments: [
            ("verbose", nil, CastLoggingError.Code.invalidLevel, "verbose"),
            (nil, "CastSession*=debug,Cast=loud", .invalidLevel, "Cast=loud"),
            (nil, "Cast=off", .invalidLevel, "Cast=off"),
            (nil, "CastSession", .invalidFilter, "CastSession"),
            (nil, "=debug", .invalidFilter, "=debug"),
            (nil, "a=debug,,b=info", .invalidFilter, "empty item"),
            (nil, "a=debug,", .invalidFilter, "empty item"),
            (nil, "/abc", .invalidFilter, "/abc"),
            (nil, "/abc/x", .invalidFilter, "/abc/x"),
            (nil, "/[unclosed/", .invalidPattern, "/[unclosed/"),
            (nil, "a=info,//", .invalidPattern, "//"),
            (nil, "Cast Session=debug", .invalidPattern, "Cast Session"),
        ] as [(String?, String?, CastLoggingError.Code, String)]
    )
    func errors(level: String?, spec: String?, code: CastLoggingError.Code, fragment: String) throws {
        let error = try #require(throws: CastLoggingError.self) {
            try LogFilter(level: level, filterSpec: spec)
        }
        #expect(error.code == code)
        #expect(error.message.contains(fragment), "\(error)")
    }

    @Test("errors describe themselves as code: message")
    func errorDescription() {
        let error = CastLoggingError(code: .invalidFilter, message: "bad")
        #expect(error.description == "invalidFilter: bad")
        #expect(error == CastLoggingError(code: .invalidFilter, message: "bad"))
        #expect(error != CastLoggingError(code: .invalidPattern, message: "bad"))
    }
}
