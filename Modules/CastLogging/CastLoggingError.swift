// swift-cast — Apache-2.0

/// The one error type of CastLogging; switch on ``code`` and show ``message`` to the user.
///
/// A struct with an open set of codes rather than an enum, so new failure kinds can be added without breaking
/// clients that switch exhaustively.
public struct CastLoggingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure, stable across releases, for programmatic handling.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidLevel
            case invalidFilter
            case invalidPattern
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// A level name that is not one of swift-log's levels (or `off` where that is allowed).
        public static let invalidLevel = Code(.invalidLevel)
        /// A `--log-filter` item that is neither `PATTERN=LEVEL` nor `/REGEX/` (or `/REGEX/i`).
        public static let invalidFilter = Code(.invalidFilter)
        /// A category pattern or message regular expression that cannot be used.
        public static let invalidPattern = Code(.invalidPattern)

        /// The code's name, e.g. `invalidLevel`.
        public var description: String { base.rawValue }
    }

    /// What went wrong, in general.
    public var code: Code
    /// What went wrong, specifically: names the offending input and why it was rejected, ready to print.
    public var message: String

    /// Creates an error; `message` should quote the offending input so users can find it in their command line.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`, suitable for a CLI error line.
    public var description: String { "\(code): \(message)" }
}
