import CastMedia
import CastTransport
import Testing

/// Receivers that report a command only by broadcasting the new status (`requestId` 0), never with a reply carrying
/// the request's id: a request ends with the first broadcast status that shows what it asked for, instead of
/// waiting for its timeout. Its late reply, if one comes, changes nothing.
@Suite struct BroadcastAnswerTests {
    /// A held command, then broadcasts: those that do not show its effect leave it pending, the first that does
    /// completes it.
    private func answer(
        _ command: (RemoteMediaClient) -> MediaRequest,
        ignoring unrelated: [JSONValue],
        answeredBy answer: JSONValue,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> MediaStatus? {
        let (client, channel) = makeClient()
        channel.hold()
        let request = command(client)
        _ = try await take(1, from: channel.sentStream)
        for message in unrelated {
            client.receive(message)
            #expect(!request.isFinished, "\(message) answered \(request.kind)", sourceLocation: sourceLocation)
        }
        client.receive(answer)
        guard request.isFinished else {
            Issue.record("\(request.kind) is not answered", sourceLocation: sourceLocation)
            channel.release(.failure(CancellationError()), all: true)
            return nil
        }
        let status = try await request.response()
        // The reply that comes late is applied as a status, and does not change the request's outcome.
        channel.release(.success(statusMessage(statusEntry(state: "BUFFERING", time: 99), requestId: 5)), all: true)
        #expect(try await request.response() == status, sourceLocation: sourceLocation)
        return status
    }

    @Test func pauseAndPlay() async throws {
        let paused = try await answer(
            { $0.pause() },
            ignoring: [statusMessage(statusEntry(state: "PLAYING", time: 3)), statusMessage(statusEntry(session: 8))],
            answeredBy: statusMessage(statusEntry(state: "PAUSED", time: 4))
        )
        #expect(paused?.playerState == .paused)
        #expect(paused?.currentTime == 4)
        let playing = try await answer(
            { $0.play() },
            ignoring: [statusMessage(statusEntry(state: "PAUSED"))],
            answeredBy: statusMessage(statusEntry(state: "BUFFERING"))
        )
        #expect(playing?.playerState == .buffering)
    }

    @Test func stopIsAnsweredByIdleOrByTheSessionsEnd() async throws {
        let idle = try await answer(
            { $0.stop() },
            ignoring: [statusMessage(statusEntry(state: "PAUSED"))],
            answeredBy: statusMessage(statusEntry(state: "IDLE", extra: ["idleReason": "CANCELLED"]))
        )
        #expect(idle?.idleReason == .cancelled)
        let ended = try await answer({ $0.stop() }, ignoring: [], answeredBy: statusMessage(nil))
        #expect(ended == nil)
    }

    @Test func loadIsAnsweredByTheNewSessionOnceItIsNotIdle() async throws {
        let loaded = try await answer(
            { $0.loadMedia(testMedia("two")) },
            ignoring: [
                statusMessage(statusEntry(session: 7, state: "PAUSED")),
                statusMessage(
                    statusEntry(session: 9, state: "IDLE", extra: ["extendedStatus": ["playerState": "LOADING"]])
                ),
                // Another sender's load, broadcast meanwhile on a device that replies: not ours.
                statusMessage(statusEntry(session: 8, state: "PLAYING", media: testMedia("phone").json)),
                // Buffering is not loaded yet: a load that breaks fails after it.
                statusMessage(statusEntry(session: 9, state: "BUFFERING", media: testMedia("two").json)),
            ],
            answeredBy: statusMessage(statusEntry(session: 9, state: "PLAYING", media: testMedia("two").json))
        )
        #expect(loaded?.mediaSessionID == 9)
        #expect(loaded?.media?.contentID == "https://example.com/two.mp4")
    }

    /// A load whose new session goes idle with an error failed: by that broadcast on a device that only broadcasts
    /// (with or without the media in it), and by its reply's reason when the reply comes with the broadcast.
    @Test func aLoadFailsOnTheBroadcastOfItsSessionIdleWithAnError() async throws {
        for media in [testMedia("two").json, nil] {
            let (client, channel) = makeClient()
            channel.hold()
            let request = client.loadMedia(testMedia("two"))
            _ = try await take(1, from: channel.sentStream)
            client.receive(statusMessage(statusEntry(session: 9, state: "BUFFERING", media: testMedia("two").json)))
            client.receive(
                statusMessage(statusEntry(session: 9, state: "IDLE", media: media, extra: ["idleReason": "ERROR"]))
            )
            #expect(await failure(of: request)?.code == .loadFailed)
            channel.release(.failure(CancellationError()), all: true)
        }
        // Another session's error (another sender's load failing) is not this load's.
        let (client, channel) = makeClient()
        channel.hold()
        let request = client.loadMedia(testMedia("two"))
        _ = try await take(1, from: channel.sentStream)
        client.receive(
            statusMessage(
                statusEntry(session: 9, state: "IDLE", media: testMedia("phone").json, extra: ["idleReason": "ERROR"])
            )
        )
        client.receive(statusMessage(statusEntry(session: 10, state: "PLAYING", media: testMedia("two").json)))
        #expect(try await request.response()?.mediaSessionID == 10)
        channel.release(.failure(CancellationError()), all: true)
    }

    /// On a device that replies with ids, a load whose session a broadcast shows idle with an error ends with the
    /// reply that follows it: LOAD_FAILED with its reason, or, from a device that never sends it, the answer to the
    /// status read sent on that broadcast (not the request's timeout).
    @Test func aLoadFailedByBroadcastOnADeviceThatRepliesEndsWithItsReplyOrAStatusRead() async throws {
        let failedEntry = statusEntry(session: 9, state: "IDLE", extra: ["idleReason": "ERROR"])
        for sendsLoadFailed in [true, false] {
            let (client, channel) = makeClient()
            try await client.play().response()  // answered with its id
            channel.hold()
            let request = client.loadMedia(testMedia("two"))
            _ = try await take(1, from: channel.sentStream)
            client.receive(statusMessage(failedEntry))
            _ = try await take(1, from: channel.sentStream)
            #expect(channel.sent.last?["type"] == "GET_STATUS")
            #expect(!request.isFinished)
            if sendsLoadFailed {
                channel.release(.success(["type": "LOAD_FAILED", "reason": "MEDIA_ERROR", "detailedErrorCode": 104]))
                #expect(await failure(of: request)?.receiverReason == "MEDIA_ERROR")
                channel.release(.success(statusMessage(failedEntry)), all: true)
                #expect(await failure(of: request)?.receiverReason == "MEDIA_ERROR")
            } else {
                // The LOAD's reply never comes; the status read's does.
                channel.release(.success(statusMessage(failedEntry, requestId: 3)), type: "GET_STATUS")
                #expect(await failure(of: request)?.code == .loadFailed)
                channel.release(.failure(CancellationError()), all: true)
            }
        }
    }

    /// A LOAD answered with a status whose session is idle with an error did not load.
    @Test func aLoadAnsweredIdleWithAnErrorFails() async throws {
        let failed = statusEntry(session: 9, state: "IDLE", extra: ["idleReason": "ERROR"])
        let (client, _) = makeClient(responder: FakeMediaChannel.echoStatus(failed))
        #expect(await failure(of: client.loadMedia(testMedia("two")))?.code == .loadFailed)
        // Any other command answered so is not a failure of its own.
        try await client.play().response()
    }

    @Test func rateAndVolumeAreAnsweredByTheValuesAskedFor() async throws {
        let rate = try await answer(
            { $0.setPlaybackRate(1.5) },
            ignoring: [statusMessage(statusEntry(rate: 1))],
            answeredBy: statusMessage(statusEntry(rate: 1.5))
        )
        #expect(rate?.playbackRate == 1.5)
        let level = try await answer(
            { $0.setStreamVolume(0.25) },
            ignoring: [statusMessage(statusEntry())],
            answeredBy: statusMessage(statusEntry(extra: ["volume": ["level": 0.25, "muted": false]]))
        )
        #expect(level?.volumeLevel == 0.25)
        let muted = try await answer(
            { $0.setStreamMuted(true) },
            ignoring: [statusMessage(statusEntry())],
            answeredBy: statusMessage(statusEntry(extra: ["volume": ["level": 1, "muted": true]]))
        )
        #expect(muted?.isMuted == true)
    }

    /// Seeks, track and queue edits show no single field: the session's next status answers them, another
    /// session's does not.
    @Test func seekAndQueueEditsAreAnsweredByTheSessionsNextStatus() async throws {
        let sought = try await answer(
            { $0.seek(.to(30)) },
            // Another session's status, and another sender's pause where the stream was: not our seek.
            ignoring: [
                statusMessage(statusEntry(session: 8, time: 30)), statusMessage(statusEntry(state: "PAUSED", time: 3)),
            ],
            answeredBy: statusMessage(statusEntry(time: 30))
        )
        #expect(sought?.currentTime == 30)
        _ = try await answer(
            { $0.queueNext() },
            ignoring: [statusMessage(nil)],
            answeredBy: statusMessage(statusEntry(extra: ["currentItemId": 2]))
        )
        let status = try await answer(
            { $0.requestStatus() },
            ignoring: [],
            answeredBy: statusMessage(statusEntry(session: 12))
        )
        #expect(status?.mediaSessionID == 12)
    }

    /// A jump to an item, a seek past the end (the device clamps it) and a text style are answered by the status
    /// that shows them; queue inserts, removals and reorders by the QUEUE_CHANGE that announces them.
    @Test func jumpsClampedSeeksStylesAndQueueEditsHaveAnswers() async throws {
        _ = try await answer(
            { $0.queueJump(toItemID: 3) },
            ignoring: [statusMessage(statusEntry(extra: ["currentItemId": 2]))],
            answeredBy: statusMessage(statusEntry(extra: ["currentItemId": 3]))
        )
        // The seeded media lasts 600 s.
        let end = try await answer(
            { $0.seek(.to(700)) },
            ignoring: [statusMessage(statusEntry(time: 10))],
            answeredBy: statusMessage(statusEntry(time: 600))
        )
        #expect(end?.currentTime == 600)
        var style = TextTrackStyle()
        style.foregroundColor = "#FF0000FF"
        var styled = testMedia()
        styled.textTrackStyle = style
        _ = try await answer(
            { $0.setTextTrackStyle(style) },
            ignoring: [statusMessage(statusEntry(media: testMedia().json))],
            answeredBy: statusMessage(statusEntry(media: styled.json))
        )
        func change(_ type: String, _ ids: [Int], before: Int? = nil) -> JSONValue {
            var change: JSONValue = [
                "type": "QUEUE_CHANGE", "changeType": .string(type), "itemIds": .array(ids.map { .number(Double($0)) }),
            ]
            if let before { change["insertBefore"] = .number(Double(before)) }
            return change
        }
        _ = try await answer(
            { $0.queueInsert([QueueItem(media: testMedia("a")), QueueItem(media: testMedia("b"))], before: 2) },
            ignoring: [change("INSERT", [9]), change("INSERT", [9, 10]), change("REMOVE", [1, 2])],
            answeredBy: change("INSERT", [9, 10], before: 2)
        )
        _ = try await answer(
            { $0.queueRemove([2, 999]) },
            ignoring: [change("REMOVE", [3]), change("INSERT", [2])],
            answeredBy: change("REMOVE", [2])
        )
        _ = try await answer(
            { $0.queueReorder([4, 1], before: 2) },
            ignoring: [change("UPDATE", [4]), change("REMOVE", [4, 1])],
            answeredBy: change("UPDATE", [1, 4], before: 2)
        )
    }

    /// A device that reports statuses only by broadcast still answers errors with the request's id: such a reply
    /// does not make it a device that replies (its queue edits are still answered by their QUEUE_CHANGE).
    @Test func anErrorReplyDoesNotMakeADeviceOneThatReplies() async throws {
        let (client, channel) = makeClient(responder: { payload in
            payload["type"] == "PAUSE" ? .success(["type": "INVALID_PLAYER_STATE"]) : .failure(CancellationError())
        })
        #expect(await failure(of: client.pause())?.code == .invalidPlayerState)
        channel.hold()
        let removal = client.queueRemove([2])
        client.receive(["type": "QUEUE_CHANGE", "changeType": "REMOVE", "itemIds": [2]])
        #expect(removal.isFinished)
        channel.release(.failure(CancellationError()), all: true)
    }

    /// A device that neither replies nor announces queue changes shows an edit only in the items its statuses list.
    @Test func queueEditsAreAnsweredByTheItemsAStatusLists() async throws {
        func listing(_ ids: [Int]) -> JSONValue {
            let items: [JSONValue] = ids.map { ["itemId": .number(Double($0)), "media": testMedia("m\($0)").json] }
            return statusMessage(statusEntry(extra: ["items": .array(items)]))
        }
        _ = try await answer(
            { client in
                client.receive(listing([1, 2, 3]))
                return client.queueRemove([2])
            },
            ignoring: [listing([1, 2, 3])],
            answeredBy: listing([1, 3])
        )
        _ = try await answer(
            { client in
                client.receive(listing([1, 2, 3]))
                return client.queueReorder([3], before: 1)
            },
            ignoring: [listing([1, 2, 3]), listing([1, 3, 2])],
            answeredBy: listing([3, 1, 2])
        )
        _ = try await answer(
            { client in
                client.receive(listing([1, 2, 3]))
                return client.queueInsert([QueueItem(media: testMedia("new"))], before: 2)
            },
            ignoring: [listing([1, 2, 3]), listing([1, 2, 3, 9])],
            answeredBy: listing([1, 9, 2, 3])
        )
        _ = try await answer(
            { client in
                client.receive(listing([1, 2, 3]))
                return client.queueInsert([QueueItem(media: testMedia("new"))])
            },
            ignoring: [listing([9, 1, 2, 3])],
            answeredBy: listing([1, 2, 3, 9])
        )
    }

    /// Another sender's reply, shown by a device that addresses replies to `*`, carries an id above any of ours: it
    /// is a status like an unsolicited one, and our own replies' statuses still apply after it.
    @Test func anotherSendersReplyDoesNotHideOurOwnReplies() async throws {
        let channel = FakeMediaChannel(ordered: true)
        let client = RemoteMediaClient(channel: channel, requestTimeout: .seconds(3))
        client.receive(statusMessage(statusEntry(state: "PLAYING")))
        channel.hold()
        let pause = client.pause()
        _ = try await take(1, from: channel.sentStream)
        client.receive(statusMessage(statusEntry(state: "PLAYING", time: 5), requestId: 57))
        #expect(client.mediaStatus?.currentTime == 5)
        #expect(!pause.isFinished)
        let reply = statusMessage(statusEntry(state: "PAUSED", time: 6), requestId: 1)
        channel.release(.success(reply))
        #expect(try await pause.response()?.playerState == .paused)
        client.receive(reply)
        #expect(client.mediaStatus?.playerState == .paused)
        client.receive(statusMessage(statusEntry(state: "PAUSED", time: 7)))
        #expect(client.mediaStatus?.currentTime == 7, "broadcasts still apply")
    }

    /// Another sender counting its ids from 1, below ours (a connection starts at a random id): its reply to `*`
    /// is a status like an unsolicited one, not one of ours already applied.
    @Test func anotherSendersReplyBelowOurIdsIsApplied() async throws {
        let channel = FakeMediaChannel(ordered: true, firstRequestID: 700_000)
        let client = RemoteMediaClient(channel: channel, requestTimeout: .seconds(3))
        client.receive(statusMessage(statusEntry(state: "PLAYING")))
        channel.hold()
        let pause = client.pause()
        _ = try await take(1, from: channel.sentStream)
        let reply = statusMessage(statusEntry(state: "PAUSED", time: 6), requestId: 700_000)
        channel.release(.success(reply))
        #expect(try await pause.response()?.playerState == .paused)
        client.receive(reply)
        client.receive(statusMessage(statusEntry(state: "PLAYING", time: 9), requestId: 3))
        #expect(client.mediaStatus?.playerState == .playing, "the other sender's play shows")
        #expect(client.mediaStatus?.currentTime == 9)
    }

    /// A reply carrying a request id is not a broadcast: it answers only its own request, as before.
    @Test func aReplyToAnotherRequestIsNotABroadcastAnswer() async throws {
        let (client, channel) = makeClient()
        channel.hold()
        let pause = client.pause()
        _ = try await take(1, from: channel.sentStream)
        client.receive(statusMessage(statusEntry(state: "PAUSED"), requestId: 40))
        #expect(!pause.isFinished)
        channel.release(.success(statusMessage(statusEntry(state: "PAUSED"), requestId: 1)))
        #expect(try await pause.response()?.playerState == .paused)
    }
}
