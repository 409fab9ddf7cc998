import CastTransport

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
    /// How the device was found; a device found several ways (mDNS and a scan) is listed once, with each.
    public var sources: DeviceSources
    /// The id the device gave for itself (``DeviceInfo/deviceID``) when it is listed under another one, as a static
    /// entry is: what a speaker group's member list calls it.
    public var reportedID: String?

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
        isStatic: Bool = false,
        sources: DeviceSources? = nil
    ) {
        self.id = id
        self.friendlyName = friendlyName.withoutControlCharacters
        self.modelName = modelName
        self.capabilities = capabilities
        self.iconPath = iconPath
        self.statusText = statusText
        self.protocolVersion = protocolVersion
        self.hostName = hostName
        self.addresses = addresses
        self.port = port
        self.isStatic = isStatic
        self.sources = sources ?? (isStatic ? .configured : .multicastDNS)
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

    /// A device known only by its address as a person types it: `HOST`, `HOST:PORT`, `[IPV6]` or `[IPV6]:PORT`
    /// (a bare IPv6 address is all host), on `defaultPort` when the text names none. Named by the text, as
    /// `--host` entries are.
    public static func staticDevice(address: String, defaultPort: Int = 8009) -> CastDevice {
        var host = address
        var port = defaultPort
        if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
            host = String(address[address.index(after: address.startIndex)..<close])
            if let value = Int(address[address.index(after: close)...].dropFirst()) { port = value }
        } else if address.filter({ $0 == ":" }).count == 1, let colon = address.firstIndex(of: ":"),
            let value = Int(address[address.index(after: colon)...])
        {
            host = String(address[..<colon])
            port = value
        }
        return staticDevice(host: host, port: port, name: address)
    }

    /// Whether the name is only the address (`HOST`, `HOST:PORT`, `[V6]:PORT`), as for `--host` entries.
    public var isNamedByAddress: Bool {
        let name = friendlyName
        return name.isEmpty || addresses.contains { name == $0.ip || name == $0.connectableHost }
            || name == host || name == "\(host):\(port)" || name == "[\(host)]:\(port)"
    }

    /// The address to connect to: the first IPv4 address, else the first address, else the host name.
    public var host: String {
        addresses.first(where: { !$0.isIPv6 })?.connectableHost ?? addresses.first?.connectableHost ?? hostName ?? ""
    }

    /// The device's own id: ``reportedID`` when it told one, else ``id``.
    public var deviceID: String { reportedID ?? id }

    /// Whether the device may play video: it says it has video out, or it says nothing of its capabilities (a
    /// static host before it answered), which counts as yes so that video is not refused on a guess.
    public var mayPlayVideo: Bool { capabilities.isEmpty || capabilities.contains(.videoOut) }

    /// Whether this record is a speaker group, as the device says: the group capability bit, or the group model.
    /// Never guessed from the port: devices behind a NAT, emulators and proxies use other ports too.
    public var isGroup: Bool {
        capabilities.contains(.multizoneGroup) || modelName == "Google Cast Group"
    }

    /// Takes what the device said about itself (``DeviceInfo``) over what the address alone told: the model and
    /// capabilities, and the name unless a person gave one (a name that is just the address is replaced). The
    /// ``id`` stays, so the entry keeps its identity.
    public mutating func apply(_ info: DeviceInfo) {
        if let id = info.deviceID, !id.isEmpty, id != self.id { reportedID = id }
        if let name = info.friendlyName, !name.isEmpty, isNamedByAddress { friendlyName = name }
        if let model = info.modelName, !model.isEmpty { modelName = model }
        if let capabilities = info.capabilities { self.capabilities = capabilities }
    }
}

/// How a device was found: what `cast devices --json` reports as `sources`.
public struct DeviceSources: OptionSet, Sendable, Hashable {
    /// The bits; each source sets one.
    public let rawValue: Int
    /// Sources from their bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Browsing `_googlecast._tcp` through avahi-daemon.
    public static let multicastDNS = DeviceSources(rawValue: 1)
    /// A static entry (`--host`, a profile's `staticDevices`, `CAST_DEVICES`).
    public static let configured = DeviceSources(rawValue: 2)
    /// A scan of an address range (``AddressRange``), or a speaker group a scanned device belongs to.
    public static let scan = DeviceSources(rawValue: 4)

    /// The names, in this order: `mdns`, `static`, `scan`.
    public var names: [String] {
        [(Self.multicastDNS, "mdns"), (.configured, "static"), (.scan, "scan")].filter { contains($0.0) }.map(\.1)
    }
}

/// What a device says about itself over the Cast connection (`DEVICE_INFO`, the answer to `GET_DEVICE_INFO` on
/// `CastTransport.CastNamespace.receiverDiscovery`). Every field is optional: receivers differ, and some
/// do not answer at all.
public struct DeviceInfo: Sendable, Hashable {
    /// The device id (the mDNS `id`), without hyphens.
    public var deviceID: String?
    /// The friendly name (`fn`).
    public var friendlyName: String?
    /// The model name (`md`).
    public var modelName: String?
    /// The capability bits (`ca`).
    public var capabilities: DeviceCapabilities?

    /// Creates a description.
    public init(
        deviceID: String? = nil,
        friendlyName: String? = nil,
        modelName: String? = nil,
        capabilities: DeviceCapabilities? = nil
    ) {
        self.deviceID = deviceID
        self.friendlyName = friendlyName
        self.modelName = modelName
        self.capabilities = capabilities
    }

    /// Reads a `DEVICE_INFO` payload liberally: `friendlyName`/`name`, `deviceModel`/`modelName`/`model`,
    /// `capabilities`/`deviceCapabilities` (a number), `deviceId`/`id`/`ssdp_udn`; at the top level or under
    /// `deviceInfo`/`device_info`. `nil` when nothing usable is there.
    public init?(json: JSONValue) {
        let body = json["deviceInfo"] ?? json["device_info"] ?? json
        func string(_ keys: String...) -> String? {
            for key in keys { if let value = body[key]?.stringValue ?? json[key]?.stringValue { return value } }
            return nil
        }
        func number(_ keys: String...) -> Int? {
            for key in keys { if let value = body[key]?.intValue ?? json[key]?.intValue { return value } }
            return nil
        }
        deviceID = string("deviceId", "id", "ssdp_udn").map(CastDeviceID.normalized)
        friendlyName = string("friendlyName", "name")?.withoutControlCharacters
        modelName = string("deviceModel", "modelName", "model_name", "model")
        capabilities = number("capabilities", "deviceCapabilities").map(DeviceCapabilities.init(rawValue:))
        guard deviceID != nil || friendlyName != nil || modelName != nil || capabilities != nil else { return nil }
    }
}

extension DeviceInfo {
    /// How long a receiver gets to answer `GET_DEVICE_INFO` once it has answered `GET_STATUS`: a receiver that
    /// knows the message answers within milliseconds; one that does not must not slow a listing down.
    public static let answerGrace: Duration = .milliseconds(500)

    /// Asks `receiver-0` on `connection` (with its virtual connection open) for `GET_STATUS` and — when
    /// `describing`, as for a device known only by its address — at the same time for `GET_DEVICE_INFO`; returns
    /// the `RECEIVER_STATUS` payload and the description when one came within `grace` of the status.
    ///
    /// - Throws: what the status request throws (`CastTransport.CastTransportError`).
    public static func ask(
        _ connection: CastConnection,
        describing: Bool = true,
        grace: Duration = answerGrace
    ) async throws -> (status: JSONValue, info: DeviceInfo?) {
        let infoRequest =
            describing
            ? try? connection.startRequest(
                namespace: CastNamespace.receiverDiscovery,
                to: CastEndpoint.receiver,
                payload: ["type": "GET_DEVICE_INFO"],
                timeout: connection.configuration.requestTimeout
            ) : nil
        // Answered by a broadcast status too, on receivers that only broadcast theirs.
        let status = try await connection.request(
            namespace: CastNamespace.receiver,
            to: CastEndpoint.receiver,
            payload: ["type": "GET_STATUS"]
        ) { $0["type"]?.stringValue == "RECEIVER_STATUS" }
        guard let infoRequest else { return (status, nil) }
        // Sent first, answered first by a receiver that knows it: then it is already here.
        if let reply = infoRequest.arrivedReply { return (status, (try? reply.json()).flatMap(DeviceInfo.init(json:))) }
        guard grace > .zero else { return (status, nil) }
        let info = await withTaskGroup(of: DeviceInfo?.self) { group in
            group.addTask { (try? await infoRequest.response().json()).flatMap(DeviceInfo.init(json:)) }
            group.addTask {
                try? await Task.sleep(for: grace)
                return nil
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
        return (status, info)
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

    /// The address as a connection needs it (link-local IPv6 with its interface).
    public var description: String { connectableHost }
}

/// The `ca` TXT record's capability bits (cast-protocol.md §11.3).
public struct DeviceCapabilities: OptionSet, Sendable, Hashable {
    /// The `ca` record's bits as the device advertises them.
    public let rawValue: Int
    /// Capabilities from the `ca` record's bits, including ones this library does not name.
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
