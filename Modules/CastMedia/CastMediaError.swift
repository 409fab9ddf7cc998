import CastTransport

/// The one error type CastMedia throws.
public struct CastMediaError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case noMediaSession, notSupported, invalidRequest, invalidResponse, loadFailed, loadCancelled
            case invalidPlayerState, receiverError, notConnected, connectionLost, timedOut, imageDownloadFailed
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The command needs a media session and there is none (nothing loaded, or it ended).
        public static let noMediaSession = Code(.noMediaSession)
        /// The current media status does not advertise the command (`supportedMediaCommands`), so it was not sent.
        public static let notSupported = Code(.notSupported)
        /// The request is malformed before sending (an empty queue, a rate out of range, …), or the receiver
        /// answered INVALID_REQUEST (its reason is in ``CastMediaError/receiverReason``).
        public static let invalidRequest = Code(.invalidRequest)
        /// The receiver's answer could not be understood.
        public static let invalidResponse = Code(.invalidResponse)
        /// The receiver could not load the media (LOAD_FAILED); see ``CastMediaError/detailedErrorCode``.
        public static let loadFailed = Code(.loadFailed)
        /// A newer load replaced this one (LOAD_CANCELLED).
        public static let loadCancelled = Code(.loadCancelled)
        /// The command is not valid in the player's state (INVALID_PLAYER_STATE).
        public static let invalidPlayerState = Code(.invalidPlayerState)
        /// Any other error the receiver reported (`ERROR`).
        public static let receiverError = Code(.receiverError)
        /// The media channel is not connected (no session, or it is suspended).
        public static let notConnected = Code(.notConnected)
        /// The connection dropped while the request was outstanding.
        public static let connectionLost = Code(.connectionLost)
        /// No reply came in time.
        public static let timedOut = Code(.timedOut)
        /// An image could not be fetched or cached.
        public static let imageDownloadFailed = Code(.imageDownloadFailed)

        /// The code's name, as logs and `--json` output show it.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// The receiver's `reason` (for example `INVALID_MEDIA_SESSION_ID`), when it gave one.
    public var receiverReason: String?
    /// The receiver's `detailedErrorCode` (for example 104, MEDIA_SRC_NOT_SUPPORTED), when it gave one.
    public var detailedErrorCode: Int?
    /// The underlying error, if any.
    public var cause: (any Error)?

    /// Creates an error.
    public init(
        _ code: Code,
        _ message: String,
        receiverReason: String? = nil,
        detailedErrorCode: Int? = nil,
        cause: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.receiverReason = receiverReason
        self.detailedErrorCode = detailedErrorCode
        self.cause = cause
    }

    /// The code and message (and the cause, when there is one), for logs and the command line.
    public var description: String {
        var text = "\(code): \(message)"
        if let receiverReason { text += " [\(receiverReason)]" }
        if let detailedErrorCode { text += " [detailedErrorCode \(detailedErrorCode)]" }
        return text
    }
}
