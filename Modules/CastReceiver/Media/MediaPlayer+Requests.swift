import CastTransport

/// Commands that act on an existing media session. Made once: a generic type cannot store a static, and a
/// computed set was built (19 strings hashed) for every request.
private let mediaSessionCommands: Set<String> = [
    "PLAY", "PAUSE", "STOP", "SEEK", "SET_PLAYBACK_RATE", "SET_VOLUME", "EDIT_TRACKS_INFO", "EDIT_AUDIO_TRACKS",
    "SKIP_AD", "QUEUE_GET_ITEM_IDS", "QUEUE_GET_ITEMS", "QUEUE_GET_ITEM_RANGE", "QUEUE_INSERT", "QUEUE_REMOVE",
    "QUEUE_REORDER", "QUEUE_UPDATE", "QUEUE_NEXT", "QUEUE_PREV", "QUEUE_SHUFFLE",
]

extension MediaPlayer {
    /// Where a SEEK moves from `position` (never before the start; the caller clamps to the duration), or nil
    /// when it names no time.
    static func seekTarget(of request: [String: JSONValue], from position: Double) -> Double? {
        if let relative = request["relativeTime"]?.seconds { return max(0, position + relative) }
        if let absolute = request["currentTime"]?.seconds { return max(0, absolute) }
        return nil
    }

    /// Handles one request on the media namespace from `requester` at `now`.
    ///
    /// Every request gets exactly one reply carrying its `requestId` (a MEDIA_STATUS or an error); state changes
    /// are also broadcast with `requestId` 0 to every other sender.
    mutating func handle(_ request: [String: JSONValue], from requester: Requester, at now: Double)
        -> [MediaDelivery<Requester>]
    {
        let out = advance(to: now)
        let requestId = echoedRequestID(request["requestId"])
        func reply(_ payload: JSONValue) -> MediaDelivery<Requester> {
            var payload = payload
            payload["requestId"] = requestId
            return MediaDelivery(recipient: .requester(requester), payload: payload)
        }
        func failure(_ type: String, reason: String? = nil, detailedErrorCode: Int? = nil, itemId: Int? = nil)
            -> [MediaDelivery<Requester>]
        {
            var payload: JSONValue = ["type": .string(type)]
            if let reason { payload["reason"] = .string(reason) }
            if let detailedErrorCode { payload["detailedErrorCode"] = .number(Double(detailedErrorCode)) }
            if let itemId { payload["itemId"] = .number(Double(itemId)) }
            return out + [reply(payload)]
        }
        func changed() -> [MediaDelivery<Requester>] {
            out + [reply(statusMessage(at: now, requestId: requestId)), broadcastStatus(at: now, except: requester)]
        }

        guard let type = request["type"]?.stringValue else {
            return failure("INVALID_REQUEST", reason: "INVALID_COMMAND")
        }

        switch type {
        case "GET_STATUS":
            let options = request["options"]?.intValue ?? 0
            return out + [reply(statusMessage(at: now, requestId: requestId, options: options))]
        case "LOAD":
            return out + load(request, from: requester, requestId: requestId, at: now)
        case "QUEUE_LOAD":
            guard let items = request["items"]?.arrayValue, !items.isEmpty else {
                return failure("INVALID_REQUEST", reason: "INVALID_PARAMS")
            }
            var load = request
            var queueData: [String: JSONValue] = ["items": .array(items)]
            queueData["startIndex"] = request["startIndex"]
            queueData["repeatMode"] = request["repeatMode"]
            if let queueType = request["queueType"] { queueData["queueType"] = queueType }
            load["queueData"] = .object(queueData)
            load["media"] = nil
            return out + self.load(load, from: requester, requestId: requestId, at: now)
        case "STORE_SESSION":
            guard let session else { return failure("INVALID_PLAYER_STATE") }
            var loadRequest: [String: JSONValue] = [
                "media": .object(session.current.media),
                "currentTime": .number(position(of: session, at: now)),
                "autoplay": .bool(session.playerState == "PLAYING"),
                "playbackRate": .number(session.rate),
                "activeTrackIds": .array(session.activeTrackIds.map { .number(Double($0)) }),
            ]
            if session.queue.count > 1 {
                loadRequest["queueData"] = [
                    "items": .array(session.queue.map { .object($0.item) }),
                    "startIndex": .number(Double(session.currentIndex)),
                    "repeatMode": .string(session.repeatMode),
                ]
            }
            return out + [
                reply([
                    "type": "SESSION_STATE",
                    "sessionState": ["loadRequestData": .object(loadRequest), "customData": [:]],
                ])
            ]
        case "RESUME_SESSION":
            guard let state = request["sessionState"]?["loadRequestData"]?.objectValue else {
                return failure("INVALID_REQUEST", reason: "INVALID_PARAMS")
            }
            return out + load(state, from: requester, requestId: requestId, at: now)
        default:
            break
        }

        // Everything else acts on the current media session; unknown commands are rejected as such first.
        guard mediaSessionCommands.contains(type) else { return failure("INVALID_REQUEST", reason: "INVALID_COMMAND") }
        guard session != nil else { return failure("INVALID_PLAYER_STATE") }
        // Absent (or null) means the current session; anything else must be its id.
        if let given = request["mediaSessionId"]?.present, given.intValue != session!.mediaSessionId {
            return failure("INVALID_REQUEST", reason: "INVALID_MEDIA_SESSION_ID")
        }
        reanchor(at: now)
        var session = self.session!
        let supported = supportedCommands(of: session, at: now)
        func supports(_ bit: Int) -> Bool { supported & bit != 0 }

        switch type {
        case "PLAY":
            guard session.playerState != "IDLE" else { return failure("INVALID_PLAYER_STATE") }
            session.playerState = "PLAYING"
        case "PAUSE":
            guard session.playerState != "IDLE" else { return failure("INVALID_PLAYER_STATE") }
            guard supports(MediaCommandBits.pause) else { return failure("INVALID_REQUEST", reason: "NOT_SUPPORTED") }
            session.playerState = "PAUSED"
        case "STOP":
            session.playerState = "IDLE"
            session.idleReason = "CANCELLED"
            session.adBreak = nil
            self.session = session
            let final = statusMessage(at: now, requestId: requestId)
            let broadcast = broadcastStatus(at: now, except: requester)
            self.session = nil
            return out + [reply(final), broadcast]
        case "SEEK":
            guard session.playerState != "IDLE" else { return failure("INVALID_PLAYER_STATE") }
            guard supports(MediaCommandBits.seek) else { return failure("INVALID_REQUEST", reason: "NOT_SUPPORTED") }
            guard session.adBreak == nil else { return failure("INVALID_PLAYER_STATE") }
            guard var target = Self.seekTarget(of: request, from: session.position) else {
                return failure("INVALID_REQUEST", reason: "INVALID_PARAMS")
            }
            if let duration = duration(of: session.current) { target = min(target, duration) }
            session.position = target
            // A sender chose where this item plays from: its end is not a blank one.
            session.itemStartPosition = -.infinity
            // Breaks the seek jumped over are not played again later.
            for item in session.current.breaks {
                if let id = item["id"]?.stringValue, let position = item["position"]?.seconds, position > 0,
                    position < target
                {
                    session.watchedBreaks.insert(id)
                }
            }
            switch request["resumeState"]?.stringValue {
            case "PLAYBACK_START": session.playerState = "PLAYING"
            case "PLAYBACK_PAUSE": session.playerState = "PAUSED"
            default: break
            }
        case "SET_PLAYBACK_RATE":
            var rate = session.rate
            if let absolute = request["playbackRate"]?.doubleValue {
                rate = absolute
            } else if let relative = request["relativePlaybackRate"]?.doubleValue {
                rate *= relative
            } else {
                return failure("INVALID_REQUEST", reason: "INVALID_PARAMS")
            }
            guard (0.5...2.0).contains(rate) else { return failure("INVALID_REQUEST", reason: "INVALID_PARAMS") }
            session.rate = rate
        case "SET_VOLUME":
            // As on the receiver namespace.
            guard let change = requestedVolume(request["volume"]) else {
                return failure("INVALID_REQUEST", reason: "INVALID_PARAMS")
            }
            if let level = change.level { volumeLevel = level }
            if let muted = change.muted { isMuted = muted }
        case "EDIT_TRACKS_INFO":
            let tracks = session.current.media["tracks"]?.arrayValue?.compactMap(\.objectValue) ?? []
            if let ids = request["activeTrackIds"]?.arrayValue {
                let wanted = ids.compactMap(\.intValue)
                let known = Set(tracks.compactMap { $0["trackId"]?.intValue })
                guard wanted.count == ids.count, wanted.allSatisfy(known.contains) else {
                    return failure("INVALID_REQUEST", reason: "INVALID_PARAMS")
                }
                session.activeTrackIds = wanted
            }
            if let language = request["language"]?.stringValue {
                _ = Self.activateTrack(ofType: "TEXT", language: language, among: tracks, in: &session)
            }
            if request["enableTextTracks"]?.boolValue == false {
                let textIds = Self.trackIds(ofType: "TEXT", among: tracks)
                session.activeTrackIds.removeAll { textIds.contains($0) }
            }
            if let style = request["textTrackStyle"], style.objectValue != nil { session.textTrackStyle = style }
        case "EDIT_AUDIO_TRACKS":
            let tracks = session.current.media["tracks"]?.arrayValue?.compactMap(\.objectValue) ?? []
            guard let language = request["language"]?.stringValue,
                Self.activateTrack(ofType: "AUDIO", language: language, among: tracks, in: &session)
            else { return failure("INVALID_REQUEST", reason: "LANGUAGE_NOT_SUPPORTED") }
        case "SKIP_AD":
            guard session.adBreak != nil else { return failure("INVALID_PLAYER_STATE") }
            guard supports(MediaCommandBits.skipAd) else { return failure("INVALID_REQUEST", reason: "NOT_SUPPORTED") }
            self.session = session
            // End the clip now: the clock-driven transition does the rest (next clip or back to content).
            let deliveries = forceClipEnd(at: now)
            _ = deliveries
            return out + [
                reply(statusMessage(at: now, requestId: requestId)), broadcastStatus(at: now, except: requester),
            ]
        case "QUEUE_GET_ITEM_IDS":
            return out + [
                reply(["type": "QUEUE_ITEM_IDS", "itemIds": .array(session.queue.map { .number(Double($0.itemId)) })])
            ]
        case "QUEUE_GET_ITEMS":
            guard let ids = request["itemIds"]?.arrayValue?.compactMap(\.intValue) else {
                return failure("INVALID_REQUEST", reason: "INVALID_PARAMS")
            }
            let items = ids.compactMap { id in session.queue.first { $0.itemId == id }?.json }
            return out + [reply(["type": "QUEUE_ITEMS", "items": .array(items)])]
        case "QUEUE_GET_ITEM_RANGE":
            guard let id = request["itemId"]?.intValue,
                let index = session.queue.firstIndex(where: { $0.itemId == id }),
                let previous = Self.count(request["prevCount"]), let next = Self.count(request["nextCount"])
            else { return failure("INVALID_REQUEST", reason: "INVALID_PARAMS") }
            let low = max(0, index - previous)
            let high = min(session.queue.count, index + 1 + next)
            return out + [reply(["type": "QUEUE_ITEMS", "items": .array(session.queue[low..<high].map(\.json))])]
        case "QUEUE_INSERT", "QUEUE_REMOVE", "QUEUE_REORDER", "QUEUE_UPDATE", "QUEUE_NEXT", "QUEUE_PREV",
            "QUEUE_SHUFFLE":
            self.session = session
            func announce(_ change: JSONValue) -> MediaDelivery<Requester> {
                var message = change
                self.session?.sequenceNumber += 1
                message["sequenceNumber"] = .number(Double(self.session?.sequenceNumber ?? 0))
                message["type"] = "QUEUE_CHANGE"
                message["requestId"] = 0
                return MediaDelivery(recipient: .everyone(except: nil), payload: message)
            }
            switch editQueue(type, request, at: now) {
            case .failure(let reason):
                return failure("INVALID_REQUEST", reason: reason)
            case .emptied(let change):
                // Everyone hears the final IDLE/FINISHED status before the session goes away.
                let deliveries = out + [announce(change)]
                let final = statusMessage(at: now, requestId: requestId)
                let broadcast = broadcastStatus(at: now, except: requester)
                self.session = nil
                return deliveries + [reply(final), broadcast]
            case .success(let change):
                var deliveries = out
                if let change { deliveries.append(announce(change)) }
                return deliveries + [
                    reply(statusMessage(at: now, requestId: requestId)), broadcastStatus(at: now, except: requester),
                ]
            }
        default:
            return failure("INVALID_REQUEST", reason: "INVALID_COMMAND")
        }
        if let customData = request["customData"], customData != [:] { session.customData = customData }
        self.session = session
        return changed()
    }

    /// A `QUEUE_GET_ITEM_RANGE` count: absent (or null) is 0; a negative or non-integer one is invalid (`nil`).
    private static func count(_ value: JSONValue?) -> Int? {
        guard let value = value?.present else { return 0 }
        guard let count = value.intValue, count >= 0 else { return nil }
        return count
    }

    /// The ids of the tracks of `type` (`TEXT`, `AUDIO`, `VIDEO`).
    private static func trackIds(ofType type: String, among tracks: [[String: JSONValue]]) -> Set<Int> {
        Set(tracks.filter { $0["type"]?.stringValue == type }.compactMap { $0["trackId"]?.intValue })
    }

    /// Makes the track of `type` in `language` the active one of its type; `false` when there is none.
    private static func activateTrack(
        ofType type: String,
        language: String,
        among tracks: [[String: JSONValue]],
        in session: inout Session
    ) -> Bool {
        guard
            let id = tracks.first(where: {
                $0["type"]?.stringValue == type && $0["language"]?.stringValue == language
            })?["trackId"]?.intValue
        else { return false }
        let sameType = trackIds(ofType: type, among: tracks)
        session.activeTrackIds = session.activeTrackIds.filter { !sameType.contains($0) } + [id]
        return true
    }

    private mutating func forceClipEnd(at now: Double) -> [MediaDelivery<Requester>] {
        guard var session, var adBreak = session.adBreak else { return [] }
        let clipId = adBreak.clipIds[adBreak.clipIndex]
        adBreak.clipPosition = Self.clipDuration(session.current, clipId)
        adBreak.anchorTime = now
        let wasPlaying = session.playerState
        session.adBreak = adBreak
        session.playerState = "PLAYING"
        self.session = session
        let deliveries = advance(to: now)
        if wasPlaying == "PAUSED", self.session?.playerState == "PLAYING" { self.session?.playerState = "PAUSED" }
        return deliveries
    }

    // MARK: - LOAD

    /// What a LOAD plays first: with queue items, the one at `queueData.startIndex` (absent or null: the first)
    /// and that index; else its `media` and 0. `nil` when the start index names no item (not an integer, or out
    /// of range): a device answers INVALID_PARAMS rather than guess which item was meant.
    static func firstItem(of request: [String: JSONValue]) -> (media: [String: JSONValue]?, index: Int)? {
        guard let items = request["queueData"]?["items"]?.arrayValue?.compactMap(\.objectValue), !items.isEmpty
        else { return (request["media"]?.objectValue, 0) }
        var index = 0
        if let given = request["queueData"]?["startIndex"]?.present {
            guard let value = given.intValue else { return nil }
            index = value
        }
        guard items.indices.contains(index) else { return nil }
        return (items[index]["media"]?.objectValue, index)
    }

    private mutating func load(
        _ request: [String: JSONValue],
        from requester: Requester,
        requestId: JSONValue,
        at now: Double
    ) -> [MediaDelivery<Requester>] {
        var request = request
        if let preroll = settings.prerollAd, var media = request["media"]?.objectValue {
            preroll.insert(into: &media)
            request["media"] = .object(media)
        }
        func reply(_ payload: JSONValue) -> MediaDelivery<Requester> {
            var payload = payload
            payload["requestId"] = requestId
            return MediaDelivery(recipient: .requester(requester), payload: payload)
        }
        let queueItems = request["queueData"]?["items"]?.arrayValue?.compactMap(\.objectValue)
        guard let media = Self.firstItem(of: request)?.media, let url = MediaFetcher.contentURL(of: media) else {
            return [reply(["type": "INVALID_REQUEST", "reason": "INVALID_PARAMS"])]
        }
        if let items = queueItems, items.contains(where: { $0["itemId"] != nil && $0["itemId"] != .null }) {
            return [reply(["type": "INVALID_REQUEST", "reason": "INVALID_PARAMS"])]
        }
        // Tracks to activate must exist, as EDIT_TRACKS_INFO requires.
        if let ids = request["activeTrackIds"]?.present {
            let known = Set(media["tracks"]?.arrayValue?.compactMap { $0["trackId"]?.intValue } ?? [])
            guard let wanted = ids.arrayValue?.compactMap(\.intValue), wanted.count == ids.arrayValue?.count,
                wanted.allSatisfy(known.contains)
            else { return [reply(["type": "INVALID_REQUEST", "reason": "INVALID_PARAMS"])] }
        }
        // The range SET_PLAYBACK_RATE accepts; a rate of 0 or less would leave the item's end forever due.
        if let rate = request["playbackRate"]?.doubleValue, !(0.5...2.0).contains(rate) {
            return [reply(["type": "INVALID_REQUEST", "reason": "INVALID_PARAMS"])]
        }
        var deliveries: [MediaDelivery<Requester>] = []
        if let pending = pendingLoad {
            pendingLoad = nil
            deliveries.append(
                MediaDelivery(
                    recipient: .requester(pending.requester),
                    payload: ["type": "LOAD_CANCELLED", "requestId": pending.requestId]
                )
            )
        }
        let mediaSessionId = nextMediaSessionId
        nextMediaSessionId += 1

        // The session being replaced ends as INTERRUPTED.
        if var previous = session, previous.playerState != "IDLE" {
            previous.position = position(of: previous, at: now)
            previous.playerState = "IDLE"
            previous.idleReason = "INTERRUPTED"
            previous.adBreak = nil
            session = previous
            deliveries.append(broadcastStatus(at: now))
        }
        session = nil

        deliveries.append(
            MediaDelivery(
                recipient: .everyone(except: nil),
                payload: [
                    "type": "MEDIA_STATUS", "requestId": 0,
                    "status": [loadingEntry(mediaSessionId: mediaSessionId, media: media)],
                ]
            )
        )

        if let code = request[MediaFetcher.failureKey]?.intValue ?? settings.failure(url) {
            deliveries.append(
                MediaDelivery(
                    recipient: .everyone(except: nil),
                    payload: [
                        "type": "MEDIA_STATUS", "requestId": 0,
                        "status": [
                            [
                                "mediaSessionId": .number(Double(mediaSessionId)), "playerState": "IDLE",
                                "idleReason": "ERROR", "currentTime": 0, "playbackRate": 1,
                                "supportedMediaCommands": 0,
                                "volume": ["level": .number(volumeLevel), "muted": .bool(isMuted)],
                            ]
                        ],
                    ]
                )
            )
            // pychromecast, like the SDKs, reports a failed load only with the queue item's id.
            let itemId = nextItemId
            nextItemId += 1
            deliveries.append(
                reply([
                    "type": "LOAD_FAILED", "detailedErrorCode": .number(Double(code)),
                    "itemId": .number(Double(itemId)),
                ])
            )
            return deliveries
        }

        let pending = PendingLoad(
            requester: requester,
            requestId: requestId,
            request: request,
            mediaSessionId: mediaSessionId,
            completesAt: now + settings.loadDuration
        )
        if settings.loadDuration > 0 {
            pendingLoad = pending
            return deliveries
        }
        return deliveries + completeLoad(pending, at: now)
    }

    /// The status entry of a media session whose LOAD is in progress: LOADING lives only in `extendedStatus`,
    /// while `playerState` stays IDLE (cast-protocol.md §7.3). A GET_STATUS meanwhile lists it too, so a sender
    /// that lost the LOAD's reply sees that its LOAD arrived.
    func loadingEntry(mediaSessionId: Int, media: [String: JSONValue]) -> JSONValue {
        [
            "mediaSessionId": .number(Double(mediaSessionId)), "playerState": "IDLE",
            "currentTime": 0, "playbackRate": 1, "supportedMediaCommands": 0,
            "volume": ["level": .number(volumeLevel), "muted": .bool(isMuted)],
            "extendedStatus": [
                "playerState": "LOADING", "mediaSessionId": .number(Double(mediaSessionId)),
                "media": .object(media),
            ],
        ]
    }

    mutating func completeLoad(_ pending: PendingLoad, at now: Double) -> [MediaDelivery<Requester>] {
        let request = pending.request
        var items: [[String: JSONValue]]
        var startIndex = 0
        var queueData: [String: JSONValue]?
        if let queue = request["queueData"]?.objectValue,
            let given = queue["items"]?.arrayValue?.compactMap(\.objectValue),
            !given.isEmpty
        {
            items = given
            startIndex = Self.firstItem(of: request)?.index ?? 0
            var data = queue
            data["items"] = nil
            queueData = data
        } else {
            // An explicit null is an absent value: the item gets the defaults.
            var item: [String: JSONValue] = [
                "media": request["media"] ?? [:], "autoplay": .bool(request["autoplay"]?.boolValue ?? true),
            ]
            if let ids = request["activeTrackIds"]?.present { item["activeTrackIds"] = ids }
            items = [item]
        }
        let entries = items.map { item -> Entry in
            defer { nextItemId += 1 }
            var item = item
            item["itemId"] = nil
            return Entry(itemId: nextItemId, item: item)
        }
        var session = Session(mediaSessionId: pending.mediaSessionId, queue: entries, currentIndex: startIndex)
        session.repeatMode =
            request["queueData"]?["repeatMode"]?.stringValue ?? request["repeatMode"]?.stringValue
            ?? "REPEAT_OFF"
        session.rate = request["playbackRate"]?.doubleValue ?? 1
        session.queueData = queueData
        if let customData = request["customData"], customData != [:], customData != .null {
            session.customData = customData
        }
        if let credentials = request["credentials"] {
            self.credentials = ["credentials": credentials, "credentialsType": request["credentialsType"] ?? .null]
        }
        self.session = session
        let autoplay = request["autoplay"]?.boolValue ?? entries[startIndex].autoplay
        start(index: startIndex, at: now, startTime: request["currentTime"]?.seconds, autoplay: autoplay)
        if let ids = request["activeTrackIds"]?.arrayValue?.compactMap(\.intValue) {
            self.session?.activeTrackIds = ids
        }
        return [
            MediaDelivery(
                recipient: .requester(pending.requester),
                payload: statusMessage(at: now, requestId: pending.requestId)
            ),
            broadcastStatus(at: now, except: pending.requester),
        ]
    }
}
