/// A Cast device as discovery (or a static entry) describes it: what the Cast dialog lists.
public struct CastDevice: Sendable, Hashable, Identifiable {
    /// The device id: the mDNS `id` TXT record (32 hex digits), or `static:HOST:PORT` for static entries.
    public var id: String
    /// The friendly name (`fn`), what people see in the device list.
    public var friendlyName: String
    /// The model name (`md`), for example "Chromecast" or "Google Cast Group".
    public var modelName: String?
    /// The capabilities (`ca`).
    public var capabilities: DeviceCapabilities
    /// The icon path on the device's HTTP server (`ic`).
    public var iconPath: String?
    /// The receiver status text (`rs`): the running app's name, empty when idle.
    public var statusText: String?
    /// The Cast protocol/record version (`ve`).
    public var protocolVersion: Int?
    /// The mDNS host name, for example `8a2b….local`.
    public var hostName: String?
    /// Every resolved address, IPv4 first.
    public var addresses: [DeviceAddress]
    /// The Cast port: 8009 for devices, another port for speaker groups.
    public var port: Int
    /// Whether this entry came from configuration (`--host`, a profile) rather than mDNS.
    public var isStatic: Bool

    /// Creates a device description.
    public init(
        id: String,
        friendlyName: String,
        modelName: String? = nil,
        capabilities: DeviceCapabilities = [],
        iconPath: String? = nil,
        statusText: String? = nil,
        protocolVersion: Int? = nil,
        hostName: String? = nil,
        addresses: [DeviceAddress],
        port: Int = 8009,
        isStatic: Bool = false
    ) {
        self.id = id
        self.friendlyName = friendlyName
        self.modelName = modelName
        self.capabilities = capabilities
        self.iconPath = iconPath
        self.statusText = statusText
        self.protocolVersion = protocolVersion
        self.hostName = hostName
        self.addresses = addresses
        self.port = port
        self.isStatic = isStatic
    }

    /// A device known only by address, as `--host`/`--port` or a profile's static list give it.
    public static func staticDevice(host: String, port: Int = 8009, name: String? = nil) -> CastDevice {
        CastDevice(
            id: "static:\(host):\(port)",
            friendlyName: name ?? host,
            addresses: [DeviceAddress(host)],
            port: port,
            isStatic: true
        )
    }

    /// The address to connect to: the first IPv4 address, else the first address, else the host name.
    public var host: String {
        addresses.first(where: { !$0.isIPv6 })?.connectableHost ?? addresses.first?.connectableHost ?? hostName ?? ""
    }

    /// Whether this record is a speaker group: served on a port other than 8009, or flagged as a group.
    public var isGroup: Bool {
        port != 8009 || capabilities.contains(.multizoneGroup) || modelName == "Google Cast Group"
    }
}

/// One resolved address of a device.
public struct DeviceAddress: Sendable, Hashable, CustomStringConvertible {
    /// The numeric address, for example `192.168.1.20` or `fe80::1`.
    public var ip: String
    /// The interface a link-local IPv6 address belongs to (its scope), if any.
    public var interfaceName: String?

    /// Creates an address.
    public init(_ ip: String, interfaceName: String? = nil) {
        self.ip = ip
        self.interfaceName = interfaceName
    }

    /// Whether this is an IPv6 address.
    public var isIPv6: Bool { ip.contains(":") }

    /// The form a socket connect accepts: `fe80::1%eth0` for scoped link-local addresses.
    public var connectableHost: String {
        if let interfaceName, isIPv6, ip.lowercased().hasPrefix("fe80") { return "\(ip)%\(interfaceName)" }
        return ip
    }

    public var description: String { connectableHost }
}

/// The `ca` TXT record's capability bits (cast-protocol.md §11.3).
public struct DeviceCapabilities: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Can show video (a TV or dongle).
    public static let videoOut = DeviceCapabilities(rawValue: 1)
    /// Has a camera input.
    public static let videoIn = DeviceCapabilities(rawValue: 2)
    /// Can play audio.
    public static let audioOut = DeviceCapabilities(rawValue: 4)
    /// Has a microphone.
    public static let audioIn = DeviceCapabilities(rawValue: 8)
    /// In developer mode.
    public static let developerMode = DeviceCapabilities(rawValue: 16)
    /// The record is a multizone (speaker) group.
    public static let multizoneGroup = DeviceCapabilities(rawValue: 32)
    /// A dynamic group (third-party documentation).
    public static let dynamicGroup = DeviceCapabilities(rawValue: 64)
    /// A multichannel group (third-party documentation).
    public static let multichannelGroup = DeviceCapabilities(rawValue: 128)
    /// A multichannel group member (third-party documentation).
    public static let multichannelMember = DeviceCapabilities(rawValue: 256)
    /// Master or fixed volume (third-party documentation).
    public static let masterOrFixedVolume = DeviceCapabilities(rawValue: 2048)
    /// Attenuation or fixed volume (third-party documentation).
    public static let attenuationOrFixedVolume = DeviceCapabilities(rawValue: 4096)
    /// Supports dynamic grouping (third-party documentation).
    public static let dynamicGroupingSupported = DeviceCapabilities(rawValue: 65_536)
}
