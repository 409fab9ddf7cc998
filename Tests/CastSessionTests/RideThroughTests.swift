import CastDiscovery
import CastMedia
import CastReceiver
import CastSession
import CastTransport
import Logging
import Testing

@testable import CastSession

/// Requests and session starts carried through a connection that drops under them: reconnected, re-joined,
/// the status read again, and only what the receiver had not acted on sent again.
@Suite struct RideThroughTests {
    /// Options for riding through: requests wait; backoff waits are recorded, not slept.
    private func ridingOptions() -> CastOptions {
        testOptions { $0.requestsWaitWhileSuspended = true }
    }

    /// Drops or reply losses, `drops` connections' worth, on a device that may report only by broadcast.
    private func faults(
        dropsOn: String? = nil,
        losesReplyTo: String? = nil,
        drops: Int = 1,
        onlyByBroadcast: Bool = false
    ) -> FaultInjection {
        var faults = FaultInjection()
        faults.dropsOn = dropsOn
        faults.losesReplyTo = losesReplyTo
        faults.dropLimit = drops
        faults.statusOnlyByBroadcast = onlyByBroadcast
        return faults
    }

    private func faults(_ configure: (inout FaultInjection) -> Void) -> FaultInjection {
        var faults = FaultInjection()
        faults.dropLimit = 1
        configure(&faults)
        return faults
    }

    /// A session started on one emulated device with riding options (backoff waits recorded, not slept): `body`
    /// gets the device, the session and its media client; the session ends (stopping the app) after it.
    private func withRidingSession(
        _ configuration: DeviceConfiguration = DeviceConfiguration(friendlyName: "Emulated Chromecast", port: 0),
        clock: ManualCastClock = ManualCastClock(),
        _ body: (EmulatedDevice, CastSession, RemoteMediaClient) async throws -> Void
    ) async throws {
        try await withCastReceiverEmulator(devices: [configuration], clock: clock) { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: ridingOptions(), sleep: RecordingSleeper().sleep)
            let session = try await context.sessionManager.startSession(with: device.castDevice)
            try await body(device, session, try #require(session.remoteMediaClient))
            await context.sessionManager.endSession(stopCasting: true)
        }
    }

    @Test func aLoadWhoseReplyWasLostIsNotSentAgain() async throws {
        let sleeper = RecordingSleeper()
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: ridingOptions(), sleep: sleeper.sleep)
            let session = try await context.sessionManager.startSession(with: device.castDevice)
            device.setFaults(faults { $0.losesReplyTo = "LOAD" })
            let status = try await session.remoteMediaClient!.loadMedia(sampleMedia(title: "Once")).response()
            #expect(status?.media?.metadata?.title == "Once")
            #expect(status?.playerState == .playing)
            #expect(device.mediaStatus?["mediaSessionId"]?.intValue == 1, "one LOAD: the first media session")
            #expect(session.connectionState == .connected)
            #expect(!sleeper.recorded.isEmpty, "it reconnected with the backoff")
            await context.sessionManager.endSession(stopCasting: true)
        }
    }

    @Test func aLoadTheDeviceNeverSawIsSentAgain() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: ridingOptions(), sleep: RecordingSleeper().sleep)
            let session = try await context.sessionManager.startSession(with: device.castDevice)
            device.setFaults(faults { $0.dropsOn = "LOAD" })
            let status = try await session.remoteMediaClient!.loadMedia(sampleMedia(title: "Again")).response()
            #expect(status?.media?.metadata?.title == "Again")
            #expect(device.mediaStatus?["mediaSessionId"]?.intValue == 1)
            await context.sessionManager.endSession(stopCasting: true)
        }
    }

    @Test func aQueueInsertWhoseReplyWasLostAddsItsItemOnce() async throws {
        try await withRidingSession { device, _, client in
            try await client.loadMedia(sampleMedia(title: "First")).response()
            #expect(client.mediaStatus?.items?.count == 1)
            device.setFaults(faults { $0.losesReplyTo = "QUEUE_INSERT" })
            let status = try await client.queueInsert([QueueItem(media: sampleMedia(title: "Second"))]).response()
            #expect(status?.items?.count == 2, "inserted once, not twice")
            #expect(device.mediaStatus?["items"]?.arrayValue?.count == 2)
        }
    }

    @Test func aRelativeSeekWhoseReplyWasLostMovesOnce() async throws {
        try await withRidingSession { device, _, client in
            try await client.loadMedia(sampleMedia()).response()
            try await client.pause().response()
            try await client.seek(.to(100)).response()
            device.setFaults(faults { $0.losesReplyTo = "SEEK" })
            let status = try await client.seek(.by(30)).response()
            #expect(status?.currentTime == 130, "one relative seek")
        }
    }

    @Test func aDeviceVolumeChangeRidesThroughADrop() async throws {
        try await withRidingSession { device, session, _ in
            device.setFaults(faults { $0.dropsOn = "SET_VOLUME" })
            try await session.setDeviceVolume(0.3)
            #expect(device.volume.level == 0.3)
            device.setFaults(faults { $0.losesReplyTo = "SET_VOLUME" })
            try await session.setDeviceMuted(true)
            #expect(device.volume.muted)
        }
    }

    /// A command carried through as many drops as its timeout allows, decided afresh after each.
    @Test func aCommandRidesThroughSeveralDrops() async throws {
        try await withRidingSession { device, _, client in
            try await client.loadMedia(sampleMedia()).response()
            device.setFaults(faults(dropsOn: "PAUSE", drops: 3))
            let status = try await client.pause().response()
            #expect(status?.playerState == .paused)
            #expect(device.mediaStatus?["playerState"] == "PAUSED")
        }
    }

    /// A device that reports statuses only by broadcast: the status read after the reconnection, and the command
    /// sent again, are answered by broadcasts too.
    @Test func aDeviceReportingOnlyByBroadcastIsRiddenThroughToo() async throws {
        try await withRidingSession { device, _, client in
            try await client.loadMedia(sampleMedia()).response()
            device.setFaults(faults(dropsOn: "PAUSE", onlyByBroadcast: true))
            #expect(try await client.pause().response()?.playerState == .paused)
            device.setFaults(faults(losesReplyTo: "PLAY", onlyByBroadcast: true))
            #expect(try await client.play().response()?.playerState == .playing)
        }
    }

    /// A relative seek past the end of an item moves the queue to the next one: lost its reply, it is not sent
    /// again into that item.
    @Test func aRelativeSeekIntoTheNextItemIsNotRepeated() async throws {
        try await withRidingSession { device, _, client in
            let items = ["A", "B"].map { QueueItem(media: sampleMedia(title: $0, duration: 40)) }
            try await client.queueLoad(items).response()
            try await client.seek(.to(20)).response()
            device.setFaults(faults { $0.losesReplyTo = "SEEK" })
            _ = try await client.seek(.by(30)).response()
            let now = try #require(device.mediaStatus)
            #expect(now["media"]?["metadata"]?["title"] == "B")
            #expect(now["currentTime"]?.doubleValue == 0, "B from its start, not 30 s into it")
        }
    }

    /// A LOAD accepted while the device is still loading (the reply lost): the status read after the reconnection
    /// lists the media being loaded, so it is not sent again.
    @Test func aLoadStillLoadingIsNotSentAgain() async throws {
        let clock = ManualCastClock()
        var configuration = DeviceConfiguration(friendlyName: "Slow", port: 0)
        configuration.loadDuration = 5
        try await withRidingSession(configuration, clock: clock) { device, _, client in
            device.setFaults(faults { $0.losesReplyTo = "LOAD" })
            let status = try await client.loadMedia(sampleMedia(title: "Slow")).response()
            #expect(status?.shownPlayerState == .loading)
            clock.advance(by: .seconds(5))
            #expect(device.mediaStatus?["mediaSessionId"]?.intValue == 1, "one LOAD: the first media session")
        }
    }

    /// A LAUNCH whose reply the drop took, on a device that lists a starting app without its transport id and
    /// namespaces at first: the start joins it once it is listed whole (it joined an app without namespaces, and
    /// `cast play` said there was no media to control).
    @Test(.timeLimit(.minutes(1))) func aLaunchLostOnAnAppListedLateIsJoinedWhenListedWhole() async throws {
        var configuration = DeviceConfiguration(friendlyName: "Slow Start", port: 0)
        configuration.faults.listsLaunchedAppWholeAfter = 2
        configuration.faults.losesReplyTo = "LAUNCH"
        configuration.faults.dropLimit = 1
        let clock = ManualCastClock()
        try await withCastReceiverEmulator(devices: [configuration], clock: clock) { emulator in
            let device = emulator.devices[0]
            let (waiting, said) = AsyncStream.makeStream(of: Void.self)
            var logger = Logger(label: "test") { _ in MessageSignal("not listed whole yet", continuation: said) }
            logger.logLevel = .debug
            let context = CastContext(options: testOptions(), sleep: RecordingSleeper().sleep, logger: logger)
            let start = Task { try await context.sessionManager.startSession(with: device.castDevice) }
            // Joined after the reconnection, it waits for the status that lists the app whole.
            var signals = waiting.makeAsyncIterator()
            _ = await signals.next()
            clock.advance(by: .seconds(2))
            let session = try await start.value
            #expect(device.launches.count == 1)
            #expect(session.application.playsMedia)
            #expect(try await session.remoteMediaClient?.loadMedia(sampleMedia()).response()?.playerState == .playing)
            await context.sessionManager.endSession(stopCasting: true)
        }
    }

    /// `stopApplication` ends the app for sure: a STOP the drop kept from the device is sent again.
    @Test func stoppingTheAppRidesThroughADrop() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: ridingOptions(), sleep: RecordingSleeper().sleep)
            let session = try await context.sessionManager.startSession(with: device.castDevice)
            device.setFaults(faults { $0.dropsOn = "STOP" })
            try await session.stopApplication()
            #expect(device.runningApp.appID != "CC1AD845", "the app stopped")
            #expect(session.connectionState == .disconnected)
            #expect(context.sessionManager.currentSession == nil)
            #expect(try context.sessionManager.savedSession() == nil)
        }
    }

    @Test func withoutWaitingAnInterruptedRequestFailsWithConnectionLost() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: testOptions(), sleep: RecordingSleeper().sleep)
            let session = try await context.sessionManager.startSession(with: device.castDevice)
            device.setFaults(faults { $0.losesReplyTo = "LOAD" })
            let error = await mediaError(of: session.remoteMediaClient!.loadMedia(sampleMedia()))
            #expect(error?.code == .connectionLost)
            await context.sessionManager.endSession(stopCasting: true)
        }
    }

    @Test func aLaunchWhoseReplyWasLostIsJoinedNotRepeated() async throws {
        let sleeper = RecordingSleeper()
        var configuration = DeviceConfiguration(friendlyName: "Flaky Wi-Fi", port: 0)
        configuration.faults.losesReplyTo = "LAUNCH"
        configuration.faults.dropLimit = 1
        try await withCastReceiverEmulator(devices: [configuration], clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: testOptions(), sleep: sleeper.sleep)
            let session = try await context.sessionManager.startSession(with: device.castDevice)
            #expect(device.launches.count == 1, "the accepted LAUNCH is joined after reconnecting")
            #expect(session.sessionID == device.runningApp.sessionID)
            #expect(sleeper.recorded.count == 1)
            await context.sessionManager.endSession(stopCasting: true)
        }
    }

    @Test func aLaunchTheDeviceNeverSawIsSentAgain() async throws {
        var configuration = DeviceConfiguration(friendlyName: "Flaky Wi-Fi", port: 0)
        configuration.faults.dropsOn = "LAUNCH"
        configuration.faults.dropLimit = 2
        try await withCastReceiverEmulator(devices: [configuration], clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let sleeper = RecordingSleeper()
            let context = CastContext(options: testOptions(), sleep: sleeper.sleep)
            let session = try await context.sessionManager.startSession(with: device.castDevice)
            #expect(device.launches.count == 1)
            #expect(session.application.applicationID == "CC1AD845")
            #expect(sleeper.recorded.count == 2, "two drops, two backoff waits")
            await context.sessionManager.endSession(stopCasting: true)
        }
    }

    /// A join launches nothing, so a device that drops every connection is retried within the connect and request
    /// timeouts (a command's `--timeout`), not within the launch timeout too.
    @Test(.timeLimit(.minutes(1))) func aJoinThatKeepsDroppingGivesUpWithinTheRequestTimeout() async throws {
        var configuration = DeviceConfiguration(friendlyName: "Cut Cable", port: 0)
        configuration.faults.closesAfterMessages = 0
        try await withCastReceiverEmulator(devices: [configuration], clock: ManualCastClock()) { emulator in
            let sleeper = RecordingSleeper()
            // A connect timeout a busy machine's TLS handshake fits in (1 s did not, beside a build).
            let options = testOptions {
                $0.connectTimeout = .seconds(5)
                $0.requestTimeout = .seconds(3)
                $0.launchTimeout = .seconds(600)
            }
            let context = CastContext(options: options, sleep: sleeper.sleep)
            await #expect {
                try await context.sessionManager.joinSession(on: emulator.devices[0].castDevice)
            } throws: { ($0 as? CastSessionError)?.code == .connectionLost }
            // No real time passes between attempts: each backoff wait must fit within the 8 s left.
            #expect(!sleeper.recorded.isEmpty)
            #expect(sleeper.recorded.allSatisfy { $0 < .seconds(8) }, "\(sleeper.recorded)")
        }
    }

    @Test func anUnreachableDeviceIsNotRetried() async throws {
        let sleeper = RecordingSleeper()
        let context = CastContext(options: testOptions(), sleep: sleeper.sleep)
        await #expect {
            try await context.sessionManager.startSession(with: .staticDevice(host: "127.0.0.1", port: 1))
        } throws: { ($0 as? CastSessionError)?.code == .connectFailed }
        #expect(sleeper.recorded.isEmpty)
    }
}

/// Whether an interrupted request was applied, from the status before and after (no network).
@Suite struct InterruptedRequestTests {
    private func status(
        session: Int = 1,
        state: String = "PLAYING",
        time: Double = 0,
        item: Int? = 1,
        items: [Int]? = [1],
        contentID: String = "https://example.com/a.mp4",
        duration: Double = 600
    ) -> MediaStatus {
        var json: JSONValue = [
            "mediaSessionId": .number(Double(session)), "playerState": .string(state), "currentTime": .number(time),
            "playbackRate": 1, "supportedMediaCommands": 12303,
            "media": [
                "contentId": .string(contentID), "contentType": "video/mp4", "streamType": "BUFFERED",
                "duration": .number(duration),
            ],
        ]
        if let item { json["currentItemId"] = .number(Double(item)) }
        if let items {
            json["items"] = .array(
                items.map {
                    [
                        "itemId": .number(Double($0)),
                        "media": ["contentId": .string(contentID), "contentType": "video/mp4"],
                    ]
                }
            )
        }
        return try! MediaStatus(json: json)
    }

    private func decide(_ payload: JSONValue, _ before: MediaStatus?, _ after: MediaStatus?, elapsed: Double = 0)
        -> InterruptedRequest.Decision
    {
        InterruptedRequest(payload: payload, before: before, elapsed: elapsed).decide(after: after)
    }

    @Test func loads() {
        let load: JSONValue = ["type": "LOAD", "media": ["contentId": "https://example.com/b.mp4"]]
        let before = status()
        #expect(decide(load, before, status(session: 2, contentID: "https://example.com/b.mp4")) == .applied)
        #expect(decide(load, before, before) == .resend(load), "still the old media")
        #expect(decide(load, nil, nil) == .resend(load), "nothing loaded")
        let same: JSONValue = ["type": "LOAD", "media": ["contentId": "https://example.com/a.mp4"]]
        #expect(decide(same, before, before) == .resend(same), "reloading the same URL needs a new media session")
        let queue: JSONValue = [
            "type": "QUEUE_LOAD", "startIndex": 1,
            "items": [["media": ["contentId": "x"]], ["media": ["contentId": "https://example.com/b.mp4"]]],
        ]
        #expect(decide(queue, before, status(session: 2, contentID: "https://example.com/b.mp4")) == .applied)
    }

    @Test func transportControls() {
        let playing = status()
        let paused = status(state: "PAUSED")
        #expect(decide(["type": "PAUSE", "mediaSessionId": 1], playing, paused) == .applied)
        #expect(
            decide(["type": "PAUSE", "mediaSessionId": 1], playing, playing)
                == .resend(["type": "PAUSE", "mediaSessionId": 1])
        )
        #expect(decide(["type": "PLAY", "mediaSessionId": 1], paused, playing) == .applied)
        #expect(decide(["type": "STOP", "mediaSessionId": 1], playing, nil) == .applied)
        #expect(
            decide(["type": "SET_VOLUME", "mediaSessionId": 1, "volume": ["level": 0.2]], playing, status(session: 3))
                == .resend(["type": "SET_VOLUME", "mediaSessionId": 3, "volume": ["level": 0.2]]),
            "idempotent: sent again, with the current media session id"
        )
    }

    @Test func relativeSeeksAndJumps() {
        let before = status(state: "PAUSED", time: 100)
        let seek: JSONValue = ["type": "SEEK", "mediaSessionId": 1, "relativeTime": 30]
        #expect(decide(seek, before, status(state: "PAUSED", time: 130)) == .applied)
        #expect(decide(seek, before, status(state: "PAUSED", time: 100)) == .resend(seek))
        let playing = status(time: 100)
        #expect(decide(seek, playing, status(time: 140), elapsed: 10) == .applied, "30 s on top of 10 s of playback")
        #expect(decide(seek, playing, status(time: 110), elapsed: 10) == .resend(seek))
        // Past the item's end: the next item plays now, and the seek is not sent again into it.
        let short = status(state: "PAUSED", time: 20, item: 1, items: [1, 2], duration: 40)
        #expect(decide(seek, short, status(state: "PAUSED", time: 0, item: 2, items: [1, 2])) == .applied)
        #expect(
            decide(seek, status(time: 5, item: 1, items: [1, 2], duration: 40), status(item: 2, items: [1, 2]))
                == .unknown,
            "the item ended by itself meanwhile: whether the seek landed cannot be told"
        )
        let absolute: JSONValue = ["type": "SEEK", "mediaSessionId": 1, "currentTime": 30]
        #expect(decide(absolute, before, before) == .resend(absolute))
        #expect(decide(absolute, before, status(state: "PAUSED", time: 30)) == .applied)
        #expect(decide(absolute, playing, status(time: 36.4), elapsed: 6) == .applied, "landed, then played on")
        #expect(decide(absolute, playing, status(time: 106), elapsed: 6) == .resend(absolute), "played on alone")
        #expect(decide(absolute, playing, status(time: 3, item: 2, items: [1, 2]), elapsed: 6) == .unknown)
        let jump: JSONValue = ["type": "QUEUE_UPDATE", "mediaSessionId": 1, "currentItemId": 3]
        let onFirst = status(time: 50, item: 1, items: [1, 2, 3])
        #expect(decide(jump, onFirst, status(time: 6, item: 3, items: [1, 2, 3])) == .applied)
        #expect(decide(jump, onFirst, status(time: 56, item: 1, items: [1, 2, 3])) == .resend(jump))
        #expect(decide(jump, onFirst, status(item: 2, items: [1, 2, 3])) == .unknown, "moved on another way")
        let next: JSONValue = ["type": "QUEUE_UPDATE", "mediaSessionId": 1, "jump": 1]
        #expect(decide(next, status(item: 1, items: [1, 2]), status(item: 2, items: [1, 2])) == .applied)
        #expect(decide(next, status(item: 1, items: [1, 2]), status(item: 1, items: [1, 2])) == .resend(next))
        #expect(decide(next, nil, status()) == .unknown)
    }

    @Test func queueEdits() {
        let insert: JSONValue = ["type": "QUEUE_INSERT", "mediaSessionId": 1, "items": [["media": ["contentId": "b"]]]]
        #expect(decide(insert, status(items: [1]), status(items: [1, 2])) == .applied)
        #expect(decide(insert, status(items: [1]), status(items: [1])) == .resend(insert))
        #expect(decide(insert, status(items: nil), status(items: [1, 2])) == .unknown, "no way to tell: not repeated")
        let remove: JSONValue = ["type": "QUEUE_REMOVE", "mediaSessionId": 1, "itemIds": [2]]
        #expect(decide(remove, status(items: [1, 2]), status(items: [1])) == .applied)
    }
}

/// Whether a dropped device command is sent again, from the device status before and after (no network).
@Suite struct InterruptedDeviceCommandTests {
    private func status(level: Double?, muted: Bool = false) -> DeviceStatus {
        DeviceStatus(json: ["status": ["volume": ["level": level.map { .number($0) } ?? .null, "muted": .bool(muted)]]])
    }

    @Test func aVolumeChangeIsSentAgainOnlyWhileTheDeviceShowsTheLevelFromBefore() {
        let untouched = DeviceStatus.leavesVolumeAsItWas(for: ["type": "SET_VOLUME", "volume": ["level": 0.95]])
        #expect(untouched(status(level: 1), status(level: 1)), "never arrived: sent again")
        #expect(!untouched(status(level: 1), status(level: 0.2)), "another sender set 0.2 meanwhile: theirs stays")
        #expect(untouched(nil, status(level: 0.2)), "nothing to compare with: an idempotent command, sent again")
        #expect(untouched(status(level: 1), status(level: 1, muted: true)), "the mute state is not this command's")
        let mute = DeviceStatus.leavesVolumeAsItWas(for: ["type": "SET_VOLUME", "volume": ["muted": true]])
        #expect(mute(status(level: 1), status(level: 0.5)))
        #expect(!mute(status(level: 1), status(level: 1, muted: true)))
    }
}

/// A log handler that yields once for each message containing `text`: a test waits for a step it cannot see.
private struct MessageSignal: LogHandler {
    let text: String
    let continuation: AsyncStream<Void>.Continuation
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    init(_ text: String, continuation: AsyncStream<Void>.Continuation) {
        self.text = text
        self.continuation = continuation
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        if event.message.description.contains(text) { continuation.yield() }
    }
}
