import CastDiscovery
import CastMedia
import CastReceiver
import CastService
import CastSession
import CastTransport
import Foundation
import Testing

@Suite("castd's session, track, queue and channel operations")
struct CommandAPITests {
    @Test func joiningWhatAnotherSenderPlaysThenLeavingItPlaying() async throws {
        try await withHub { hub, emulator in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                // Another sender starts the media; castd only joins it.
                let other = try await otherSender(playing: emulator)
                defer { Task { await other.sessionManager.endSession(stopCasting: false) } }

                let joined = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/session")
                #expect(joined.status == 200, "\(joined.body)")
                #expect(joined.json?["status"]?["media"]?["title"]?.stringValue == "Other")

                let paused = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media/pause")
                #expect(paused.json?["status"]?["media"]?["playerState"]?.stringValue == "PAUSED")

                let left = try await TestHTTP.send(port: port, "DELETE", "/v1/devices/\(id)/session")
                #expect(left.status == 200, "\(left.body)")
                #expect(left.json?["status"]?["app"]?["id"]?.stringValue == "CC1AD845", "the app keeps running")
                #expect(emulator.devices[0].runningApp.appID == "CC1AD845")
            }
        }
    }

    /// Several triggers at once: a seek that a newer one replaced after it was sent is answered with the state it
    /// leads to (the device has it: a position one of the seeks went to), not 500 `CancellationError()` nor the
    /// state when it was replaced (before any seek was answered).
    @Test func parallelSeeksAreAllAnswered() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                let loaded = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"url":"http://media.example/films/long.mp4"}"#
                )
                #expect(loaded.status == 200, "\(loaded.body)")
                let replies = try await TestHTTP.replies(
                    port: port,
                    stride(from: 10, through: 80, by: 10).map {
                        ("POST", "/v1/devices/\(id)/media/seek?position=\($0)", nil)
                    }
                )
                #expect(replies.allSatisfy { $0.status == 200 }, "\(replies.map(\.status))")
                for reply in replies {
                    let position = reply.json?["status"]?["media"]?["position"]?.doubleValue ?? 0
                    #expect(position >= 9, "\(reply.body)")
                }
            }
        }
    }

    /// A rate outside 0.5…2 is a 400 naming `rate`; a command the receiver refuses for the media's state
    /// (`next` at the queue's end: INVALID_REQUEST END_OF_QUEUE) is a 409, not a bad request.
    @Test func badRatesAndReceiverRefusalsAreTold() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                let loaded = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"url":"http://media.example/films/one.mp4"}"#
                )
                #expect(loaded.status == 200, "\(loaded.body)")
                for rate in ["100", "0.1", "0"] {
                    let reply = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media/rate?rate=\(rate)")
                    #expect(reply.status == 400, "\(reply.body)")
                    #expect(reply.json?["field"]?.stringValue == "rate", "\(reply.body)")
                }
                let faster = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media/rate?rate=1.5")
                #expect(faster.status == 200, "\(faster.body)")
                let next = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media/next")
                #expect(next.status == 409, "\(next.body)")
            }
        }
        let refused = { (reason: String?) in
            CastServiceError(CastMediaError(.invalidRequest, "the receiver rejected SEEK", receiverReason: reason))
                .httpStatus
        }
        #expect(refused("END_OF_QUEUE") == 409)
        #expect(refused("INVALID_MEDIA_SESSION_ID") == 409)
        #expect(refused("INVALID_PARAMS") == 400)
        #expect(refused(nil) == 400)
    }

    /// Commands at once on a device castd has no session with yet: one joins or launches, the others wait and use
    /// that session (they failed with `sessionInProgress`, 409 or 502).
    @Test func parallelCommandsShareTheSessionOneOfThemStarts() async throws {
        try await withHub { hub, emulator in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                let loads = try await TestHTTP.statuses(
                    port: port,
                    (0..<3).map {
                        ("POST", "/v1/devices/\(id)/media", #"{"url":"http://media.example/films/\#($0).mp4"}"#)
                    }
                )
                #expect(loads.allSatisfy { $0 == 200 }, "\(loads)")
                #expect(emulator.devices[0].launches.count == 1, "one launch, shared")
                let left = try await TestHTTP.send(port: port, "DELETE", "/v1/devices/\(id)/session")
                #expect(left.status == 200)
                let pauses = try await TestHTTP.statuses(
                    port: port,
                    Array(repeating: ("POST", "/v1/devices/\(id)/media/pause", nil), count: 3)
                )
                #expect(pauses.allSatisfy { $0 == 200 }, "\(pauses)")
            }
        }
    }

    @Test func tracksAndTheirStyle() async throws {
        try await withHub { hub, emulator in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                let other = try await otherSender(playing: emulator)
                defer { Task { await other.sessionManager.endSession(stopCasting: false) } }
                _ = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/session")

                let on = try await TestHTTP.send(
                    port: port,
                    "PUT",
                    "/v1/devices/\(id)/tracks",
                    json: ##"{"activeTrackIds":[1],"textStyle":{"fontScale":1.5,"foregroundColor":"#FFFF00FF"}}"##
                )
                #expect(on.status == 200, "\(on.body)")
                let media = on.json?["status"]?["media"]
                #expect(media?["activeTrackIds"]?.arrayValue?.compactMap(\.intValue) == [1])
                let track = media?["tracks"]?.arrayValue?.first
                #expect(track?["type"]?.stringValue == "TEXT")
                #expect(track?["language"]?.stringValue == "fr")

                let off = try await TestHTTP.send(
                    port: port,
                    "PUT",
                    "/v1/devices/\(id)/tracks",
                    json: #"{"activeTrackIds":[]}"#
                )
                #expect(off.json?["status"]?["media"]?["activeTrackIds"]?.arrayValue?.isEmpty == true)

                let badColor = try await TestHTTP.send(
                    port: port,
                    "PUT",
                    "/v1/devices/\(id)/tracks",
                    json: #"{"activeTrackIds":[1],"textStyle":{"edgeColor":"yellow"}}"#
                )
                #expect(badColor.status == 400)
                #expect(badColor.json?["field"]?.stringValue == "textStyle.edgeColor")
            }
        }
    }

    @Test func aQueueIsLoadedReadEditedAndRepeated() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                let loaded = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/queue",
                    json: """
                        {"items":[{"url":"http://media.example/one.mp3","title":"One"},
                        {"url":"http://media.example/two.mp3","title":"Two"},
                        {"url":"http://media.example/three.mp3","title":"Three"}],
                        "startIndex":1,"repeatMode":"REPEAT_ALL"}
                        """
                )
                #expect(loaded.status == 200, "\(loaded.body)")
                #expect(loaded.json?["status"]?["media"]?["title"]?.stringValue == "Two")
                #expect(loaded.json?["status"]?["media"]?["repeatMode"]?.stringValue == "REPEAT_ALL")

                var queue = try await titles(port: port, id: id)
                #expect(queue.map(\.title) == ["One", "Two", "Three"])

                let inserted = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/queue/items",
                    json:
                        #"{"items":[{"url":"http://media.example/zero.mp3","title":"Zero"}],"insertBefore":\#(queue[0].id)}"#
                )
                #expect(inserted.status == 200, "\(inserted.body)")
                queue = try await titles(port: port, id: id)
                #expect(queue.map(\.title) == ["Zero", "One", "Two", "Three"])

                let moved = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/queue/items/\(queue[0].id)/move",
                    json: "{}"
                )
                #expect(moved.status == 200, "\(moved.body)")
                let removed = try await TestHTTP.send(
                    port: port,
                    "DELETE",
                    "/v1/devices/\(id)/queue/items/\(queue[1].id)"
                )
                #expect(removed.status == 200, "\(removed.body)")
                queue = try await titles(port: port, id: id)
                #expect(queue.map(\.title) == ["Two", "Three", "Zero"])

                let jumped = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/queue/items/\(queue[2].id)/play"
                )
                #expect(jumped.json?["status"]?["media"]?["title"]?.stringValue == "Zero")
                #expect(jumped.json?["status"]?["media"]?["currentItemId"]?.intValue == queue[2].id)

                let single = try await TestHTTP.send(
                    port: port,
                    "PUT",
                    "/v1/devices/\(id)/queue/repeat",
                    json: #"{"mode":"REPEAT_SINGLE"}"#
                )
                #expect(single.json?["status"]?["media"]?["repeatMode"]?.stringValue == "REPEAT_SINGLE")
            }
        }
    }

    @Test func badQueuesNameTheirField() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                let start = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/queue",
                    json: #"{"items":[{"url":"http://media.example/one.mp3"}],"startIndex":3}"#
                )
                #expect(start.status == 400)
                #expect(start.json?["field"]?.stringValue == "startIndex")

                let both = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/queue",
                    json: #"{"items":[{"url":"http://media.example/one.mp3"},{"url":"http://a/b.mp3","file":"b.mp3"}]}"#
                )
                #expect(both.status == 400)
                #expect(both.json?["field"]?.stringValue == "items[1].file")

                let file = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/queue",
                    json: #"{"items":[{"file":"/etc/passwd"}]}"#
                )
                #expect(file.status == 403)
                #expect(file.json?["code"]?.stringValue == "forbiddenPath")

                let idle = try await TestHTTP.send(port: port, "GET", "/v1/devices/\(id)/queue")
                #expect(idle.status == 409)
                #expect(idle.json?["code"]?.stringValue == "noApplicationRunning")
            }
        }
    }

    @Test func customChannelMessagesAndReplies() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                let launched = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/app",
                    json: #"{"appId":"E0C40001"}"#
                )
                #expect(launched.status == 200, "\(launched.body)")
                #expect(launched.json?["status"]?["app"]?["name"]?.stringValue == "Echo")

                let namespace = "urn:x-cast:com.example.echo"
                let echoed = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/channels/\(namespace)",
                    json: #"{"message":{"hello":"castd"},"waitForReply":true}"#
                )
                #expect(echoed.status == 200, "\(echoed.body)")
                #expect(echoed.json?["reply"]?.stringValue == #"{"hello":"castd"}"#)

                let text = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/channels/\(namespace)",
                    json: #"{"message":"ping"}"#
                )
                #expect(text.json?["sent"]?.boolValue == true)
                #expect(text.json?["reply"] == nil)

                let unlisted = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/channels/urn:x-cast:com.example.other",
                    json: #"{"message":"ping"}"#
                )
                #expect(unlisted.status == 409, "\(unlisted.body)")
                #expect(unlisted.json?["field"]?.stringValue == "namespace")

                let invalid = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/channels/not-a-namespace",
                    json: #"{"message":"ping"}"#
                )
                #expect(invalid.status == 400)
                #expect(invalid.json?["code"]?.stringValue == "invalidNamespace")

                // Loading media afterwards launches the Default Media Receiver in place of the echo app.
                let loaded = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"url":"http://media.example/a.mp4"}"#
                )
                #expect(loaded.json?["status"]?["app"]?["id"]?.stringValue == "CC1AD845", "\(loaded.body)")

                let badApp = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/app",
                    json: #"{"appId":"../x"}"#
                )
                #expect(badApp.status == 400)
                #expect(badApp.json?["field"]?.stringValue == "appId")
            }
        }
    }

    @Test func anAdBreakIsInTheStateAndSkipAdWaitsUntilTheClipAllowsIt() async throws {
        try await withHub { hub, emulator in
            try await withServer(hub) { port in
                var media = MediaInformation(contentID: "http://media.example/with-ads.mp4", contentType: "video/mp4")
                media.duration = 600
                media.adBreakClips = [AdBreakClipInfo(id: "clip-1", duration: 30, whenSkippable: 20)]
                media.adBreaks = [AdBreakInfo(id: "pre-roll", breakClipIDs: ["clip-1"], position: 0)]
                let other = try await otherSender(playing: emulator, media: media)
                defer { Task { await other.sessionManager.endSession(stopCasting: false) } }
                let id = hub.devices[0].device.id

                let joined = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/session")
                #expect(joined.status == 200, "\(joined.body)")
                let adBreak = joined.json?["status"]?["media"]?["adBreak"]
                #expect(adBreak?["breakId"]?.stringValue == "pre-roll")
                #expect(adBreak?["clipId"]?.stringValue == "clip-1")
                #expect(adBreak?["skippable"]?.boolValue == false)
                #expect((adBreak?["skippableIn"]?.doubleValue ?? 0) > 10, "\(joined.body)")

                let early = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media/skipAd")
                #expect(early.status == 409, "\(early.body)")

                // Without a break the state says so.
                var events = hub.events().makeAsyncIterator()
                let plainMedia = MediaInformation(contentID: "http://media.example/plain.mp4", contentType: "video/mp4")
                _ = try await other.sessionManager.currentSession?.remoteMediaClient?.loadMedia(plainMedia).response()
                while let event = await events.next() {
                    if case .status(let activity) = event.change,
                        activity.mediaStatus?.media?.contentID == plainMedia.contentID
                    {
                        break
                    }
                }
                let plain = try await TestHTTP.send(port: port, "GET", "/v1/devices/\(id)")
                #expect(plain.json?["status"]?["media"]?["contentId"]?.stringValue == "http://media.example/plain.mp4")
                #expect(plain.json?["status"]?["media"]?["adBreak"] == nil, "\(plain.body)")
            }
        }
    }

    /// A separate sender (its own context and state directory) that plays `media`, by default media with a French
    /// subtitle track.
    private func otherSender(
        playing emulator: CastReceiverEmulator,
        media: MediaInformation? = nil
    ) async throws -> CastContext {
        var options = CastOptions()
        options.stateDirectory = nil
        options.heartbeat.pingInterval = nil
        let context = CastContext(options: options)
        let device = CastDevice.staticDevice(host: "127.0.0.1", port: emulator.devices[0].port)
        let session = try await context.sessionManager.startSession(with: device)
        var subtitled = MediaInformation(contentID: "http://media.example/other.mp4", contentType: "video/mp4")
        subtitled.metadata = .generic(title: "Other")
        subtitled.tracks = [.subtitles(id: 1, url: "http://media.example/other.fr.vtt", language: "fr")]
        _ = try await session.remoteMediaClient?.loadMedia(media ?? subtitled).response()
        return context
    }

    private func titles(port: Int, id: String) async throws -> [(id: Int, title: String)] {
        let reply = try await TestHTTP.send(port: port, "GET", "/v1/devices/\(id)/queue")
        #expect(reply.status == 200, "\(reply.body)")
        return (reply.json?["items"]?.arrayValue ?? []).compactMap { item in
            guard let id = item["itemId"]?.intValue, let title = item["title"]?.stringValue else { return nil }
            return (id, title)
        }
    }
}
