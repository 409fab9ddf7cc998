/// The one error type CastReceiver throws.
public struct CastReceiverError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidConfiguration, listenFailed, notRunning, toolMissing
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A configuration value is unusable (a duplicate app id, an unreadable certificate, …).
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The device could not listen on its address and port.
        public static let listenFailed = Code(.listenFailed)
        /// The operation needs a started device.
        public static let notRunning = Code(.notRunning)
        /// An external program a feature needs (ffmpeg, to decode what a mirroring session receives) is not
        /// installed; the message says what to install.
        public static let toolMissing = Code(.toolMissing)

        /// The code's name, as logs and `--json` output show it.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// The underlying error, if any.
    public var cause: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// The code and message (and the cause, when there is one), for logs and the command line.
    public var description: String { "\(code): \(message)" }
}
