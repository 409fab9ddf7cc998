// swift-cast — Apache-2.0

/// The component names the framework logs under, so one `--log-filter` vocabulary covers every module.
///
/// Names are dot-separated, coarse to fine, which lets a glob such as `CastSession*` select a component and all
/// of its parts:
///
/// | Constant              | Category                   |
/// |-----------------------|----------------------------|
/// | `transport`           | `CastTransport`            |
/// | `transportTLS`        | `CastTransport.TLS`        |
/// | `transportFraming`    | `CastTransport.Framing`    |
/// | `transportHeartbeat`  | `CastTransport.Heartbeat`  |
/// | `transportChannel`    | `CastTransport.Channel`    |
/// | `discovery`           | `CastDiscovery`            |
/// | `discoveryAvahi`      | `CastDiscovery.Avahi`      |
/// | `session`             | `CastSession`              |
/// | `sessionReconnect`    | `CastSession.Reconnect`    |
/// | `sessionChannel`      | `CastSession.Channel`      |
/// | `media`               | `CastMedia`                |
/// | `mediaQueue`          | `CastMedia.Queue`          |
/// | `styleConfig`         | `CastStyleConfig`          |
/// | `receiver`            | `CastReceiver`             |
/// | `receiverMedia`       | `CastReceiver.Media`       |
/// | `app`                 | `CastApp`                  |
///
/// Tag a logger with one of these through ``Logging/Logger/withCategory(_:)``.
public enum CastLogCategory {
    /// TCP/TLS connection to a device and the CASTV2 message stream on top of it.
    public static let transport = "CastTransport"
    /// TLS handshake and certificate handling, split out because it is noisy when debugging pairing.
    public static let transportTLS = "CastTransport.TLS"
    /// Length-prefixed protobuf framing; useful when a peer sends malformed frames.
    public static let transportFraming = "CastTransport.Framing"
    /// PING/PONG keep-alive traffic, separate so it can be silenced while the rest stays verbose.
    public static let transportHeartbeat = "CastTransport.Heartbeat"
    /// Per-namespace virtual channels multiplexed over one connection.
    public static let transportChannel = "CastTransport.Channel"
    /// Finding devices on the local network.
    public static let discovery = "CastDiscovery"
    /// The Avahi (mDNS/DNS-SD) backend of discovery.
    public static let discoveryAvahi = "CastDiscovery.Avahi"
    /// Session lifecycle: launching, joining and stopping receiver applications.
    public static let session = "CastSession"
    /// Automatic reconnection after a dropped connection.
    public static let sessionReconnect = "CastSession.Reconnect"
    /// Custom application channels opened within a session.
    public static let sessionChannel = "CastSession.Channel"
    /// Media control (load, play, pause, seek) and status.
    public static let media = "CastMedia"
    /// Media queue editing and queue status.
    public static let mediaQueue = "CastMedia.Queue"
    /// Text-track and UI style configuration sent to receivers.
    public static let styleConfig = "CastStyleConfig"
    /// Receiver (device) status, volume and application availability.
    public static let receiver = "CastReceiver"
    /// Media status as reported by the receiver.
    public static let receiverMedia = "CastReceiver.Media"
    /// Cast Streaming (mirroring): OFFER/ANSWER, RTP/RTCP, capture and encoders.
    public static let streaming = "CastStreaming"
    /// Command-line and app-level code built on the framework.
    public static let app = "CastApp"

    /// Every category above, for help output and for validating user-supplied filters against known names.
    public static let all: [String] = [
        transport, transportTLS, transportFraming, transportHeartbeat, transportChannel,
        discovery, discoveryAvahi,
        session, sessionReconnect, sessionChannel,
        media, mediaQueue,
        styleConfig,
        receiver, receiverMedia,
        streaming,
        app,
    ]
}
