// swift-cast — Apache-2.0

import CastLogging
import Foundation
import Logging
import Testing

@Suite("StandardErrorLogSink")
struct StandardErrorLogSinkTests {
    private func record(
        at seconds: TimeInterval = 1_795_341_600.123,
        message: String = "sent PING",
        metadata: Logger.Metadata = [:],
        error: (any Error)? = nil
    ) -> LogRecord {
        LogRecord(
            date: Date(timeIntervalSince1970: seconds),
            level: .debug,
            category: CastLogCategory.transportHeartbeat,
            message: message,
            metadata: metadata,
            error: error,
            source: "CastTransport",
            file: "CastTransport/Heartbeat.swift",
            function: "sendPing()",
            line: 42
        )
    }

    @Test("one line: timestamp, level, category, message, sorted metadata")
    func format() {
        let line = StandardErrorLogSink.format(
            record(metadata: [CastLogMetadataKey.peer: "127.0.0.1:8009", CastLogMetadataKey.deviceID: "abc"])
        )
        #expect(
            line
                == "2026-11-22T10:00:00.123Z debug [CastTransport.Heartbeat] sent PING"
                + " cast.device_id=abc cast.peer=127.0.0.1:8009"
        )
    }

    @Test("values with spaces or quotes, and empty values, are quoted; line breaks are escaped")
    func quoting() {
        let line = StandardErrorLogSink.format(
            record(message: "two\nlines", metadata: ["a": "hello world", "b": "", "c": "say \"hi\""])
        )
        #expect(line.hasSuffix(#"two\nlines a="hello world" b="" c="say \"hi\"""#))
        #expect(!line.contains("\n"))
    }

    @Test("a logged error is appended")
    func error() {
        struct Failure: Error, CustomStringConvertible {
            var description: String { "connection reset" }
        }
        #expect(StandardErrorLogSink.format(record(error: Failure())).hasSuffix(#"sent PING error="connection reset""#))
    }

    @Test(
        "timestamps are ISO-8601 UTC with milliseconds",
        arguments: [
            (0.0, "1970-01-01T00:00:00.000Z"),
            (-0.001, "1969-12-31T23:59:59.999Z"),
            (1_709_210_096.789, "2024-02-29T12:34:56.789Z"),
            (951_868_800.0, "2000-03-01T00:00:00.000Z"),
            (946_684_799.999, "1999-12-31T23:59:59.999Z"),
            (4_107_542_400.5, "2100-03-01T00:00:00.500Z"),
        ]
    )
    func timestamp(seconds: TimeInterval, expected: String) {
        #expect(StandardErrorLogSink.timestamp(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test("writing to standard error does not crash")
    func write() {
        StandardErrorLogSink.write(record(message: "StandardErrorLogSinkTests: this line is expected in test output"))
    }
}
