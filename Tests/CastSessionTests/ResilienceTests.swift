import CastDiscovery
import CastMedia
import CastReceiver
import CastSession
import CastTransport
import Testing

/// Suspension, reconnection with backoff, and what happens to requests and sessions meanwhile. The backoff
/// waits go through an injected sleeper, so no real time passes between attempts.
@Suite struct ResilienceTests {
    @Test func suspendedSessionEndsWhenTheAppWasStoppedMeanwhile() async throws {
        let sleeper = GatedSleeper()
        try await withStartedSession(sleep: sleeper.sleep) { fixture in
            try await fixture.client.loadMedia(sampleMedia()).response()
            let reason = try await dropConnection(fixture)
            #expect(reason == .networkLost)
            #expect(fixture.session.connectionState == .suspended)
            #expect(fixture.context.sessionManager.castState == .connecting)
            #expect(try await nextEvent(fixture.events, "willResume").name == "willResume")
            fixture.device.setFaults(FaultInjection())

            // Another sender stops the app while we are away.
            let other = CastContext(options: testOptions())
            let otherSession = try await other.sessionManager.startSession(with: fixture.device.castDevice)
            #expect(otherSession.sessionID == fixture.session.sessionID)
            await other.sessionManager.endSession(stopCasting: true)
            #expect(fixture.device.runningApp.isIdleScreen)

            sleeper.open()
            let ended = try await nextEvent(fixture.events, "didEnd")
            #expect(ended.error?.code == .appStopped)
            #expect(fixture.session.connectionState == .disconnected)
            #expect(fixture.context.sessionManager.currentSession == nil)
            #expect(try fixture.context.sessionManager.savedSession() == nil)
            #expect(fixture.client.mediaStatus == nil)
        }
    }

    @Test func outstandingRequestsFailWithConnectionLost() async throws {
        let sleeper = GatedSleeper()
        try await withStartedSession(device: { $0.loadDuration = 5 }, sleep: sleeper.sleep) { fixture in
            let client = fixture.client
            let events = client.events()
            // The LOAD stays outstanding: the receiver is loading on the manual clock and has not answered.
            let load = client.loadMedia(sampleMedia())
            _ = try await next(events) {
                if case .statusUpdated(let status) = $0 { return status?.extendedPlayerState == .loading }
                return false
            }
            #expect(!load.isFinished)

            // Replies are delayed from now on, and the next message drops the connection.
            var faults = FaultInjection()
            faults.replyDelay = 30
            faults.closesAfterMessages = 0
            fixture.device.setFaults(faults)
            let status = client.requestStatus()

            let loadError = await mediaError(of: load)
            #expect(loadError?.code == .connectionLost)
            let statusError = await mediaError(of: status)
            #expect(statusError?.code == .connectionLost)
            #expect(try await nextEvent(fixture.events, "didSuspend").suspendReason == .networkLost)

            fixture.device.setFaults(FaultInjection())
            sleeper.open()
            try await nextEvent(fixture.events, "didResume")
            #expect(fixture.session.connectionState == .connected)
        }
    }

    @Test func requestsWhileSuspendedFailFast() async throws {
        let sleeper = GatedSleeper()
        try await withStartedSession(sleep: sleeper.sleep) { fixture in
            let client = fixture.client
            try await client.loadMedia(sampleMedia()).response()
            try await dropConnection(fixture)

            let play = await mediaError(of: client.play())
            #expect(play?.code == .notConnected)
            let status = await mediaError(of: client.requestStatus())
            #expect(status?.code == .notConnected)
            await #expect {
                try await fixture.session.setDeviceVolume(0.2)
            } throws: { ($0 as? CastSessionError)?.code == .suspended }
            await #expect {
                try await fixture.session.setDeviceMuted(true)
            } throws: { ($0 as? CastSessionError)?.code == .suspended }
            await #expect {
                try await fixture.session.fetchDeviceStatus()
            } throws: { ($0 as? CastSessionError)?.code == .suspended }

            fixture.device.setFaults(FaultInjection())
            sleeper.open()
            try await nextEvent(fixture.events, "didResume")
            let resumed = try await client.requestStatus().response()
            #expect(resumed?.media?.metadata?.title == "Big Buck Bunny")
        }
    }

    @Test func requestsWaitWhileSuspendedWhenAskedTo() async throws {
        // The wait is bounded by the request's own (15 s) timeout; the resume comes long before.
        let sleeper = GatedSleeper()
        try await withStartedSession(options: { $0.requestsWaitWhileSuspended = true }, sleep: sleeper.sleep) {
            fixture in
            let client = fixture.client
            try await client.loadMedia(sampleMedia()).response()
            try await client.pause().response()
            try await dropConnection(fixture)

            let play = client.play()
            fixture.device.setFaults(FaultInjection())
            sleeper.open()
            try await nextEvent(fixture.events, "didResume")
            let status = try await play.response()
            #expect(status?.playerState == .playing)
            #expect(fixture.device.mediaStatus?["playerState"] == "PLAYING")
        }
    }

    @Test func aRequestWaitingForAResumeHonoursItsTimeout() async throws {
        // A request timeout (a wall-clock deadline, long enough for the session to start and load on a saturated
        // machine: 3 s was not); the session stays suspended until the test lets it resume, long after.
        let sleeper = GatedSleeper()
        let options: (inout CastOptions) -> Void = {
            $0.requestsWaitWhileSuspended = true
            $0.requestTimeout = .seconds(10)
        }
        try await withStartedSession(options: options, sleep: sleeper.sleep) { fixture in
            let client = fixture.client
            try await client.loadMedia(sampleMedia()).response()
            try await dropConnection(fixture)

            let failures = Recorder<CastMediaError.Code>()
            let play = client.play()
            play.onFailure { failures.record($0.code) }
            let early = try? await next(failures.stream, within: 60) { _ in true }
            #expect(early == .timedOut)

            fixture.device.setFaults(FaultInjection())
            sleeper.open()
            try await nextEvent(fixture.events, "didResume")
            let late = await mediaError(of: play)
            #expect(late?.code == .timedOut)
        }
    }

    @Test func aWaitingRequestFailsWithNotConnectedWhenTheSessionEnds() async throws {
        let sleeper = GatedSleeper()
        try await withStartedSession(options: { $0.requestsWaitWhileSuspended = true }, sleep: sleeper.sleep) {
            fixture in
            try await fixture.client.loadMedia(sampleMedia()).response()
            try await dropConnection(fixture)
            let play = fixture.client.play()
            await fixture.context.sessionManager.endSession()
            let error = await mediaError(of: play)
            #expect(error?.code == .notConnected)
        }
    }

    /// The reconnection runs as a child of the session's task, so ending the session cancels its backoff wait
    /// rather than leaving it to sleep out (or to reconnect a session already ended).
    @Test func endingASuspendedSessionCancelsItsReconnection() async throws {
        let sleeper = GatedSleeper()
        try await withStartedSession(sleep: sleeper.sleep) { fixture in
            var calls = sleeper.calls.makeAsyncIterator()
            try await dropConnection(fixture)
            _ = await calls.next()  // the first backoff wait has begun, and is held
            #expect(sleeper.heldCount == 1)
            await fixture.context.sessionManager.endSession()
            // Cancellation reaches the wait as the session's task is cancelled, before endSession returns.
            #expect(sleeper.heldCount == 0)
            #expect(sleeper.recorded.count == 1, "no further attempt after the end")
            #expect(fixture.session.connectionState == .disconnected)
        }
    }

    @Test func givingUpAfterTheMaximumAttemptsEndsTheSession() async throws {
        let sleeper = RecordingSleeper()
        try await withStartedSession(options: { $0.reconnectPolicy.maximumAttempts = 2 }, sleep: sleeper.sleep) {
            fixture in
            try await fixture.client.loadMedia(sampleMedia()).response()
            try await dropConnection(fixture, refusingReconnects: true)

            #expect(try await nextEvent(fixture.events, "willResume").name == "willResume")
            let failed = try await nextEvent(fixture.events, "didFailToResume")
            #expect(failed.error?.code == .resumeFailed)
            let ended = try await nextEvent(fixture.events, "didEnd")
            #expect(ended.error?.code == .resumeFailed)
            #expect(fixture.session.connectionState == .disconnected)
            #expect(fixture.context.sessionManager.currentSession == nil)
            #expect(fixture.context.sessionManager.castState == .notConnected)
            #expect(
                try fixture.context.sessionManager.savedSession()?.sessionID == fixture.session.sessionID,
                "the app may still run: a later process can try again"
            )

            // Two attempts, waiting ~1 s then ~2 s (±20 % jitter).
            let waits = sleeper.recorded
            #expect(waits.count == 2)
            if waits.count == 2 {
                #expect(waits[0] >= .milliseconds(800) && waits[0] <= .milliseconds(1200))
                #expect(waits[1] >= .milliseconds(1600) && waits[1] <= .milliseconds(2400))
            }
        }
    }

    @Test func backoffWaitsFollowThePolicy() async throws {
        let sleeper = RecordingSleeper()
        var policy = ReconnectPolicy()
        policy.initialDelay = .milliseconds(500)
        policy.multiplier = 3
        policy.maximumDelay = .seconds(2)
        policy.jitter = 0
        policy.maximumAttempts = 4
        try await withStartedSession(options: { $0.reconnectPolicy = policy }, sleep: sleeper.sleep) { fixture in
            try await dropConnection(fixture, refusingReconnects: true)
            try await nextEvent(fixture.events, "didEnd")
            #expect(sleeper.recorded == [.milliseconds(500), .milliseconds(1500), .seconds(2), .seconds(2)])
            #expect(sleeper.recorded == (0..<4).map { policy.delay(afterFailedAttempts: $0, random: 0.5) })
        }
    }

    @Test func aResumeAfterFailedAttemptsStaysResumed() async throws {
        // While the device drops every new connection after its first message, each attempt connects and fails.
        // Once the device behaves again the session resumes, and stays resumed.
        let sleeper = GatedSleeper(open: true)
        try await withStartedSession(sleep: sleeper.sleep) { fixture in
            try await dropConnection(fixture)
            var attempts = 0
            for await _ in sleeper.calls {
                attempts += 1
                if attempts == 3 { break }
            }
            fixture.device.setFaults(FaultInjection())
            try await nextEvent(fixture.events, "didResume")
            let later = fixture.context.sessionManager.events()
            let status = await mediaError(of: fixture.client.requestStatus())
            #expect(status == nil)
            let extra = try? await nextEvent(later, "didSuspend", within: 1)
            #expect(extra == nil, "the failed attempts leave nothing behind that suspends the session again")
            #expect(fixture.session.connectionState == .connected)
            #expect(sleeper.recorded.count >= 3)
        }
    }

    @Test func heartbeatTimeoutSuspendsTheSession() async throws {
        var configuration = DeviceConfiguration(friendlyName: "Stuck", port: 0)
        // A few PONGs cover silent moments while the session starts; then the device never answers again, and it
        // never pings by itself.
        configuration.faults.stopsAnsweringPingsAfter = 10
        configuration.heartbeatInterval = .seconds(3600)
        // Open while the session starts (a start cut short by the 400 ms limit reconnects through it), closed
        // once it runs, so the suspension stays for the checks.
        let sleeper = GatedSleeper(open: true)
        let options = testOptions { options in
            options.heartbeat = HeartbeatConfiguration(pingInterval: .milliseconds(100), deadAfter: .milliseconds(400))
        }
        try await withCastReceiverEmulator(devices: [configuration], clock: ManualCastClock()) { emulator in
            let context = CastContext(options: options, sleep: sleeper.sleep)
            let events = context.sessionManager.events()
            // The 400 ms limit is real time: on a saturated machine the start itself can exceed it. That is not
            // what this test is about, so the start is retried a few times.
            var session: CastSession?
            for _ in 0..<5 where session == nil {
                do {
                    session = try await context.sessionManager.startSession(with: emulator.devices[0].castDevice)
                } catch let error as CastSessionError {
                    #expect([.connectionLost, .timedOut, .connectFailed].contains(error.code))
                }
            }
            let started = try #require(session)
            sleeper.close()
            // On a busy machine the start can outlast the device's PONGs: that suspension was resumed through the
            // open gate, and its event is still queued. The one that counts leaves the session suspended.
            var suspended: SessionEvent
            repeat {
                suspended = try await nextEvent(events, "didSuspend")
            } while started.connectionState != .suspended
            #expect(suspended.suspendReason == .heartbeatTimeout)
            #expect(started.connectionState == .suspended)
            let status = await mediaError(of: started.remoteMediaClient!.requestStatus())
            #expect(status?.code == .notConnected)
            await context.sessionManager.endSession()
            #expect(try await nextEvent(events, "didEnd").error == nil)
        }
    }
}
