// swift-cast — Apache-2.0

/// Metadata keys shared by every module, so handlers and log processors can rely on one spelling.
///
/// The `cast.` prefix keeps them from colliding with keys added by applications or other libraries.
public enum CastLogMetadataKey {
    /// The component a logger belongs to; ``CastLogHandler`` derives its level from it.
    public static let category = "cast.category"
    /// The receiver device identifier, to tell apart logs from several devices.
    public static let deviceID = "cast.device_id"
    /// The receiver-assigned session identifier.
    public static let sessionID = "cast.session_id"
    /// The `requestId` of a CASTV2 message, to correlate a request with its response.
    public static let requestID = "cast.request_id"
    /// The CASTV2 namespace a message was sent on.
    public static let namespace = "cast.namespace"
    /// The remote endpoint (`host:port`) of a connection.
    public static let peer = "cast.peer"
}
