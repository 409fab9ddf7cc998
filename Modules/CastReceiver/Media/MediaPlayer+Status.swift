import CastTransport

/// `supportedMediaCommands` bits (cast-protocol.md §7.4).
enum MediaCommandBits {
    static let pause = 1
    static let seek = 2
    static let streamVolume = 4
    static let streamMute = 8
    static let queueNext = 64
    static let queuePrev = 128
    static let queueShuffle = 256
    static let skipAd = 512
    static let queueRepeatAll = 1024
    static let queueRepeatOne = 2048
    static let editTracks = 4096
    static let playbackRate = 8192
    static let streamTransfer = 262_144
}

extension MediaPlayer {
    /// The `supportedMediaCommands` of the current state: pause and seek as the Default Media Receiver offers them
    /// (live streams too, unless ``MediaPlayer/Settings/liveStreamsCannotPause``: senders then show play/stop),
    /// queue navigation only where there is somewhere to go, SKIP_AD only while a skippable clip plays.
    func supportedCommands(of session: Session, at now: Double) -> Int {
        var bits =
            MediaCommandBits.streamVolume | MediaCommandBits.streamMute | MediaCommandBits.editTracks
            | MediaCommandBits.playbackRate | MediaCommandBits.streamTransfer
        if !session.current.isLive || !settings.liveStreamsCannotPause {
            bits |= MediaCommandBits.pause | MediaCommandBits.seek
        }
        if session.queue.count > 1 {
            bits |= MediaCommandBits.queueShuffle | MediaCommandBits.queueRepeatAll | MediaCommandBits.queueRepeatOne
            if nextIndex(of: session, wrapping: true) != nil { bits |= MediaCommandBits.queueNext }
            if session.currentIndex > 0 || session.repeatMode != "REPEAT_OFF" { bits |= MediaCommandBits.queuePrev }
        }
        if let status = breakStatus(of: session, at: now), let skippable = status["whenSkippable"]?.seconds,
            skippable <= (status["currentBreakClipTime"]?.seconds ?? 0)
        {
            bits |= MediaCommandBits.skipAd
        }
        return bits
    }

    func breakStatus(of session: Session, at now: Double) -> JSONValue? {
        guard let adBreak = session.adBreak else { return nil }
        let clipId = adBreak.clipIds[adBreak.clipIndex]
        var clipTime = adBreak.clipPosition
        if session.playerState == "PLAYING" { clipTime += now - adBreak.anchorTime }
        var previousClips = 0.0
        for id in adBreak.clipIds.prefix(adBreak.clipIndex) {
            previousClips += Self.clipDuration(session.current, id)
        }
        var status: JSONValue = [
            "breakId": .string(adBreak.breakId),
            "breakClipId": .string(clipId),
            "currentBreakTime": .number(previousClips + clipTime),
            "currentBreakClipTime": .number(clipTime),
        ]
        if let skippable = session.current.clip(clipId)?["whenSkippable"] { status["whenSkippable"] = skippable }
        return status
    }

    /// One MEDIA_STATUS entry for `session`.
    func statusEntry(of session: Session, at now: Double, options: Int = 0) -> JSONValue {
        let entry = session.current
        var media = entry.media
        if options & 1 != 0 { media["metadata"] = nil }
        // Media that declares no duration plays for the default one: say so, or senders show no progress and
        // cannot skip to the end. Live streams have none (§7.1).
        if !entry.isLive, (media["duration"]?.seconds ?? 0) <= 0 {
            media["duration"] = .number(settings.defaultDuration)
        }
        var status: [String: JSONValue] = [
            "mediaSessionId": .number(Double(session.mediaSessionId)),
            "playerState": .string(session.playerState),
            "currentTime": .number(position(of: session, at: now)),
            "playbackRate": .number(session.rate),
            "supportedMediaCommands": .number(Double(supportedCommands(of: session, at: now))),
            "volume": ["level": .number(volumeLevel), "muted": .bool(isMuted)],
            "activeTrackIds": .array(session.activeTrackIds.map { .number(Double($0)) }),
            "currentItemId": .number(Double(entry.itemId)),
            "repeatMode": .string(session.repeatMode),
            "media": .object(media),
        ]
        if let idleReason = session.idleReason { status["idleReason"] = .string(idleReason) }
        if let preloaded = session.preloadedItemId { status["preloadedItemId"] = .number(Double(preloaded)) }
        if let style = session.textTrackStyle {
            var media = status["media"]?.objectValue ?? [:]
            media["textTrackStyle"] = style
            status["media"] = .object(media)
        }
        if let breakStatus = breakStatus(of: session, at: now) { status["breakStatus"] = breakStatus }
        if let videoInfo = videoInfo(of: entry) { status["videoInfo"] = videoInfo }
        if options & 2 == 0 {
            // A window of items around the current one, as CAF sends; the rest via QUEUE_GET_ITEMS.
            let low = max(0, session.currentIndex - 10)
            let high = min(session.queue.count, session.currentIndex + 11)
            status["items"] = .array(session.queue[low..<high].map(\.json))
        }
        if var queueData = session.queueData {
            queueData["repeatMode"] = .string(session.repeatMode)
            status["queueData"] = .object(queueData)
        }
        if let customData = session.customData { status["customData"] = customData }
        return .object(status)
    }

    /// Video dimensions: from the media's `customData.videoInfo` when given, 1920×1080 SDR for video, none for
    /// audio.
    private func videoInfo(of entry: Entry) -> JSONValue? {
        if let given = entry.media["customData"]?["videoInfo"], given.objectValue != nil { return given }
        guard entry.media["contentType"]?.stringValue?.hasPrefix("audio/") != true else { return nil }
        return ["width": 1920, "height": 1080, "hdrType": "sdr"]
    }

    /// The MEDIA_STATUS payload: `[]` without a media session (or one being loaded).
    func statusMessage(at now: Double, requestId: JSONValue, options: Int = 0) -> JSONValue {
        var entries: [JSONValue] = []
        if let session {
            entries.append(statusEntry(of: session, at: now, options: options))
        } else if let pendingLoad, let media = Self.firstItem(of: pendingLoad.request)?.media {
            entries.append(loadingEntry(mediaSessionId: pendingLoad.mediaSessionId, media: media))
        }
        return ["type": "MEDIA_STATUS", "requestId": requestId, "status": .array(entries)]
    }

    func broadcastStatus(at now: Double, except: Requester? = nil) -> MediaDelivery<Requester> {
        MediaDelivery(recipient: .everyone(except: except), payload: statusMessage(at: now, requestId: 0))
    }
}

/// Makes media messages fit the 64 KiB frame limit, so that every request still gets its one reply
/// (cast-protocol.md §9): a status repeats the media in `items[].media`, so a LOAD whose media is over 32 KiB
/// (a long title, many tracks) would otherwise produce a status no frame can carry, and the sender would wait for a
/// reply that never comes.
enum MediaStatusFitting {
    /// `payload` one step smaller, dropping what a sender can do without first, or `nil` when nothing is left to
    /// drop. For MEDIA_STATUS, in each entry: `items[].media` (senders fetch items with QUEUE_GET_ITEMS), then
    /// every item but the current one, then `items`, then `media` (senders keep the last `media` they saw,
    /// §7.3), `queueData`, `customData` and the LOADING media in `extendedStatus`. For QUEUE_ITEMS, its last item.
    static func shrunk(_ payload: JSONValue) -> JSONValue? {
        switch payload["type"]?.stringValue {
        case "MEDIA_STATUS":
            guard var entries = payload["status"]?.arrayValue?.map({ $0.objectValue ?? [:] }) else { return nil }
            for step in steps {
                var changed = false
                for index in entries.indices where step(&entries[index]) { changed = true }
                if changed {
                    var smaller = payload
                    smaller["status"] = .array(entries.map { .object($0) })
                    return smaller
                }
            }
            return nil
        case "QUEUE_ITEMS":
            guard var items = payload["items"]?.arrayValue, !items.isEmpty else { return nil }
            items.removeLast()
            var smaller = payload
            smaller["items"] = .array(items)
            return smaller
        default:
            return nil
        }
    }

    /// Each step drops one thing from a status entry, answering whether there was anything to drop.
    private static let steps: [@Sendable (inout [String: JSONValue]) -> Bool] = [
        { entry in
            guard let items = entry["items"]?.arrayValue, items.contains(where: { $0["media"] != nil }) else {
                return false
            }
            entry["items"] = .array(
                items.map { item in
                    var item = item.objectValue ?? [:]
                    item["media"] = nil
                    return .object(item)
                }
            )
            return true
        },
        { entry in
            guard let items = entry["items"]?.arrayValue, items.count > 1 else { return false }
            entry["items"] = .array(items.filter { $0["itemId"] != nil && $0["itemId"] == entry["currentItemId"] })
            return true
        },
        { entry in entry.removeValue(forKey: "items") != nil },
        { entry in entry.removeValue(forKey: "media") != nil },
        { entry in entry.removeValue(forKey: "queueData") != nil },
        { entry in entry.removeValue(forKey: "customData") != nil },
        { entry in
            guard var extended = entry["extendedStatus"]?.objectValue, extended["media"] != nil else { return false }
            extended["media"] = nil
            entry["extendedStatus"] = .object(extended)
            return true
        },
    ]

    /// `message` with its payload shrunk (``shrunk(_:)``) until it fits a frame; `nil` when it cannot be made to.
    static func fitted(_ message: CastMessage, payload: JSONValue) -> CastMessage? {
        var message = message
        var payload = payload
        while (try? message.checkFrameSize()) == nil {
            guard let smaller = shrunk(payload) else { return nil }
            payload = smaller
            message = CastMessage(
                sourceID: message.sourceID,
                destinationID: message.destinationID,
                namespace: message.namespace,
                json: payload
            )
        }
        return message
    }
}
