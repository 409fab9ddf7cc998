import CastTransport
import Testing

@testable import CastReceiver

// The Default Media Receiver's player as a pure state machine (cast-protocol.md §7): requests and clock
// positions go in, deliveries come out. No I/O, no real time.

@Suite("MediaPlayer: LOAD")
struct MediaPlayerLoadTests {
    @Test func loadReportsEveryMediaFieldAndPlays() throws {
        let media = Fixture.movie(
            duration: 100,
            [
                "tracks": Fixture.tracks,
                "textTrackStyle": Fixture.textTrackStyle,
                "breakClips": [["id": "bc1", "contentId": "https://ads.example.com/1.mp4", "duration": 15]],
                "breaks": [["id": "b-mid", "breakClipIds": ["bc1"], "position": 50]],
                "customData": ["catalogId": "m-42"],
            ]
        )
        var harness = PlayerHarness()
        let outcome = harness.send("LOAD", ["media": media, "customData": ["from": "test"]])

        // A LOADING notice to everyone, the reply, then the new state to everyone but the requester.
        #expect(outcome.deliveries.count == 3)
        let loading = try #require(outcome.deliveries.first)
        #expect(loading.excluded == .some(nil))
        #expect(outcome.deliveries[1].replyTarget == 1)
        #expect(outcome.deliveries[2].excluded == .some(1))

        #expect(outcome.reply.type == "MEDIA_STATUS")
        #expect(outcome.reply["requestId"] == 1)
        #expect(outcome.reply["status"]?.arrayValue?.count == 1)
        let status = try #require(outcome.status)
        #expect(status["mediaSessionId"] == 1)
        #expect(status["playerState"] == "PLAYING")
        #expect(status["idleReason"] == nil)
        #expect(status["currentTime"] == 0)
        #expect(status["playbackRate"] == 1)
        #expect(status["currentItemId"] == 1)
        #expect(status["repeatMode"] == "REPEAT_OFF")
        #expect(status["activeTrackIds"] == [])
        #expect(status["volume"] == ["level": 1, "muted": false])
        #expect(status["media"] == media)
        #expect(status["media"]?["tracks"] == Fixture.tracks)
        #expect(status["media"]?["textTrackStyle"] == Fixture.textTrackStyle)
        #expect(status["media"]?["breaks"]?.arrayValue?.count == 1)
        #expect(status["media"]?["customData"] == ["catalogId": "m-42"])
        #expect(status["customData"] == ["from": "test"])
        #expect(status["items"] == [["itemId": 1, "autoplay": true, "media": media]])
        #expect(status["breakStatus"] == nil)

        // The broadcast carries the same entry with requestId 0.
        #expect(outcome.deliveries[2].payload["requestId"] == 0)
        #expect(outcome.deliveries[2].payload.firstStatus == status)
    }

    @Test func contentUrlIsTheUrlWhenPresent() throws {
        // contentId is a free id when contentUrl is given: the failure check looks at contentUrl.
        var failing = PlayerHarness()
        let failed = failing.send(
            "LOAD",
            ["media": Fixture.movie(url: "catalog-42", ["contentUrl": "https://cdn.example.invalid/a.mp4"])]
        )
        #expect(failed.reply.type == "LOAD_FAILED")
        #expect(failed.reply["detailedErrorCode"] == 103)

        var loading = PlayerHarness()
        let media = Fixture.movie(url: "https://gone.example.invalid/x", ["contentUrl": "https://ok.example.com/a.mp4"])
        let loaded = loading.send("LOAD", ["media": media])
        #expect(loaded.status?["playerState"] == "PLAYING")
        #expect(loaded.status?["media"]?["contentUrl"] == "https://ok.example.com/a.mp4")
        #expect(loaded.status?["media"]?["contentId"] == "https://gone.example.invalid/x")
    }

    @Test func autoplayFalseCurrentTimeTracksRateAndCredentials() throws {
        var harness = PlayerHarness()
        let outcome = harness.send(
            "LOAD",
            [
                "media": Fixture.movie(["tracks": Fixture.tracks]),
                "autoplay": false,
                "currentTime": 30,
                "activeTrackIds": [1, 3],
                "playbackRate": 1.5,
                "credentials": "opaque-user-token",
                "credentialsType": "android",
            ]
        )
        let status = try #require(outcome.status)
        #expect(status["playerState"] == "PAUSED")
        #expect(status["currentTime"] == 30)
        #expect(status["activeTrackIds"] == [1, 3])
        #expect(status["playbackRate"] == 1.5)
        #expect(status["items"]?.arrayValue?.first?["autoplay"] == false)
        #expect(harness.player.credentials == ["credentials": "opaque-user-token", "credentialsType": "android"])

        // Paused: time does not move the position; once playing it moves at 1.5×.
        harness.advance(by: 10)
        #expect(harness.status?["currentTime"] == 30)
        harness.send("PLAY")
        harness.advance(by: 10)
        #expect(harness.status?["currentTime"] == 45)
    }

    @Test func credentialsWithoutTypeAreRecordedWithNullType() {
        var harness = PlayerHarness()
        harness.send("LOAD", ["media": Fixture.movie(), "credentials": "token-only"])
        #expect(harness.player.credentials == ["credentials": "token-only", "credentialsType": .null])
    }

    @Test func loadWithQueueData() throws {
        let items: JSONValue = [
            Fixture.item(Fixture.song(1, duration: 10)),
            Fixture.item(Fixture.song(2, duration: 20)),
            Fixture.item(Fixture.song(3, duration: 30)),
        ]
        var harness = PlayerHarness()
        let outcome = harness.send(
            "LOAD",
            [
                "media": Fixture.song(2, duration: 20),
                "queueData": [
                    "id": "q-1", "name": "Mix", "queueType": "PLAYLIST", "items": items, "startIndex": 1,
                    "repeatMode": "REPEAT_ALL",
                ],
            ]
        )
        let status = try #require(outcome.status)
        #expect(status["currentItemId"] == 2)
        #expect(status["repeatMode"] == "REPEAT_ALL")
        #expect(status["media"] == Fixture.song(2, duration: 20))
        #expect(status["items"]?.arrayValue?.compactMap { $0["itemId"]?.intValue } == [1, 2, 3])
        #expect(
            status["queueData"]
                == ["id": "q-1", "name": "Mix", "queueType": "PLAYLIST", "startIndex": 1, "repeatMode": "REPEAT_ALL"]
        )
        #expect(status.commands & Bits.queueNext != 0)
        #expect(status.commands & Bits.queuePrev != 0)
    }

    /// Found by fuzzing: a rate of 0 or less left the item's end forever due.
    @Test(arguments: [0.0, -1.0, 0.25, 3.0])
    func loadWithAPlaybackRateOutsideTheSupportedRangeIsInvalidParams(rate: Double) {
        var harness = PlayerHarness()
        let outcome = harness.send(
            "LOAD",
            [
                "media": [
                    "contentId": "https://example.com/a.mp4", "contentType": "video/mp4", "streamType": "BUFFERED",
                ],
                "playbackRate": .number(rate),
            ]
        )
        #expect(outcome.reply == ["type": "INVALID_REQUEST", "reason": "INVALID_PARAMS", "requestId": 1])
        #expect(harness.player.session == nil)
    }

    @Test func loadWithoutContentIdIsInvalidParams() {
        var harness = PlayerHarness()
        let outcome = harness.send("LOAD", ["media": ["contentType": "video/mp4", "streamType": "BUFFERED"]])
        #expect(outcome.reply == ["type": "INVALID_REQUEST", "reason": "INVALID_PARAMS", "requestId": 1])
        #expect(outcome.deliveries.count == 1)
        #expect(harness.player.session == nil)
    }

    @Test func failingContentReportsLoadFailedWithCodeAndItemIdAfterAnErrorBroadcast() throws {
        var harness = PlayerHarness()
        let outcome = harness.send("LOAD", ["media": Fixture.movie(url: "https://media.example.com/a.mp4?fail=1")])
        #expect(outcome.reply.type == "LOAD_FAILED")
        #expect(outcome.reply["requestId"] == 1)
        #expect(outcome.reply["detailedErrorCode"] == 104)
        #expect(outcome.reply["itemId"]?.intValue != nil)

        // LOADING, then IDLE/ERROR, then the reply.
        #expect(outcome.deliveries.count == 3)
        let errorBroadcast = try #require(outcome.deliveries[1].payload.firstStatus)
        #expect(outcome.deliveries[1].isBroadcast)
        #expect(errorBroadcast["playerState"] == "IDLE")
        #expect(errorBroadcast["idleReason"] == "ERROR")
        #expect(errorBroadcast["mediaSessionId"] == 1)
        #expect(outcome.deliveries[2].replyTarget == 1)
        #expect(harness.player.session == nil)

        let status = harness.send("GET_STATUS")
        #expect(status.reply["status"] == [])
    }

    @Test func invalidHostFailsWithNetworkError() {
        var harness = PlayerHarness()
        let outcome = harness.send("LOAD", ["media": Fixture.movie(url: "http://cdn.example.invalid:8080/a.mp4")])
        #expect(outcome.reply.type == "LOAD_FAILED")
        #expect(outcome.reply["detailedErrorCode"] == 103)
        #expect(outcome.reply["itemId"]?.intValue != nil)
    }

    @Test func customFailureDecider() {
        var settings = Player.Settings()
        settings.failure = { $0.hasSuffix(".drm") ? 202 : nil }
        var harness = PlayerHarness(settings: settings)
        #expect(
            harness.send("LOAD", ["media": Fixture.movie(url: "https://x.example.com/a.drm")]).reply[
                "detailedErrorCode"
            ] == 202
        )
        #expect(
            harness.send("LOAD", ["media": Fixture.movie(url: "https://x.example.com/a.mp4?fail=1")]).status?[
                "playerState"
            ] == "PLAYING"
        )
    }

    @Test func loadingAppearsOnlyInExtendedStatus() throws {
        var harness = PlayerHarness()
        let outcome = harness.send("LOAD", ["media": Fixture.movie()])
        let loading = try #require(outcome.deliveries.first?.payload.firstStatus)
        #expect(loading["playerState"] == "IDLE")
        #expect(loading["extendedStatus"]?["playerState"] == "LOADING")
        #expect(loading["extendedStatus"]?["mediaSessionId"] == 1)
        #expect(loading["extendedStatus"]?["media"] == Fixture.movie())
        #expect(outcome.status?["extendedStatus"] == nil)
        // (The harness checks every status entry for playerState LOADING.)
    }

    @Test func newLoadCancelsAPendingLoad() throws {
        var settings = Player.Settings()
        settings.loadDuration = 2
        var harness = PlayerHarness(settings: settings)
        let first = harness.send("LOAD", ["media": Fixture.movie()], from: 1, expectReply: false)
        #expect(first.deliveries.count == 1, "only the LOADING notice while the load is pending")
        #expect(first.deliveries.first?.payload.firstStatus?["extendedStatus"]?["playerState"] == "LOADING")
        #expect(harness.player.nextDeadline(after: 0) == 2)

        harness.now = 1
        let second = harness.send("LOAD", ["media": Fixture.movie(duration: 50)], from: 2, expectReply: false)
        let cancelled = try #require(second.deliveries.first { $0.replyTarget == 1 })
        #expect(cancelled.payload == ["type": "LOAD_CANCELLED", "requestId": 1])
        #expect(harness.player.session == nil)
        #expect(harness.player.nextDeadline(after: 1) == 3)

        let completed = harness.advance(to: 3)
        let reply = try #require(completed.first { $0.replyTarget == 2 })
        #expect(reply.payload["requestId"] == 2)
        #expect(reply.payload.firstStatus?["mediaSessionId"] == 2)
        #expect(reply.payload.firstStatus?["playerState"] == "PLAYING")
        #expect(reply.payload.firstStatus?["currentTime"] == 0)
        #expect(!completed.contains { $0.replyTarget == 1 })
    }

    @Test func pendingLoadCompletesWithTheReplyToItsRequester() throws {
        var settings = Player.Settings()
        settings.loadDuration = 2
        var harness = PlayerHarness(settings: settings)
        harness.send("LOAD", ["media": Fixture.movie(), "requestId": 7], from: 4, expectReply: false)
        #expect(harness.player.session == nil)
        // A command before the load completes has no session to act on.
        #expect(harness.send("PAUSE").reply.type == "INVALID_PLAYER_STATE")

        harness.now = 2
        let deliveries = harness.player.advance(to: 2)
        let reply = try #require(deliveries.first { $0.replyTarget == 4 })
        #expect(reply.payload["requestId"] == 7)
        #expect(reply.payload.firstStatus?["playerState"] == "PLAYING")
        #expect(reply.payload.firstStatus?["mediaSessionId"] == 1)
        #expect(deliveries.contains { $0.excluded == .some(4) })
    }

    @Test func newLoadInterruptsThePreviousSession() throws {
        var harness = Fixture.loaded()
        harness.advance(to: 10)
        let outcome = harness.send("LOAD", ["media": Fixture.movie(duration: 50)], from: 2)
        let interrupted = try #require(outcome.deliveries.first)
        #expect(interrupted.excluded == .some(nil))
        let entry = try #require(interrupted.payload.firstStatus)
        #expect(entry["mediaSessionId"] == 1)
        #expect(entry["playerState"] == "IDLE")
        #expect(entry["idleReason"] == "INTERRUPTED")
        #expect(entry["currentTime"] == 10)
        #expect(outcome.status?["mediaSessionId"] == 2)
        #expect(outcome.status?["currentTime"] == 0)
        #expect(outcome.status?["currentItemId"] == 2, "item ids keep counting across loads")
    }
}

@Suite("MediaPlayer: transport controls")
struct MediaPlayerControlTests {
    @Test func pauseAndPlayFreezeAndResumeThePosition() {
        var harness = Fixture.loaded()
        harness.advance(to: 10)
        let paused = harness.send("PAUSE")
        #expect(paused.status?["playerState"] == "PAUSED")
        #expect(paused.status?["currentTime"] == 10)
        #expect(paused.broadcastStatuses.map { $0["playerState"] } == ["PAUSED"])
        #expect(paused.deliveries.last?.excluded == .some(1))

        harness.advance(to: 20)
        #expect(harness.status?["currentTime"] == 10)
        let playing = harness.send("PLAY")
        #expect(playing.status?["playerState"] == "PLAYING")
        harness.advance(to: 25)
        #expect(harness.status?["currentTime"] == 15)
    }

    @Test func stopEndsTheSession() {
        var harness = Fixture.loaded()
        harness.advance(to: 5)
        let stopped = harness.send("STOP")
        #expect(stopped.status?["playerState"] == "IDLE")
        #expect(stopped.status?["idleReason"] == "CANCELLED")
        #expect(stopped.status?["currentTime"] == 5)
        #expect(stopped.broadcastStatuses.first?["idleReason"] == "CANCELLED")
        #expect(harness.player.session == nil)

        let status = harness.send("GET_STATUS")
        #expect(status.reply == ["type": "MEDIA_STATUS", "requestId": 3, "status": []])
        #expect(harness.send("PLAY").reply == ["type": "INVALID_PLAYER_STATE", "requestId": 4])
    }

    @Test func seekAbsoluteRelativeResumeStateAndClamping() {
        var harness = Fixture.loaded()
        #expect(harness.send("SEEK", ["currentTime": 50]).status?["currentTime"] == 50)
        // relativeTime wins over currentTime.
        let relative = harness.send("SEEK", ["relativeTime": -10, "currentTime": 5])
        #expect(relative.status?["currentTime"] == 40)
        #expect(relative.status?["playerState"] == "PLAYING")

        let paused = harness.send("SEEK", ["relativeTime": 5, "resumeState": "PLAYBACK_PAUSE"])
        #expect(paused.status?["currentTime"] == 45)
        #expect(paused.status?["playerState"] == "PAUSED")
        harness.advance(by: 10)
        #expect(harness.status?["currentTime"] == 45)

        let started = harness.send("SEEK", ["currentTime": 60, "resumeState": "PLAYBACK_START"])
        #expect(started.status?["playerState"] == "PLAYING")
        harness.advance(by: 1)
        #expect(harness.status?["currentTime"] == 61)

        let beyond = harness.send("SEEK", ["currentTime": 1000, "resumeState": "PLAYBACK_PAUSE"])
        #expect(beyond.status?["currentTime"] == 100, "clamped to the duration")
        #expect(harness.send("SEEK", ["currentTime": -5]).status?["currentTime"] == 0)

        let missing = harness.send("SEEK", ["resumeState": "PLAYBACK_START"])
        #expect(missing.reply["type"] == "INVALID_REQUEST")
        #expect(missing.reply["reason"] == "INVALID_PARAMS")
    }

    @Test func setPlaybackRateAbsoluteRelativeAndOutOfRange() {
        var harness = Fixture.loaded()
        #expect(harness.send("SET_PLAYBACK_RATE", ["playbackRate": 2]).status?["playbackRate"] == 2)
        harness.advance(to: 10)
        #expect(harness.status?["currentTime"] == 20)
        #expect(harness.send("SET_PLAYBACK_RATE", ["relativePlaybackRate": 0.5]).status?["playbackRate"] == 1)
        harness.advance(to: 14)
        #expect(harness.status?["currentTime"] == 24)

        for fields: [String: JSONValue] in [
            ["playbackRate": 3], ["playbackRate": 0.25], ["playbackRate": 0], ["relativePlaybackRate": 4], [:],
        ] {
            let outcome = harness.send("SET_PLAYBACK_RATE", fields)
            #expect(outcome.reply["type"] == "INVALID_REQUEST", "\(fields)")
            #expect(outcome.reply["reason"] == "INVALID_PARAMS", "\(fields)")
            #expect(outcome.broadcasts.isEmpty)
        }
        #expect(harness.status?["playbackRate"] == 1)
    }

    @Test func setStreamVolume() {
        var harness = Fixture.loaded()
        #expect(
            harness.send("SET_VOLUME", ["volume": ["level": 0.4]]).status?["volume"] == ["level": 0.4, "muted": false]
        )
        #expect(
            harness.send("SET_VOLUME", ["volume": ["muted": true]]).status?["volume"] == ["level": 0.4, "muted": true]
        )
        for fields: [String: JSONValue] in [["volume": ["level": 1.5]], ["volume": [:]], [:]] {
            let outcome = harness.send("SET_VOLUME", fields)
            #expect(outcome.reply["type"] == "INVALID_REQUEST", "\(fields)")
            #expect(outcome.reply["reason"] == "INVALID_PARAMS", "\(fields)")
        }
        #expect(harness.status?["volume"] == ["level": 0.4, "muted": true])
    }

    @Test func customDataOnACommandIsReported() {
        var harness = Fixture.loaded()
        let outcome = harness.send("PAUSE", ["customData": ["reason": "doorbell"]])
        #expect(outcome.status?["customData"] == ["reason": "doorbell"])
    }
}

@Suite("MediaPlayer: tracks")
struct MediaPlayerTrackTests {
    @Test func editTracksInfo() throws {
        var harness = Fixture.loaded(Fixture.movie(["tracks": Fixture.tracks]), ["activeTrackIds": [1, 3]])
        #expect(harness.status?["activeTrackIds"] == [1, 3])

        #expect(harness.send("EDIT_TRACKS_INFO", ["activeTrackIds": [2, 3]]).status?["activeTrackIds"] == [2, 3])

        let unknown = harness.send("EDIT_TRACKS_INFO", ["activeTrackIds": [99]])
        #expect(
            unknown.reply == [
                "type": "INVALID_REQUEST", "reason": "INVALID_PARAMS", "requestId": .number(Double(unknown.requestId)),
            ]
        )
        #expect(harness.status?["activeTrackIds"] == [2, 3])

        let style: JSONValue = ["fontScale": 1.5, "foregroundColor": "#FFFF00FF", "edgeType": "DROP_SHADOW"]
        let styled = harness.send("EDIT_TRACKS_INFO", ["textTrackStyle": style])
        #expect(styled.status?["media"]?["textTrackStyle"] == style)
        #expect(styled.status?["activeTrackIds"] == [2, 3], "absent activeTrackIds leaves the selection alone")

        #expect(harness.send("EDIT_TRACKS_INFO", ["enableTextTracks": false]).status?["activeTrackIds"] == [3])
        #expect(harness.send("EDIT_TRACKS_INFO", ["language": "en"]).status?["activeTrackIds"] == [3, 1])
        #expect(harness.send("EDIT_TRACKS_INFO", ["activeTrackIds": []]).status?["activeTrackIds"] == [])
    }

    @Test func editAudioTracks() {
        var harness = Fixture.loaded(Fixture.movie(["tracks": Fixture.tracks]), ["activeTrackIds": [1, 3]])
        #expect(harness.send("EDIT_AUDIO_TRACKS", ["language": "de"]).status?["activeTrackIds"] == [1, 4])
        let unknown = harness.send("EDIT_AUDIO_TRACKS", ["language": "ja"])
        #expect(unknown.reply["type"] == "INVALID_REQUEST")
        #expect(unknown.reply["reason"] == "LANGUAGE_NOT_SUPPORTED")
    }
}

@Suite("MediaPlayer: queue")
struct MediaPlayerQueueTests {
    @Test func queueLoad() throws {
        var harness = PlayerHarness()
        let outcome = harness.send(
            "QUEUE_LOAD",
            ["items": Fixture.threeSongs, "startIndex": 2, "currentTime": 5, "repeatMode": "REPEAT_OFF"]
        )
        let status = try #require(outcome.status)
        #expect(status["currentItemId"] == 3)
        #expect(status["currentTime"] == 5)
        #expect(status["playerState"] == "PLAYING")
        #expect(status["media"] == Fixture.song(3, duration: 30))
        #expect(status["items"]?.arrayValue?.compactMap { $0["itemId"]?.intValue } == [1, 2, 3])
        #expect(status["items"]?.arrayValue?.allSatisfy { $0["autoplay"] == true } == true)
        #expect(harness.itemIds == [1, 2, 3])
    }

    @Test func queueLoadRejectsItemsCarryingItemIdsAndEmptyQueues() {
        var harness = Fixture.loaded()
        let withIds = harness.send(
            "QUEUE_LOAD",
            ["items": [Fixture.item(Fixture.song(1, duration: 10), ["itemId": 7])], "startIndex": 0]
        )
        #expect(withIds.reply == ["type": "INVALID_REQUEST", "reason": "INVALID_PARAMS", "requestId": 2])
        #expect(withIds.deliveries.count == 1)
        #expect(harness.status?["mediaSessionId"] == 1, "the running session is untouched")

        let empty = harness.send("QUEUE_LOAD", ["items": []])
        #expect(empty.reply["reason"] == "INVALID_PARAMS")
    }

    @Test func queueInsertAppendsInsertsBeforeAndJumps() throws {
        var harness = Fixture.queued()
        harness.advance(to: 3)

        let appended = harness.send("QUEUE_INSERT", ["items": [Fixture.item(Fixture.song(4, duration: 40))]])
        #expect(harness.itemIds == [1, 2, 3, 4])
        let change = try #require(appended.queueChanges.first)
        #expect(
            change == [
                "type": "QUEUE_CHANGE", "requestId": 0, "changeType": "INSERT", "itemIds": [4], "sequenceNumber": 1,
            ]
        )
        #expect(appended.status?["currentItemId"] == 1)
        #expect(appended.status?["currentTime"] == 3)

        let before = harness.send(
            "QUEUE_INSERT",
            ["items": [Fixture.item(Fixture.song(5, duration: 50))], "insertBefore": 2]
        )
        #expect(harness.itemIds == [1, 5, 2, 3, 4])
        #expect(before.queueChanges.first?["insertBefore"] == 2)
        #expect(before.queueChanges.first?["sequenceNumber"] == 2)

        let jumped = harness.send(
            "QUEUE_INSERT",
            [
                "items": [Fixture.item(Fixture.song(6, duration: 60)), Fixture.item(Fixture.song(7, duration: 70))],
                "insertBefore": 3, "currentItemIndex": 1,
            ]
        )
        #expect(harness.itemIds == [1, 5, 2, 6, 7, 3, 4])
        #expect(jumped.status?["currentItemId"] == 7)
        #expect(jumped.status?["currentTime"] == 0)
        #expect(jumped.status?["playerState"] == "PLAYING")
        #expect(jumped.status?["media"] == Fixture.song(7, duration: 70))

        let ids = harness.send("QUEUE_GET_ITEM_IDS")
        #expect(
            ids.reply == [
                "type": "QUEUE_ITEM_IDS", "requestId": .number(Double(ids.requestId)),
                "itemIds": [1, 5, 2, 6, 7, 3, 4],
            ]
        )

        #expect(
            harness.send("QUEUE_INSERT", ["items": [Fixture.item(Fixture.song(8, duration: 1), ["itemId": 99])]]).reply[
                "reason"
            ] == "INVALID_PARAMS"
        )
        #expect(
            harness.send("QUEUE_INSERT", ["items": [Fixture.item(Fixture.song(8, duration: 1))], "insertBefore": 99])
                .reply["reason"] == "INVALID_PARAMS"
        )
        #expect(harness.itemIds == [1, 5, 2, 6, 7, 3, 4])
    }

    @Test func queueRemove() throws {
        var harness = Fixture.queued()
        harness.advance(to: 3)

        // Removing the playing item plays the next one.
        let removedCurrent = harness.send("QUEUE_REMOVE", ["itemIds": [1]])
        #expect(removedCurrent.queueChanges.first?["changeType"] == "REMOVE")
        #expect(removedCurrent.queueChanges.first?["itemIds"] == [1])
        #expect(removedCurrent.status?["currentItemId"] == 2)
        #expect(removedCurrent.status?["currentTime"] == 0)
        #expect(removedCurrent.status?["playerState"] == "PLAYING")
        #expect(harness.itemIds == [2, 3])

        harness.advance(to: 5)
        let removedOther = harness.send("QUEUE_REMOVE", ["itemIds": [3]])
        #expect(removedOther.status?["currentItemId"] == 2)
        #expect(removedOther.status?["currentTime"] == 2)
        #expect(harness.itemIds == [2])

        // Emptying the queue ends the media session.
        let emptied = harness.send("QUEUE_REMOVE", ["itemIds": [2]])
        #expect(emptied.queueChanges.first?["itemIds"] == [2])
        // Like STOP, the reply carries the final IDLE/FINISHED entry; afterwards there is no session.
        #expect(emptied.reply["status"]?[0]?["playerState"] == "IDLE")
        #expect(emptied.reply["status"]?[0]?["idleReason"] == "FINISHED")
        #expect(harness.player.session == nil)
        #expect(harness.send("GET_STATUS").reply["status"] == [])

        var other = Fixture.queued()
        #expect(other.send("QUEUE_REMOVE", ["itemIds": []]).reply["reason"] == "INVALID_PARAMS")
    }

    @Test func queueRemoveOfTheCurrentItemAndItsPredecessorPlaysTheItemThatFollowed() throws {
        var harness = PlayerHarness()
        harness.send(
            "QUEUE_LOAD",
            [
                "items": [
                    Fixture.item(Fixture.song(1, duration: 10)), Fixture.item(Fixture.song(2, duration: 20)),
                    Fixture.item(Fixture.song(3, duration: 30)), Fixture.item(Fixture.song(4, duration: 40)),
                ]
            ]
        )
        harness.send("QUEUE_NEXT")
        #expect(harness.status?["currentItemId"] == 2)
        let outcome = harness.send("QUEUE_REMOVE", ["itemIds": [1, 2]])
        #expect(harness.itemIds == [3, 4])
        #expect(outcome.status?["currentItemId"] == 3)
    }

    @Test func queueRemoveOfEverythingTellsTheOtherSendersThatMediaEnded() {
        var harness = Fixture.queued()
        let outcome = harness.send("QUEUE_REMOVE", ["itemIds": [1, 2, 3]], from: 1)
        #expect(harness.player.session == nil)
        #expect(outcome.deliveries.contains { $0.isBroadcast && $0.payload.type == "MEDIA_STATUS" })
    }

    @Test func queueReorder() throws {
        var harness = Fixture.queued()
        let moved = harness.send("QUEUE_REORDER", ["itemIds": [3], "insertBefore": 1])
        #expect(harness.itemIds == [3, 1, 2])
        let change = try #require(moved.queueChanges.first)
        #expect(change["changeType"] == "UPDATE")
        #expect(change["reorderItemIds"] == [3])
        #expect(change["itemIds"] == [3])
        #expect(change["insertBefore"] == 1)
        #expect(moved.status?["currentItemId"] == 1)
        #expect(moved.status?["items"]?.arrayValue?.compactMap { $0["itemId"]?.intValue } == [3, 1, 2])

        harness.send("QUEUE_REORDER", ["itemIds": [3]])
        #expect(harness.itemIds == [1, 2, 3])
        let jumped = harness.send("QUEUE_REORDER", ["itemIds": [2, 1], "currentItemId": 2])
        #expect(harness.itemIds == [3, 2, 1])
        #expect(jumped.status?["currentItemId"] == 2)

        for fields: [String: JSONValue] in [
            ["itemIds": [9]], ["itemIds": [1, 1]], ["itemIds": [1], "insertBefore": 1],
            ["itemIds": [1], "insertBefore": 42], [:],
        ] {
            let outcome = harness.send("QUEUE_REORDER", fields)
            #expect(outcome.reply["type"] == "INVALID_REQUEST", "\(fields)")
            #expect(outcome.reply["reason"] == "INVALID_PARAMS", "\(fields)")
        }
        #expect(harness.itemIds == [3, 2, 1])
    }

    @Test func queueUpdateJumpWrapsOnlyWhenRepeating() {
        var harness = Fixture.queued()
        #expect(harness.send("QUEUE_UPDATE", ["jump": 1]).status?["currentItemId"] == 2)
        #expect(harness.send("QUEUE_UPDATE", ["jump": 1]).status?["currentItemId"] == 3)
        let end = harness.send("QUEUE_UPDATE", ["jump": 1])
        #expect(end.reply["type"] == "INVALID_REQUEST")
        #expect(end.reply["reason"] == "END_OF_QUEUE")
        #expect(harness.status?["currentItemId"] == 3)

        #expect(harness.send("QUEUE_UPDATE", ["repeatMode": "REPEAT_ALL"]).status?["repeatMode"] == "REPEAT_ALL")
        #expect(harness.send("QUEUE_UPDATE", ["jump": 1]).status?["currentItemId"] == 1)
        #expect(harness.send("QUEUE_UPDATE", ["jump": -1]).status?["currentItemId"] == 3)
        #expect(harness.send("QUEUE_UPDATE", ["currentItemId": 2]).status?["currentItemId"] == 2)

        #expect(
            harness.send("QUEUE_UPDATE", ["repeatMode": "REPEAT_ALL_AND_SHUFFLE"]).status?["repeatMode"]
                == "REPEAT_ALL_AND_SHUFFLE"
        )
        #expect(harness.send("QUEUE_UPDATE", ["repeatMode": "REPEAT_SINGLE"]).status?["repeatMode"] == "REPEAT_SINGLE")
        let badMode = harness.send("QUEUE_UPDATE", ["repeatMode": "SOMETIMES"])
        #expect(badMode.reply["reason"] == "INVALID_PARAMS")
        #expect(harness.send("QUEUE_UPDATE", ["currentItemId": 42]).reply["reason"] == "INVALID_PARAMS")
    }

    @Test func queueUpdateJumpKeepsAPausedPlayerPaused() {
        var harness = Fixture.queued()
        harness.advance(to: 4)
        harness.send("PAUSE")
        let jumped = harness.send("QUEUE_UPDATE", ["jump": 1])
        #expect(jumped.status?["currentItemId"] == 2)
        #expect(jumped.status?["playerState"] == "PAUSED")
        #expect(jumped.status?["currentTime"] == 0)
    }

    @Test func queueUpdateItemsInPlace() throws {
        var harness = Fixture.queued()
        let updated = harness.send("QUEUE_UPDATE", ["items": [["itemId": 2, "customData": ["note": "edited"]]]])
        let change = try #require(updated.queueChanges.first)
        #expect(change["changeType"] == "ITEMS_CHANGE")
        #expect(change["itemIds"] == [2])
        let items = harness.send("QUEUE_GET_ITEMS", ["itemIds": [2]])
        #expect(items.reply["items"]?.arrayValue?.first?["customData"] == ["note": "edited"])
        #expect(items.reply["items"]?.arrayValue?.first?["media"] == Fixture.song(2, duration: 20))
        #expect(
            harness.send("QUEUE_UPDATE", ["items": [["itemId": 42, "autoplay": false]]]).reply["reason"]
                == "INVALID_PARAMS"
        )
    }

    @Test func queueNextAndPrev() {
        var harness = Fixture.queued()
        #expect(harness.send("QUEUE_NEXT").status?["currentItemId"] == 2)
        #expect(harness.send("QUEUE_PREV").status?["currentItemId"] == 1)
        let end = harness.send("QUEUE_PREV")
        #expect(end.reply["type"] == "INVALID_REQUEST")
        #expect(end.reply["reason"] == "END_OF_QUEUE")
    }

    @Test func queueGetItemIdsAndItems() {
        var harness = Fixture.queued()
        let ids = harness.send("QUEUE_GET_ITEM_IDS")
        #expect(ids.reply == ["type": "QUEUE_ITEM_IDS", "requestId": 2, "itemIds": [1, 2, 3]])
        #expect(ids.broadcasts.isEmpty)

        let items = harness.send("QUEUE_GET_ITEMS", ["itemIds": [3, 1, 42]])
        #expect(items.reply["type"] == "QUEUE_ITEMS")
        #expect(
            items.reply["items"]
                == [
                    ["itemId": 3, "autoplay": true, "media": Fixture.song(3, duration: 30)],
                    ["itemId": 1, "autoplay": true, "media": Fixture.song(1, duration: 10)],
                ]
        )
        #expect(harness.send("QUEUE_GET_ITEMS").reply["reason"] == "INVALID_PARAMS")

        let range = harness.send("QUEUE_GET_ITEM_RANGE", ["itemId": 2, "prevCount": 1, "nextCount": 5])
        #expect(range.reply["items"]?.arrayValue?.compactMap { $0["itemId"]?.intValue } == [1, 2, 3])
        let alone = harness.send("QUEUE_GET_ITEM_RANGE", ["itemId": 3, "prevCount": .null])
        #expect(alone.reply["items"]?.arrayValue?.compactMap { $0["itemId"]?.intValue } == [3])
    }

    /// Negative or non-integer counts are refused (a negative count once made an empty range's bounds cross and
    /// stopped the whole emulator).
    @Test func queueGetItemRangeRefusesBadCounts() {
        var harness = Fixture.queued()
        for fields: [String: JSONValue] in [
            ["itemId": 2, "prevCount": -5], ["itemId": 2, "nextCount": -3],
            ["itemId": 1, "prevCount": -1, "nextCount": -1],
            ["itemId": 2, "nextCount": 1.5], ["itemId": 2, "prevCount": "1"], ["itemId": 42, "nextCount": 1],
        ] {
            let outcome = harness.send("QUEUE_GET_ITEM_RANGE", fields)
            #expect(outcome.reply["type"] == "INVALID_REQUEST", "\(fields)")
            #expect(outcome.reply["reason"] == "INVALID_PARAMS", "\(fields)")
        }
    }

    /// Items with nothing to play (a start time at or past the end, or a tiny duration) under a repeat mode play
    /// one round and then end as FINISHED, instead of restarting at the same instant without end.
    @Test func blankItemsUnderRepeatEndInsteadOfLooping() {
        for (items, mode): ([JSONValue], String) in [
            ([Fixture.item(Fixture.song(1, duration: 30), ["startTime": 40])], "REPEAT_ALL"),
            ([Fixture.item(Fixture.song(1, duration: 30), ["startTime": 30])], "REPEAT_ALL_AND_SHUFFLE"),
            ([Fixture.item(Fixture.song(1, duration: 0.000001))], "REPEAT_SINGLE"),
            (
                [
                    Fixture.item(Fixture.song(1, duration: 30), ["startTime": 40]),
                    Fixture.item(Fixture.song(2, duration: 0.01)),
                ], "REPEAT_ALL"
            ),
        ] {
            var harness = PlayerHarness()
            harness.send("QUEUE_LOAD", ["items": .array(items), "repeatMode": .string(mode)])
            let statuses = harness.advance(to: 1).compactMap(\.payload.firstStatus)
            #expect(statuses.count <= items.count + 1, "\(mode): \(statuses.count) statuses")
            #expect(harness.status?["playerState"] == "IDLE", "\(mode)")
            #expect(harness.status?["idleReason"] == "FINISHED", "\(mode)")
            #expect(harness.player.nextDeadline(after: 1) == nil, "\(mode)")
        }
    }

    /// A sender that seeks back into a blank item plays it: its end then repeats as usual.
    @Test func aSeekIntoABlankItemMakesItPlayable() {
        var harness = PlayerHarness()
        harness.send(
            "QUEUE_LOAD",
            [
                "items": [Fixture.item(Fixture.song(1, duration: 30), ["startTime": 30, "autoplay": false])],
                "repeatMode": "REPEAT_SINGLE",
            ]
        )
        #expect(harness.status?["playerState"] == "PAUSED")
        harness.send("SEEK", ["currentTime": 0])
        let play = harness.send("PLAY")
        #expect(play.status?["playerState"] == "PLAYING", "\(play.reply)")
        // Played to its end, it starts again (paused at 0: the item does not autoplay) instead of finishing.
        harness.advance(to: 35)
        #expect(harness.status?["playerState"] == "PAUSED")
        #expect(harness.status?["currentTime"] == 0)
        #expect(harness.status?["idleReason"] == nil)
    }

    /// A blank item among playable ones does not end a repeating queue: the round has content.
    @Test func aBlankItemAmongPlayableOnesKeepsRepeating() {
        var harness = PlayerHarness()
        harness.send(
            "QUEUE_LOAD",
            [
                "items": [
                    Fixture.item(Fixture.song(1, duration: 30), ["startTime": 40]),
                    Fixture.item(Fixture.song(2, duration: 10)),
                ],
                "repeatMode": "REPEAT_ALL",
            ]
        )
        harness.advance(to: 25)
        #expect(harness.status?["playerState"] == "PLAYING")
        #expect(harness.status?["currentItemId"] == 2)
        #expect(harness.status?["currentTime"] == 5)
    }
}

@Suite("MediaPlayer: ad breaks")
struct MediaPlayerAdTests {
    static let preRoll = Fixture.movie(
        duration: 100,
        [
            "breakClips": [
                ["id": "bc1", "contentId": "https://ads.example.com/1.mp4", "duration": 15, "whenSkippable": 5],
                ["id": "bc2", "contentId": "https://ads.example.com/2.mp4", "duration": 10],
            ],
            "breaks": [["id": "pre", "breakClipIds": ["bc1", "bc2"], "position": 0]],
        ]
    )

    @Test func preRollPlaysBeforeContentAndSkipAdIsOfferedOnlyOnceSkippable() throws {
        var harness = Fixture.loaded(Self.preRoll)
        var status = try #require(harness.status)
        #expect(status["playerState"] == "PLAYING")
        #expect(status["currentTime"] == 0)
        #expect(
            status["breakStatus"]
                == [
                    "breakId": "pre", "breakClipId": "bc1", "currentBreakTime": 0, "currentBreakClipTime": 0,
                    "whenSkippable": 5,
                ]
        )
        #expect(status.commands & Bits.skipAd == 0)

        let early = harness.send("SKIP_AD")
        #expect(early.reply["type"] == "INVALID_REQUEST")
        #expect(early.reply["reason"] == "NOT_SUPPORTED")

        harness.advance(to: 3)
        status = try #require(harness.status)
        #expect(status["breakStatus"]?["currentBreakClipTime"] == 3)
        #expect(status["currentTime"] == 0, "content does not move during a break")
        #expect(status.commands & Bits.skipAd == 0)

        harness.advance(to: 6)
        #expect(harness.status.map(\.commands).map { $0 & Bits.skipAd } == Bits.skipAd)

        // Skipping the first clip starts the second (not skippable).
        let skipped = harness.send("SKIP_AD")
        status = try #require(skipped.status)
        #expect(status["breakStatus"]?["breakClipId"] == "bc2")
        #expect(status["breakStatus"]?["currentBreakClipTime"] == 0)
        #expect(status["breakStatus"]?["currentBreakTime"] == 15)
        #expect(status["breakStatus"]?["whenSkippable"] == nil)
        #expect(status.commands & Bits.skipAd == 0)
        #expect(harness.send("SKIP_AD").reply["reason"] == "NOT_SUPPORTED")

        // The second clip plays out; then the content starts at 0.
        #expect(harness.player.nextDeadline(after: 6) == 16)
        let resumed = harness.advance(to: 16)
        #expect(resumed.last?.payload.firstStatus?["breakStatus"] == nil)
        harness.advance(to: 26)
        #expect(harness.status?["breakStatus"] == nil)
        #expect(harness.status?["currentTime"] == 10)

        let outside = harness.send("SKIP_AD")
        #expect(outside.reply == ["type": "INVALID_PLAYER_STATE", "requestId": .number(Double(outside.requestId))])
    }

    @Test func skippingTheLastClipResumesContent() throws {
        let media = Fixture.movie(
            duration: 100,
            [
                "breakClips": [["id": "only", "duration": 30, "whenSkippable": 2]],
                "breaks": [["id": "pre", "breakClipIds": ["only"], "position": 0]],
            ]
        )
        var harness = Fixture.loaded(media)
        harness.advance(to: 2)
        let skipped = harness.send("SKIP_AD")
        #expect(skipped.status?["breakStatus"] == nil)
        #expect(skipped.status?["currentTime"] == 0)
        #expect(skipped.status?["playerState"] == "PLAYING")
        harness.advance(to: 12)
        #expect(harness.status?["currentTime"] == 10)
    }

    @Test func aPrerollAdComesBeforeMediaWithoutBreaksOnly() throws {
        var settings = Player.Settings()
        settings.prerollAd = PrerollAd(duration: 20, skippableAfter: 5)
        var harness = PlayerHarness(settings: settings)
        let loaded = harness.send("LOAD", ["media": Fixture.movie(duration: 100)])
        let adBreak = try #require(loaded.status?["breakStatus"])
        #expect(adBreak["breakId"] == "emulator-preroll")
        #expect(adBreak["breakClipId"] == "emulator-ad")
        #expect(adBreak["whenSkippable"] == 5)
        #expect(loaded.status?["media"]?["breakClips"]?.arrayValue?.first?["duration"] == 20)
        harness.advance(to: 20)
        #expect(harness.status?["breakStatus"] == nil)
        #expect(harness.status?["currentTime"] == 0)

        // Media with breaks of its own keeps them, and only them.
        let own = Fixture.movie(
            duration: 100,
            [
                "breakClips": [["id": "bc", "duration": 5]],
                "breaks": [["id": "mid", "breakClipIds": ["bc"], "position": 30]],
            ]
        )
        let withBreaks = harness.send("LOAD", ["media": own])
        #expect(withBreaks.status?["breakStatus"] == nil)
        #expect(withBreaks.status?["media"]?["breaks"] == own["breaks"])
    }

    @Test func midRollPlaysAtItsPositionOnce() throws {
        let media = Fixture.movie(
            duration: 100,
            [
                "breakClips": [["id": "bc", "duration": 5]],
                "breaks": [["id": "mid", "breakClipIds": ["bc"], "position": 30]],
            ]
        )
        var harness = Fixture.loaded(media)
        #expect(harness.status?["breakStatus"] == nil)
        #expect(harness.player.nextDeadline(after: 0) == 30)

        let started = harness.advance(to: 30)
        #expect(started.last?.payload.firstStatus?["breakStatus"]?["breakId"] == "mid")
        harness.advance(to: 33)
        #expect(harness.status?["currentTime"] == 30)
        #expect(harness.status?["breakStatus"]?["currentBreakClipTime"] == 3)
        harness.advance(to: 35)
        #expect(harness.status?["breakStatus"] == nil)
        #expect(harness.status?["currentTime"] == 30)
        harness.advance(to: 40)
        #expect(harness.status?["currentTime"] == 35)

        // Seeking back before the break does not play it again.
        harness.send("SEEK", ["currentTime": 20])
        harness.advance(to: 55)
        #expect(harness.status?["breakStatus"] == nil)
        #expect(harness.status?["currentTime"] == 35)
    }

    @Test func seekingOverAMidRollSkipsIt() {
        let media = Fixture.movie(
            duration: 100,
            [
                "breakClips": [["id": "bc", "duration": 5]],
                "breaks": [["id": "mid", "breakClipIds": ["bc"], "position": 30]],
            ]
        )
        var harness = Fixture.loaded(media)
        harness.send("SEEK", ["currentTime": 50])
        harness.advance(to: 10)
        #expect(harness.status?["breakStatus"] == nil)
        #expect(harness.status?["currentTime"] == 60)
        #expect(harness.send("SEEK", ["currentTime": 10]).status?["breakStatus"] == nil)
    }

    @Test func postRollPlaysBeforeFinished() throws {
        let media = Fixture.movie(
            duration: 100,
            [
                "breakClips": [["id": "bc", "duration": 5]],
                "breaks": [["id": "post", "breakClipIds": ["bc"], "position": -1]],
            ]
        )
        var harness = Fixture.loaded(media)
        harness.advance(to: 100)
        let status = try #require(harness.status)
        #expect(status["playerState"] == "PLAYING")
        #expect(status["breakStatus"]?["breakId"] == "post")
        #expect(status["currentTime"] == 100)

        let finished = harness.advance(to: 105)
        #expect(finished.last?.payload.firstStatus?["playerState"] == "IDLE")
        #expect(finished.last?.payload.firstStatus?["idleReason"] == "FINISHED")
        #expect(harness.status?["breakStatus"] == nil)
    }
}

@Suite("MediaPlayer: errors")
struct MediaPlayerErrorTests {
    @Test(arguments: [
        "PLAY", "PAUSE", "STOP", "SEEK", "SET_VOLUME", "SET_PLAYBACK_RATE", "EDIT_TRACKS_INFO", "QUEUE_INSERT",
        "QUEUE_REMOVE", "QUEUE_UPDATE", "QUEUE_NEXT", "QUEUE_PREV", "QUEUE_GET_ITEM_IDS", "QUEUE_GET_ITEMS", "SKIP_AD",
        "STORE_SESSION",
    ])
    func commandsWithoutASessionAreInvalidPlayerState(type: String) {
        var harness = PlayerHarness()
        let outcome = harness.send(type, ["mediaSessionId": 1, "currentTime": 3])
        #expect(outcome.reply == ["type": "INVALID_PLAYER_STATE", "requestId": 1])
        #expect(outcome.deliveries.count == 1)
    }

    @Test func wrongMediaSessionId() {
        var harness = Fixture.loaded()
        for given: JSONValue in [99, "bogus", "1", 1.5, true] {
            let outcome = harness.send("PAUSE", ["mediaSessionId": given])
            #expect(outcome.reply["reason"] == "INVALID_MEDIA_SESSION_ID", "\(given)")
            #expect(harness.status?["playerState"] == "PLAYING")
        }
        // Absent or null: the current session, as lenient receivers take it.
        #expect(harness.send("PAUSE", ["mediaSessionId": .null]).status?["playerState"] == "PAUSED")
        #expect(
            harness.sendRaw(["type": "PLAY", "requestId": 50]).last?.payload.firstStatus?["playerState"] == "PLAYING"
        )
    }

    /// Explicit nulls in a LOAD are absent values: the item's defaults, not a null in the status.
    @Test func nullsInALoadAreDefaults() {
        var harness = PlayerHarness()
        let outcome = harness.send(
            "LOAD",
            ["media": Fixture.movie(), "autoplay": .null, "activeTrackIds": .null, "currentTime": .null]
        )
        #expect(outcome.status?["playerState"] == "PLAYING")
        #expect(outcome.status?["items"]?[0]?["autoplay"] == true)
        #expect(outcome.status?["items"]?[0]?["activeTrackIds"] == nil)
    }

    /// An empty `contentUrl` does not hide a usable `contentId` (and the other way round).
    @Test func anEmptyContentUrlFallsBackToTheContentId() {
        var media = Fixture.movie().objectValue!
        media["contentUrl"] = ""
        var harness = PlayerHarness()
        #expect(harness.send("LOAD", ["media": .object(media)]).status?["playerState"] == "PLAYING")
        media["contentId"] = ""
        #expect(harness.send("LOAD", ["media": .object(media)]).reply["reason"] == "INVALID_PARAMS")
    }

    @Test func unknownOrMissingTypeIsInvalidCommand() {
        var harness = Fixture.loaded()
        #expect(
            harness.send("DANCE").reply == ["type": "INVALID_REQUEST", "reason": "INVALID_COMMAND", "requestId": 2]
        )
        let untyped = harness.sendRaw(["requestId": 9])
        #expect(untyped.map(\.payload) == [["type": "INVALID_REQUEST", "reason": "INVALID_COMMAND", "requestId": 9]])
    }

    @Test func unknownTypeWithoutASessionIsStillInvalidCommand() {
        var harness = PlayerHarness()
        let outcome = harness.send("DANCE")
        #expect(outcome.reply == ["type": "INVALID_REQUEST", "reason": "INVALID_COMMAND", "requestId": 1])
    }

    @Test func pauseOnALiveStreamThatCannotPauseIsNotSupported() {
        var harness = PlayerHarness(settings: Player.Settings(liveStreamsCannotPause: true))
        harness.send("LOAD", ["media": Fixture.movie(duration: nil, ["streamType": "LIVE"])])
        #expect(harness.send("PAUSE").reply["reason"] == "NOT_SUPPORTED")
        #expect(harness.send("SEEK", ["currentTime": 5]).reply["reason"] == "NOT_SUPPORTED")
    }

    @Test func playAfterFinishedIsInvalidPlayerState() {
        var harness = Fixture.loaded(Fixture.movie(duration: 10))
        harness.advance(to: 20)
        #expect(harness.status?["idleReason"] == "FINISHED")
        #expect(harness.send("PLAY").reply["type"] == "INVALID_PLAYER_STATE")
        #expect(harness.send("PAUSE").reply["type"] == "INVALID_PLAYER_STATE")
        #expect(harness.send("SEEK", ["currentTime": 1]).reply["type"] == "INVALID_PLAYER_STATE")
    }
}

@Suite("MediaPlayer: time")
struct MediaPlayerTimeTests {
    @Test func itemsAutoplayInOrderThenFinish() throws {
        var harness = Fixture.queued()
        #expect(harness.player.nextDeadline(after: 0) == 10)
        let second = harness.advance(to: 10)
        let secondStatus = try #require(second.last?.payload.firstStatus)
        #expect(secondStatus["currentItemId"] == 2)
        #expect(secondStatus["playerState"] == "PLAYING")
        #expect(secondStatus["currentTime"] == 0)
        #expect(secondStatus["media"] == Fixture.song(2, duration: 20))
        #expect(second.last?.excluded == .some(nil))

        // Everything else in one jump: item 3 starts at 30 and ends at 60.
        let rest = harness.advance(to: 100)
        let states = rest.compactMap(\.payload.firstStatus)
        #expect(states.map { $0["currentItemId"] } == [3, 3])
        #expect(states.map { $0["playerState"] } == ["PLAYING", "IDLE"])
        #expect(states.last?["idleReason"] == "FINISHED")
        #expect(states.last?["currentTime"] == 30)
        #expect(harness.player.nextDeadline(after: 100) == nil)
    }

    @Test func repeatSingleReplaysTheItem() {
        var harness = Fixture.queued(repeatMode: "REPEAT_SINGLE")
        let replayed = harness.advance(to: 10)
        #expect(replayed.last?.payload.firstStatus?["currentItemId"] == 1)
        #expect(replayed.last?.payload.firstStatus?["currentTime"] == 0)
        harness.advance(to: 13)
        #expect(harness.status?["currentItemId"] == 1)
        #expect(harness.status?["currentTime"] == 3)
        #expect(harness.status?["playerState"] == "PLAYING")
    }

    @Test func repeatAllWrapsToTheFirstItem() {
        var harness = Fixture.queued(repeatMode: "REPEAT_ALL")
        harness.advance(to: 60)
        #expect(harness.status?["currentItemId"] == 1)
        harness.advance(to: 65)
        #expect(harness.status?["currentItemId"] == 1)
        #expect(harness.status?["currentTime"] == 5)
        #expect(harness.status?["playerState"] == "PLAYING")
    }

    @Test func repeatAllAndShuffleKeepsPlaying() {
        var harness = Fixture.queued(repeatMode: "REPEAT_ALL_AND_SHUFFLE")
        harness.advance(to: 60)
        #expect(harness.status?["playerState"] == "PLAYING")
        #expect(Set(harness.itemIds) == [1, 2, 3])
    }

    @Test func preloadTimeAnnouncesThePreloadedItem() throws {
        var harness = PlayerHarness()
        harness.send(
            "QUEUE_LOAD",
            [
                "items": [
                    Fixture.item(Fixture.song(1, duration: 10)),
                    Fixture.item(Fixture.song(2, duration: 20), ["preloadTime": 3]),
                ]
            ]
        )
        #expect(harness.status?["preloadedItemId"] == nil)
        #expect(harness.player.nextDeadline(after: 0) == 7)
        let preload = harness.advance(to: 7)
        #expect(preload.count == 1)
        #expect(preload.first?.payload.firstStatus?["preloadedItemId"] == 2)
        #expect(preload.first?.payload.firstStatus?["currentItemId"] == 1)
        #expect(harness.player.nextDeadline(after: 7) == 10)

        harness.advance(to: 10)
        #expect(harness.status?["currentItemId"] == 2)
        #expect(harness.status?["preloadedItemId"] == nil)
    }

    @Test func nextItemWithAutoplayFalseStartsPaused() {
        var harness = PlayerHarness()
        harness.send(
            "QUEUE_LOAD",
            [
                "items": [
                    Fixture.item(Fixture.song(1, duration: 10)),
                    Fixture.item(Fixture.song(2, duration: 20), ["autoplay": false]),
                ]
            ]
        )
        harness.advance(to: 10)
        #expect(harness.status?["currentItemId"] == 2)
        #expect(harness.status?["playerState"] == "PAUSED")
        #expect(harness.status?["currentTime"] == 0)
        #expect(harness.player.nextDeadline(after: 10) == nil)
        harness.advance(to: 50)
        #expect(harness.status?["currentTime"] == 0)
    }

    @Test func playbackRateScalesTheEnd() {
        var harness = Fixture.loaded(Fixture.movie(duration: 30))
        harness.send("SET_PLAYBACK_RATE", ["playbackRate": 1.5])
        #expect(harness.player.nextDeadline(after: 0) == 20)
        harness.advance(to: 20)
        #expect(harness.status?["idleReason"] == "FINISHED")
        #expect(harness.status?["currentTime"] == 30)
    }

    @Test func defaultDurationAppliesToBufferedMediaWithoutOne() {
        var settings = Player.Settings()
        settings.defaultDuration = 42
        var harness = PlayerHarness(settings: settings)
        harness.send("LOAD", ["media": Fixture.movie(duration: nil)])
        #expect(harness.player.nextDeadline(after: 0) == 42)
    }

    @Test func liveStreamsNeverEndAndPauseAndSeekLikeTheDefaultMediaReceiver() throws {
        var harness = Fixture.loaded(Fixture.movie(duration: nil, ["streamType": "LIVE"]))
        let status = try #require(harness.status)
        #expect(status.commands & Bits.basic == Bits.basic, "12303 as the reference's LIVE example")
        #expect(status.commands & (Bits.streamVolume | Bits.streamMute) == Bits.streamVolume | Bits.streamMute)
        #expect(harness.player.nextDeadline(after: 0) == nil)
        #expect(harness.advance(to: 10_000).isEmpty)
        #expect(harness.status?["playerState"] == "PLAYING")
        #expect(harness.status?["currentTime"] == 10_000)
        #expect(harness.send("PAUSE").status?["playerState"] == "PAUSED")
        #expect(harness.send("SEEK", ["relativeTime": -30]).status?["currentTime"] == 9_970)
    }

    @Test func liveStreamsThatCannotPauseOfferNeitherPauseNorSeek() throws {
        var harness = PlayerHarness(settings: Player.Settings(liveStreamsCannotPause: true))
        harness.send("LOAD", ["media": Fixture.movie(duration: nil, ["streamType": "LIVE"])])
        let status = try #require(harness.status)
        #expect(status.commands & (Bits.pause | Bits.seek) == 0)
        #expect(status.commands & (Bits.streamVolume | Bits.streamMute) == Bits.streamVolume | Bits.streamMute)
        // BUFFERED media still pauses.
        harness.send("LOAD", ["media": Fixture.movie()])
        #expect(harness.send("PAUSE").status?["playerState"] == "PAUSED")
    }
}

@Suite("MediaPlayer: stream transfer")
struct MediaPlayerSessionStateTests {
    @Test func storeSessionAndResumeSession() throws {
        var source = Fixture.queued(repeatMode: "REPEAT_ALL")
        source.send("QUEUE_NEXT")
        source.advance(to: 4)
        source.send("PAUSE")
        let stored = source.send("STORE_SESSION")
        #expect(stored.reply["type"] == "SESSION_STATE")
        let sessionState = try #require(stored.reply["sessionState"])
        let loadRequest = try #require(sessionState["loadRequestData"])
        #expect(loadRequest["currentTime"] == 4)
        #expect(loadRequest["autoplay"] == false)
        #expect(loadRequest["media"] == Fixture.song(2, duration: 20))
        #expect(loadRequest["queueData"]?["startIndex"] == 1)
        #expect(loadRequest["queueData"]?["repeatMode"] == "REPEAT_ALL")
        #expect(stored.broadcasts.isEmpty)

        var destination = PlayerHarness()
        let resumed = destination.send("RESUME_SESSION", ["sessionState": sessionState])
        let status = try #require(resumed.status)
        #expect(status["playerState"] == "PAUSED")
        #expect(status["currentTime"] == 4)
        #expect(status["media"] == Fixture.song(2, duration: 20))
        #expect(status["repeatMode"] == "REPEAT_ALL")
        #expect(destination.itemIds.count == 3)
        #expect(status.commands & 262_144 != 0, "STREAM_TRANSFER is advertised")

        #expect(destination.send("RESUME_SESSION", ["sessionState": [:]]).reply["reason"] == "INVALID_PARAMS")
    }
}

@Suite("MediaPlayer: status")
struct MediaPlayerStatusTests {
    @Test func supportedMediaCommandsForBufferedMedia() throws {
        let status = try #require(Fixture.loaded().status)
        #expect(status.commands & Bits.basic == Bits.basic)
        #expect(status.commands & (Bits.queueNext | Bits.queuePrev | Bits.skipAd) == 0)
    }

    @Test func queueNavigationBitsOnlyWhereThereIsSomewhereToGo() {
        var harness = Fixture.queued()
        #expect(harness.status.map { $0.commands & (Bits.queueNext | Bits.queuePrev) } == Bits.queueNext)
        harness.send("QUEUE_NEXT")
        #expect(
            harness.status.map { $0.commands & (Bits.queueNext | Bits.queuePrev) } == Bits.queueNext | Bits.queuePrev
        )
        harness.send("QUEUE_NEXT")
        #expect(harness.status.map { $0.commands & (Bits.queueNext | Bits.queuePrev) } == Bits.queuePrev)
        harness.send("QUEUE_UPDATE", ["repeatMode": "REPEAT_ALL"])
        #expect(
            harness.status.map { $0.commands & (Bits.queueNext | Bits.queuePrev) } == Bits.queueNext | Bits.queuePrev
        )
    }

    @Test func videoInfo() {
        #expect(Fixture.loaded().status?["videoInfo"] == ["width": 1920, "height": 1080, "hdrType": "sdr"])
        let hdr: JSONValue = ["width": 3840, "height": 2160, "hdrType": "hdr"]
        #expect(Fixture.loaded(Fixture.movie(["customData": ["videoInfo": hdr]])).status?["videoInfo"] == hdr)
        #expect(Fixture.loaded(Fixture.song(1, duration: 10)).status?["videoInfo"] == nil)
    }

    @Test func getStatusOptions() throws {
        var harness = Fixture.loaded()
        let full = try #require(harness.send("GET_STATUS").status)
        #expect(full["media"]?["metadata"] != nil)
        #expect(full["items"] != nil)

        let noMetadata = try #require(harness.send("GET_STATUS", ["options": 1]).status)
        #expect(noMetadata["media"]?["metadata"] == nil)
        #expect(noMetadata["media"]?["contentId"] == .string(Fixture.movieURL))
        #expect(noMetadata["items"] != nil)

        let noItems = try #require(harness.send("GET_STATUS", ["options": 2]).status)
        #expect(noItems["items"] == nil)
        #expect(noItems["media"]?["metadata"] != nil)

        let getStatus = harness.send("GET_STATUS")
        #expect(getStatus.broadcasts.isEmpty, "GET_STATUS changes nothing")
    }
}
