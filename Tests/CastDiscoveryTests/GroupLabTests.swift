import CastDiscovery
import CastMedia
import CastSession
import Foundation
import Testing

/// A speaker group in the two-host lab: `cast-receiver --group` on one host, advertised over real mDNS; a sender on
/// the other host finds the group and its members, casts to the group, and follows it when its leader moves (the
/// group's record changes port; discovery's new record is where the session reconnects).
@Suite(
    "Speaker groups across a veth pair",
    .enabled(if: Lab.isUp, Lab.skipReason),
    .enabled(if: Child.mode == nil, "not inside a child process")
)
struct GroupLabTests {
    @Test("a session on a group found by mDNS follows the group to its new leader, and the media plays on")
    func sessionFollowsMovedGroup() async throws {
        let tag = uniqueTag()
        let receiver = try ChildProcess(
            Lab.inside(
                [
                    Build.castReceiver, "--host", "::", "--port", "0", "--devices", "2", "--name", "\(tag) Room",
                    "--group", "\(tag) Downstairs",
                ],
                namespace: Lab.receiverNamespace,
                bus: Lab.receiverBus
            )
        )
        defer { receiver.terminate() }
        let output = try await receiver.waitForOutput("ready")
        #expect(output.contains("cast-receiver: advertised \"\(tag) Downstairs\" as 'Google-Cast-Group-"))

        let sender = try ChildProcess(
            Child.command(namespace: (Lab.senderNamespace, Lab.senderBus)),
            environment: ["CAST_DISCOVERY_CHILD": "group-sender", "CAST_TAG": tag]
        )
        defer { sender.terminate() }
        _ = try await sender.waitForOutput("CHILD-RESULT loaded=", within: .seconds(60))
        receiver.signal(SIGUSR1)
        let moved = try await receiver.waitForOutput("leader moved to \"\(tag) Room 2\"")
        let newPort = try #require(
            moved.split(separator: "\n").first { $0.contains("leader moved") }?.split(separator: ":").last
        )
        #expect(try await sender.waitForExit(within: .seconds(90)) == 0, "\(sender.text)")
        let results = Child.results(in: sender.text)
        #expect(results["members"] == "\(tag) Room 1,\(tag) Room 2")
        #expect(results["memberGroups"] == "\(tag) Downstairs")
        #expect(results["isGroup"] == "true")
        #expect(results["memberVolume"] == "0.3", "a member's own volume set through the group")
        #expect(results["resumedPort"] == String(newPort), "\(results)")
        #expect(results["resumedPort"] != results["firstPort"])
        #expect(results["sameSession"] == "true")
        #expect(results["playerState"] == "PLAYING")

        receiver.signal(SIGTERM)
        #expect(try await receiver.waitForExit() == 0)
        #expect(receiver.text.contains("cast-receiver: withdrew 3 mDNS advertisements"))
    }
}

extension ChildProcessTests {
    @Test(.enabled(if: Child.mode == "group-sender", "run by GroupLabTests"))
    func groupSender() async throws {
        let tag = try #require(ProcessInfo.processInfo.environment["CAST_TAG"])
        let discovery = DiscoveryManager()
        let changes = discovery.events()
        try discovery.start()
        defer { Task { await discovery.stop() } }
        let names = ["\(tag) Downstairs", "\(tag) Room 1", "\(tag) Room 2"]
        let found = try await withDeadline(.seconds(30), "the group and its members over mDNS") {
            for await _ in changes {
                let devices = discovery.devices.filter { names.contains($0.friendlyName) }
                if devices.count == 3 { return devices.sorted { $0.friendlyName < $1.friendlyName } }
            }
            throw TimeoutError(what: "discovery ended")
        }
        let group = found[0]
        Self.report("isGroup", "\(group.isGroup)")
        let activities = await DeviceObserver.activities(of: found, timeout: .seconds(20)).compactMap { try? $0.get() }
        let membership = SpeakerGroupMembership(activities)
        Self.report("members", (activities.first?.groupMembers ?? []).map(\.name).joined(separator: ","))
        Self.report(
            "memberGroups",
            membership.groups(containing: found[1].id).map(\.device.friendlyName).joined(separator: ",")
        )

        var options = CastOptions()
        options.stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("group-\(tag)").path
        defer { try? FileManager.default.removeItem(atPath: options.stateDirectory!) }
        options.heartbeat.pingInterval = nil
        var policy = ReconnectPolicy()
        policy.initialDelay = .milliseconds(200)
        policy.maximumDelay = .seconds(1)
        options.reconnectPolicy = policy
        let context = CastContext(options: options)
        context.sessionManager.deviceLocator = discovery
        let events = context.sessionManager.events()
        let session = try await context.sessionManager.startSession(with: group)
        var media = MediaInformation(contentID: "https://example.com/group.mp4", contentType: "audio/mp4")
        media.duration = 600
        try await session.remoteMediaClient!.loadMedia(media).response()
        try await session.setDeviceVolume(0.3, forMultizoneMember: found[2].id)
        Self.report("memberVolume", "\(session.multizoneStatus?.member(withID: found[2].id)?.volumeLevel ?? -1)")
        Self.report("firstPort", "\(session.device.port)")
        Self.report("loaded", "true")

        try await withDeadline(.seconds(60), "the session to resume after the leader moved") {
            for await event in events {
                if case .didResume = event { return }
                if case .didEnd = event { throw TimeoutError(what: "the session ended instead") }
            }
        }
        Self.report("resumedPort", "\(session.device.port)")
        Self.report("sameSession", "\(context.sessionManager.currentSession === session)")
        let status = try await session.remoteMediaClient!.requestStatus().response()
        Self.report("playerState", status?.playerState.rawValue ?? "none")
        await context.sessionManager.endSession(stopCasting: true)
    }

    /// A result line the parent sees at once: written straight to the descriptor, since `print` keeps it in a
    /// buffer while the output is a pipe.
    private static func report(_ key: String, _ value: String) {
        FileHandle.standardOutput.write(Data("CHILD-RESULT \(key)=\(value)\n".utf8))
    }
}
