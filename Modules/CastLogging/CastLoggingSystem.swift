// swift-cast — Apache-2.0

import Logging

/// The one-call logging setup for apps built on the framework.
///
/// Only executables call this, once, early in `main`: swift-log's `LoggingSystem` is process-global and may be
/// bootstrapped only once, so a library doing it would take the decision away from the app (and crash if the app
/// does it too). Libraries accept a `Logger` instead and default to ``Logging/Logger/castDisabled``.
public enum CastLoggingSystem {
    /// Installs ``CastLogHandler`` with `filter` as the factory for every `Logger(label:)` in the process.
    ///
    /// `sink` defaults to ``StandardErrorLogSink``; pass another to forward records elsewhere (it must be
    /// thread-safe). `metadataProvider` adds contextual metadata, such as task-local request IDs, to every record.
    public static func bootstrap(
        filter: LogFilter,
        metadataProvider: Logger.MetadataProvider? = nil,
        sink: @escaping @Sendable (LogRecord) -> Void = StandardErrorLogSink.write
    ) {
        LoggingSystem.bootstrap(
            { label, provider in
                CastLogHandler(label: label, filter: filter, metadataProvider: provider, sink: sink)
            },
            metadataProvider: metadataProvider
        )
    }
}
