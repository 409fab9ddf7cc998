import CastMedia
import CastReceiver
import CastTransport
import Testing

@testable import CastSession

/// Receivers that behave unlike the reference, as real devices do, each through an emulator fault.
@Suite struct ReceiverQuirkTests {
    /// A receiver that answers status requests only by broadcasting its new status (`requestId` 0), never with a
    /// reply carrying the request's id: the session starts, and every command ends on the broadcast that shows its
    /// effect instead of waiting for its timeout (60 s here, so a regression fails with `timedOut`).
    @Test func aSessionAndEveryCommandCompleteOnBroadcasts() async throws {
        try await withStartedSession(device: { $0.faults.statusOnlyByBroadcast = true }) { fixture in
            let client = fixture.client
            #expect(try await client.loadMedia(sampleMedia()).response()?.playerState == .playing)
            #expect(try await client.pause().response()?.playerState == .paused)
            #expect(try await client.play().response()?.playerState == .playing)
            #expect(try await client.seek(.to(30)).response()?.currentTime == 30)
            #expect(try await client.setPlaybackRate(1.5).response()?.playbackRate == 1.5)
            #expect(try await client.requestStatus().response()?.media?.metadata?.title == "Big Buck Bunny")

            try await fixture.session.setDeviceVolume(0.3)
            #expect(fixture.session.deviceStatus?.volumeLevel == 0.3)
            try await fixture.session.setDeviceMuted(true)
            #expect(fixture.session.deviceStatus?.isMuted == true)
            #expect(try await fixture.session.fetchDeviceStatus().volumeLevel == 0.3)

            let stopped = try await client.stop().response()
            #expect(stopped == nil || stopped?.playerState == .idle)

            // Stopping the app is answered by the broadcast that shows it gone (the STOP's reply is not awaited
            // with an error, so the time tells).
            let start = ContinuousClock.now
            await fixture.context.sessionManager.endSession(stopCasting: true)
            #expect(ContinuousClock.now - start < .seconds(30))
            #expect(fixture.device.runningApp.isIdleScreen)
        }
    }

    /// A LAUNCH answered with the app before it lists its transport id and namespaces (as Chrome, a session without
    /// namespaces is not usable yet): the start waits for the status that lists them, then connects to the app.
    @Test(.timeLimit(.minutes(1))) func aLaunchedAppListedWholeOnlyLaterIsWaitedFor() async throws {
        var configuration = DeviceConfiguration(friendlyName: "Slow Start", port: 0)
        configuration.faults.listsLaunchedAppWholeAfter = 2
        configuration.faults.transportIDDiffersFromSessionID = true
        let clock = ManualCastClock()
        try await withCastReceiverEmulator(devices: [configuration], clock: clock) { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: testOptions())
            let before = clock.pendingTimerCount
            let start = Task { try await context.sessionManager.startSession(with: device.castDevice) }
            // The launch armed the timer that lists the app whole.
            await clock.waitUntil { $0.pendingTimerCount > before }
            clock.advance(by: .seconds(2))
            let session = try await start.value
            #expect(session.transportID.hasPrefix("web-"))
            #expect(session.application.playsMedia)
            let client = try #require(session.remoteMediaClient)
            #expect(try await client.loadMedia(sampleMedia()).response()?.playerState == .playing)
            await context.sessionManager.endSession(stopCasting: true)
        }
    }

    /// The running app gets a new transport id (a status says so): the session follows it, and commands reach the
    /// app there.
    @Test(.timeLimit(.minutes(1))) func theSessionFollowsItsAppToANewTransportID() async throws {
        try await withStartedSession { fixture in
            let client = fixture.client
            try await client.loadMedia(sampleMedia()).response()
            let before = fixture.session.transportID
            let statuses = client.statusUpdates()
            fixture.device.moveAppTransport()
            // The session reads the media status again once it has moved.
            _ = try await next(statuses) { _ in fixture.session.transportID != before }
            #expect(fixture.session.transportID.hasPrefix("web-"))
            #expect(try await client.pause().response()?.playerState == .paused)
            #expect(fixture.device.mediaStatus?["playerState"] == "PAUSED")
            #expect(try fixture.context.sessionManager.savedSession()?.transportID == fixture.session.transportID)
        }
    }

    /// The device's volume, when a status says nothing of it, is unknown: a relative change is refused rather
    /// than taken from a guess.
    @Test func relativeVolumeStepsNeedAKnownLevel() async throws {
        try await withStartedSession { fixture in
            try await fixture.session.setDeviceVolume(0.4)
            try await fixture.session.adjustDeviceVolume(bySteps: 2)
            #expect(fixture.session.deviceStatus?.volumeLevel == 0.5)
            let unknown = DeviceStatus(json: ["status": ["volume": ["level": .null, "muted": false]]])
            #expect(unknown.volumeLevel == nil)
            #expect(throws: CastSessionError.self) {
                try DeviceStatus.level(from: unknown.volumeLevel, bySteps: 1, of: 0.05)
            }
            #expect(try DeviceStatus.level(from: 0.96, bySteps: 1, of: 0.05) == 1)
        }
    }
}
