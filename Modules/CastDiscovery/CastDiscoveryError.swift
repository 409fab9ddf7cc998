/// The one error type CastDiscovery throws and reports.
///
/// Errors are compared by ``code``; the ``message`` says what happened and what to do about it. New codes can be
/// added without breaking callers, which is why this is a struct and not an enum.
public struct CastDiscoveryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is; stable, suitable for matching with `==` and for metrics.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case daemonUnavailable, daemonDisconnected, browseFailed, publishFailed, invalidAdvertisement
            case notRunning, deviceUnreachable, invalidRange, noDeviceFound
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// avahi-daemon (or the D-Bus system bus it is reached through) is not running or not reachable.
        public static let daemonUnavailable = Code(.daemonUnavailable)
        /// The connection to avahi-daemon was lost after discovery or publishing had started.
        public static let daemonDisconnected = Code(.daemonDisconnected)
        /// The daemon refused or aborted a browse (for example an invalid service type).
        public static let browseFailed = Code(.browseFailed)
        /// The daemon refused or withdrew an advertisement.
        public static let publishFailed = Code(.publishFailed)
        /// An advertisement's values cannot be published (empty id or name, a port out of range, a TXT entry over
        /// 255 bytes).
        public static let invalidAdvertisement = Code(.invalidAdvertisement)
        /// The operation needs a started manager or publisher.
        public static let notRunning = Code(.notRunning)
        /// A device did not answer a probe (connect, TLS, `GET_STATUS` or `GET_APP_AVAILABILITY`).
        public static let deviceUnreachable = Code(.deviceUnreachable)
        /// An address range to scan is malformed, not IPv4, or larger than ``AddressRange/maximumAddressCount``.
        public static let invalidRange = Code(.invalidRange)
        /// Discovery found no device within the time given (``DiscoveryManager/device(at:within:logger:)``).
        public static let noDeviceFound = Code(.noDeviceFound)

        /// The code's name, as logs and `--json` output show it.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A human-readable explanation, including what to do where there is something to do.
    public var message: String
    /// The underlying error, when there is one (a transport error from a probe).
    public var cause: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// Errors are equal when their codes are: the message and cause are explanation, not identity.
    public static func == (lhs: CastDiscoveryError, rhs: CastDiscoveryError) -> Bool { lhs.code == rhs.code }

    /// Hashes the code alone, as ``==(_:_:)`` compares it.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// The code and message (and the cause, when there is one), for logs and the command line.
    public var description: String {
        if let cause { return "\(code): \(message) (\(cause))" }
        return "\(code): \(message)"
    }
}
