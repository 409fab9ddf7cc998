import CastMedia
import CastTransport
import Testing

/// RemoteMediaClient against a fake MediaChannel: the payloads it sends (cast-protocol.md §7.2), how replies map
/// to errors, how it follows status, and its local checks.
@Suite struct RemoteMediaClientTests {
    // MARK: - Payload shapes

    /// Sends one command on a seeded client and returns the payload that went out.
    static func payload(_ command: (RemoteMediaClient) -> MediaRequest) async throws -> JSONValue? {
        let (client, channel) = makeClient()
        let request = command(client)
        _ = try await request.response()
        return channel.sent.last
    }

    @Test func loadCarriesEveryField() async throws {
        let media = testMedia("movie")
        var request = LoadRequestData(media: media)
        request.autoplay = false
        request.currentTime = 12.5
        request.playbackRate = 1.5
        request.activeTrackIDs = [1]
        request.credentials = "opaque-user-token"
        request.credentialsType = "android"
        request.customData = ["k": "v"]
        let sent = try await Self.payload { $0.load(request) }
        #expect(
            sent == [
                "type": "LOAD", "media": media.json, "autoplay": false, "currentTime": 12.5, "playbackRate": 1.5,
                "activeTrackIds": [1], "credentials": "opaque-user-token", "credentialsType": "android",
                "customData": ["k": "v"],
            ]
        )

        let simple = try await Self.payload { $0.loadMedia(media) }
        #expect(
            simple == ["type": "LOAD", "media": media.json, "autoplay": true],
            "no mediaSessionId and no requestId"
        )
        let resumed = try await Self.payload { $0.loadMedia(media, autoplay: false, currentTime: 30) }
        #expect(resumed == ["type": "LOAD", "media": media.json, "autoplay": false, "currentTime": 30])

        let items = [QueueItem(media: testMedia("a")), QueueItem(media: testMedia("b"), preloadTime: 5)]
        let queue = QueueData(items: items, startIndex: 1, repeatMode: .all, name: "Mix")
        let queued = try await Self.payload { $0.load(LoadRequestData(queue: queue)) }
        #expect(queued?["media"] == testMedia("b").json, "the start item's media goes in `media`")
        #expect(queued?["queueData"] == queue.json)
        #expect(queued?["mediaSessionId"] == nil)
    }

    @Test func transportCommands() async throws {
        #expect(try await Self.payload { $0.play() } == ["type": "PLAY", "mediaSessionId": 7])
        #expect(
            try await Self.payload { $0.play(customData: ["a": 1]) } == [
                "type": "PLAY", "mediaSessionId": 7, "customData": ["a": 1],
            ]
        )
        #expect(try await Self.payload { $0.pause() } == ["type": "PAUSE", "mediaSessionId": 7])
        #expect(try await Self.payload { $0.stop() } == ["type": "STOP", "mediaSessionId": 7])
        #expect(try await Self.payload { $0.skipAd() } == ["type": "SKIP_AD", "mediaSessionId": 7])
        #expect(try await Self.payload { $0.requestStatus() } == ["type": "GET_STATUS"])
    }

    @Test func seekPayloads() async throws {
        #expect(
            try await Self.payload { $0.seek(.to(120, resumeState: .play)) }
                == ["type": "SEEK", "mediaSessionId": 7, "currentTime": 120, "resumeState": "PLAYBACK_START"]
        )
        #expect(
            try await Self.payload { $0.seek(.by(-10)) } == ["type": "SEEK", "mediaSessionId": 7, "relativeTime": -10]
        )
        #expect(
            try await Self.payload { $0.seek(.by(15, resumeState: .pause)) }
                == ["type": "SEEK", "mediaSessionId": 7, "relativeTime": 15, "resumeState": "PLAYBACK_PAUSE"]
        )
        #expect(
            try await Self.payload { $0.seek(SeekOptions(interval: 3.5, customData: ["why": "chapter"])) }
                == ["type": "SEEK", "mediaSessionId": 7, "currentTime": 3.5, "customData": ["why": "chapter"]]
        )
    }

    @Test func rateVolumeAndTrackPayloads() async throws {
        #expect(
            try await Self.payload { $0.setPlaybackRate(1.5, customData: ["x": true]) }
                == ["type": "SET_PLAYBACK_RATE", "mediaSessionId": 7, "playbackRate": 1.5, "customData": ["x": true]]
        )
        #expect(
            try await Self.payload { $0.setStreamVolume(0.5) }
                == ["type": "SET_VOLUME", "mediaSessionId": 7, "volume": ["level": 0.5]]
        )
        #expect(
            try await Self.payload { $0.setStreamMuted(true) }
                == ["type": "SET_VOLUME", "mediaSessionId": 7, "volume": ["muted": true]]
        )
        #expect(
            try await Self.payload { $0.setActiveTrackIDs([]) }
                == ["type": "EDIT_TRACKS_INFO", "mediaSessionId": 7, "activeTrackIds": []]
        )
        #expect(
            try await Self.payload { $0.setActiveTrackIDs([1, 3]) }
                == ["type": "EDIT_TRACKS_INFO", "mediaSessionId": 7, "activeTrackIds": [1, 3]]
        )
        var style = TextTrackStyle()
        style.fontScale = 1.2
        style.edgeType = "DROP_SHADOW"
        #expect(
            try await Self.payload { $0.setTextTrackStyle(style) }
                == [
                    "type": "EDIT_TRACKS_INFO", "mediaSessionId": 7,
                    "textTrackStyle": ["fontScale": 1.2, "edgeType": "DROP_SHADOW"],
                ]
        )
    }

    @Test func queuePayloads() async throws {
        var withID = QueueItem(media: testMedia("a"))
        withID.itemID = 99
        let b = QueueItem(media: testMedia("b"), autoplay: false)
        let clean = { (item: QueueItem) -> JSONValue in
            var item = item
            item.itemID = nil
            return item.json
        }

        #expect(
            try await Self.payload {
                $0.queueLoad([withID, b], startIndex: 1, repeatMode: .single, currentTime: 4, customData: ["q": 1])
            }
                == [
                    "type": "QUEUE_LOAD", "items": [clean(withID), b.json], "startIndex": 1,
                    "repeatMode": "REPEAT_SINGLE",
                    "currentTime": 4, "customData": ["q": 1],
                ]
        )
        #expect(
            try await Self.payload { $0.queueInsert([withID, b], before: 3) }
                == ["type": "QUEUE_INSERT", "mediaSessionId": 7, "items": [clean(withID), b.json], "insertBefore": 3],
            "receiver-assigned ids are stripped: items with itemId are rejected"
        )
        #expect(
            try await Self.payload { $0.queueInsert([b]) } == [
                "type": "QUEUE_INSERT", "mediaSessionId": 7, "items": [b.json],
            ]
        )
        #expect(
            try await Self.payload { $0.queueInsertAndPlay(withID, before: 5) }
                == [
                    "type": "QUEUE_INSERT", "mediaSessionId": 7, "items": [clean(withID)], "currentItemIndex": 0,
                    "insertBefore": 5,
                ]
        )
        #expect(
            try await Self.payload { $0.queueRemove([2, 4]) } == [
                "type": "QUEUE_REMOVE", "mediaSessionId": 7, "itemIds": [2, 4],
            ]
        )
        #expect(
            try await Self.payload { $0.queueReorder([4, 3], before: 1) }
                == ["type": "QUEUE_REORDER", "mediaSessionId": 7, "itemIds": [4, 3], "insertBefore": 1]
        )
        #expect(
            try await Self.payload { $0.queueMove(itemID: 2, before: nil) }
                == ["type": "QUEUE_REORDER", "mediaSessionId": 7, "itemIds": [2]]
        )
        #expect(
            try await Self.payload { $0.queueJump(toItemID: 3) } == [
                "type": "QUEUE_UPDATE", "mediaSessionId": 7, "currentItemId": 3,
            ]
        )
        #expect(
            try await Self.payload { $0.queueJump(toItemID: 3, playPosition: 12) }
                == ["type": "QUEUE_UPDATE", "mediaSessionId": 7, "currentItemId": 3, "currentTime": 12]
        )
        #expect(try await Self.payload { $0.queueNext() } == ["type": "QUEUE_UPDATE", "mediaSessionId": 7, "jump": 1])
        #expect(
            try await Self.payload { $0.queuePrevious() } == ["type": "QUEUE_UPDATE", "mediaSessionId": 7, "jump": -1]
        )
        #expect(
            try await Self.payload { $0.queueSetRepeatMode(.all) }
                == ["type": "QUEUE_UPDATE", "mediaSessionId": 7, "repeatMode": "REPEAT_ALL"]
        )
        #expect(
            try await Self.payload { $0.queueUpdate([withID]) }
                == ["type": "QUEUE_UPDATE", "mediaSessionId": 7, "items": [withID.json]]
        )
    }

    @Test func requestsUseTheClientTimeout() async throws {
        let (client, channel) = makeClient()
        try await client.play().response()
        #expect(channel.timeouts == [.seconds(3)])
    }

    // MARK: - Replies and errors

    @Test(
        arguments: [
            (
                ["type": "LOAD_FAILED", "detailedErrorCode": 104, "itemId": 1] as JSONValue,
                CastMediaError.Code.loadFailed, nil as String?, 104 as Int?
            ),
            (["type": "LOAD_CANCELLED", "itemId": 1], .loadCancelled, nil, nil),
            (["type": "INVALID_PLAYER_STATE"], .invalidPlayerState, nil, nil),
            (
                ["type": "INVALID_REQUEST", "reason": "INVALID_MEDIA_SESSION_ID"], .invalidRequest,
                "INVALID_MEDIA_SESSION_ID", nil
            ),
            (
                ["type": "ERROR", "reason": "GENERIC_LOAD_ERROR", "detailedErrorCode": 905], .receiverError,
                "GENERIC_LOAD_ERROR", 905
            ),
            (["type": "SURPRISE"], .invalidResponse, nil, nil),
            (["requestId": 3], .invalidResponse, nil, nil),
        ] as [(JSONValue, CastMediaError.Code, String?, Int?)]
    )
    func errorRepliesMapToCodes(reply: JSONValue, code: CastMediaError.Code, reason: String?, detailed: Int?) async {
        let (client, _) = makeClient(responder: { _ in .success(reply) })
        let error = await failure(of: client.loadMedia(testMedia()))
        #expect(error?.code == code)
        #expect(error?.receiverReason == reason)
        #expect(error?.detailedErrorCode == detailed)
        let command = await failure(of: client.pause())
        #expect(command?.code == code)
        #expect(client.mediaStatus?.mediaSessionID == 7, "an error reply does not change the status")
    }

    /// The rejections a person can act on are said in words, with the receiver's reason kept.
    @Test func rejectionsAPersonCanActOnAreSaidInWords() async {
        let (client, _) = makeClient(responder: { _ in .success(["type": "INVALID_REQUEST", "reason": "END_OF_QUEUE"]) }
        )
        let end = await failure(of: client.queueNext())
        #expect(end?.message.hasPrefix("there is no item there: the queue ends") == true, "\(end?.message ?? "")")
        #expect(end?.receiverReason == "END_OF_QUEUE")
    }

    @Test(arguments: [
        (CastTransportError.Code.requestTimedOut, CastMediaError.Code.timedOut),
        (.connectionClosed, .connectionLost),
        (.notConnected, .notConnected),
    ])
    func transportErrorsMapToCodes(transport: CastTransportError.Code, code: CastMediaError.Code) async {
        let (client, _) = makeClient(responder: { _ in .failure(CastTransportError(transport, "simulated")) })
        let error = await failure(of: client.play())
        #expect(error?.code == code)
        #expect(error?.cause is CastTransportError)
    }

    @Test func otherChannelErrorsAreTyped() async {
        struct Odd: Error {}
        let (client, channel) = makeClient(responder: { _ in .failure(CastMediaError(.notConnected, "suspended")) })
        #expect(await failure(of: client.play())?.code == .notConnected, "media errors pass through")
        channel.respond { _ in .failure(Odd()) }
        #expect(await failure(of: client.play())?.code == .receiverError)
    }

    @Test func repliesWithStatusUpdateTheClient() async throws {
        let entry = statusEntry(state: "PAUSED", time: 33)
        let (client, _) = makeClient(responder: FakeMediaChannel.echoStatus(entry))
        let status = try await client.pause().response()
        #expect(status?.playerState == .paused)
        #expect(client.mediaStatus?.currentTime == 33)
        #expect(
            client.mediaStatus?.media?.metadata?.title == "movie",
            "media is carried forward into the reply's status"
        )
        // QUEUE_ITEM_IDS and similar replies complete with the current status.
        let (other, channel) = makeClient()
        channel.respond { _ in .success(["type": "QUEUE_ITEM_IDS", "itemIds": [1]]) }
        let current = try await other.play().response()
        #expect(current?.mediaSessionID == 7)
    }

    // MARK: - Local checks

    @Test func commandsTheStatusDoesNotAdvertiseFailLocally() async throws {
        let (client, channel) = makeClient(seeded: false)
        client.receive(statusMessage(statusEntry(commands: [], media: testMedia().json)))
        let unsupported = [
            client.pause(), client.seek(.to(1)), client.setPlaybackRate(1.5), client.setStreamVolume(0.5),
            client.setStreamMuted(true), client.setActiveTrackIDs([1]), client.setTextTrackStyle(TextTrackStyle()),
            client.skipAd(), client.queueNext(), client.queuePrevious(),
        ]
        for request in unsupported {
            guard case .failed(let error)? = request.outcome else {
                Issue.record("\(request.kind) should fail at once")
                continue
            }
            #expect(error.code == .notSupported, "\(request.kind)")
        }
        #expect(channel.sent.isEmpty, "nothing unsupported reaches the receiver")
        // At an end of the queue, what is missing is said (not that QUEUE_UPDATE is unsupported).
        if case .failed(let error)? = client.queuePrevious().outcome {
            #expect(error.message == "there is no previous item in the queue")
        }
        // PLAY, STOP and queue edits need no command bit.
        try await client.play().response()
        try await client.stop().response()
        try await client.queueJump(toItemID: 1).response()
        #expect(channel.sent.map { $0["type"] } == ["PLAY", "STOP", "QUEUE_UPDATE"])
    }

    /// A play/pause button: pause what plays (a live stream too, when it can pause), play what does not; a live
    /// stream that cannot pause stops, and the next toggle loads it again unless other media played meanwhile.
    @Test func togglePlaybackPausesPlaysAndRestartsALiveStreamItStopped() async throws {
        var live = MediaInformation(
            contentID: "https://example.com/radio",
            contentType: "audio/mpeg",
            streamType: .live
        )
        live.metadata = .generic(title: "Radio")
        let channel = FakeMediaChannel(responder: FakeMediaChannel.echoStatus(nil))
        let client = RemoteMediaClient(channel: channel, requestTimeout: .seconds(3))

        client.receive(statusMessage(statusEntry(state: "PLAYING", media: testMedia().json)))
        try await client.togglePlayback().response()
        client.receive(statusMessage(statusEntry(state: "PAUSED", media: testMedia().json)))
        try await client.togglePlayback().response()
        client.receive(statusMessage(statusEntry(state: "BUFFERING", media: testMedia().json)))
        try await client.togglePlayback().response()
        // A live stream that advertises PAUSE (a DVR window) pauses.
        client.receive(statusMessage(statusEntry(state: "PLAYING", media: live.json)))
        try await client.togglePlayback().response()
        #expect(channel.sent.map { $0["type"] } == ["PAUSE", "PLAY", "PAUSE", "PAUSE"])
        #expect(client.stoppedLiveMedia == nil)

        // One that cannot pause stops, and comes back.
        client.receive(statusMessage(statusEntry(state: "PLAYING", commands: [.seek], media: live.json)))
        try await client.togglePlayback().response()
        #expect(channel.sent.last?["type"] == "STOP")
        #expect(client.stoppedLiveMedia == live)
        client.receive(statusMessage(statusEntry(state: "IDLE", media: live.json, extra: ["idleReason": "CANCELLED"])))
        try await client.togglePlayback().response()
        let reload = try #require(channel.sent.last)
        #expect(reload["type"] == "LOAD")
        #expect(reload["media"]?["contentId"] == "https://example.com/radio")
        #expect(reload["media"]?["streamType"] == "LIVE")
        client.receive(statusMessage(statusEntry(session: 8, state: "PLAYING", commands: [], media: live.json)))
        #expect(client.stoppedLiveMedia == nil, "playing again, it is not stopped any more")

        // Stopped, then other media played and finished: the next toggle plays, it does not bring the stream back.
        try await client.togglePlayback().response()
        #expect(client.stoppedLiveMedia == live)
        client.receive(statusMessage(statusEntry(session: 9, state: "PLAYING", media: testMedia("other").json)))
        client.receive(statusMessage(statusEntry(session: 9, state: "IDLE", extra: ["idleReason": "FINISHED"])))
        try await client.togglePlayback().response()
        #expect(channel.sent.last?["type"] == "PLAY")
        // A live stream's status without media still fails a pause locally, as before, instead of stopping.
        client.receive(statusMessage(statusEntry(session: 10, state: "PLAYING", commands: [])))
        #expect(await failure(of: client.togglePlayback())?.code == .notSupported)
    }

    /// Some devices list several media sessions in one MEDIA_STATUS (a finished one beside the one playing, in
    /// either order): the one not idle is the media, then the one followed so far, then the newest.
    @Test func ofSeveralMediaSessionsTheActiveOneIsTheMedia() async throws {
        let (client, channel) = makeClient(seeded: false, responder: FakeMediaChannel.echoStatus(nil))
        let stale = statusEntry(
            session: 4,
            state: "IDLE",
            media: testMedia("old").json,
            extra: ["idleReason": "FINISHED"]
        )
        let live = statusEntry(session: 5, state: "PLAYING", media: testMedia().json)
        for entries in [[stale, live], [live, stale]] {
            client.receive(["type": "MEDIA_STATUS", "requestId": 0, "status": .array(entries)])
            #expect(client.mediaStatus?.mediaSessionID == 5)
        }
        try await client.pause().response()
        #expect(channel.sent.last?["mediaSessionId"] == 5)
        // Both active: the session followed so far; both idle: the newest.
        client.receive(statusMessage(live))
        let other = statusEntry(session: 6, state: "PLAYING", media: testMedia("other").json)
        client.receive(["type": "MEDIA_STATUS", "requestId": 0, "status": [other, live]])
        #expect(client.mediaStatus?.mediaSessionID == 5)
        let finished = statusEntry(session: 7, state: "IDLE", extra: ["idleReason": "FINISHED"])
        client.receive(["type": "MEDIA_STATUS", "requestId": 0, "status": [finished, stale]])
        #expect(client.mediaStatus?.mediaSessionID == 7)
    }

    @Test func invalidArgumentsFailLocally() {
        let (client, channel) = makeClient()
        let invalid = [
            client.setPlaybackRate(0.25), client.setPlaybackRate(3.0), client.setStreamVolume(-0.1),
            client.setStreamVolume(1.01),
            client.queueLoad([]), client.queueLoad([QueueItem(media: testMedia())], startIndex: 1),
            client.queueInsert([]),
            client.queueRemove([]), client.queueReorder([]), client.queueUpdate([QueueItem(media: testMedia())]),
            client.load(LoadRequestData(queue: QueueData(items: []))),
        ]
        for request in invalid {
            guard case .failed(let error)? = request.outcome else {
                Issue.record("\(request.kind) should fail at once")
                continue
            }
            #expect(error.code == .invalidRequest, "\(request.kind)")
        }
        #expect(channel.sent.isEmpty)
        let ids = Set(invalid.map(\.id))
        #expect(ids.count == invalid.count, "every request has its own id")
    }

    @Test func withoutAMediaSessionCommandsFailLocally() async throws {
        let (client, channel) = makeClient(seeded: false)
        #expect(client.mediaStatus == nil)
        #expect(client.playerState == .idle)
        for request in [
            client.play(), client.pause(), client.stop(), client.seek(.to(1)), client.queueNext(), client.skipAd(),
        ] {
            guard case .failed(let error)? = request.outcome else {
                Issue.record("\(request.kind) should fail at once")
                continue
            }
            #expect(error.code == .noMediaSession)
        }
        #expect(channel.sent.isEmpty)
        try await client.requestStatus().response()
        try await client.loadMedia(testMedia()).response()
        #expect(channel.sent.map { $0["type"] } == ["GET_STATUS", "LOAD"])
    }

    // MARK: - Replacement, cancellation, callbacks

    @Test func aNewerLoadOrSeekReplacesTheOneInFlight() async throws {
        let (client, channel) = makeClient()
        channel.hold()
        let firstSeek = client.seek(.to(10))
        let aborted = Recorder<MediaRequest.AbortReason>()
        firstSeek.onAbort { aborted.record($0) }
        _ = try await take(1, from: channel.sentStream)
        let secondSeek = client.seek(.to(20))
        #expect(aborted.values == [.replaced])
        guard case .aborted(.replaced)? = firstSeek.outcome else {
            Issue.record("the first seek should be replaced")
            return
        }
        #expect(firstSeek.replacement === secondSeek, "the newer seek's outcome is the state both lead to")
        #expect(secondSeek.replacement == nil)
        // A PLAY in between does not replace anything.
        let play = client.play()
        #expect(!play.isFinished)
        #expect(play.replacement == nil)
        _ = try await take(2, from: channel.sentStream)
        channel.release(.success(statusMessage(statusEntry(time: 20), requestId: 2)), all: true)
        #expect(try await secondSeek.response()?.currentTime == 20)
        #expect(try await play.response() != nil)
        await #expect(throws: CancellationError.self) { try await firstSeek.response() }

        channel.hold()
        let firstLoad = client.loadMedia(testMedia("one"))
        _ = try await take(1, from: channel.sentStream)
        let queueLoad = client.queueLoad([QueueItem(media: testMedia("two"))])
        guard case .aborted(.replaced)? = firstLoad.outcome else {
            Issue.record("a queue load replaces a load in flight")
            return
        }
        _ = try await take(1, from: channel.sentStream)
        channel.release(.success(["type": "LOAD_CANCELLED"]))
        channel.release(.success(statusMessage(statusEntry(session: 8))))
        #expect(try await queueLoad.response()?.mediaSessionID == 8)
        guard case .aborted(.replaced)? = firstLoad.outcome else {
            Issue.record("a late LOAD_CANCELLED does not change the outcome")
            return
        }
    }

    /// A GET_STATUS that timed out a moment ago is the answer: reading the status again does not send a second one
    /// and wait a second timeout; a moment later, it asks again. One in flight is waited for.
    @Test func readingAnUnknownStatusReusesARecentGetStatus() async throws {
        let time = TestTime()
        let (client, channel) = makeClient(seeded: false, now: time.closure)
        channel.hold()
        let attach = client.requestStatus()
        _ = try await take(1, from: channel.sentStream)
        time.now = 3  // its timeout, when the join's read gives up
        channel.release(.failure(CastTransportError(.requestTimedOut, "no reply")))
        await #expect(throws: CastMediaError.self) { try await attach.response() }
        time.now = 3.5
        await #expect { try await client.readStatusIfUnknown() } throws: {
            ($0 as? CastMediaError)?.code == .timedOut
        }
        #expect(channel.sent.count == 1)
        time.now = 5
        channel.respond(with: FakeMediaChannel.echoStatus(statusEntry()))
        try await client.readStatusIfUnknown()
        #expect(channel.sent.count == 2)
        #expect(client.mediaStatus?.mediaSessionID == 7)
        try await client.readStatusIfUnknown()
        #expect(channel.sent.count == 2, "a known status is not read again")
    }

    @Test func cancellingARequest() async throws {
        let (client, channel) = makeClient()
        channel.hold()
        let request = client.requestStatus()
        let reasons = Recorder<MediaRequest.AbortReason>()
        let failures = Recorder<CastMediaError.Code>()
        request.onAbort { reasons.record($0) }
        request.onFailure { failures.record($0.code) }
        _ = try await take(1, from: channel.sentStream)
        request.cancel()
        #expect(request.isFinished)
        #expect(reasons.values == [.cancelled])
        await #expect(throws: CancellationError.self) { try await request.response() }
        request.onAbort { reasons.record($0) }
        #expect(reasons.values == [.cancelled, .cancelled])
        channel.release(.success(statusMessage(statusEntry(state: "PAUSED"))))
        guard case .aborted(.cancelled)? = request.outcome else {
            Issue.record("a late reply does not change a cancelled request")
            return
        }
        #expect(failures.values.isEmpty)
    }

    /// Every caller awaiting one request gets its outcome (the first waiter is kept apart from the others).
    @Test(.timeLimit(.minutes(1))) func everyWaiterGetsTheOutcome() async throws {
        let (client, channel) = makeClient()
        channel.hold()
        let request = client.requestStatus()
        _ = try await take(1, from: channel.sentStream)
        let waiters = (0..<3).map { _ in Task { try await request.response()?.playerState } }
        while request.waitingCount < 3 { await Task.yield() }
        channel.release(.success(statusMessage(statusEntry(state: "PAUSED"))))
        for waiter in waiters { #expect(try await waiter.value == .paused) }
        #expect(request.waitingCount == 0)
        // One that comes after the outcome has it at once.
        #expect(try await request.response()?.playerState == .paused)
    }

    @Test func callbacksRunOnceWhetherRegisteredBeforeOrAfter() async throws {
        let (client, _) = makeClient()
        let completions = Recorder<Int?>()
        let request = client.play()
        request.onCompletion { completions.record($0?.mediaSessionID) }
        let waiters = (0..<3).map { _ in Task { try await request.response()?.mediaSessionID } }
        for waiter in waiters { #expect(try await waiter.value == 7) }
        request.onCompletion { completions.record($0?.mediaSessionID) }
        #expect(completions.values == [7, 7])
        guard case .completed(let status)? = request.outcome else {
            Issue.record("completed")
            return
        }
        #expect(status?.mediaSessionID == 7)
    }

    @Test func requestsLeaveInTheOrderIssued() async throws {
        let (client, channel) = makeClient()
        let requests = (0..<200).map {
            client.seek(SeekOptions(interval: Double($0), customData: ["n": .number(Double($0))]))
        }
        let plays = (0..<200).map { _ in client.play() }
        for request in requests + plays { _ = try? await request.response() }
        let order = channel.sent.compactMap { $0["customData"]?["n"]?.intValue }
        #expect(order.count == 200, "replaced seeks were already on their way")
        // Each request is sent before its call returns: the wire order is the call order.
        #expect(order == order.sorted())
        let types = channel.sent.map { $0["type"]?.stringValue ?? "" }
        #expect(types.lastIndex(of: "SEEK")! < types.firstIndex(of: "PLAY")!)
    }

    // MARK: - Following status

    @Test func mediaIsCarriedForwardWithinAMediaSession() {
        let (client, _) = makeClient(seeded: false)
        let items: JSONValue = [
            ["itemId": 1, "media": testMedia("a").json], ["itemId": 2, "media": testMedia("b").json],
        ]
        client.receive(
            statusMessage(
                statusEntry(session: 3, media: testMedia("a").json, extra: ["items": items, "currentItemId": 1])
            )
        )
        #expect(client.mediaStatus?.media?.contentID == "https://example.com/a.mp4")
        client.receive(statusMessage(statusEntry(session: 3, state: "PAUSED", time: 9)))
        #expect(client.mediaStatus?.playerState == .paused)
        #expect(client.mediaStatus?.media?.contentID == "https://example.com/a.mp4", "media carried forward")
        #expect(client.mediaStatus?.items?.count == 2, "items carried forward")
        client.receive(statusMessage(statusEntry(session: 4)))
        #expect(client.mediaStatus?.mediaSessionID == 4)
        #expect(client.mediaStatus?.media == nil, "a new media session does not inherit media")
        #expect(client.mediaStatus?.items == nil)
        client.receive(statusMessage(nil))
        #expect(client.mediaStatus == nil, "an empty status ends the media session")
        client.receive(["type": "MEDIA_STATUS", "status": [["playerState": "PLAYING"], statusEntry(session: 5)]])
        #expect(client.mediaStatus?.mediaSessionID == 5, "a broken entry is skipped")
        client.receive(["type": "SOMETHING_ELSE"])
        #expect(client.mediaStatus?.mediaSessionID == 5)
        client.reset()
        #expect(client.mediaStatus == nil)
    }

    @Test func repeatedItemsAreTheLastStatusesWithinAMediaSession() {
        let (client, _) = makeClient(seeded: false)
        let items: JSONValue = [
            ["itemId": 1, "media": testMedia("a").json], ["itemId": 2, "media": testMedia("b").json],
        ]
        func receive(session: Int, time: Double, items: JSONValue?) {
            var extra: [String: JSONValue] = ["currentItemId": 1]
            if let items { extra["items"] = items }
            client.receive(
                statusMessage(statusEntry(session: session, time: time, media: testMedia("a").json, extra: extra))
            )
        }
        // Where an array's elements live: the same address is the same array, not an equal one decoded again.
        func address(_ items: [QueueItem]?) -> UnsafeRawPointer? {
            items?.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        }
        receive(session: 1, time: 0, items: items)
        let first = client.mediaStatus?.items  // held, so that no later array can take its address
        #expect(first?.count == 2)
        receive(session: 1, time: 1, items: items)
        #expect(address(client.mediaStatus?.items) == address(first), "the same JSON again: the same items")
        receive(session: 1, time: 2, items: nil)
        #expect(address(client.mediaStatus?.items) == address(first), "carried forward")
        receive(session: 1, time: 3, items: items)
        #expect(address(client.mediaStatus?.items) == address(first), "their record was carried forward too")

        // A new media session whose status does not carry them ends their record, as do an empty status and
        // reset(): the same JSON is then decoded again.
        receive(session: 2, time: 0, items: nil)
        #expect(client.mediaStatus?.items == nil)
        receive(session: 2, time: 1, items: items)
        let second = client.mediaStatus?.items
        #expect(second == first && address(second) != address(first))
        client.receive(statusMessage(nil))
        receive(session: 2, time: 2, items: items)
        let third = client.mediaStatus?.items
        #expect(third == first && address(third) != address(second))
        client.reset()
        receive(session: 2, time: 3, items: items)
        #expect(client.mediaStatus?.items == first && address(client.mediaStatus?.items) != address(third))
    }

    @Test func eventsForMetadataQueueAndPreloadChanges() async throws {
        let (client, _) = makeClient(seeded: false)
        let events = client.events()
        let items: JSONValue = [
            ["itemId": 1, "media": testMedia("a").json], ["itemId": 2, "media": testMedia("b").json],
        ]
        client.receive(
            statusMessage(
                statusEntry(
                    session: 1,
                    media: testMedia("a", title: "A").json,
                    extra: ["items": items, "currentItemId": 1]
                )
            )
        )
        client.receive(statusMessage(statusEntry(session: 1, time: 5, extra: ["currentItemId": 1])))
        // The same media and items again (as receivers may repeat them): no change events.
        client.receive(
            statusMessage(
                statusEntry(
                    session: 1,
                    time: 6,
                    media: testMedia("a", title: "A").json,
                    extra: ["items": items, "currentItemId": 1]
                )
            )
        )
        client.receive(
            statusMessage(statusEntry(session: 1, time: 25, extra: ["currentItemId": 1, "preloadedItemId": 2]))
        )
        client.receive(
            statusMessage(statusEntry(session: 1, media: testMedia("b", title: "B").json, extra: ["currentItemId": 2]))
        )
        client.receive(["type": "QUEUE_CHANGE", "changeType": "INSERT", "itemIds": [3], "sequenceNumber": 1])
        client.receive(statusMessage(nil))
        let seen = try await take(16, from: events).map(describe)
        #expect(
            seen == [
                "status(1)", "metadata(A)", "queue",
                "status(1)",
                "status(1)",
                "status(1)", "preload(2)",
                "status(1)", "metadata(B)", "queue", "preload(nil)",
                "change(INSERT)", "queue",
                "status(nil)", "metadata(nil)", "queue",
            ]
        )
    }

    @Test func statusUpdatesAreLatestWins() async throws {
        let (client, _) = makeClient(seeded: false)
        let updates = client.statusUpdates()
        for time in 1...5 { client.receive(statusMessage(statusEntry(time: Double(time)))) }
        let first = try await take(1, from: updates)
        #expect(first.first??.currentTime == 5, "a slow consumer sees the newest status, not a backlog")
        client.receive(statusMessage(statusEntry(time: 6)))
        client.receive(statusMessage(nil))
        let second = try await take(1, from: updates)
        #expect(second.first == .some(nil))
    }

    /// A device reports an ad's clock when something changes, not as the clip plays: the client moves it on, so
    /// the countdown to skipping runs and SKIP_AD is sent once the clip is skippable, though the last status did
    /// not offer it yet (the skip key was refused locally while the ad could be skipped).
    @Test func anAdBecomesSkippableAsItsClipPlays() async throws {
        let time = TestTime()
        time.now = 100
        let (client, channel) = makeClient(seeded: false, now: time.closure)
        var commands = allCommands
        commands.remove(.skipAd)
        let ad: JSONValue = ["breakId": "b", "breakClipId": "c", "currentBreakClipTime": 1, "whenSkippable": 5]
        client.receive(
            statusMessage(statusEntry(commands: commands, media: testMedia().json, extra: ["breakStatus": ad]))
        )
        #expect(client.approximateAdBreakStatus?.secondsUntilSkippable == 4)
        guard case .failed(let early)? = client.skipAd().outcome else {
            Issue.record("SKIP_AD before the clip is skippable should fail at once")
            return
        }
        #expect(early.code == .notSupported)
        #expect(early.message == "the ad can be skipped in 4 s")
        time.now = 103
        #expect(client.approximateAdBreakStatus?.secondsUntilSkippable == 1)
        time.now = 104.5
        #expect(client.approximateAdBreakStatus?.isSkippable == true)
        try await client.skipAd().response()
        #expect(channel.sent.last?["type"] == "SKIP_AD")
    }

    @Test func approximateStreamPositionExtrapolatesWithTheRate() {
        let time = TestTime()
        time.now = 100
        let (client, _) = makeClient(seeded: false, now: time.closure)
        #expect(client.approximateStreamPosition == 0, "no media session")

        client.receive(statusMessage(statusEntry(time: 10, rate: 2, media: testMedia(duration: 60).json)))
        #expect(client.approximateStreamPosition == 10)
        time.now = 103
        #expect(client.approximateStreamPosition == 16)
        time.now = 200
        #expect(client.approximateStreamPosition == 60, "clamped to the duration")

        client.receive(statusMessage(statusEntry(state: "PAUSED", time: 30, rate: 2)))
        time.now = 250
        #expect(client.approximateStreamPosition == 30, "paused media does not move")
        client.receive(statusMessage(statusEntry(state: "BUFFERING", time: 31)))
        time.now = 260
        #expect(client.approximateStreamPosition == 31)

        let ad: JSONValue = ["breakId": "b1", "breakClipId": "c1", "currentBreakClipTime": 2, "whenSkippable": 5]
        client.receive(statusMessage(statusEntry(time: 0, extra: ["breakStatus": ad])))
        time.now = 270
        #expect(client.approximateStreamPosition == 0, "content does not move during an ad")

        client.receive(statusMessage(statusEntry(session: 9, time: 7.5, rate: 0.5)))
        time.now = 274
        #expect(client.approximateStreamPosition == 9.5, "no duration: no clamp")
    }

    @Test func playerStateAndPlaybackRateController() {
        let (client, _) = makeClient(seeded: false)
        let rate = PlaybackRateController(client: client)
        #expect(rate.playbackRate == 1)
        #expect(!rate.isInputEnabled)
        client.receive(
            statusMessage(
                statusEntry(state: "IDLE", commands: [], extra: ["extendedStatus": ["playerState": "LOADING"]])
            )
        )
        #expect(client.playerState == .loading)
        #expect(!rate.isInputEnabled)
        client.receive(statusMessage(statusEntry(rate: 1.25, commands: [.pause, .playbackRate])))
        #expect(client.playerState == .playing)
        #expect(rate.playbackRate == 1.25)
        #expect(rate.isInputEnabled)
        guard case .failed(let error)? = rate.setPlaybackRate(5).outcome else {
            Issue.record("an out-of-range rate fails at once")
            return
        }
        #expect(error.code == .invalidRequest)
    }
}
