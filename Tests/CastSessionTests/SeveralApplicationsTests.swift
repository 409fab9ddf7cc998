import CastMedia
import CastReceiver
import CastTransport
import Testing

@testable import CastSession

/// Devices that list several applications in RECEIVER_STATUS (a speaker group member's `MultizoneFollower`, or
/// the idle screen, beside the app a sender launched): every step picks the app it means by id or session id,
/// or the most relevant one, never simply the first listed.
@Suite struct SeveralApplicationsTests {
    /// Which app a status means: by session id, by app id, else an app of its own before a group member's part
    /// and those before the idle screen, in the device's order among equals.
    @Test func theAppMeantIsChosenByItsSessionOrIdOrRelevance() {
        func entry(_ id: String, _ session: String, idle: Bool = false) -> JSONValue {
            [
                "appId": .string(id), "sessionId": .string(session), "transportId": .string(session),
                "isIdleScreen": .bool(idle), "namespaces": [["name": .string(CastNamespace.media)]],
            ]
        }
        let status = DeviceStatus(json: [
            "status": [
                "applications": [
                    entry("E8C28D3C", "idle", idle: true), entry("705D30C6", "follower"), entry("CC1AD845", "dmr"),
                ]
            ]
        ])
        #expect(status.applications.count == 3)
        #expect(status.application?.sessionID == "dmr")
        #expect(status.runningApplication?.sessionID == "dmr")
        #expect(status.application(sessionID: "follower")?.applicationID == "705D30C6")
        #expect(status.application(sessionID: "gone") == nil)
        #expect(status.application(sessionID: "dmr", applicationID: "705D30C6") == nil)
        #expect(status.application(applicationID: "CC1AD845")?.sessionID == "dmr")

        let member = DeviceStatus(json: [
            "status": ["applications": [entry("E8C28D3C", "idle", idle: true), entry("MultizoneFollower", "f")]]
        ])
        #expect(member.runningApplication?.groupRole == .follower)
        let idle = DeviceStatus(json: ["status": ["applications": [entry("E8C28D3C", "idle", idle: true)]]])
        #expect(idle.application?.isIdleScreen == true)
        #expect(idle.runningApplication == nil)
    }

    /// A follower app listed before the launched Default Media Receiver: the launch succeeds with the media app
    /// (it failed with "did not start CC1AD845"), broadcasts that list it second keep the session up, media
    /// plays, and stopping stops the media app (it sent the follower's session id, was refused, and said stopped).
    @Test(.timeLimit(.minutes(1))) func aLaunchTakesItsAppThoughAFollowerIsListedFirst() async throws {
        try await withStartedSession(device: { $0.faults.listsAppBeforeRunningApp = .multizoneFollower }) { fixture in
            let session = fixture.session
            #expect(session.application.applicationID == "CC1AD845")
            #expect(session.sessionID == fixture.device.runningApp.sessionID)
            let client = try #require(session.remoteMediaClient)
            #expect(try await client.loadMedia(sampleMedia()).response()?.playerState == .playing)
            // A broadcast (the device's volume changed) lists the follower first again: the session stays.
            try await session.setDeviceVolume(0.4)
            #expect(session.connectionState == .connected)
            #expect(try await client.pause().response()?.playerState == .paused)

            try await session.stopApplication()
            #expect(fixture.device.runningApp.isIdleScreen)
            #expect(session.connectionState == .disconnected)
        }
    }

    /// The idle screen listed before the launched app: the same.
    @Test(.timeLimit(.minutes(1))) func aLaunchTakesItsAppThoughTheIdleScreenIsListedFirst() async throws {
        try await withStartedSession(device: { $0.faults.listsAppBeforeRunningApp = .backdrop }) { fixture in
            #expect(fixture.session.application.applicationID == "CC1AD845")
            let loaded = try await fixture.client.loadMedia(sampleMedia()).response()
            #expect(loaded?.playerState == .playing)
        }
    }

    /// Joining (`cast status`, a control command on a device someone else cast to) and resuming a saved session
    /// pick the media app, not the follower listed first; so does observing the device.
    @Test(.timeLimit(.minutes(1))) func joiningResumingAndObservingPickTheMediaApp() async throws {
        try await withCastReceiverEmulator(
            devices: [DeviceConfiguration(friendlyName: "Den", port: 0)],
            clock: ManualCastClock()
        ) { emulator in
            let device = emulator.devices[0]
            let phone = CastContext(options: testOptions())
            let phoneSession = try await phone.sessionManager.startSession(with: device.castDevice)
            try await #require(phoneSession.remoteMediaClient).loadMedia(sampleMedia(title: "From the phone"))
                .response()
            await phone.sessionManager.endSession(stopCasting: false)
            var faults = FaultInjection()
            faults.listsAppBeforeRunningApp = .multizoneFollower
            device.setFaults(faults)

            let cli = CastContext(options: testOptions())
            let joined = try await cli.sessionManager.joinSession(on: device.castDevice)
            #expect(joined.sessionID == phoneSession.sessionID)
            let client = try #require(joined.remoteMediaClient, "the joined app plays media")
            #expect(client.mediaStatus?.media?.metadata?.title == "From the phone")
            await cli.sessionManager.endSession(stopCasting: false)

            let resumed = try await phone.sessionManager.resumeSavedSession()
            #expect(resumed.sessionID == phoneSession.sessionID)
            await phone.sessionManager.endSession(stopCasting: false)

            let observed = try await DeviceObserver.activities(
                of: [device.castDevice],
                options: testOptions(),
                timeout: .seconds(30)
            )[0].get()
            #expect(observed.application?.applicationID == "CC1AD845")
            #expect(observed.playsMedia)
        }
    }

    /// An app the device will not stop by its session id (`INVALID_SESSION_ID`) and still lists: stopping fails
    /// with the refusal instead of reporting it stopped.
    @Test(.timeLimit(.minutes(1))) func stoppingAnAppTheDeviceStillListsIsNotReportedStopped() async throws {
        var configuration = DeviceConfiguration(friendlyName: "Stubborn", port: 0)
        let other = EmulatedApp(
            id: "0THER001",
            displayName: "Other",
            namespaces: ["urn:x-cast:com.example.other"],
            kind: .echo
        )
        configuration.faults.listsAppBeforeRunningApp = other
        try await withCastReceiverEmulator(devices: [configuration], clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: testOptions())
            // Idle but for an app the device lists and will not stop by its session id.
            let session = try await context.sessionManager.joinSession(on: device.castDevice)
            #expect(session.application.applicationID == other.id)
            await #expect {
                try await session.stopApplication()
            } throws: { error in
                let error = error as? CastSessionError
                return error?.code == .refused && error?.receiverReason == "INVALID_SESSION_ID"
            }
            await context.sessionManager.endSession(stopCasting: false)
        }
    }
}
