import CastDiscovery
import CastMedia
import CastReceiver
import CastSession
import CastTransport
import Testing

/// A full session against the emulator over TLS on loopback: discover-less start by host and port, launch, load
/// with metadata, tracks and ad breaks, every media command, queue operations, playback to the end, stop, end.
/// Media time moves only with the manual clock.
@Suite struct FullSessionTests {
    /// Media with a WebVTT subtitle track, an audio track and a pre-roll whose clip is skippable after 5 s.
    static func adMedia() -> MediaInformation {
        var media = sampleMedia(title: "With Ads", duration: 120)
        media.tracks = [
            .subtitles(id: 1, url: "https://example.com/en.vtt", language: "en-US", name: "English"),
            MediaTrack(
                id: 2,
                kind: .audio,
                contentID: "https://example.com/en.m4a",
                contentType: "audio/mp4",
                name: "English",
                language: "en"
            ),
        ]
        media.adBreakClips = [
            AdBreakClipInfo(
                id: "bc1",
                contentID: "https://ads.example.com/ad1.mp4",
                contentType: "video/mp4",
                duration: 15,
                title: "Ad",
                whenSkippable: 5
            )
        ]
        media.adBreaks = [AdBreakInfo(id: "b1", breakClipIDs: ["bc1"], position: 0)]
        return media
    }

    static func style() -> TextTrackStyle {
        var style = TextTrackStyle()
        style.backgroundColor = "#00000000"
        style.foregroundColor = "#FFFFFFFF"
        style.edgeType = "OUTLINE"
        style.edgeColor = "#000000FF"
        style.fontScale = 1.25
        style.fontGenericFamily = "SANS_SERIF"
        return style
    }

    @Test func discoverLessStartLaunchesTheReceiverApp() async throws {
        try await withCastReceiverEmulator(devices: [DeviceConfiguration(friendlyName: "Den", port: 0)]) { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: testOptions())
            #expect(context.sessionManager.castState == .noDevicesAvailable)
            #expect(!context.sessionManager.hasConnectedSession)
            let states = context.sessionManager.castStateUpdates()
            let events = context.sessionManager.events()

            let target = CastDevice.staticDevice(host: "127.0.0.1", port: device.port, name: "Den")
            let session = try await context.sessionManager.startSession(with: target)
            #expect(try await nextEvent(events, "willStart").name == "willStart")
            guard case .didStart(let started) = try await nextEvent(events, "didStart") else { return }
            #expect(started === session)
            #expect(context.sessionManager.currentSession === session)
            #expect(context.sessionManager.hasConnectedSession)
            #expect(try await next(states) { $0 == .connecting } == .connecting)
            #expect(try await next(states) { $0 == .connected } == .connected)

            #expect(session.application.applicationID == CastOptions.defaultMediaReceiverApplicationID)
            #expect(session.application.namespaces.contains(CastNamespace.media))
            #expect(session.application.name == "Default Media Receiver")
            #expect(!session.application.isIdleScreen)
            #expect(session.transportID == device.runningApp.transportID)
            #expect(session.sessionID == device.runningApp.sessionID)
            #expect(session.device.host == "127.0.0.1")
            #expect(session.remoteMediaClient != nil)
            let launch = try #require(device.launches.last)
            #expect(launch.appID == "CC1AD845")
            #expect(launch.language == "en-US")
            #expect(launch.supportedAppTypes == ["WEB"])
            #expect(launch.credentials == nil)

            // A second start on the same manager is refused while the first runs.
            await #expect {
                try await context.sessionManager.startSession(with: target)
            } throws: { ($0 as? CastSessionError)?.code == .sessionInProgress }
            #expect(context.sessionManager.currentSession === session)

            await context.sessionManager.endSession(stopCasting: true)
            #expect(try await next(states) { $0 == .notConnected } == .notConnected)
        }
    }

    @Test func loadWithMetadataTracksAndAdBreaks() async throws {
        try await withStartedSession { fixture in
            let client = fixture.client
            var request = LoadRequestData(media: Self.adMedia())
            request.activeTrackIDs = [1]
            request.customData = ["origin": "full-session-test"]
            let loaded = try #require(try await client.load(request).response())

            #expect(loaded.playerState == .playing)
            #expect(loaded.media?.contentID == "https://example.com/bbb.mp4")
            #expect(loaded.media?.metadata?.kind == .movie)
            #expect(loaded.media?.metadata?.title == "With Ads")
            #expect(loaded.media?.metadata?.studio == "Blender Foundation")
            #expect(
                loaded.media?.metadata?.images == [
                    WebImage(url: "https://example.com/bbb.jpg", width: 480, height: 270)
                ]
            )
            #expect(loaded.media?.duration == 120)
            #expect(loaded.media?.tracks == Self.adMedia().tracks)
            let subtitles = try #require(loaded.media?.tracks?.first { $0.id == 1 })
            #expect(subtitles.kind == .text)
            #expect(subtitles.subtype == .subtitles)
            #expect(subtitles.contentType == "text/vtt")
            #expect(subtitles.language == "en-US")
            #expect(loaded.activeTrackIDs == [1])
            #expect(loaded.customData == ["origin": "full-session-test"])
            #expect(loaded.videoInfo == VideoInfo(width: 1920, height: 1080, hdrType: "sdr"))
            #expect(loaded.media?.adBreaks == Self.adMedia().adBreaks)
            #expect(loaded.media?.adBreakClips?.first?.whenSkippable == 5)

            // The pre-roll plays first; its clip is not skippable yet.
            let adStatus = try #require(loaded.adBreakStatus)
            #expect(loaded.isPlayingAd)
            #expect(adStatus.breakID == "b1")
            #expect(adStatus.breakClipID == "bc1")
            #expect(adStatus.whenSkippable == 5)
            #expect(adStatus.currentBreakClipTime == 0)
            #expect(!adStatus.isSkippable)
            #expect(adStatus.secondsUntilSkippable == 5)
            #expect(!loaded.supportedMediaCommands.contains(.skipAd))
            #expect(client.approximateStreamPosition == 0, "content time does not move during an ad")

            let early = client.skipAd()
            #expect(localFailure(of: early) == .notSupported)

            fixture.clock.advance(by: .seconds(6))
            let skippable = try #require(try await client.requestStatus().response())
            #expect(skippable.adBreakStatus?.currentBreakClipTime == 6)
            #expect(skippable.adBreakStatus?.isSkippable == true)
            #expect(skippable.adBreakStatus?.secondsUntilSkippable == 0)
            #expect(skippable.supportedMediaCommands.contains(.skipAd))
            #expect(skippable.currentTime == 0)

            let skipped = try #require(try await client.skipAd().response())
            #expect(skipped.adBreakStatus == nil)
            #expect(!skipped.isPlayingAd)
            #expect(skipped.playerState == .playing)
            #expect(skipped.currentTime == 0)
            #expect(!skipped.supportedMediaCommands.contains(.skipAd))

            fixture.clock.advance(by: .seconds(4))
            let content = try #require(try await client.requestStatus().response())
            #expect(content.currentTime == 4)
            #expect(content.adBreakStatus == nil)

            // Tracks: none, both, an unknown one (rejected by the receiver).
            let none = try await client.setActiveTrackIDs([]).response()
            #expect(none?.activeTrackIDs == [])
            let both = try await client.setActiveTrackIDs([1, 2]).response()
            #expect(both?.activeTrackIDs == [1, 2])
            let unknown = await mediaError(of: client.setActiveTrackIDs([99]))
            #expect(unknown?.code == .invalidRequest)
            #expect(unknown?.receiverReason == "INVALID_PARAMS")

            let styled = try await client.setTextTrackStyle(Self.style()).response()
            #expect(styled?.media?.textTrackStyle == Self.style())
            #expect(styled?.activeTrackIDs == [1, 2])
        }
    }

    @Test func transportControlsVolumeAndRate() async throws {
        try await withStartedSession { fixture in
            let client = fixture.client
            let rate = PlaybackRateController(client: client)
            #expect(rate.playbackRate == 1)
            #expect(!rate.isInputEnabled, "no media session yet")

            let loaded = try #require(try await client.loadMedia(sampleMedia()).response())
            #expect(loaded.playerState == .playing)
            #expect(loaded.supportedMediaCommands.isSuperset(of: .allBasicMedia))
            #expect(!loaded.isLiveStream)

            let paused = try await client.pause().response()
            #expect(paused?.playerState == .paused)
            let playing = try await client.play(customData: ["reason": "user"]).response()
            #expect(playing?.playerState == .playing)
            #expect(playing?.customData == ["reason": "user"])

            let absolute = try await client.seek(.to(100, resumeState: .pause)).response()
            #expect(absolute?.currentTime == 100)
            #expect(absolute?.playerState == .paused)
            let backwards = try await client.seek(.by(-30, resumeState: .play)).response()
            #expect(backwards?.currentTime == 70)
            #expect(backwards?.playerState == .playing)
            let forwards = try await client.seek(.by(10)).response()
            #expect(forwards?.currentTime == 80)
            #expect(forwards?.playerState == .playing, "an unchanged resume state keeps playing")

            let faster = try await client.setPlaybackRate(1.5).response()
            #expect(faster?.playbackRate == 1.5)
            #expect(localFailure(of: client.setPlaybackRate(3.0)) == .invalidRequest)
            #expect(localFailure(of: rate.setPlaybackRate(0.25)) == .invalidRequest)
            #expect(rate.isInputEnabled)

            // Ten seconds at 1.5× move the receiver's position by 15.
            fixture.clock.advance(by: .seconds(10))
            let moved = try await client.requestStatus().response()
            #expect(moved?.currentTime == 95)

            let quieter = try await client.setStreamVolume(0.25).response()
            #expect(quieter?.volumeLevel == 0.25)
            let muted = try await client.setStreamMuted(true).response()
            #expect(muted?.isMuted == true)
            #expect(muted?.volumeLevel == 0.25)
            #expect(localFailure(of: client.setStreamVolume(1.5)) == .invalidRequest)

            // Status updates reach subscribers.
            let updates = client.statusUpdates()
            _ = client.pause()
            let seen = try await next(updates) { $0?.playerState == .paused }
            #expect(seen?.currentTime == 95)

            // Device controls.
            try await fixture.session.setDeviceVolume(0.4)
            #expect(fixture.device.volume.level == 0.4)
            #expect(fixture.session.deviceStatus?.volumeStepInterval == 0.05)
            try await fixture.session.adjustDeviceVolume(bySteps: 2)
            #expect(abs(fixture.device.volume.level - 0.5) < 1e-9)
            try await fixture.session.adjustDeviceVolume(bySteps: -20)
            #expect(fixture.device.volume.level == 0)
            try await fixture.session.setDeviceMuted(true)
            #expect(fixture.device.volume.muted)
            #expect(fixture.session.deviceStatus?.isMuted == true)
            #expect(fixture.session.deviceStatus?.volumeControlType == "attenuation")
            #expect(fixture.session.deviceStatus?.application?.sessionID == fixture.session.sessionID)
        }
    }

    @Test func queueOperationsAndMediaQueue() async throws {
        try await withStartedSession { fixture in
            let client = fixture.client
            let queue = client.queue
            let items = [
                QueueItem(media: queueMedia("a", duration: 30)),
                QueueItem(media: queueMedia("b", duration: 40)),
                QueueItem(media: queueMedia("c", duration: 50)),
            ]
            let loaded = try #require(try await client.queueLoad(items, startIndex: 0, repeatMode: .off).response())
            let ids = loaded.items?.compactMap { $0.itemID } ?? []
            try #require(ids.count == 3)
            #expect(loaded.currentItemID == ids[0])
            #expect(loaded.currentItem?.media.contentID == "https://example.com/a.mp4")
            #expect(loaded.repeatMode == .off)
            #expect(loaded.supportedMediaCommands.contains(.queueNext))
            #expect(!loaded.supportedMediaCommands.contains(.queuePrevious))

            #expect(try await queue.reload() == ids)
            #expect(queue.itemCount == 3)
            #expect(queue.index(ofItemID: ids[2]) == 2)
            let second = try await queue.item(at: 1)
            #expect(second.itemID == ids[1])
            #expect(second.media.contentID == "https://example.com/b.mp4")
            await #expect {
                try await queue.item(at: 3)
            } throws: { ($0 as? CastMediaError)?.code == .invalidRequest }

            let events = client.events()
            func nextChange(_ type: String) async throws -> QueueChange {
                let event = try await next(events) {
                    if case .queueChanged(let change) = $0 { return change.changeType == type }
                    return false
                }
                guard case .queueChanged(let change) = event else {
                    throw CastMediaError(.invalidResponse, "no change")
                }
                return change
            }

            // Append: the QUEUE_CHANGE updates the cached ids in place.
            try await client.queueInsert([QueueItem(media: queueMedia("d", duration: 10))]).response()
            let appended = try await nextChange("INSERT")
            let d = try #require(appended.itemIDs.first)
            #expect(appended.insertBefore == nil)
            #expect(queue.itemIDs == ids + [d])

            // Insert before an item.
            try await client.queueInsert([QueueItem(media: queueMedia("e", duration: 10))], before: ids[1]).response()
            let inserted = try await nextChange("INSERT")
            let e = try #require(inserted.itemIDs.first)
            #expect(inserted.insertBefore == ids[1])
            #expect(queue.itemIDs == [ids[0], e, ids[1], ids[2], d])
            #expect(try await queue.reload() == [ids[0], e, ids[1], ids[2], d])
            #expect(try await queue.item(at: 1).media.contentID == "https://example.com/e.mp4")

            // Remove.
            try await client.queueRemove([e]).response()
            _ = try await nextChange("REMOVE")
            #expect(queue.itemIDs == [ids[0], ids[1], ids[2], d])

            // Reorder: the ids are refetched.
            try await client.queueReorder([d, ids[2]], before: ids[1]).response()
            _ = try await nextChange("UPDATE")
            #expect(queue.itemIDs == nil, "a reorder invalidates the cached ids")
            #expect(try await queue.reload() == [ids[0], d, ids[2], ids[1]])
            try await client.queueMove(itemID: ids[0], before: nil).response()
            _ = try await nextChange("UPDATE")
            #expect(try await queue.reload() == [d, ids[2], ids[1], ids[0]])

            // Navigation.
            let jumped = try await client.queueJump(toItemID: ids[2]).response()
            #expect(jumped?.currentItemID == ids[2])
            #expect(jumped?.playerState == .playing)
            let forward = try await client.queueNext().response()
            #expect(forward?.currentItemID == ids[1])
            let back = try await client.queuePrevious().response()
            #expect(back?.currentItemID == ids[2])
            let positioned = try await client.queueJump(toItemID: d, playPosition: 3).response()
            #expect(positioned?.currentItemID == d)
            #expect(positioned?.currentTime == 3)
            #expect(localFailure(of: client.queuePrevious()) == .notSupported, "the first item has no previous one")

            let repeating = try await client.queueSetRepeatMode(.all).response()
            #expect(repeating?.repeatMode == .all)
            #expect(repeating?.supportedMediaCommands.contains(.queuePrevious) == true)

            // Update an item in place.
            var edited = try await queue.item(at: 2)
            #expect(edited.itemID == ids[1])
            edited.customData = ["edited": true]
            edited.startTime = 5
            try await client.queueUpdate([edited]).response()
            let itemsChange = try await nextChange("ITEMS_CHANGE")
            #expect(itemsChange.itemIDs == [ids[1]])
            let refetched = try await queue.item(at: 2)
            #expect(refetched.customData == ["edited": true])
            #expect(refetched.startTime == 5)
            var missingID = edited
            missingID.itemID = nil
            #expect(localFailure(of: client.queueUpdate([missingID])) == .invalidRequest)

            // Insert and play at once.
            let playingNew = try #require(
                try await client.queueInsertAndPlay(QueueItem(media: queueMedia("f", duration: 10))).response()
            )
            let f = try #require(playingNew.currentItemID)
            #expect(playingNew.currentItem?.media.contentID == "https://example.com/f.mp4")
            _ = try await nextChange("INSERT")
            #expect(queue.itemIDs?.last == f)

            let status = try await client.requestStatus().response()
            #expect(status?.currentItemID == f)
            #expect(status?.repeatMode == .all)
            #expect(status?.items?.count == 5)
        }
    }

    @Test func playbackToTheEndAutoplaysTheNextItem() async throws {
        try await withStartedSession { fixture in
            let client = fixture.client
            let items = [
                QueueItem(media: queueMedia("a", duration: 30)),
                QueueItem(media: queueMedia("b", duration: 40), preloadTime: 10),
                QueueItem(media: queueMedia("c", duration: 20)),
            ]
            let loaded = try #require(try await client.queueLoad(items).response())
            let ids = loaded.items?.compactMap { $0.itemID } ?? []
            try #require(ids.count == 3)
            let events = client.events()
            let updates = client.statusUpdates()

            // Ten seconds before the end of "a", "b" is preloaded.
            fixture.clock.advance(by: .seconds(20))
            _ = try await next(events) {
                if case .preloadStatusUpdated(let id) = $0 { return id == ids[1] }
                return false
            }
            #expect(client.mediaStatus?.preloadedItemID == ids[1])

            // "a" ends: "b" plays by itself.
            fixture.clock.advance(by: .seconds(11))
            _ = try await next(events) {
                if case .statusUpdated(let status) = $0 { return status?.currentItemID == ids[1] }
                return false
            }
            _ = try await next(events) { if case .queueUpdated = $0 { return true } else { return false } }
            let now = try #require(try await client.requestStatus().response())
            #expect(now.currentItemID == ids[1])
            #expect(now.playerState == .playing)
            #expect(now.currentTime == 1)
            #expect(now.media?.metadata?.title == "b")
            #expect(client.mediaStatus?.currentItemID == ids[1])

            // "b" and "c" play out; the queue finishes.
            fixture.clock.advance(by: .seconds(39))
            fixture.clock.advance(by: .seconds(25))
            let finished = try await next(updates) { $0?.idleReason == .finished }
            #expect(finished?.playerState == .idle)
            let last = try #require(try await client.requestStatus().response())
            #expect(last.playerState == .idle)
            #expect(last.idleReason == .finished)
            #expect(last.currentItemID == ids[2])
            #expect(last.currentTime == 20)
        }
    }

    @Test func liveStreamsThatCannotPauseOfferPlayAndStopButNotPause() async throws {
        try await withStartedSession(device: { $0.liveStreamsCannotPause = true }) { fixture in
            let client = fixture.client
            var live = MediaInformation(
                contentID: "https://example.com/live.m3u8",
                contentType: "application/x-mpegURL",
                streamType: .live
            )
            live.metadata = .generic(title: "Radio")
            let status = try #require(try await client.loadMedia(live).response())
            #expect(status.isLiveStream)
            #expect(status.media?.duration == nil)
            #expect(!status.supportedMediaCommands.contains(.pause))
            #expect(!status.supportedMediaCommands.contains(.seek))
            #expect(status.supportedMediaCommands.contains(.streamVolume))
            #expect(localFailure(of: client.pause()) == .notSupported)
            #expect(localFailure(of: client.seek(.by(10))) == .notSupported)
            let stopped = try await client.stop().response()
            #expect(stopped?.playerState == .idle)
            #expect(stopped?.idleReason == .cancelled)
        }
    }

    @Test func commandsWithoutAMediaSessionFailLocally() async throws {
        try await withStartedSession { fixture in
            let client = fixture.client
            let initial = try await client.requestStatus().response()
            #expect(initial == nil, "GET_STATUS answers an empty status without a media session")
            #expect(client.mediaStatus == nil)
            #expect(client.playerState == .idle)
            #expect(client.approximateStreamPosition == 0)
            let requests = [
                client.play(), client.pause(), client.stop(), client.seek(.to(5)), client.setPlaybackRate(1.5),
                client.setStreamVolume(0.5), client.setStreamMuted(true), client.setActiveTrackIDs([1]),
                client.setTextTrackStyle(TextTrackStyle()), client.skipAd(), client.queueNext(), client.queuePrevious(),
                client.queueInsert([QueueItem(media: sampleMedia())]), client.queueRemove([1]),
                client.queueReorder([1]),
                client.queueJump(toItemID: 1), client.queueSetRepeatMode(.all),
            ]
            for request in requests {
                #expect(localFailure(of: request) == .noMediaSession, "\(request.kind)")
            }
        }
    }

    @Test func aLoadThatFailsReportsTheDetailedErrorCode() async throws {
        try await withStartedSession { fixture in
            let client = fixture.client
            let bad = MediaInformation(contentID: "https://x.invalid/a.mp4", contentType: "video/mp4")
            let error = await mediaError(of: client.loadMedia(bad))
            #expect(error?.code == .loadFailed)
            #expect(error?.detailedErrorCode == 103)

            var unsupported = MediaInformation(contentID: "https://example.com/a.mp4?fail=1", contentType: "video/mp4")
            unsupported.metadata = .generic(title: "Broken")
            let second = await mediaError(of: client.loadMedia(unsupported))
            #expect(second?.code == .loadFailed)
            #expect(second?.detailedErrorCode == 104)

            // A load without media or items never leaves the client.
            #expect(localFailure(of: client.load(LoadRequestData(queue: QueueData(items: [])))) == .invalidRequest)
            #expect(localFailure(of: client.queueLoad([])) == .invalidRequest)
            #expect(
                localFailure(of: client.queueLoad([QueueItem(media: sampleMedia())], startIndex: 3)) == .invalidRequest
            )

            // The player still loads good media afterwards.
            let good = try await client.loadMedia(sampleMedia()).response()
            #expect(good?.playerState == .playing)
        }
    }

    @Test func aSecondLoadReplacesAPendingOne() async throws {
        try await withStartedSession(device: { $0.loadDuration = 5 }) { fixture in
            let client = fixture.client
            let events = client.events()
            func loading(_ url: String) async throws {
                _ = try await next(events) {
                    if case .statusUpdated(let status) = $0 {
                        return status?.extendedPlayerState == .loading && status?.media?.contentID == url
                    }
                    return false
                }
            }
            let aborts = Recorder<MediaRequest.AbortReason>()
            let first = client.loadMedia(queueMedia("first", duration: 60))
            first.onAbort { aborts.record($0) }
            try await loading("https://example.com/first.mp4")
            #expect(client.playerState == .loading)
            #expect(!first.isFinished, "the receiver is still loading")

            let second = client.loadMedia(queueMedia("second", duration: 60))
            #expect(aborts.values == [.replaced])
            guard case .aborted(.replaced)? = first.outcome else {
                Issue.record("the first load should be aborted as replaced, got \(String(describing: first.outcome))")
                return
            }
            await #expect(throws: CancellationError.self) { try await first.response() }
            let late = Recorder<MediaRequest.AbortReason>()
            first.onAbort { late.record($0) }
            #expect(late.values == [.replaced], "a callback registered after the outcome runs at once")

            try await loading("https://example.com/second.mp4")
            fixture.clock.advance(by: .seconds(5))
            let status = try #require(try await second.response())
            #expect(status.playerState == .playing)
            #expect(status.media?.contentID == "https://example.com/second.mp4")
        }
    }

    @Test func requestCallbacksBeforeAndAfterTheOutcome() async throws {
        try await withStartedSession { fixture in
            let client = fixture.client
            try await client.loadMedia(sampleMedia()).response()

            let completions = Recorder<PlayerState?>()
            let failures = Recorder<CastMediaError.Code>()
            let aborts = Recorder<MediaRequest.AbortReason>()
            let pause = client.pause()
            pause.onCompletion { completions.record($0?.playerState) }
            pause.onFailure { failures.record($0.code) }
            pause.onAbort { aborts.record($0) }
            let status = try await pause.response()
            #expect(status?.playerState == .paused)
            #expect(pause.isFinished)
            #expect(pause.kind == "PAUSE")
            #expect(completions.values == [.paused])
            pause.onCompletion { completions.record($0?.playerState) }
            #expect(completions.values == [.paused, .paused])
            pause.onFailure { failures.record($0.code) }
            #expect(failures.values.isEmpty)
            #expect(aborts.values.isEmpty)
            // The outcome is final: cancelling afterwards changes nothing.
            pause.cancel()
            guard case .completed? = pause.outcome else {
                Issue.record("a finished request stays completed")
                return
            }

            let failing = client.loadMedia(
                MediaInformation(contentID: "https://x.invalid/b.mp4", contentType: "video/mp4")
            )
            failing.onFailure { failures.record($0.code) }
            failing.onCompletion { completions.record($0?.playerState) }
            _ = await mediaError(of: failing)
            #expect(failures.values == [.loadFailed])
            failing.onFailure { failures.record($0.code) }
            #expect(failures.values == [.loadFailed, .loadFailed])
            #expect(completions.values.count == 2)

            let local = client.setPlaybackRate(9)
            local.onFailure { failures.record($0.code) }
            #expect(failures.values.last == .invalidRequest)
            #expect(local.id != failing.id)
        }
    }

    @Test func stopThenEndTheSession() async throws {
        try await withCastReceiverEmulator(
            devices: [DeviceConfiguration(friendlyName: "Kitchen", port: 0)],
            clock: ManualCastClock()
        ) { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: testOptions())
            let events = context.sessionManager.events()
            let session = try await context.sessionManager.startSession(with: device.castDevice)
            let client = try #require(session.remoteMediaClient)
            try await client.loadMedia(sampleMedia()).response()

            let stopped = try #require(try await client.stop().response())
            #expect(stopped.playerState == .idle)
            #expect(stopped.idleReason == .cancelled)
            #expect(device.mediaStatus == nil, "STOP ends the receiver's media session")
            // The client still holds the final status, so PLAY reaches the receiver, which has no session.
            let error = await mediaError(of: client.play())
            #expect(error?.code == .invalidPlayerState)
            #expect(try await client.requestStatus().response() == nil)
            #expect(localFailure(of: client.play()) == .noMediaSession)

            try await client.loadMedia(sampleMedia(title: "Again")).response()
            await context.sessionManager.endSession(stopCasting: true)
            #expect(try await nextEvent(events, "willEnd").name == "willEnd")
            let ended = try await nextEvent(events, "didEnd")
            #expect(ended.error == nil, "an end we asked for carries no error")
            #expect(device.runningApp.isIdleScreen)
            #expect(context.sessionManager.currentSession == nil)
            #expect(context.sessionManager.castState == .notConnected)
            #expect(session.connectionState == .disconnected)
            #expect(client.mediaStatus == nil)
            #expect(try context.sessionManager.savedSession() == nil, "stopping the app forgets the saved session")
            let afterEnd = await mediaError(of: client.requestStatus())
            #expect(afterEnd?.code == .notConnected)
            await #expect {
                try await session.setDeviceVolume(0.5)
            } throws: { ($0 as? CastSessionError)?.code == .notConnected }
        }
    }

    @Test func commandsReachTheReceiverInTheOrderIssued() async throws {
        try await withStartedSession { fixture in
            let client = fixture.client
            try await client.loadMedia(sampleMedia()).response()
            var outOfOrder: [Double] = []
            for _ in 0..<10 {
                let requests = (1...30).map { client.setStreamVolume(Double($0) / 100) }
                for request in requests { _ = try? await request.response() }
                let level = fixture.device.mediaStatus?["volume"]?["level"]?.doubleValue ?? -1
                if level != 0.3 { outOfOrder.append(level) }
            }
            // RemoteMediaClient writes each request before it returns, so the receiver ends at the last value set.
            #expect(outOfOrder.isEmpty, "final stream volumes other than the last one set: \(outOfOrder)")
        }
    }

    @Test func listenerObjectsGetTheLifecycle() async throws {
        final class Listener: SessionManagerListener, @unchecked Sendable {
            // @unchecked: only the Recorder (thread-safe) is mutated.
            let calls = Recorder<String>()
            func sessionManager(_ manager: SessionManager, willStartSessionWith device: CastDevice) {
                calls.record("willStart")
            }
            func sessionManager(_ manager: SessionManager, didStart session: CastSession) { calls.record("didStart") }
            func sessionManager(_ manager: SessionManager, willEnd session: CastSession) { calls.record("willEnd") }
            func sessionManager(_ manager: SessionManager, didEnd session: CastSession, error: CastSessionError?) {
                calls.record(error == nil ? "didEnd" : "didEnd(\(error!.code))")
            }
        }
        try await withCastReceiverEmulator { emulator in
            let context = CastContext(options: testOptions())
            let listener = Listener()
            context.sessionManager.addListener(listener)
            try await context.sessionManager.startSession(with: emulator.devices[0].castDevice)
            await context.sessionManager.endSession()
            #expect(listener.calls.values == ["willStart", "didStart", "willEnd", "didEnd"])
            context.sessionManager.removeListener(listener)
            try await context.sessionManager.startSession(with: emulator.devices[0].castDevice)
            await context.sessionManager.endSession()
            #expect(listener.calls.values.count == 4)
        }
    }
}
