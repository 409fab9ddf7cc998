import CastTransport

/// A receiver application the emulator can launch.
public struct EmulatedApp: Sendable, Hashable {
    /// What the app does once running.
    public enum Kind: Sendable, Hashable {
        /// A media receiver: serves the media namespace like the Default Media Receiver.
        case mediaReceiver
        /// An Android TV (Cast Connect) app: launches only when the LAUNCH lists `ANDROID_TV` in
        /// `supportedAppTypes`, records the launch credentials, and serves the media namespace.
        case androidTV
        /// Echoes every message on its custom namespaces back to the sender (text and binary).
        case echo
        /// Cast Streaming's mirroring receiver: answers OFFERs on `urn:x-cast:com.google.cast.webrtc` and
        /// receives the RTP streams (``DeviceConfiguration/streaming``).
        case mirroring
        /// The idle screen.
        case idleScreen
        /// A speaker group member's part in the group's playback (leader or follower): launched by the group,
        /// not by senders.
        case groupPlayback
    }

    /// The app id, for example `CC1AD845`.
    public var id: String
    /// The display name reported in RECEIVER_STATUS.
    public var displayName: String
    /// The namespaces the app serves, reported in RECEIVER_STATUS.
    public var namespaces: [String]
    /// The app's behaviour.
    public var kind: Kind

    /// Creates an app definition.
    public init(id: String, displayName: String, namespaces: [String], kind: Kind) {
        self.id = id
        self.displayName = displayName
        self.namespaces = namespaces
        self.kind = kind
    }

    /// The Default Media Receiver (`CC1AD845`) with the namespaces real devices list for it.
    public static let defaultMediaReceiver = EmulatedApp(
        id: "CC1AD845",
        displayName: "Default Media Receiver",
        namespaces: [
            "urn:x-cast:com.google.cast.cac", "urn:x-cast:com.google.cast.debugoverlay",
            "urn:x-cast:com.google.cast.broadcast", CastNamespace.media,
        ],
        kind: .mediaReceiver
    )

    /// The Backdrop idle screen (`E8C28D3C`), shown when nothing else runs.
    public static let backdrop = EmulatedApp(id: "E8C28D3C", displayName: "Backdrop", namespaces: [], kind: .idleScreen)

    /// What the elected leader of a playing speaker group runs (`531A4F84`, "MultizoneLeader").
    public static let multizoneLeader = EmulatedApp(
        id: "531A4F84",
        displayName: "MultizoneLeader",
        namespaces: [],
        kind: .groupPlayback
    )

    /// What the other members of a playing speaker group run (`705D30C6`, "MultizoneFollower").
    public static let multizoneFollower = EmulatedApp(
        id: "705D30C6",
        displayName: "MultizoneFollower",
        namespaces: [],
        kind: .groupPlayback
    )

    /// An Android TV receiver app for Cast Connect tests.
    public static func androidTV(id: String = "A1B2C3D4", displayName: String = "Android TV App") -> EmulatedApp {
        EmulatedApp(
            id: id,
            displayName: displayName,
            namespaces: [CastNamespace.media, "urn:x-cast:com.google.cast.cac"],
            kind: .androidTV
        )
    }

    /// A custom app that echoes its namespaces, for custom channel tests.
    public static func echo(id: String = "E0C40001", namespaces: [String] = ["urn:x-cast:com.example.echo"])
        -> EmulatedApp
    {
        EmulatedApp(id: id, displayName: "Echo", namespaces: namespaces, kind: .echo)
    }

    /// Cast Streaming's mirroring app (`0F5096E8`, audio and video), as the reference receiver lists it.
    public static let mirroring = EmulatedApp(
        id: "0F5096E8",
        displayName: "Chrome Mirroring",
        namespaces: ["urn:x-cast:com.google.cast.webrtc", "urn:x-cast:com.google.cast.remoting"],
        kind: .mirroring
    )

    /// Cast Streaming's audio-only mirroring app (`85CDB22F`), what speakers and groups run.
    public static let audioMirroring = EmulatedApp(
        id: "85CDB22F",
        displayName: "Chrome Mirroring",
        namespaces: ["urn:x-cast:com.google.cast.webrtc", "urn:x-cast:com.google.cast.remoting"],
        kind: .mirroring
    )

    /// The apps every emulated device knows unless configured otherwise: the Default Media Receiver, an
    /// Android TV app (`A1B2C3D4`), an echo app (`E0C40001` on `urn:x-cast:com.example.echo`) and the two
    /// mirroring apps.
    public static let standardRegistry: [EmulatedApp] = [
        .defaultMediaReceiver, .androidTV(), .echo(), .mirroring, .audioMirroring,
    ]

    /// Whether the app serves the media namespace.
    public var servesMedia: Bool { kind == .mediaReceiver || kind == .androidTV }
}
