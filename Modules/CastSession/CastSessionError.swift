/// The one error type CastSession throws.
public struct CastSessionError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case deviceAuthenticationFailed
            case connectFailed, launchFailed, sessionNotFound, notConnected, suspended, timedOut
            case invalidNamespace, channelNotConnected, appStopped, resumeFailed, persistenceFailed
            case sessionInProgress, connectionLost, cancelled, invalidResponse, invalidArgument, noApplicationRunning
            case notSupported, refused
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The device runs no app to join (it shows its idle screen), or not the app asked for.
        public static let noApplicationRunning = Code(.noApplicationRunning)
        /// The device could not be reached (TCP or TLS failed).
        public static let connectFailed = Code(.connectFailed)
        /// The receiver refused to launch the app; ``CastSessionError/receiverReason`` says why (`NOT_FOUND`, …).
        public static let launchFailed = Code(.launchFailed)
        /// A session to resume or join no longer exists on the receiver.
        public static let sessionNotFound = Code(.sessionNotFound)
        /// There is no connected session.
        public static let notConnected = Code(.notConnected)
        /// The session is suspended (reconnecting); the request was not sent.
        public static let suspended = Code(.suspended)
        /// The receiver did not answer in time.
        public static let timedOut = Code(.timedOut)
        /// A custom channel namespace is not of the form `urn:x-cast:…`.
        public static let invalidNamespace = Code(.invalidNamespace)
        /// The custom channel is not connected (no session, or the app does not list its namespace).
        public static let channelNotConnected = Code(.channelNotConnected)
        /// The receiver app stopped (another sender stopped it, or it was replaced).
        public static let appStopped = Code(.appStopped)
        /// Reconnecting failed for good.
        public static let resumeFailed = Code(.resumeFailed)
        /// The session state could not be stored or read.
        public static let persistenceFailed = Code(.persistenceFailed)
        /// Another session is starting or running; end it first.
        public static let sessionInProgress = Code(.sessionInProgress)
        /// The connection to the device was lost.
        public static let connectionLost = Code(.connectionLost)
        /// The operation was cancelled.
        public static let cancelled = Code(.cancelled)
        /// An argument is out of range (for example a volume above 1).
        public static let invalidArgument = Code(.invalidArgument)
        /// The device cannot do this at all, so the request was not sent: its volume is fixed (`controlType`
        /// `fixed`), and setting or muting it would be ignored or refused.
        public static let notSupported = Code(.notSupported)
        /// The receiver refused the request (INVALID_REQUEST); ``CastSessionError/receiverReason`` says why
        /// (`INVALID_COMMAND`: it does not do this; `INVALID_SESSION_ID`: it does not know the session).
        public static let refused = Code(.refused)
        /// The receiver's answer could not be understood.
        public static let invalidResponse = Code(.invalidResponse)
        /// The device did not prove it is a genuine Cast device while `DeviceAuthPolicy.require` is set; the
        /// cause is the `CastTransportError` naming the failed step.
        public static let deviceAuthenticationFailed = Code(.deviceAuthenticationFailed)

        /// The code's name, as logs and `--json` output show it.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// The receiver's reason (for example LAUNCH_ERROR `NOT_FOUND`), when it gave one.
    public var receiverReason: String?
    /// The underlying error, if any.
    public var cause: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, receiverReason: String? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.receiverReason = receiverReason
        self.cause = cause
    }

    /// The code and message (and the cause, when there is one), for logs and the command line.
    public var description: String {
        var text = "\(code): \(message)"
        if let receiverReason { text += " [\(receiverReason)]" }
        return text
    }
}
