// swift-cast — Apache-2.0

/// What a profile's `<daemon>` section configures for `castd`: where it listens, whom it answers, and which
/// local files it may cast. Plain values, mapped onto `CastServiceServer.Options` and `DeviceHub.Options` by castd
/// (this module does not depend on the service); the defaults are the service's own.
public struct DaemonSettings: Sendable, Equatable {
    /// `HOST:PORT` to listen on. Defaults to `127.0.0.1:8765`; any other host needs a token.
    public var listen = "127.0.0.1:8765"
    /// The accepted bearer tokens' hashes, `sha256:` and 64 hex digits (`castd token` makes them). Defaults to none.
    public var tokenHashes: [String] = []
    /// Folders whose media files may be cast, as absolute paths (a profile's relative paths are resolved against
    /// it). Defaults to none.
    public var mediaFolders: [String] = []
    /// Web origins allowed to call the API from a browser. Defaults to none.
    public var allowedOrigins: [String] = []
    /// Requests per second one client address may keep up; `nil` for no limit. Defaults to 50.
    public var requestsPerSecond: Double? = 50
    /// Requests one client may make at once after being idle. Defaults to 100.
    public var burst = 100
    /// The largest request body, in bytes. Defaults to 65,536.
    public var maximumBodySize = 64 * 1024
    /// The MQTT broker castd publishes to and takes commands from: `mqtt://host[:port]`, `mqtts://host[:port]`
    /// or `unix:///path`. Defaults to none (no MQTT).
    public var broker: String?
    /// This castd's site, the second topic level (`cast/<site>/<device>/…`). Defaults to the host name.
    public var site: String?
    /// The first topic level. Defaults to `cast`.
    public var topicPrefix = "cast"
    /// The broker user name, if the broker asks for one.
    public var brokerUsername: String?
    /// A file holding the broker password (kept out of the profile itself).
    public var brokerPasswordFile: String?
    /// A PEM file of the CAs that sign the broker's certificate; the system's CAs when absent.
    public var brokerCAFile: String?
    /// Whether castd publishes Home Assistant MQTT discovery. Defaults to `true`.
    public var homeAssistant = true
    /// Home Assistant's discovery prefix. Defaults to `homeassistant`.
    public var discoveryPrefix = "homeassistant"

    /// The defaults.
    public init() {}
}
