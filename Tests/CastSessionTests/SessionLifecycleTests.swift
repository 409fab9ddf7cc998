import CastDiscovery
import CastMedia
import CastReceiver
import CastSession
import CastTransport
import Testing

@Suite struct SessionLifecycleTests {
    @Test func startLoadControlAndEnd() async throws {
        let clock = ManualCastClock()
        try await withCastReceiverEmulator(
            devices: [DeviceConfiguration(friendlyName: "Living Room", port: 0)],
            clock: clock
        ) { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: testOptions())
            let events = context.sessionManager.events()
            let session = try await context.sessionManager.startSession(with: device.castDevice)
            #expect(context.sessionManager.castState == .connected)
            #expect(session.application.applicationID == "CC1AD845")
            #expect(device.runningApp.sessionID == session.sessionID)
            let client = try #require(session.remoteMediaClient)

            let loaded = try await client.loadMedia(sampleMedia()).response()
            #expect(loaded?.playerState == .playing)
            #expect(loaded?.media?.metadata?.title == "Big Buck Bunny")
            let paused = try await client.pause().response()
            #expect(paused?.playerState == .paused)
            let sought = try await client.seek(.to(120, resumeState: .play)).response()
            #expect(sought?.currentTime == 120)
            #expect(sought?.playerState == .playing)
            clock.advance(by: .seconds(10))
            #expect(abs(client.approximateStreamPosition - 120) < 5)
            try await client.setPlaybackRate(1.5).response()
            #expect(client.mediaStatus?.playbackRate == 1.5)

            try await session.setDeviceVolume(0.4)
            #expect(session.deviceStatus?.volumeLevel == 0.4)
            try await session.setDeviceMuted(true)
            #expect(device.volume.muted)

            await context.sessionManager.endSession(stopCasting: true)
            #expect(device.runningApp.isIdleScreen)
            #expect(context.sessionManager.currentSession == nil)
            _ = try await next(events) { if case .didEnd = $0 { return true } else { return false } }
        }
    }

    @Test func launchOfUnknownAppFails() async throws {
        try await withCastReceiverEmulator { emulator in
            let context = CastContext(options: testOptions { $0.receiverApplicationID = "BADAPPID" })
            await #expect {
                try await context.sessionManager.startSession(with: emulator.devices[0].castDevice)
            } throws: { error in
                (error as? CastSessionError)?.code == .launchFailed
                    && (error as? CastSessionError)?.receiverReason == "NOT_FOUND"
            }
            #expect(
                context.sessionManager.castState == .noDevicesAvailable
                    || context.sessionManager.castState == .notConnected
            )
        }
    }

    @Test func suspendAndResumeAfterConnectionDrop() async throws {
        try await withCastReceiverEmulator { emulator in
            let device = emulator.devices[0]
            let sleeper = RecordingSleeper()
            let context = CastContext(options: testOptions(), sleep: sleeper.sleep)
            let events = context.sessionManager.events()
            let session = try await context.sessionManager.startSession(with: device.castDevice)
            try await session.remoteMediaClient!.loadMedia(sampleMedia()).response()

            // The device drops the connection abruptly after the next message.
            var faults = FaultInjection()
            faults.closesAfterMessages = 0
            device.setFaults(faults)
            _ = session.remoteMediaClient!.requestStatus()
            _ = try await next(events) { if case .didSuspend = $0 { return true } else { return false } }
            device.setFaults(FaultInjection())
            _ = try await next(events) { if case .didResume = $0 { return true } else { return false } }
            #expect(session.connectionState == .connected)
            #expect(!sleeper.recorded.isEmpty)
            let status = try await session.remoteMediaClient!.requestStatus().response()
            #expect(status?.media?.metadata?.title == "Big Buck Bunny")
            await context.sessionManager.endSession()
        }
    }

    @Test func resumeFromSavedStateInAFreshContext() async throws {
        try await withCastReceiverEmulator { emulator in
            let device = emulator.devices[0]
            let options = testOptions()
            let first = CastContext(options: options)
            let session = try await first.sessionManager.startSession(with: device.castDevice)
            try await session.remoteMediaClient!.loadMedia(sampleMedia(title: "Sintel")).response()
            await first.sessionManager.endSession(stopCasting: false)

            let second = CastContext(options: options)
            let resumed = try await second.sessionManager.resumeSavedSession()
            #expect(resumed.sessionID == session.sessionID)
            let status = try await resumed.remoteMediaClient!.requestStatus().response()
            #expect(status?.media?.metadata?.title == "Sintel")
            await second.sessionManager.endSession(stopCasting: true)

            let third = CastContext(options: options)
            await #expect {
                try await third.sessionManager.resumeSavedSession()
            } throws: { ($0 as? CastSessionError)?.code == .sessionNotFound }
        }
    }
}
