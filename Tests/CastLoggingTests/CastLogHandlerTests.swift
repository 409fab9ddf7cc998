// swift-cast — Apache-2.0

import CastLogging
import Logging
import Testing

@Suite("CastLogHandler")
struct CastLogHandlerTests {
    private let heartbeatAtWarning = LogFilter(
        minimumLevel: .trace,
        categoryLevels: [.init(CategoryPattern(CastLogCategory.transportHeartbeat), level: .warning)]
    )

    @Test("a message filtered out by category level is never formatted")
    func filteredMessageCostsNothing() throws {
        let sink = RecordingSink()
        let counter = EvaluationCounter()
        let logger = Logger.recording(filter: heartbeatAtWarning, into: sink)
            .withCategory(CastLogCategory.transportHeartbeat)
        #expect(logger.logLevel == .warning)

        logger.debug("sent PING \(counter.bump())")
        #expect(counter.value == 0)
        #expect(sink.records.isEmpty)

        let line: UInt = #line + 1
        logger.error("missed PONG \(counter.bump())", metadata: [CastLogMetadataKey.peer: "127.0.0.1:8009"])
        #expect(counter.value == 1)
        let record = try #require(sink.records.first)
        #expect(sink.records.count == 1)
        #expect(record.category == CastLogCategory.transportHeartbeat)
        #expect(record.level == .error)
        #expect(record.message == "missed PONG expensive")
        #expect(record.metadata == [CastLogMetadataKey.peer: "127.0.0.1:8009"])
        #expect(record.file == #fileID)
        #expect(record.function == #function)
        #expect(record.line == line)
        #expect(record.source == "CastLoggingTests")
    }

    @Test("the category follows the metadata and falls back to the label")
    func categoryTracking() {
        let sink = RecordingSink()
        var logger = Logger.recording(label: "CastMedia", filter: heartbeatAtWarning, into: sink)
        #expect(logger.logLevel == .trace)

        logger = logger.withCategory(CastLogCategory.transportHeartbeat)
        #expect(logger.logLevel == .warning)

        logger[metadataKey: CastLogMetadataKey.category] = nil
        #expect(logger.logLevel == .trace)

        var handler = CastLogHandler(label: "app", filter: heartbeatAtWarning, sink: sink.receive)
        handler.metadata = [CastLogMetadataKey.category: "CastTransport.Heartbeat", "x": "1"]
        #expect(handler.category == "CastTransport.Heartbeat")
        #expect(handler.logLevel == .warning)
        handler.metadata = [:]
        #expect(handler.category == "app")
        #expect(handler.logLevel == .trace)
    }

    @Test("an explicitly assigned logLevel overrides the filter, also after category changes")
    func explicitLevel() {
        var logger = Logger.recording(filter: heartbeatAtWarning, into: RecordingSink())
        logger.logLevel = .error
        logger = logger.withCategory(CastLogCategory.transportHeartbeat)
        #expect(logger.logLevel == .error)
    }

    @Test("handler, provider and per-call metadata merge, per-call winning; the category key is lifted out")
    func metadataMerge() throws {
        let sink = RecordingSink()
        let provider = Logger.MetadataProvider { ["provided": "p", "shared": "provider"] }
        var logger = Logger(label: "test") { label in
            CastLogHandler(label: label, filter: LogFilter(), metadataProvider: provider, sink: sink.receive)
        }
        logger = logger.withCategory(CastLogCategory.session)
        logger[metadataKey: CastLogMetadataKey.sessionID] = "s-1"
        logger[metadataKey: "shared"] = "handler"

        logger.info("joined", metadata: ["shared": "call", CastLogMetadataKey.category: "Other"])

        let record = try #require(sink.records.first)
        #expect(record.category == CastLogCategory.session)
        #expect(record.metadata == [CastLogMetadataKey.sessionID: "s-1", "provided": "p", "shared": "call"])
    }

    @Test("message patterns are applied after the level check")
    func messagePatterns() throws {
        let sink = RecordingSink()
        let filter = LogFilter(messagePatterns: [try .init("pong", caseInsensitive: true)])
        let logger = Logger.recording(filter: filter, into: sink)
        logger.info("sent PING")
        logger.info("got PONG")
        #expect(sink.records.map(\.message) == ["got PONG"])
    }

    @Test("a disabled filter drops even critical messages")
    func disabled() {
        let sink = RecordingSink()
        let logger = Logger.recording(filter: .disabled, into: sink)
        #expect(logger.logLevel == .critical)
        logger.critical("boom")
        #expect(sink.records.isEmpty)
    }

    @Test("errors logged alongside a message reach the record")
    func error() throws {
        struct Failure: Error {}
        let sink = RecordingSink()
        Logger.recording(filter: LogFilter(), into: sink).error("failed", error: Failure())
        #expect(try #require(sink.records.first).error is Failure)
    }

    @Test("castDisabled drops everything below critical and ignores categories")
    func castDisabled() {
        let logger = Logger.castDisabled.withCategory(CastLogCategory.app)
        let counter = EvaluationCounter()
        #expect(logger.label == "cast.disabled")
        #expect(logger.logLevel == .critical)
        logger.error("\(counter.bump())")
        #expect(counter.value == 0)
    }

    @Test("withMetadata tags a real logger, and leaves castDisabled untouched (its metadata never made)")
    func withMetadata() throws {
        let sink = RecordingSink()
        let logger = Logger.recording(filter: LogFilter(minimumLevel: .trace), into: sink)
            .withCategory(CastLogCategory.session)
            .withMetadata([CastLogMetadataKey.sessionID: "s1", CastLogMetadataKey.deviceID: "d1"])
        logger.info("started")
        let record = try #require(sink.records.first)
        #expect(record.category == CastLogCategory.session)
        #expect(record.metadata[CastLogMetadataKey.sessionID] == "s1")
        #expect(record.metadata[CastLogMetadataKey.deviceID] == "d1")

        let counter = EvaluationCounter()
        let disabled = Logger.castDisabled.withMetadata([CastLogMetadataKey.sessionID: "\(counter.bump())"])
        #expect(counter.value == 0)
        #expect(disabled[metadataKey: CastLogMetadataKey.sessionID] == nil)
        #expect(disabled.withCategory(CastLogCategory.session)[metadataKey: CastLogMetadataKey.category] == nil)
    }

    @Test("the category vocabulary is complete and unique")
    func categories() {
        #expect(CastLogCategory.all.count == 17)
        #expect(Set(CastLogCategory.all).count == CastLogCategory.all.count)
        #expect(CastLogCategory.all.allSatisfy { $0.hasPrefix("Cast") })
    }
}
