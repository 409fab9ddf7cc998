/// The one error type CastStreaming throws.
public struct CastStreamingError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case malformedPacket, invalidOffer, invalidAnswer, answerTimedOut, offerRejected, noStreamSelected
            case frameRefused, socketFailed, encoderFailed, captureFailed, toolMissing, sessionEnded
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// An RTP or RTCP datagram does not follow the Cast layout (too short, wrong version, truncated, …).
        public static let malformedPacket = Code(.malformedPacket)
        /// An OFFER is missing a required field or has one out of range.
        public static let invalidOffer = Code(.invalidOffer)
        /// An ANSWER is missing a required field, or names streams that were not offered.
        public static let invalidAnswer = Code(.invalidAnswer)
        /// No ANSWER came within the timeout.
        public static let answerTimedOut = Code(.answerTimedOut)
        /// The receiver answered the OFFER with an error (its code and description are in the message).
        public static let offerRejected = Code(.offerRejected)
        /// The receiver accepted none of the offered streams.
        public static let noStreamSelected = Code(.noStreamSelected)
        /// A frame cannot be sent now: too many frames in flight, too much media in flight, or too large.
        public static let frameRefused = Code(.frameRefused)
        /// The UDP socket could not be opened or failed.
        public static let socketFailed = Code(.socketFailed)
        /// The video or audio encoder refused its settings or a frame.
        public static let encoderFailed = Code(.encoderFailed)
        /// The capture (ffmpeg) could not start or ended with an error.
        public static let captureFailed = Code(.captureFailed)
        /// A tool the capture needs (ffmpeg) is not installed.
        public static let toolMissing = Code(.toolMissing)
        /// The mirroring app stopped, or another sender took it over.
        public static let sessionEnded = Code(.sessionEnded)

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
