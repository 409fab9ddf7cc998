import CastStreaming
import CastTransport

/// Everything that describes one emulated Cast device. Every value has a documented default.
public struct DeviceConfiguration: Sendable {
    /// The device id: 32 lowercase hex digits, as in the mDNS `id` TXT record. Random by default.
    public var id: String = Identifiers.deviceID()
    /// The friendly name (`fn`). Defaults to "Emulated Chromecast".
    public var friendlyName = "Emulated Chromecast"
    /// The model name (`md`). Defaults to "Chromecast".
    public var model = "Chromecast"
    /// The capabilities bitmask (`ca`): video out, audio out, attenuation volume (4101) by default.
    public var capabilities = 4101
    /// The address to listen on. Defaults to loopback.
    public var host = "127.0.0.1"
    /// The port to listen on; 0 picks a free one. Defaults to 8009.
    public var port = 8009
    /// The port of the device's HTTP API (`GET /setup/eureka_info`, as senders read a device's name and groups
    /// from): `nil` (the default) serves it on 8008 when ``port`` is 8009, as devices do, and not at all
    /// otherwise (a bind failure then only warns); 0 picks a free port; another value serves it there (a bind
    /// failure then fails ``EmulatedDevice/start()``).
    public var eurekaPort: Int?
    /// The apps this device can launch. Defaults to ``EmulatedApp/standardRegistry``.
    public var apps = EmulatedApp.standardRegistry
    /// Deliberate misbehaviour. Defaults to none.
    public var faults = FaultInjection()
    /// The TLS certificate and key; when `nil` (the default), ``deviceAuth``'s or else a 3-day self-signed
    /// RSA certificate shared by the process's devices.
    public var identity: TLSIdentity?
    /// Credentials to answer device-authentication challenges with; `nil` (the default) answers them with
    /// `INTERNAL_ERROR`, as a device without credentials.
    public var deviceAuth: EmulatedDeviceAuth?
    /// Duration of BUFFERED media that declares none, in seconds. Defaults to 600.
    public var defaultMediaDuration: Double = 600
    /// Whether LOAD fetches the media as a device's player does (HTTP(S) with a device's headers, CORS checked
    /// for HLS and text tracks, the duration read from the media) and fails with the device's error when it
    /// cannot. Defaults to `false`: URLs are not fetched and media plays for its declared duration.
    public var fetchesMedia = false
    /// How long LOAD takes before playback starts, in seconds. Defaults to 0 (immediate).
    public var loadDuration: Double = 0
    /// Whether live streams cannot pause or seek (no PAUSE or SEEK in `supportedMediaCommands`), as with some
    /// apps' receivers: senders must stop them instead. Defaults to `false`: like the Default Media Receiver
    /// (cast-protocol.md §7.4), live streams pause and seek.
    public var liveStreamsCannotPause = false
    /// An ad break played before each loaded media that brings no breaks of its own, as an app that inserts ads
    /// does; `nil` (the default) plays only the breaks a LOAD carries.
    public var prerollAd: PrerollAd?
    /// Decides whether content fails to load, returning a `detailedErrorCode`. By default URLs with `fail=1`
    /// fail with 104 (MEDIA_SRC_NOT_SUPPORTED) and hosts ending in `.invalid` with 103 (MEDIA_NETWORK).
    public var contentFailure: (@Sendable (String) -> Int?)?
    /// Makes new application session ids; random uppercase UUIDs by default.
    public var sessionIDGenerator: @Sendable () -> String = { Identifiers.uuid() }
    /// Initial device volume level (0…1). Defaults to 1.
    public var volumeLevel = 1.0
    /// Whether the device's volume is fixed (its sound is turned up on the TV or amplifier it plays through): its
    /// status says `controlType` `fixed` instead of `attenuation`, and SET_VOLUME changes nothing, answered with the
    /// unchanged status. Defaults to `false`.
    public var hasFixedVolume = false
    /// The volume step reported in status (`stepInterval`). Defaults to 0.05.
    public var volumeStepInterval = 0.05
    /// How often the device PINGs a silent sender. Defaults to 5 s.
    public var heartbeatInterval: Duration = .seconds(5)
    /// How long a sender may stay silent (not even answering PINGs) before the device closes its connection.
    /// Defaults to 30 s.
    public var idleTimeout: Duration? = .seconds(30)
    /// The most sender connections at once; one more closes the connection idle longest (a half-open
    /// handshake, a silent socket). Defaults to 64.
    public var maximumConnections: Int? = 64
    /// How long a TLS handshake may take. Defaults to 10 s.
    public var handshakeTimeout: Duration = .seconds(10)
    /// How the mirroring apps receive Cast Streaming: codec preferences, simulated loss and jitter, a handler for
    /// the frames. Defaults to the reference receiver's choices on a perfect network.
    public var streaming = StreamingReceiverEndpoint.Options()

    /// A device with the defaults.
    public init() {}

    /// A device with a name, listening on `port` (0 for any free port).
    public init(friendlyName: String, port: Int = 8009) {
        self.friendlyName = friendlyName
        self.port = port
    }
}

/// Random identifiers in the shapes Cast devices use.
public enum Identifiers {
    private static func hex(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in "0123456789abcdef".randomElement(using: &generator)! })
    }

    /// 32 lowercase hex digits, like the mDNS `id`.
    public static func deviceID() -> String { hex(32) }

    /// An uppercase UUID (8-4-4-4-12), like application session ids.
    public static func uuid() -> String { CastDeviceID.hyphenated(hex(32).uppercased()) }
}

/// The ad break ``DeviceConfiguration/prerollAd`` inserts: one clip at position 0.
public struct PrerollAd: Sendable, Hashable {
    /// The clip's length in seconds.
    public var duration: Double
    /// Seconds into the clip after which SKIP_AD is taken; `nil` for a clip that cannot be skipped.
    public var skippableAfter: Double?

    /// Creates a pre-roll.
    public init(duration: Double, skippableAfter: Double? = nil) {
        self.duration = duration
        self.skippableAfter = skippableAfter
    }

    /// Adds the break and its clip to a LOAD's `media` object that has no breaks.
    func insert(into media: inout [String: JSONValue]) {
        guard media["breaks"]?.arrayValue?.isEmpty ?? true else { return }
        var clip: JSONValue = ["id": "emulator-ad", "title": "Ad", "duration": .number(duration)]
        if let skippableAfter { clip["whenSkippable"] = .number(skippableAfter) }
        media["breakClips"] = .array((media["breakClips"]?.arrayValue ?? []) + [clip])
        media["breaks"] = [["id": "emulator-preroll", "breakClipIds": ["emulator-ad"], "position": 0]]
    }
}
