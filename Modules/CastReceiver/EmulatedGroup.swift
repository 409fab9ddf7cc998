import CastLogging
import CastTransport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A speaker group of emulated devices, as a Google Home app makes one (cast-protocol.md §8, §11.4): its own
/// Cast endpoint — a device record with the group model, the group capability bit and its own port, at its
/// elected leader's address — that launches apps and plays media like a device, answers the multizone namespace
/// with its members, their names and volumes (and sets a member's volume), and while it plays shows the
/// `MultizoneLeader` app on its leader and `MultizoneFollower` on the other members. ``moveLeader()`` elects
/// another member: the endpoint moves to that member's address and a new port, as real groups do, so a sender
/// must find it again.
public final class EmulatedGroup: Sendable {
    /// The group's own endpoint: connect to it (``EmulatedDevice/host``, ``EmulatedDevice/port``) to cast to the
    /// group.
    public let endpoint: EmulatedDevice
    /// Who is in the group and who leads it.
    private struct Membership {
        var members: [EmulatedDevice]
        var leader: Int
    }

    private let membership: NIOLockedValueBox<Membership>

    /// The model name a group's record carries.
    public static let modelName = "Google Cast Group"
    /// A group's capabilities: audio out, multizone group, master volume (`ca` 2084).
    public static let capabilities = 4 | 32 | 2048

    /// Creates the group's endpoint for `members` (not yet listening; ``start()`` does that).
    ///
    /// - Parameters:
    ///   - configuration: The group's own record: its id, name (``DeviceConfiguration/friendlyName``), apps and
    ///     faults. Its model and capabilities become a group's; its host is the leader's; its port is 0 (a free
    ///     one, never 8009, as pychromecast tells groups by their port) unless set to another.
    ///   - members: The member devices; the first is the leader.
    ///   - clock: The time the group plays by, the members' clock.
    ///   - eventLoopGroup: Where the group's connections run.
    ///   - wireLog: Where every frame is recorded; `nil` records none.
    ///   - logger: Where the group logs; silent by default.
    public init(
        configuration: DeviceConfiguration,
        members: [EmulatedDevice],
        clock: any CastClock = SystemCastClock(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        wireLog: WireLog? = nil,
        logger: Logger = .castDisabled
    ) throws {
        guard !members.isEmpty else {
            throw CastReceiverError(.invalidConfiguration, "a speaker group needs at least one member")
        }
        var configuration = configuration
        configuration.model = Self.modelName
        configuration.capabilities = Self.capabilities
        configuration.host = members[0].host
        if configuration.port == 8009 { configuration.port = 0 }
        if configuration.identity == nil { configuration.identity = try EmulatorIdentity.current() }
        self.endpoint = EmulatedDevice(
            configuration: configuration,
            clock: clock,
            eventLoopGroup: eventLoopGroup,
            wireLog: wireLog,
            logger: logger
        )
        self.membership = NIOLockedValueBox(Membership(members: members, leader: 0))
        endpoint.state.withLockedValue { $0.group = self }
        for member in members { join(member) }
    }

    /// Links a member to the group: its state names the group, and its `eureka_info` lists it.
    private func join(_ member: EmulatedDevice) {
        member.state.withLockedValue { $0.group = self }
        member.setMultizoneGroups { [weak self, weak member] in
            guard let self, let member else { return [] }
            return [self.eurekaEntry(for: member)]
        }
    }

    /// The members, in the order they joined.
    public var members: [EmulatedDevice] { membership.withLockedValue { $0.members } }

    /// Adds a device to the group, as the Google Home app does: senders following the group hear DEVICE_ADDED,
    /// and while the group plays the device follows it.
    public func add(_ member: EmulatedDevice) {
        let added = membership.withLockedValue { membership -> Bool in
            guard !membership.members.contains(where: { $0 === member }) else { return false }
            membership.members.append(member)
            return true
        }
        guard added else { return }
        join(member)
        endpoint.broadcastMultizone(["type": "DEVICE_ADDED", "device": member.multizoneDescription])
        playbackChanged()
    }

    /// Takes a device out of the group: senders hear DEVICE_REMOVED, and it stops following the group's playback.
    ///
    /// - Throws: ``CastReceiverError/Code/invalidConfiguration`` for the leader (move it first with
    ///   ``moveLeader()``) or the last member.
    public func remove(_ member: EmulatedDevice) throws {
        try membership.withLockedValue { membership in
            guard let index = membership.members.firstIndex(where: { $0 === member }) else { return }
            guard index != membership.leader, membership.members.count > 1 else {
                throw CastReceiverError(
                    .invalidConfiguration,
                    "the group's leader or last member cannot leave; move the leader first"
                )
            }
            membership.members.remove(at: index)
            if index < membership.leader { membership.leader -= 1 }
        }
        member.state.withLockedValue { $0.group = nil }
        member.setMultizoneGroups { [] }
        member.setGroupPlayback(nil)
        endpoint.broadcastMultizone([
            "type": "DEVICE_REMOVED", "deviceId": .string(CastDeviceID.hyphenated(member.configuration.id)),
        ])
    }

    /// The group as a member's `eureka_info` lists it (`multizone.groups`): its name, uuid, elected leader
    /// (`self` on the leader, else the leader's address) and Cast port — how a scan finds groups.
    func eurekaEntry(for member: EmulatedDevice) -> JSONValue {
        let leader = self.leader
        return [
            "name": .string(name), "uuid": .string(CastDeviceID.hyphenated(id)),
            "elected_leader": .string(leader === member ? "self" : "\(leader.host):8008"),
            "cast_port": .number(Double(endpoint.port)),
        ]
    }

    /// The group's id (its record's `id`).
    public var id: String { endpoint.configuration.id }
    /// The group's name.
    public var name: String { endpoint.configuration.friendlyName }
    /// The member the group's endpoint runs on now.
    public var leader: EmulatedDevice { membership.withLockedValue { $0.members[$0.leader] } }

    /// Starts the group's endpoint at its leader's address.
    ///
    /// - Throws: ``CastReceiverError/Code/listenFailed``.
    public func start() async throws { try await endpoint.start() }

    /// Stops the group's endpoint (members are stopped by their owner).
    public func stop() async { await endpoint.stop() }

    /// Elects the next member as the leader: the endpoint moves to its address on a new port, dropping every
    /// sender connection (the session and media go on), and while the group plays the leader and follower apps
    /// move with it. Returns the new leader.
    ///
    /// - Throws: ``CastReceiverError/Code/listenFailed`` when the new place cannot be bound.
    @discardableResult
    public func moveLeader() async throws -> EmulatedDevice {
        let leader = membership.withLockedValue { membership in
            membership.leader = (membership.leader + 1) % membership.members.count
            return membership.members[membership.leader]
        }
        try await endpoint.relocate(toHost: leader.host, port: 0)
        playbackChanged()
        return leader
    }

    /// The group's membership as MULTIZONE_STATUS sends it.
    public var statusPayload: JSONValue {
        ["type": "MULTIZONE_STATUS", "status": ["devices": .array(members.map(\.multizoneDescription))]]
    }

    /// Puts the leader and follower apps on the members while the endpoint runs an app, and takes them off when
    /// it stops.
    func playbackChanged() {
        let playing = !endpoint.runningApp.isIdleScreen
        let (members, leader) = membership.withLockedValue { ($0.members, $0.leader) }
        for (index, member) in members.enumerated() {
            member.setGroupPlayback(playing ? (index == leader ? .multizoneLeader : .multizoneFollower) : nil)
        }
    }

    /// A member's name or volume changed: every sender following the group hears DEVICE_UPDATED.
    func memberChanged(_ member: EmulatedDevice) {
        endpoint.broadcastMultizone(["type": "DEVICE_UPDATED", "device": member.multizoneDescription])
    }
}

/// What changed on a device of a group while it handled a message, told to the group once the device's lock is
/// released (the group reads other devices' state).
struct GroupChange {
    let group: EmulatedGroup
    let playbackChanged: Bool

    func notify(from device: EmulatedDevice) {
        if device === group.endpoint {
            if playbackChanged { group.playbackChanged() }
        } else {
            group.memberChanged(device)
        }
    }
}

/// The multizone namespace (`urn:x-cast:com.google.cast.multizone`) on a group's endpoint.
extension EmulatedDevice {
    /// This device as a group's member list shows it: `{deviceId (hyphenated), name, capabilities, volume}`.
    var multizoneDescription: JSONValue {
        let (level, muted) = volume
        return [
            "deviceId": .string(CastDeviceID.hyphenated(configuration.id)), "name": .string(configuration.friendlyName),
            "capabilities": .number(Double(configuration.capabilities)),
            "volume": ["level": .number(level), "muted": .bool(muted)],
        ]
    }

    /// Answers a multizone request on `receiver-0` of a group's endpoint: GET_STATUS, GET_CASTING_GROUPS,
    /// SET_DEVICE_VOLUME. A device that is no group's endpoint does not speak the namespace (it stays silent,
    /// as members do).
    func receiveMultizone(_ message: CastMessage, on connectionID: Int) {
        let (group, peer) = state.withLockedValue { state -> (EmulatedGroup?, Peer?) in
            let vc = VirtualConnection(senderID: message.sourceID, endpoint: CastEndpoint.receiver)
            guard let peer = state.peers[connectionID], peer.virtualConnections.contains(vc) else { return (nil, nil) }
            return (state.group, peer)
        }
        guard let group, group.endpoint === self, let peer, let request = try? message.json() else { return }
        let requestID = echoedRequestID(request["requestId"])
        var answer: JSONValue
        var broadcast: JSONValue?
        switch request["type"]?.stringValue {
        case "GET_STATUS":
            answer = group.statusPayload
        case "GET_CASTING_GROUPS":
            answer = ["type": "CASTING_GROUPS", "status": ["groups": []]]
        case "SET_DEVICE_VOLUME":
            let id = request["deviceId"]?.stringValue.map(CastDeviceID.normalized)
            let level = request["volume"]?["level"]?.doubleValue
            let muted = request["volume"]?["muted"]?.boolValue
            guard let member = group.members.first(where: { $0.configuration.id.lowercased() == id }),
                level.map({ (0...1).contains($0) }) ?? true, level != nil || muted != nil
            else {
                answer = ["type": "INVALID_REQUEST", "reason": "INVALID_PARAMS"]
                break
            }
            member.setVolume(level: level, muted: muted)
            answer = ["type": "DEVICE_UPDATED", "device": member.multizoneDescription]
            broadcast = answer
        default:
            answer = ["type": "INVALID_REQUEST", "reason": "INVALID_COMMAND"]
        }
        answer["requestId"] = requestID
        deliver([
            Outgoing(
                connection: peer.connection,
                message: CastMessage(
                    sourceID: CastEndpoint.receiver,
                    destinationID: message.sourceID,
                    namespace: CastNamespace.multizone,
                    json: answer
                )
            )
        ])
        if let broadcast { broadcastMultizone(broadcast, except: connectionID) }
    }

    /// Sends a multizone event (requestId 0, to `*`) to every sender with a virtual connection to `receiver-0`.
    func broadcastMultizone(_ payload: JSONValue, except excluded: Int? = nil) {
        var payload = payload
        payload["requestId"] = 0
        emit { state in
            state.peers.sorted { $0.key < $1.key }.compactMap { id, peer -> Outgoing? in
                guard id != excluded, peer.virtualConnections.contains(where: { $0.endpoint == CastEndpoint.receiver })
                else { return nil }
                return Outgoing(
                    connection: peer.connection,
                    message: CastMessage(
                        sourceID: CastEndpoint.receiver,
                        destinationID: CastEndpoint.broadcast,
                        namespace: CastNamespace.multizone,
                        json: payload
                    )
                )
            }
        }
    }

    /// Sets the device's own volume as its group asks (SET_DEVICE_VOLUME), telling its own senders.
    func setVolume(level: Double?, muted: Bool?) {
        emit { state in
            if let level { state.volumeLevel = level }
            if let muted { state.isMuted = muted }
            return broadcastReceiverStatus(state, except: nil)
        }
    }

    /// Runs the group's leader or follower app (ending an app of the device's own), or — `nil` — ends it.
    func setGroupPlayback(_ app: EmulatedApp?) {
        emit { state in
            if let app {
                guard state.running.app != app else { return [] }
                var out = stopRunningApp(state: &state, replacing: true)
                let sessionID = configuration.sessionIDGenerator()
                state.running = RunningApp(
                    app: app,
                    sessionID: sessionID,
                    transportID: sessionID,
                    launch: nil,
                    player: nil
                )
                out += broadcastReceiverStatus(state, except: nil)
                return out
            }
            guard state.running.app.kind == .groupPlayback else { return [] }
            return stopRunningApp(state: &state, replacing: true) + broadcastReceiverStatus(state, except: nil)
        }
    }
}
