import CastTransport

/// One member of a speaker group as the group tells it (`urn:x-cast:com.google.cast.multizone`): GCKMultizoneDevice.
public struct MultizoneMember: Sendable, Hashable, Identifiable {
    /// The member's device id in the mDNS form (32 lowercase hex digits), so it matches ``CastDevice/id``; the
    /// group sends it as a hyphenated UUID.
    public var id: String
    /// The member's friendly name.
    public var name: String
    /// The member's capabilities.
    public var capabilities: DeviceCapabilities
    /// The member's own volume (0…1), when the group reports it.
    public var volumeLevel: Double?
    /// Whether the member is muted, when the group reports it.
    public var isMuted: Bool?

    /// Creates a member description.
    public init(
        id: String,
        name: String,
        capabilities: DeviceCapabilities = [],
        volumeLevel: Double? = nil,
        isMuted: Bool? = nil
    ) {
        self.id = CastDeviceID.normalized(id)
        self.name = name
        self.capabilities = capabilities
        self.volumeLevel = volumeLevel
        self.isMuted = isMuted
    }

    /// Reads a `device` object liberally: `deviceId`/`id`, `name`/`friendlyName`, `capabilities` as a number, and
    /// `volume {level, muted}`. `nil` without an id.
    public init?(json: JSONValue) {
        guard let id = (json["deviceId"] ?? json["id"])?.stringValue, !id.isEmpty else { return nil }
        self.init(
            id: id,
            name: (json["name"] ?? json["friendlyName"])?.stringValue ?? "",
            capabilities: DeviceCapabilities(rawValue: json["capabilities"]?.intValue ?? 0),
            volumeLevel: json["volume"]?["level"]?.doubleValue,
            isMuted: json["volume"]?["muted"]?.boolValue
        )
    }

    /// The wire form: `{deviceId (hyphenated), name, capabilities, volume {level, muted}}`.
    public var json: JSONValue {
        var json: JSONValue = [
            "deviceId": .string(CastDeviceID.hyphenated(id)), "name": .string(name),
            "capabilities": .number(Double(capabilities.rawValue)),
        ]
        var volume: [String: JSONValue] = [:]
        if let volumeLevel { volume["level"] = .number(volumeLevel) }
        if let isMuted { volume["muted"] = .bool(isMuted) }
        if !volume.isEmpty { json["volume"] = .object(volume) }
        return json
    }
}

/// A speaker group's membership (MULTIZONE_STATUS): GCKMultizoneStatus.
public struct MultizoneStatus: Sendable, Hashable {
    /// The members, in the order the group lists them.
    public var members: [MultizoneMember]

    /// Creates a status.
    public init(members: [MultizoneMember]) { self.members = members }

    /// Reads a MULTIZONE_STATUS payload (`status.devices`, or `devices` at the top level). `nil` when it has no
    /// device list.
    public init?(json: JSONValue) {
        guard let devices = (json["status"]?["devices"] ?? json["devices"])?.arrayValue else { return nil }
        members = devices.compactMap(MultizoneMember.init(json:))
    }

    /// The member with `id` (either form).
    public func member(withID id: String) -> MultizoneMember? {
        let id = CastDeviceID.normalized(id)
        return members.first { $0.id == id }
    }

    /// Applies a membership event to the list.
    public mutating func apply(_ event: MultizoneEvent) {
        switch event {
        case .status(let status):
            self = status
        case .memberAdded(let member), .memberUpdated(let member):
            if let index = members.firstIndex(where: { $0.id == member.id }) {
                members[index] = member
            } else {
                members.append(member)
            }
        case .memberRemoved(let id):
            members.removeAll { $0.id == id }
        case .playbackSessionUpdated:
            break
        }
    }
}

/// What a speaker group says on the multizone namespace.
public enum MultizoneEvent: Sendable, Hashable {
    /// The whole membership (MULTIZONE_STATUS, the answer to GET_STATUS).
    case status(MultizoneStatus)
    /// A device joined the group (DEVICE_ADDED).
    case memberAdded(MultizoneMember)
    /// A member changed: its name or its volume (DEVICE_UPDATED).
    case memberUpdated(MultizoneMember)
    /// A device left the group (DEVICE_REMOVED), by its normalized id.
    case memberRemoved(String)
    /// A (possibly temporary) group formed or changed playback (PLAYBACK_SESSION_UPDATED); its payload as sent,
    /// since no public source documents it.
    case playbackSessionUpdated(JSONValue)

    /// Reads a multizone message; `nil` for a type this is not, or one without what it needs.
    public init?(json: JSONValue) {
        switch json["type"]?.stringValue {
        case "MULTIZONE_STATUS":
            guard let status = MultizoneStatus(json: json) else { return nil }
            self = .status(status)
        case "DEVICE_ADDED":
            guard let member = json["device"].flatMap(MultizoneMember.init(json:)) else { return nil }
            self = .memberAdded(member)
        case "DEVICE_UPDATED":
            guard let member = json["device"].flatMap(MultizoneMember.init(json:)) else { return nil }
            self = .memberUpdated(member)
        case "DEVICE_REMOVED":
            guard let id = (json["deviceId"] ?? json["device"]?["deviceId"])?.stringValue else { return nil }
            self = .memberRemoved(CastDeviceID.normalized(id))
        case "PLAYBACK_SESSION_UPDATED":
            self = .playbackSessionUpdated(json)
        default:
            return nil
        }
    }
}

extension MultizoneStatus {
    /// Asks `receiver-0` on `connection` (its virtual connection open) for the group's membership.
    ///
    /// - Throws: what the request throws (`CastTransport.CastTransportError`), or
    ///   `CastTransport.CastTransportError.Code.invalidPayload` when the answer is no MULTIZONE_STATUS.
    public static func ask(_ connection: CastConnection, timeout: Duration? = nil) async throws -> MultizoneStatus {
        let reply = try await connection.request(
            namespace: CastNamespace.multizone,
            to: CastEndpoint.receiver,
            payload: ["type": "GET_STATUS"],
            timeout: timeout
        ).json()
        guard let status = MultizoneStatus(json: reply) else {
            throw CastTransportError(
                .invalidPayload,
                "the group answered GET_STATUS with \(reply["type"]?.stringValue ?? "no type")"
            )
        }
        return status
    }
}

/// Where a device is now. A speaker group's endpoint moves with its elected leader (another member's address,
/// another port); sessions and observers ask a locator before reconnecting, so they follow the group like GCK
/// does. ``DiscoveryManager`` is one: its latest record of the device.
public protocol CastDeviceLocator: Sendable {
    /// The latest record of `device` (the same ``CastDevice/id``), or `nil` when none is known.
    func currentRecord(of device: CastDevice) async -> CastDevice?
}

extension DiscoveryManager: CastDeviceLocator {
    /// The device as discovery lists it now: the same id, perhaps at a new address and port.
    public func currentRecord(of device: CastDevice) async -> CastDevice? { self.device(withID: device.id) }
}
