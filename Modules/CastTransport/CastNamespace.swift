/// The namespaces and endpoint ids of the Cast v2 platform (cast-protocol.md §2).
public enum CastNamespace {
    /// Virtual connections: CONNECT / CLOSE.
    public static let connection = "urn:x-cast:com.google.cast.tp.connection"
    /// PING / PONG keep-alive.
    public static let heartbeat = "urn:x-cast:com.google.cast.tp.heartbeat"
    /// Binary device authentication.
    public static let deviceAuth = "urn:x-cast:com.google.cast.tp.deviceauth"
    /// Application lifecycle and device volume, served by `receiver-0`.
    public static let receiver = "urn:x-cast:com.google.cast.receiver"
    /// Media playback, served by an application's transport id.
    public static let media = "urn:x-cast:com.google.cast.media"
    /// Speaker-group membership.
    public static let multizone = "urn:x-cast:com.google.cast.multizone"
    /// `GET_DEVICE_INFO` → `DEVICE_INFO` on `receiver-0`: the device's own name, model and capabilities, for
    /// devices known only by address. Not every receiver answers (cast-protocol.md §2 marks it uncertain).
    public static let receiverDiscovery = "urn:x-cast:com.google.cast.receiver.discovery"

    /// The prefix every namespace carries.
    public static let prefix = "urn:x-cast:"

    /// Whether `namespace` is one of the `tp.*` transport namespaces, which need no virtual connection.
    public static func isTransport(_ namespace: String) -> Bool {
        namespace.hasPrefix("urn:x-cast:com.google.cast.tp.")
    }

    /// Checks that `namespace` has the `urn:x-cast:` form with something after the prefix.
    ///
    /// - Throws: ``CastTransportError`` with ``CastTransportError/Code/invalidNamespace``.
    public static func validate(_ namespace: String) throws {
        guard namespace.hasPrefix(prefix), namespace.count > prefix.count else {
            throw CastTransportError(.invalidNamespace, "'\(namespace)' is not a Cast namespace (urn:x-cast:…)")
        }
    }
}

/// Well-known endpoint ids.
public enum CastEndpoint {
    /// The sender platform endpoint.
    public static let sender = "sender-0"
    /// The receiver platform endpoint.
    public static let receiver = "receiver-0"
    /// The broadcast destination.
    public static let broadcast = "*"
}
