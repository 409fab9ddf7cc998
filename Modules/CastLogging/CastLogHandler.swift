// swift-cast — Apache-2.0

import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A swift-log handler that applies a ``LogFilter`` per category and passes surviving messages to a sink.
///
/// The `GCKLoggerDelegate` equivalent, installed by apps, usually through
/// ``CastLoggingSystem/bootstrap(filter:metadataProvider:sink:)``.
/// Its category is the `cast.category` metadata value when set (see ``Logging/Logger/withCategory(_:)``), else
/// the logger's label. Its ``logLevel`` follows the filter's level for that category and is recomputed whenever
/// the category changes, so `Logger` rejects filtered-out messages before evaluating their text. Message
/// patterns, which need the text, are applied afterwards in ``log(event:)``.
public struct CastLogHandler: LogHandler {
    /// The label of the logger this handler was made for; the category when none is set in metadata.
    public let label: String
    /// The filter deciding what passes; fixed per handler so the cached level can never go stale.
    public let filter: LogFilter
    /// Supplies contextual metadata (e.g. from task-locals) merged into each record.
    public var metadataProvider: Logger.MetadataProvider?
    /// The category the filter is applied to.
    public private(set) var category: String

    private let sink: @Sendable (LogRecord) -> Void
    private var storedMetadata: Logger.Metadata = [:]
    private var categoryLevel: Logger.Level
    private var explicitLogLevel: Logger.Level? = nil

    /// Creates a handler; `sink` receives each record that passes and must be thread-safe, as loggers are shared.
    public init(
        label: String,
        filter: LogFilter,
        metadataProvider: Logger.MetadataProvider? = nil,
        sink: @escaping @Sendable (LogRecord) -> Void
    ) {
        self.label = label
        self.filter = filter
        self.metadataProvider = metadataProvider
        self.sink = sink
        self.category = label
        self.categoryLevel = Self.level(for: label, in: filter)
    }

    /// The filter's level for the current category, unless assigned.
    ///
    /// Assigning a level overrides the filter's category level for this handler copy from then on, including
    /// after later category changes; this follows swift-log's contract that `logger.logLevel = x` takes effect.
    /// Libraries should not assign it: it defeats the app's filter. ``LogFilter/isDisabled`` and message patterns
    /// still apply.
    public var logLevel: Logger.Level {
        get { explicitLogLevel ?? categoryLevel }
        set { explicitLogLevel = newValue }
    }

    /// The handler's metadata; assigning it re-derives the category from its `cast.category` entry.
    public var metadata: Logger.Metadata {
        get { storedMetadata }
        set {
            storedMetadata = newValue
            updateCategory()
        }
    }

    /// One metadata entry; writing `cast.category` re-derives the category and therefore ``logLevel``.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { storedMetadata[key] }
        set {
            storedMetadata[key] = newValue
            if key == CastLogMetadataKey.category {
                updateCategory()
            }
        }
    }

    /// Applies ``LogFilter/isDisabled`` and the message patterns, then hands the merged record to the sink.
    ///
    /// The level was already checked by `Logger` against ``logLevel``. A per-call `cast.category` is dropped
    /// rather than used, since the level decision was made for the handler's category.
    public func log(event: LogEvent) {
        guard !filter.isDisabled else {
            return
        }
        let message = event.message.description
        guard filter.allowsMessage(message) else {
            return
        }
        var metadata = storedMetadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            metadata.merge(provided) { _, new in new }
        }
        if let perCall = event.metadata, !perCall.isEmpty {
            metadata.merge(perCall) { _, new in new }
        }
        metadata[CastLogMetadataKey.category] = nil
        sink(
            LogRecord(
                date: Date(),
                level: event.level,
                category: category,
                message: message,
                metadata: metadata,
                error: event.error,
                source: event.source,
                file: event.file,
                function: event.function,
                line: event.line
            )
        )
    }

    private mutating func updateCategory() {
        let newCategory = storedMetadata[CastLogMetadataKey.category].map { "\($0)" } ?? label
        guard newCategory != category else {
            return
        }
        category = newCategory
        categoryLevel = Self.level(for: newCategory, in: filter)
    }

    /// `.critical` when disabled: swift-log has nothing higher, and ``log(event:)`` drops the rest.
    private static func level(for category: String, in filter: LogFilter) -> Logger.Level {
        filter.isDisabled ? .critical : filter.level(forCategory: category)
    }
}
