// swift-cast — Apache-2.0

import CastLogging
import Logging
import NIOConcurrencyHelpers

/// Collects records in memory so tests can inspect exactly what a handler emitted.
final class RecordingSink: Sendable {
    private let storage = NIOLockedValueBox<[LogRecord]>([])

    var records: [LogRecord] {
        storage.withLockedValue { $0 }
    }

    @Sendable func receive(_ record: LogRecord) {
        storage.withLockedValue { $0.append(record) }
    }
}

/// Counts evaluations of a log message's interpolation, to prove filtered messages are never formatted.
final class EvaluationCounter: Sendable {
    private let storage = NIOLockedValueBox(0)

    var value: Int {
        storage.withLockedValue { $0 }
    }

    func bump() -> String {
        storage.withLockedValue { $0 += 1 }
        return "expensive"
    }
}

extension Logger {
    /// A logger backed by `CastLogHandler`, built without touching the process-global `LoggingSystem`.
    static func recording(label: String = "test", filter: LogFilter, into sink: RecordingSink) -> Logger {
        Logger(label: label, factory: { label in CastLogHandler(label: label, filter: filter, sink: sink.receive) })
    }
}
