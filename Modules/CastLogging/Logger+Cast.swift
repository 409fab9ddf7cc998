// swift-cast — Apache-2.0

import Logging

extension Logger {
    /// A logger that drops everything, used as the default so libraries stay silent unless an app passes a logger.
    ///
    /// Its level is `.critical` (the quietest swift-log offers), so only critical messages are even formatted.
    public static var castDisabled: Logger {
        Logger(label: "cast.disabled", factory: { _ in SwiftLogNoOpLogHandler() })
    }

    /// Returns a copy tagged with `category` (see ``CastLogCategory``) in the `cast.category` metadata.
    ///
    /// Tag once, when a component stores its logger, rather than per call: ``CastLogHandler`` recomputes its
    /// `logLevel` on this metadata write, so messages the filter rejects for the category are skipped before
    /// their interpolations are evaluated. Other handlers just see ordinary metadata.
    public func withCategory(_ category: String) -> Logger {
        withMetadata([CastLogMetadataKey.category: "\(category)"])
    }

    /// Returns a copy with `metadata` added, for a component to tag its logger once (a session id, a peer).
    ///
    /// A logger that drops everything (``castDisabled``) comes back as is, its metadata never made: a copy of
    /// its storage and dictionary would be a few hundred bytes for each of thousands of idle sessions.
    public func withMetadata(_ metadata: @autoclosure () -> Logger.Metadata) -> Logger {
        if handler is SwiftLogNoOpLogHandler { return self }
        var logger = self
        for (key, value) in metadata() { logger[metadataKey: key] = value }
        return logger
    }
}
