import CastDiscovery
import CastMedia
import CastReceiver
import CastSession
import CastTransport
import Testing

/// Joining and observing what another sender started (GCK's join; a device's status without a session).
@Suite struct JoinRunningTests {
    @Test func joinTakesOverWhateverRunsWithoutLaunchingOrEndingIt() async throws {
        try await withCastReceiverEmulator(
            devices: [DeviceConfiguration(friendlyName: "Den", port: 0)],
            clock: ManualCastClock()
        ) { emulator in
            let device = emulator.devices[0]
            let phone = CastContext(options: testOptions())
            let phoneSession = try await phone.sessionManager.startSession(with: device.castDevice)
            let phoneClient = try #require(phoneSession.remoteMediaClient)
            try await phoneClient.loadMedia(sampleMedia(title: "From the phone")).response()

            // A sender configured for another app joins what runs instead of launching its own.
            let cli = CastContext(options: testOptions { $0.receiverApplicationID = "E0C40001" })
            let events = cli.sessionManager.events()
            let joined = try await cli.sessionManager.joinSession(on: device.castDevice)
            guard case .didStart = try await nextEvent(events, "didStart") else { return }
            #expect(joined.sessionID == phoneSession.sessionID)
            #expect(joined.application.applicationID == "CC1AD845")
            #expect(device.launches.count == 1, "joining sends no LAUNCH")
            let client = try #require(joined.remoteMediaClient)
            // The join read what plays before it returned: no status request or broadcast to wait for.
            #expect(client.mediaStatus?.media?.metadata?.title == "From the phone")
            #expect(client.mediaStatus?.playerState == .playing)

            // Controlled from the joined session; the phone sees it.
            let phoneUpdates = phoneClient.statusUpdates()
            try await client.pause().response()
            _ = try await next(phoneUpdates) { $0?.playerState == .paused }
            try await client.seek(.to(100)).response()
            _ = try await next(phoneUpdates) { $0?.currentTime == 100 }
            try await joined.setDeviceVolume(0.25)
            #expect(device.volume.level == 0.25)

            // Leaving does not end the phone's session.
            await cli.sessionManager.endSession(stopCasting: false)
            #expect(device.runningApp.sessionID == phoneSession.sessionID)
            #expect(phoneSession.connectionState == .connected)
            try await phoneClient.play().response()
            #expect(phoneClient.mediaStatus?.playerState == .playing)
            await phone.sessionManager.endSession(stopCasting: true)
        }
    }

    @Test func joiningAnIdleDeviceFailsWithNoApplicationRunning() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: testOptions())
            let events = context.sessionManager.events()
            await #expect {
                try await context.sessionManager.joinSession(on: device.castDevice)
            } throws: { ($0 as? CastSessionError)?.code == .noApplicationRunning }
            guard case .didFailToStart(_, let error) = try await nextEvent(events, "didFailToStart") else { return }
            #expect(error.code == .noApplicationRunning)
            #expect(device.runningApp.isIdleScreen, "nothing was launched")
            #expect(device.launches.isEmpty)
            #expect(context.sessionManager.currentSession == nil)
        }
    }

    @Test func joiningANonMediaAppGivesASessionWithoutMediaClient() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let starter = CastContext(options: testOptions { $0.receiverApplicationID = "E0C40001" })
            try await starter.sessionManager.startSession(with: device.castDevice)
            await starter.sessionManager.endSession(stopCasting: false)

            let context = CastContext(options: testOptions())
            let session = try await context.sessionManager.joinSession(on: device.castDevice)
            #expect(session.application.applicationID == "E0C40001")
            #expect(session.remoteMediaClient == nil)
            await context.sessionManager.endSession(stopCasting: false)

            // Asking for a particular app that is not the one running fails without touching it.
            let picky = CastContext(options: testOptions())
            await #expect {
                try await picky.sessionManager.joinSession(on: device.castDevice, applicationID: "CC1AD845")
            } throws: { ($0 as? CastSessionError)?.code == .noApplicationRunning }
            #expect(device.runningApp.appID == "E0C40001")
        }
    }

    @Test func aJoinedStaticDeviceTakesTheDevicesOwnName() async throws {
        var configuration = DeviceConfiguration(friendlyName: "Kitchen speaker", port: 0)
        configuration.model = "Google Home Mini"
        configuration.capabilities = 4 | 2048
        try await withCastReceiverEmulator(devices: [configuration], clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let address = CastDevice.staticDevice(host: device.host, port: device.port)
            #expect(address.friendlyName == device.host, "before asking, only the address is known")
            let context = CastContext(options: testOptions())
            let session = try await context.sessionManager.startSession(with: address)
            #expect(session.device.friendlyName == "Kitchen speaker")
            #expect(session.device.modelName == "Google Home Mini")
            #expect(session.device.capabilities == [.audioOut, .masterOrFixedVolume])
            #expect(!session.device.isGroup, "a port other than 8009 does not make a group")
            #expect(session.device.id == address.id, "the entry keeps its identity")
            await context.sessionManager.endSession(stopCasting: true)
        }
    }
}

extension JoinRunningTests {
    @Test func aResumedSessionShowsWhatPlaysWhenItReturns() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let options = testOptions()
            let first = CastContext(options: options)
            let session = try await first.sessionManager.startSession(with: device.castDevice)
            try await #require(session.remoteMediaClient).loadMedia(sampleMedia(title: "Left playing")).response()
            await first.sessionManager.endSession(stopCasting: false)

            let second = CastContext(options: options)
            let resumed = try await second.sessionManager.resumeSavedSession()
            let status = try #require(resumed.remoteMediaClient?.mediaStatus)
            #expect(status.media?.metadata?.title == "Left playing")
            #expect(status.playerState == .playing)
            await second.sessionManager.endSession(stopCasting: true)
        }
    }
}

/// Saved sessions are kept per device; a named device wins over the most recent one.
@Suite struct SavedSessionPerDeviceTests {
    @Test func aNamedDeviceNeverResumesAnotherDevicesSession() async throws {
        try await withTwoDevices("A", "B") { a, b in
            let options = testOptions()
            let first = CastContext(options: options)
            let onA = try await first.sessionManager.startSession(with: a.castDevice)
            await first.sessionManager.endSession(stopCasting: false)

            // Naming B: A's session is not resumed (B does not run it) and stays saved for A.
            let second = CastContext(options: options)
            await #expect {
                try await second.sessionManager.resumeSavedSession(candidates: [b.castDevice])
            } throws: { ($0 as? CastSessionError)?.code == .sessionNotFound }
            #expect(try second.sessionManager.savedSession()?.sessionID == onA.sessionID)
            #expect(b.launches.isEmpty)

            // A session on B is saved beside A's; naming either resumes its own.
            let onB = try await second.sessionManager.startSession(with: b.castDevice)
            await second.sessionManager.endSession(stopCasting: false)
            let saved = try second.sessionManager.savedSessions()
            #expect(saved.map(\.sessionID) == [onB.sessionID, onA.sessionID], "most recent first")

            let third = CastContext(options: options)
            let resumedA = try await third.sessionManager.resumeSavedSession(candidates: [a.castDevice])
            #expect(resumedA.sessionID == onA.sessionID)
            #expect(resumedA.device.id == a.configuration.id)
            await third.sessionManager.endSession(stopCasting: true)
            #expect(try third.sessionManager.savedSessions().map(\.sessionID) == [onB.sessionID])

            // Without a name, the most recent one.
            let fourth = CastContext(options: options)
            let latest = try await fourth.sessionManager.resumeSavedSession()
            #expect(latest.sessionID == onB.sessionID)
            await fourth.sessionManager.endSession(stopCasting: true)
            #expect(try fourth.sessionManager.savedSessions().isEmpty)
        }
    }

    @Test func aSessionSavedByAddressBelongsToTheSameDeviceFoundByID() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let options = testOptions()
            let first = CastContext(options: options)
            let byAddress = CastDevice.staticDevice(host: device.host, port: device.port)
            let original = try await first.sessionManager.startSession(with: byAddress)
            await first.sessionManager.endSession(stopCasting: false)
            let saved = try #require(try first.sessionManager.savedSession())
            #expect(saved.belongs(to: device.castDevice), "same host and port, another id")

            let second = CastContext(options: options)
            let resumed = try await second.sessionManager.resumeSavedSession(candidates: [device.castDevice])
            #expect(resumed.sessionID == original.sessionID)
            await second.sessionManager.endSession(stopCasting: true)
        }
    }
}

/// A device followed without a session.
@Suite struct DeviceObserverTests {
    @Test func followsAppsAndMediaThatOthersStartAndStop() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let observer = DeviceObserver(device: device.castDevice, options: testOptions())
            let updates = observer.updates()
            let idle = try await observer.start()
            #expect(idle.isIdle)
            #expect(idle.mediaStatus == nil)
            #expect(idle.deviceStatus.volumeLevel == 1)

            let phone = CastContext(options: testOptions())
            let session = try await phone.sessionManager.startSession(with: device.castDevice)
            let running = try await next(updates) { $0.application?.applicationID == "CC1AD845" }
            #expect(running.playsMedia)
            try await session.remoteMediaClient!.loadMedia(sampleMedia(title: "Observed")).response()
            let playing = try await next(updates) { $0.mediaStatus?.playerState == .playing }
            #expect(playing.mediaStatus?.media?.metadata?.title == "Observed")
            try await session.remoteMediaClient!.pause().response()
            _ = try await next(updates) { $0.mediaStatus?.playerState == .paused }
            try await session.setDeviceVolume(0.5)
            _ = try await next(updates) { $0.deviceStatus.volumeLevel == 0.5 }

            await phone.sessionManager.endSession(stopCasting: true)
            let stopped = try await next(updates) { $0.isIdle }
            #expect(stopped.mediaStatus == nil)
            #expect(device.launches.count == 1, "observing launches nothing")
            await observer.stop()
        }
    }

    /// A device that answers status requests only by broadcast (`requestId` 0): the observer's GET_STATUS for the
    /// media app is answered through its message task, which must not be the one waiting for it (it once waited
    /// out the request timeout, then told the media status as unknown).
    @Test func aDeviceAnsweringOnlyByBroadcastIsFollowedAtOnce() async throws {
        var configuration = DeviceConfiguration(friendlyName: "Broadcaster", port: 0)
        configuration.faults.statusOnlyByBroadcast = true
        try await withCastReceiverEmulator(devices: [configuration], clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let phone = CastContext(options: testOptions())
            let session = try await phone.sessionManager.startSession(with: device.castDevice)
            try await session.remoteMediaClient!.loadMedia(sampleMedia(title: "Broadcast")).response()
            try await session.remoteMediaClient!.pause().response()
            let observer = DeviceObserver(
                device: device.castDevice,
                options: testOptions { $0.requestTimeout = .seconds(5) }
            )
            let activity = try await observer.start()
            #expect(activity.mediaStatus?.playerState == .paused, "\(activity.mediaStatusError ?? "")")
            // A command answered by a broadcast returns once the activity shows it (castd answers with it).
            // The same level twice: the second answer is the later broadcast, not the equal one before it.
            for level in [0.3, 0.6, 0.3, 0.6] {
                try await observer.setVolume(level)
                #expect(observer.activity?.deviceStatus.volumeLevel == level)
            }
            try await observer.setMuted(true)
            #expect(observer.activity?.deviceStatus.isMuted == true)

            // The app ends and another starts and plays: followed as it comes, by the message task.
            let updates = observer.updates()
            await phone.sessionManager.endSession(stopCasting: true)
            _ = try await next(updates) { $0.isIdle }
            let again = try await phone.sessionManager.startSession(with: device.castDevice)
            try await again.remoteMediaClient!.loadMedia(sampleMedia(title: "Again")).response()
            let playing = try await next(updates) { $0.mediaStatus?.media?.metadata?.title == "Again" }
            #expect(playing.mediaStatusError == nil)
            await observer.stop()
            await phone.sessionManager.endSession(stopCasting: true)
        }
    }

    /// An app that lists the media namespace but does not answer its GET_STATUS with a status (here it echoes the
    /// request back): the activity says why its media status is unknown, so "nothing plays" is not claimed.
    @Test func aMediaStatusThatCannotBeReadIsToldAsUnknown() async throws {
        var configuration = DeviceConfiguration(friendlyName: "Odd App", port: 0)
        configuration.apps.append(.echo(id: "E0C40002", namespaces: [CastNamespace.media]))
        try await withCastReceiverEmulator(devices: [configuration], clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let phone = CastContext(options: testOptions { $0.receiverApplicationID = "E0C40002" })
            _ = try await phone.sessionManager.startSession(with: device.castDevice)
            let observer = DeviceObserver(device: device.castDevice, options: testOptions())
            let updates = observer.updates()
            try await observer.start()
            let unknown = try await next(updates) { $0.mediaStatusError != nil }
            #expect(unknown.mediaStatus == nil)
            #expect(unknown.mediaStatusError?.contains("GET_STATUS") == true, "\(unknown.mediaStatusError ?? "")")
            await observer.stop()
            await phone.sessionManager.endSession(stopCasting: true)
        }
    }

    @Test func setsTheVolumeOfAnIdleDeviceWithoutAnApp() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let observer = DeviceObserver(device: device.castDevice, options: testOptions { $0.volumeStep = 0.1 })
            await #expect {
                try await observer.setVolume(0.5)
            } throws: { ($0 as? CastSessionError)?.code == .notConnected }
            try await observer.start()
            try await observer.setVolume(0.4)
            #expect(device.volume.level == 0.4)
            #expect(observer.activity?.deviceStatus.volumeLevel == 0.4)
            try await observer.adjustVolume(bySteps: -2)
            #expect(abs(device.volume.level - 0.2) < 1e-9)
            try await observer.setMuted(true)
            #expect(device.volume.muted)
            await #expect {
                try await observer.setVolume(1.5)
            } throws: { ($0 as? CastSessionError)?.code == .invalidArgument }
            #expect(device.runningApp.isIdleScreen, "no app was launched")
            await observer.stop()
        }
    }

    @Test func publishesEachVolumeChangeOnceAndInTheOrderTheDeviceMadeThem() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let observer = DeviceObserver(device: device.castDevice, options: testOptions())
            let updates = observer.updates()
            try await observer.start()
            // The stream keeps only the newest activity: the commands start once the consumer holds the first, so
            // a consumer task scheduled late on a busy machine does not lose it to the first change.
            let (firstSeen, signalFirst) = AsyncStream<Void>.makeStream()
            let seen = Task {
                var levels: [Double] = []
                for await activity in updates {
                    levels.append(activity.deviceStatus.volumeLevel ?? -1)
                    if levels.count == 1 { signalFirst.finish() }
                    if activity.deviceStatus.volumeLevel == 0.9 { break }
                }
                return levels
            }
            for await _ in firstSeen {}
            for step in 1...9 {
                let level = Double(step) / 10
                try await observer.setVolume(level)
                // The reply was applied before setVolume returned.
                #expect(observer.activity?.deviceStatus.volumeLevel == level)
            }
            let levels = await seen.value
            // The device's reply and its broadcast of the same status are one change, never published twice, and
            // an older status is never published after a newer one.
            #expect(levels.first == 1, "the status read at the start comes first")
            let changes = levels.dropFirst()
            #expect(zip(changes, changes.dropFirst()).allSatisfy { $0 < $1 }, "levels published: \(levels)")
            #expect(levels.last == 0.9)
            await observer.stop()
        }
    }

    @Test func sharesASessionsConnectionWhileItLastsThenFollowsTheAppOnItsOwnAgain() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let phone = CastContext(options: testOptions())
            let phoneClient = try #require(
                try await phone.sessionManager.startSession(with: device.castDevice).remoteMediaClient
            )
            try await phoneClient.loadMedia(sampleMedia(title: "Shared")).response()
            let observer = DeviceObserver(device: device.castDevice, options: testOptions())
            let updates = observer.updates()
            try await observer.start()
            let ours = CastContext(options: testOptions())
            let session = try await ours.sessionManager.joinSession(on: device.castDevice)
            _ = try await session.remoteMediaClient?.requestStatus().response()  // its CONNECT was handled first
            #expect(device.appListenerCount == 3, "the phone, the observer and our session")

            await observer.share(session)
            #expect(observer.isSharingSession)
            try await observer.setVolume(0.4)  // a round trip after the CLOSE: the device has handled it
            #expect(device.appListenerCount == 2, "the observer closed its own virtual connection to the app")
            // The phone's pause reaches the observer through our session's connection.
            try await phoneClient.pause().response()
            _ = try await next(updates) { $0.mediaStatus?.playerState == .paused }

            // Our session leaves: the observer follows the app through its own connection again.
            await ours.sessionManager.endSession(stopCasting: false)
            try await phoneClient.play().response()
            let playing = try await next(updates) { $0.mediaStatus?.playerState == .playing }
            #expect(playing.mediaStatus?.media?.metadata?.title == "Shared")
            #expect(!observer.isSharingSession)
            try await observer.setVolume(0.5)
            // Our session's CLOSE and disconnect travel on its own connection, unordered with the observer's round
            // trip: wait (bounded) for the device to have handled them.
            let deadline = ContinuousClock.now + .seconds(30)
            while device.appListenerCount != 2, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(2))
            }
            #expect(device.appListenerCount == 2, "the phone and the observer")
            await phone.sessionManager.endSession(stopCasting: true)
            await observer.stop()
        }
    }

    @Test func aSessionOnAnotherDeviceOrWithoutMediaIsNotShared() async throws {
        try await withTwoDevices("One", "Two") { one, two in
            let observer = DeviceObserver(device: one.castDevice, options: testOptions())
            try await observer.start()
            let elsewhere = CastContext(options: testOptions())
            await observer.share(try await elsewhere.sessionManager.startSession(with: two.castDevice))
            #expect(!observer.isSharingSession, "a session on another device")
            let echo = CastContext(options: testOptions { $0.receiverApplicationID = "E0C40001" })
            let session = try await echo.sessionManager.startSession(with: one.castDevice)
            #expect(session.remoteMediaClient == nil, "an app without the media namespace")
            await observer.share(session)
            #expect(!observer.isSharingSession)
            await elsewhere.sessionManager.endSession(stopCasting: true)
            await echo.sessionManager.endSession(stopCasting: true)
            await observer.stop()
        }
    }

    @Test func reconnectsAfterTheConnectionDrops() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let sleeper = RecordingSleeper()
            let observer = DeviceObserver(device: device.castDevice, options: testOptions(), sleep: sleeper.sleep)
            let updates = observer.updates()
            try await observer.start()
            await device.dropConnections()

            // While it was away, someone started an app: the observer re-reads the status after reconnecting.
            let phone = CastContext(options: testOptions())
            try await phone.sessionManager.startSession(with: device.castDevice)
            let after = try await next(updates) { $0.application?.applicationID == "CC1AD845" }
            #expect(after.playsMedia)
            #expect(!sleeper.recorded.isEmpty, "the reconnect went through the backoff")
            await phone.sessionManager.endSession(stopCasting: true)
            await observer.stop()
        }
    }

    @Test func manyDevicesAtOnceWithTheirOwnDescriptions() async throws {
        var tv = DeviceConfiguration(friendlyName: "TV", port: 0)
        tv.model = "Chromecast Ultra"
        var speaker = DeviceConfiguration(friendlyName: "Speaker", port: 0)
        speaker.model = "Google Home"
        speaker.capabilities = 4
        try await withCastReceiverEmulator(devices: [tv, speaker], clock: ManualCastClock()) { emulator in
            let starter = CastContext(options: testOptions())
            let session = try await starter.sessionManager.startSession(with: emulator.devices[0].castDevice)
            try await session.remoteMediaClient!.loadMedia(sampleMedia(title: "Busy")).response()
            await starter.sessionManager.endSession(stopCasting: false)

            let addresses = emulator.devices.map { CastDevice.staticDevice(host: $0.host, port: $0.port) }
            // Nothing listens on port 1: refused at once.
            let unreachable = CastDevice.staticDevice(host: "127.0.0.1", port: 1)
            let results = await DeviceObserver.activities(
                of: addresses + [unreachable],
                options: testOptions(),
                timeout: .seconds(10)
            )
            let busy = try results[0].get()
            #expect(busy.device.friendlyName == "TV")
            #expect(busy.device.modelName == "Chromecast Ultra")
            #expect(busy.mediaStatus?.media?.metadata?.title == "Busy")
            let idle = try results[1].get()
            #expect(idle.device.friendlyName == "Speaker")
            #expect(idle.device.capabilities == .audioOut)
            #expect(idle.isIdle)
            guard case .failure(let error) = results[2] else {
                Issue.record("port 1 answered")
                return
            }
            #expect(error.code == .connectFailed)
            // Known by its address alone, it is named by it once.
            #expect(error.message == "cannot connect to 127.0.0.1:1", "\(error.message)")
        }
    }

    @Test func aDeviceThatNeverAnswersIsReportedWithinTheTimeout() async throws {
        var silent = DeviceConfiguration(friendlyName: "Silent", port: 0)
        silent.faults.replyDelay = 3600
        try await withCastReceiverEmulator(devices: [silent], clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let results = await DeviceObserver.activities(
                of: [device.castDevice],
                options: testOptions(),
                timeout: .milliseconds(300)
            )
            guard case .failure(let error) = results[0] else {
                Issue.record("a silent device answered")
                return
            }
            #expect(error.code == .timedOut)
        }
    }
}
