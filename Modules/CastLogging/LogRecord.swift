// swift-cast — Apache-2.0

import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One message that passed the filter, fully resolved, as handed to a sink (the `GCKLoggerDelegate` payload).
///
/// Everything is already evaluated and merged, so a sink can format, store or forward it without knowing about
/// swift-log handlers, metadata providers or categories-as-metadata.
public struct LogRecord: Sendable {
    /// When the message was logged.
    public var date: Date
    /// The severity it was logged at.
    public var level: Logger.Level
    /// The component it came from (see ``CastLogCategory``), or the logger's label when it was never tagged.
    public var category: String
    /// The rendered message text.
    public var message: String
    /// Handler, provider and per-call metadata merged (per-call wins), without the `cast.category` key, which is
    /// lifted into ``category``.
    public var metadata: Logger.Metadata
    /// The error passed alongside the message, if any.
    public var error: (any Error)?
    /// The module that logged, as swift-log defines it.
    public var source: String
    /// The `#fileID` of the call site.
    public var file: String
    /// The function of the call site.
    public var function: String
    /// The line of the call site.
    public var line: UInt

    /// Creates a record; handlers build these, sinks and tests rarely need to.
    public init(
        date: Date,
        level: Logger.Level,
        category: String,
        message: String,
        metadata: Logger.Metadata = [:],
        error: (any Error)? = nil,
        source: String,
        file: String,
        function: String,
        line: UInt
    ) {
        self.date = date
        self.level = level
        self.category = category
        self.message = message
        self.metadata = metadata
        self.error = error
        self.source = source
        self.file = file
        self.function = function
        self.line = line
    }
}
