/// What the media server saw of a device that should have fetched what it serves, and what to do about it.
///
/// Built when LOAD fails or the device has not asked for the URL within a few seconds: the most frequent
/// casting failure is a device that cannot reach the sender, and only the server can tell.
public struct ReachabilityDiagnosis: Sendable, Hashable, Codable {
    /// The most likely reason, from what arrived.
    public enum Cause: String, Sendable, Hashable, Codable {
        /// Not one connection arrived from anywhere: a firewall on the port, or an address the device cannot route to.
        case noConnection
        /// Connections arrived, but none from the device's address (another interface, a VPN or container network).
        case otherPeersOnly
        /// The device connected and asked, and the answer was an error (see ``ReachabilityDiagnosis/statuses``).
        case requestFailed
        /// The device fetched the media; the failure is in the media itself (format, codec), or in a text track
        /// when ``ReachabilityDiagnosis/isTextTrackFailure``.
        case fetchedButRejected
    }

    /// The address the server listened on, as put in the URL.
    public var address: String
    /// The port the server listened on.
    public var port: Int
    /// Why that address: "routes to 192.168.1.20" or "given with --serve-address".
    public var addressReason: String
    /// The device's address, when known.
    public var deviceAddress: String?
    /// Connections accepted since the item was shared, from any peer.
    public var connections: Int
    /// Requests for the item from the device's address.
    public var deviceRequests: Int
    /// HTTP statuses answered to those requests.
    public var statuses: [Int]
    /// The most likely reason.
    public var cause: Cause
    /// What to try, most likely first, each naming the flag or command that fixes it.
    public var advice: [String]
    /// The device's `detailedErrorCode`, when LOAD failed with one (104 MEDIA_SRC_NOT_SUPPORTED, 600 TEXT_UNKNOWN…).
    public var detailedErrorCode: Int?

    /// Whether the device's error is about a text track (600–699): its subtitles failed, not the media, so
    /// neither the media's format nor transcoding is the matter.
    public var isTextTrackFailure: Bool { detailedErrorCode.map { (600..<700).contains($0) } ?? false }

    /// Creates a diagnosis.
    public init(
        address: String,
        port: Int,
        addressReason: String,
        deviceAddress: String?,
        connections: Int,
        deviceRequests: Int,
        statuses: [Int],
        cause: Cause,
        advice: [String],
        detailedErrorCode: Int? = nil
    ) {
        self.address = address
        self.port = port
        self.addressReason = addressReason
        self.deviceAddress = deviceAddress
        self.connections = connections
        self.deviceRequests = deviceRequests
        self.statuses = statuses
        self.cause = cause
        self.advice = advice
        self.detailedErrorCode = detailedErrorCode
    }
}
