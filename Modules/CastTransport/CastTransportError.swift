/// The one error type CastTransport throws.
///
/// Errors are compared by ``code``; the ``message`` says what happened in words a person can act on.
/// New codes can be added without breaking callers, which is why this is a struct and not an enum.
public struct CastTransportError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; stable, suitable for `switch`-like matching with `==` and for metrics.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case emptyFrame, frameTooLarge, truncatedFrame, malformedMessage, missingRequiredFields
            case payloadMismatch, unsupportedProtocolVersion, messageTooLarge, invalidPayload
            case connectFailed, tlsHandshakeFailed, tlsFailure, notTLS
            case connectionClosed, heartbeatTimeout, requestTimedOut, notConnected, invalidNamespace
            case authNotConfigured, authTimedOut, authErrorReply, authMalformedReply, authNonceMismatch
            case authTLSCertificateExpired, authTLSCertificateLifetime, authUntrustedRoot, authIntermediateMissing
            case authCertificateExpired, authInvalidCertificate, authRevoked, authWeakHash, authInvalidSignature
            case authSignatureMismatch, authAudioOnlyDevice
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A frame given to `CastMessage(frame:)` declared a body length of zero (a connection skips such frames).
        public static let emptyFrame = Code(.emptyFrame)
        /// A frame declared a body longer than the 64 KiB limit; rejected before any of it is buffered.
        public static let frameTooLarge = Code(.frameTooLarge)
        /// The connection ended in the middle of a frame.
        public static let truncatedFrame = Code(.truncatedFrame)
        /// A frame's body is not a decodable `CastMessage` protobuf.
        public static let malformedMessage = Code(.malformedMessage)
        /// A frame's body decoded but lacks a field the protocol requires (source, destination, namespace, …).
        public static let missingRequiredFields = Code(.missingRequiredFields)
        /// The payload field does not match `payload_type` (for example BINARY with no binary payload).
        public static let payloadMismatch = Code(.payloadMismatch)
        /// The message uses a protocol version this library does not speak (chunked v1.1/v1.2 messages).
        public static let unsupportedProtocolVersion = Code(.unsupportedProtocolVersion)
        /// An outgoing message would exceed the 64 KiB frame limit.
        public static let messageTooLarge = Code(.messageTooLarge)
        /// A STRING payload is not the JSON object the namespace requires.
        public static let invalidPayload = Code(.invalidPayload)
        /// The TCP connection could not be established (refused, unreachable, timed out).
        public static let connectFailed = Code(.connectFailed)
        /// The TLS handshake failed; the message carries OpenSSL's reason.
        public static let tlsHandshakeFailed = Code(.tlsHandshakeFailed)
        /// TLS failed after the handshake (bad record, unexpected alert, …).
        public static let tlsFailure = Code(.tlsFailure)
        /// The peer sent bytes that are not TLS at all.
        public static let notTLS = Code(.notTLS)
        /// The connection is closed, or closed while the operation was outstanding.
        public static let connectionClosed = Code(.connectionClosed)
        /// No inbound traffic for longer than the heartbeat's dead-peer limit.
        public static let heartbeatTimeout = Code(.heartbeatTimeout)
        /// A request got no reply within its timeout.
        public static let requestTimedOut = Code(.requestTimedOut)
        /// The operation needs a connection (or virtual connection) that does not exist.
        public static let notConnected = Code(.notConnected)
        /// A namespace does not have the `urn:x-cast:` form.
        public static let invalidNamespace = Code(.invalidNamespace)

        // Device authentication (`tp.deviceauth`), one code per step that can fail, in the order they are checked.

        /// Authentication is required but cannot be done: no trust anchors, or unreadable ones.
        public static let authNotConfigured = Code(.authNotConfigured)
        /// The device did not answer the challenge within the timeout.
        public static let authTimedOut = Code(.authTimedOut)
        /// The device answered the challenge with an error (it has no credentials, or not the algorithm asked).
        public static let authErrorReply = Code(.authErrorReply)
        /// The answer is not a binary `DeviceAuthMessage` with a response, or its certificates do not parse.
        public static let authMalformedReply = Code(.authMalformedReply)
        /// The answer does not echo the challenge's nonce (a replayed answer).
        public static let authNonceMismatch = Code(.authNonceMismatch)
        /// The certificate the device presented in TLS is outside its validity window now.
        public static let authTLSCertificateExpired = Code(.authTLSCertificateExpired)
        /// The TLS certificate lives longer than Cast devices' certificates may (4 days, as Chrome requires).
        public static let authTLSCertificateLifetime = Code(.authTLSCertificateLifetime)
        /// The device certificate's chain ends at a root that is not a trust anchor.
        public static let authUntrustedRoot = Code(.authUntrustedRoot)
        /// The device certificate's issuer is neither among the intermediates sent nor a trust anchor.
        public static let authIntermediateMissing = Code(.authIntermediateMissing)
        /// The device certificate or an intermediate is expired or not yet valid.
        public static let authCertificateExpired = Code(.authCertificateExpired)
        /// The chain is otherwise invalid: a bad certificate signature, a CA flag or key usage missing, …
        public static let authInvalidCertificate = Code(.authInvalidCertificate)
        /// A certificate of the chain is revoked by the device's CRL (checked only when asked).
        public static let authRevoked = Code(.authRevoked)
        /// The device signed with SHA-1 where SHA-256 is required.
        public static let authWeakHash = Code(.authWeakHash)
        /// The signature was not made with the device certificate's key.
        public static let authInvalidSignature = Code(.authInvalidSignature)
        /// The device certificate's key signed, but not this nonce and this connection's TLS certificate: the
        /// answer belongs to another connection (a relay in the middle).
        public static let authSignatureMismatch = Code(.authSignatureMismatch)
        /// The device certificate is for audio-only devices, but the device advertises video output.
        public static let authAudioOnlyDevice = Code(.authAudioOnlyDevice)

        /// The code's name, as logs and `--json` output show it.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// The underlying error, when there is one (an OpenSSL error stack, a protobuf decoding error, an I/O error).
    public var cause: (any Error)?
    /// For ``Code/connectFailed``: whether the peer refused the connection (nothing listens there), which
    /// retrying will not change — unlike no answer at all (no route, a dropped link, a timeout).
    public var isRefusal = false

    /// Whether this is a device-authentication failure (an `auth…` code).
    public var isDeviceAuthFailure: Bool { code.description.hasPrefix("auth") }

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// The code and message (and the cause, when there is one), for logs and the command line.
    public var description: String {
        if let cause { return "\(code): \(message) (\(cause))" }
        return "\(code): \(message)"
    }
}
