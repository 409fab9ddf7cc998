import CastDiscovery
import CastMedia
import CastReceiver
import CastSession
import CastTransport
import NIOConcurrencyHelpers
import Testing

/// Speaker groups against the emulator's group (its own endpoint, the multizone namespace, the leader and
/// follower apps on the members, a leader that moves).
@Suite struct SpeakerGroupTests {
    @Test("a group tells its members with their names and volumes; membership says which groups a device is in")
    func membershipFromActivities() async throws {
        try await withGroup { emulator, group in
            let (kitchen, bedroom) = (emulator.devices[0], emulator.devices[1])
            let activities = await DeviceObserver.activities(
                of: [kitchen.castDevice, bedroom.castDevice, group.castDevice],
                options: testOptions(),
                timeout: .seconds(60)
            )
            let results = try activities.map { try $0.get() }
            #expect(results[0].groupMembers == nil, "a member is no group")
            let members = try #require(results[2].groupMembers)
            #expect(members.map(\.name) == ["Kitchen", "Bedroom"])
            #expect(members.map(\.id) == [kitchen.configuration.id, bedroom.configuration.id])
            #expect(members[1].volumeLevel == 0.4)
            #expect(members[1].isMuted == false)
            let membership = SpeakerGroupMembership(results)
            #expect(
                membership.groups(containing: bedroom.configuration.id).map(\.device.friendlyName) == ["Downstairs"]
            )
            #expect(membership.groups(containing: "0123456789abcdef0123456789abcdef").isEmpty)
            #expect(membership.playingGroup(of: results[0]) == nil, "the group plays nothing yet")
        }
    }

    @Test("while the group plays, its members run the leader and follower apps and say which group plays")
    func membersShowGroupPlayback() async throws {
        try await withGroup { emulator, group in
            let (kitchen, bedroom) = (emulator.devices[0], emulator.devices[1])
            let observer = DeviceObserver(device: bedroom.castDevice, options: testOptions())
            let updates = observer.updates()
            _ = try await observer.start()
            defer { Task { await observer.stop() } }

            let context = CastContext(options: testOptions())
            let session = try await context.sessionManager.startSession(with: group.castDevice)
            try await session.remoteMediaClient!.loadMedia(sampleMedia()).response()
            #expect(kitchen.runningApp.appID == "531A4F84")
            #expect(bedroom.runningApp.appID == "705D30C6")
            let following = try await next(updates) { $0.application?.groupRole == .follower }
            #expect(following.application?.name == "MultizoneFollower")

            let activities = try await DeviceObserver.activities(
                of: [bedroom.castDevice, group.castDevice],
                options: testOptions(),
                timeout: .seconds(60)
            ).map { try $0.get() }
            let playing = try #require(SpeakerGroupMembership(activities).playingGroup(of: activities[0]))
            #expect(playing.device.friendlyName == "Downstairs")
            #expect(playing.application?.applicationID == "CC1AD845")

            // Joining the member that only follows (what a control command on it does) says so at once: it was
            // a wait for namespaces the follower app never lists, then launchFailed.
            let member = CastContext(options: testOptions())
            let error = await #expect(throws: CastSessionError.self) {
                try await member.sessionManager.joinSession(on: bedroom.castDevice)
            }
            #expect(error?.code == .noApplicationRunning)
            #expect(error?.message.contains("follows its speaker group") == true)

            await context.sessionManager.endSession(stopCasting: true)
            _ = try await next(updates) { $0.isIdle }
            #expect(kitchen.runningApp.isIdleScreen)
        }
    }

    @Test("a session on a group follows its membership: status, a member's volume set, a member's change heard")
    func sessionFollowsMembership() async throws {
        try await withGroup { emulator, group in
            let (kitchen, bedroom) = (emulator.devices[0], emulator.devices[1])
            let context = CastContext(options: testOptions())
            let session = try await context.sessionManager.startSession(with: group.castDevice)
            let updates = session.multizoneUpdates()
            let status = try await session.requestMultizoneStatus()
            #expect(status.members.map(\.name) == ["Kitchen", "Bedroom"])

            try await session.setDeviceVolume(
                0.25,
                forMultizoneMember: CastDeviceID.hyphenated(bedroom.configuration.id)
            )
            #expect(bedroom.volume.level == 0.25)
            #expect(group.endpoint.volume.level == 1, "the group's own volume stays")
            #expect(session.multizoneStatus?.member(withID: bedroom.configuration.id)?.volumeLevel == 0.25)
            try await session.setDeviceMuted(true, forMultizoneMember: kitchen.configuration.id)
            #expect(kitchen.volume.muted)

            // Someone turns the kitchen speaker down on the speaker itself: the group tells its senders.
            let observer = DeviceObserver(device: kitchen.castDevice, options: testOptions())
            _ = try await observer.start()
            try await observer.setVolume(0.1)
            await observer.stop()
            let updated = try await next(updates) {
                if case .memberUpdated(let member) = $0 { return member.volumeLevel == 0.1 }
                return false
            }
            guard case .memberUpdated(let member) = updated else { return }
            #expect(member.id == kitchen.configuration.id)
            #expect(session.multizoneStatus?.member(withID: kitchen.configuration.id)?.volumeLevel == 0.1)

            await #expect {
                try await session.setDeviceVolume(0.5, forMultizoneMember: "0123456789abcdef0123456789abcdef")
            } throws: { ($0 as? CastSessionError)?.code == .invalidArgument }
            await #expect {
                try await session.setDeviceVolume(1.5, forMultizoneMember: kitchen.configuration.id)
            } throws: { ($0 as? CastSessionError)?.code == .invalidArgument }
            await context.sessionManager.endSession(stopCasting: true)
        }
    }

    @Test("the group refuses a volume for a device that is no member, and malformed multizone requests")
    func groupRefusesBadRequests() async throws {
        try await withGroup { _, group in
            let connection = try await CastConnection.connect(host: group.endpoint.host, port: group.endpoint.port)
            defer { Task { await connection.close() } }
            try await connection.openVirtualConnection(to: CastEndpoint.receiver)
            func ask(_ payload: JSONValue) async throws -> String? {
                try await connection.request(
                    namespace: CastNamespace.multizone,
                    to: CastEndpoint.receiver,
                    payload: payload
                )
                .json()["type"]?.stringValue
            }
            #expect(
                try await ask(["type": "SET_DEVICE_VOLUME", "deviceId": "nobody", "volume": ["level": 0.5]])
                    == "INVALID_REQUEST"
            )
            #expect(
                try await ask(["type": "SET_DEVICE_VOLUME", "deviceId": .string(group.members[0].configuration.id)])
                    == "INVALID_REQUEST"
            )
            #expect(try await ask(["type": "DANCE"]) == "INVALID_REQUEST")
            #expect(try await ask(["type": "GET_CASTING_GROUPS"]) == "CASTING_GROUPS")
            // A member is no group: it does not answer the multizone namespace, and a status read says so in time.
            let member = try await CastConnection.connect(host: group.members[0].host, port: group.members[0].port)
            defer { Task { await member.close() } }
            try await member.openVirtualConnection(to: CastEndpoint.receiver)
            await #expect {
                try await MultizoneStatus.ask(member, timeout: .milliseconds(300))
            } throws: { ($0 as? CastTransportError)?.code == .requestTimedOut }
        }
    }

    @Test("members leaving and joining the group: the session hears DEVICE_REMOVED and DEVICE_ADDED")
    func membershipEvents() async throws {
        try await withGroup(extraMember: "Attic") { emulator, group in
            let (kitchen, attic) = (emulator.devices[0], emulator.devices[2])
            let context = CastContext(options: testOptions())
            let session = try await context.sessionManager.startSession(with: group.castDevice)
            let updates = session.multizoneUpdates()
            #expect(try await session.requestMultizoneStatus().members.count == 3)
            try await session.remoteMediaClient!.loadMedia(sampleMedia()).response()
            #expect(attic.runningApp.appID == "705D30C6")

            #expect(throws: CastReceiverError.self) { try group.remove(kitchen) }  // the leader stays
            try group.remove(attic)
            let removed = try await next(updates) {
                if case .memberRemoved = $0 { return true } else { return false }
            }
            #expect(removed == .memberRemoved(attic.configuration.id))
            #expect(session.multizoneStatus?.members.map(\.name) == ["Kitchen", "Bedroom"])
            #expect(attic.runningApp.isIdleScreen, "a device that left stops following the group")
            #expect(attic.eurekaInfo()["multizone"]?["groups"]?.arrayValue?.isEmpty == true)

            group.add(attic)
            let added = try await next(updates) {
                if case .memberAdded = $0 { return true } else { return false }
            }
            guard case .memberAdded(let member) = added else { return }
            #expect(member.name == "Attic")
            #expect(session.multizoneStatus?.members.map(\.name) == ["Kitchen", "Bedroom", "Attic"])
            #expect(attic.runningApp.appID == "705D30C6", "it follows the playing group again")
            await context.sessionManager.endSession(stopCasting: true)
        }
    }

    @Test("multizone messages are read liberally: hyphenated or plain ids, nested or flat, explicit nulls")
    func multizoneParsing() throws {
        let status = try #require(
            MultizoneStatus(
                json: try JSONValue(
                    parsing: """
                        {"type":"MULTIZONE_STATUS","requestId":1,"status":{"devices":[
                          {"deviceId":"99F3C58B-F347-1CC1-0CD8-7F79D33599CF","name":"Kitchen","capabilities":198660,
                           "volume":{"level":0.4,"muted":false}},
                          {"deviceId":"7ab9edb8fbd867f7eb76bf253a94e423","name":null,"capabilities":null,"volume":null},
                          {"name":"no id"}]}}
                        """
                )
            )
        )
        #expect(status.members.map(\.id) == ["99f3c58bf3471cc10cd87f79d33599cf", "7ab9edb8fbd867f7eb76bf253a94e423"])
        #expect(status.members[0].volumeLevel == 0.4)
        #expect(status.members[1].name == "" && status.members[1].volumeLevel == nil)
        #expect(status.member(withID: "7ab9edb8-fbd8-67f7-eb76-bf253a94e423")?.id == status.members[1].id)
        #expect(
            MultizoneEvent(json: [
                "type": "DEVICE_REMOVED", "device": ["deviceId": "7AB9EDB8-FBD8-67F7-EB76-BF253A94E423"],
            ])
                == .memberRemoved("7ab9edb8fbd867f7eb76bf253a94e423")
        )
        #expect(MultizoneEvent(json: ["type": "DEVICE_UPDATED"]) == nil, "no device: nothing to apply")
        #expect(MultizoneEvent(json: ["type": "MULTIZONE_STATUS", "status": .null]) == nil)
        if case .playbackSessionUpdated(let payload) = MultizoneEvent(json: [
            "type": "PLAYBACK_SESSION_UPDATED", "x": 1,
        ]) {
            #expect(payload["x"]?.intValue == 1)
        } else {
            Issue.record("PLAYBACK_SESSION_UPDATED is passed through")
        }
        #expect(
            CastDeviceID.hyphenated("99f3c58bf3471cc10cd87f79d33599cf") == "99f3c58b-f347-1cc1-0cd8-7f79d33599cf"
        )
    }

    @Test("a session on a group follows the group when its leader moves, and the media plays on")
    func sessionFollowsLeaderMove() async throws {
        try await withGroup { emulator, group in
            let (kitchen, bedroom) = (emulator.devices[0], emulator.devices[1])
            let context = CastContext(options: testOptions(), sleep: { _ in try Task.checkCancellation() })
            let locator = GroupLocator(group: group)
            context.sessionManager.deviceLocator = locator
            let session = try await context.sessionManager.startSession(with: group.castDevice)
            let events = context.sessionManager.events()
            try await session.remoteMediaClient!.loadMedia(sampleMedia()).response()
            let oldPort = group.endpoint.port

            let leader = try await group.moveLeader()
            #expect(leader === bedroom)
            #expect(group.endpoint.port != oldPort)
            _ = try await next(events) { if case .didResume = $0 { return true } else { return false } }
            #expect(session.device.port == group.endpoint.port)
            #expect(session.connectionState == .connected)
            let status = try await session.remoteMediaClient!.requestStatus().response()
            #expect(status?.playerState == .playing)
            #expect(bedroom.runningApp.appID == "531A4F84", "the new leader runs the leader app")
            #expect(kitchen.runningApp.appID == "705D30C6")
            #expect(locator.asked.withLockedValue { $0 } >= 1)
            try await session.remoteMediaClient!.pause().response()
            #expect(group.endpoint.mediaStatus?["playerState"]?.stringValue == "PAUSED")
            await context.sessionManager.endSession(stopCasting: true)
        }
    }
}

/// Where the emulated group's endpoint is now, as discovery's record would say after the leader moved.
private struct GroupLocator: CastDeviceLocator {
    let group: EmulatedGroup
    let asked = NIOLockedValueBox(0)

    func currentRecord(of device: CastDevice) async -> CastDevice? {
        asked.withLockedValue { $0 += 1 }
        return device.id == group.id ? group.castDevice : nil
    }
}

extension EmulatedGroup {
    /// The group as discovery lists it: its id, name, group model and capabilities, at its endpoint.
    var castDevice: CastDevice {
        CastDevice(
            id: id,
            friendlyName: name,
            modelName: EmulatedGroup.modelName,
            capabilities: DeviceCapabilities(rawValue: EmulatedGroup.capabilities),
            addresses: [DeviceAddress(endpoint.host)],
            port: endpoint.port
        )
    }
}

/// Two members, "Kitchen" and "Bedroom" (at volume 0.4), and their group "Downstairs" (with a third member when
/// `extraMember` names one).
private func withGroup(
    extraMember: String? = nil,
    _ body: (CastReceiverEmulator, EmulatedGroup) async throws -> Void
) async throws {
    var kitchen = DeviceConfiguration(friendlyName: "Kitchen", port: 0)
    kitchen.model = "Google Home"
    kitchen.capabilities = 198_660
    var bedroom = DeviceConfiguration(friendlyName: "Bedroom", port: 0)
    bedroom.volumeLevel = 0.4
    let extra = extraMember.map { DeviceConfiguration(friendlyName: $0, port: 0) }
    try await withCastReceiverEmulator(
        devices: [kitchen, bedroom] + (extra.map { [$0] } ?? []),
        group: DeviceConfiguration(friendlyName: "Downstairs", port: 0)
    ) { emulator in
        try await body(emulator, try #require(emulator.group))
    }
}
