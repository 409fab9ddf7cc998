import CastTransport

/// Where a media message goes: back to the requester (with its `requestId`) or to every connected sender.
enum MediaRecipient<Requester: Sendable>: Sendable {
    /// The reply to a request.
    case requester(Requester)
    /// An unsolicited message (`requestId` 0) to every sender except `excluded`.
    case everyone(except: Requester?)
}

/// One message the player wants sent.
struct MediaDelivery<Requester: Sendable>: Sendable {
    var recipient: MediaRecipient<Requester>
    var payload: JSONValue
}

/// The Default Media Receiver's player, as a state machine with no I/O: requests and clock ticks go in,
/// messages to send come out (cast-protocol.md §7).
///
/// Time is a parameter (`now`, seconds on the emulator's clock), so every transition is unit-testable.
/// Content is never fetched: an item's duration comes from its `duration` or ``Settings/defaultDuration``.
struct MediaPlayer<Requester: Sendable>: Sendable {
    /// Behaviour knobs.
    struct Settings: Sendable {
        /// Duration of BUFFERED media that gives none.
        var defaultDuration: Double = 600
        /// Seconds a LOAD spends loading before it plays; 0 completes at once.
        var loadDuration: Double = 0
        /// The break inserted before loaded media that has none.
        var prerollAd: PrerollAd?
        /// Whether live streams leave PAUSE and SEEK out of `supportedMediaCommands`, as some apps' receivers do;
        /// the Default Media Receiver offers them for live streams too (cast-protocol.md §7.4).
        var liveStreamsCannotPause = false
        /// The detailed error code a content URL fails with, or `nil` when it loads.
        var failure: @Sendable (String) -> Int? = MediaPlayer.defaultFailure
    }

    /// Content whose URL asks for failure (`fail=1` in the query) or whose host is `*.invalid` fails with
    /// MEDIA_SRC_NOT_SUPPORTED (104) / MEDIA_NETWORK (103).
    static func defaultFailure(url: String) -> Int? {
        if url.contains("fail=1") { return 104 }
        if let host = url.split(separator: "/").dropFirst(1).first(where: { !$0.isEmpty }),
            host.split(separator: ":").first?.hasSuffix(".invalid") == true
        {
            return 103
        }
        return nil
    }

    struct Entry: Sendable {
        var itemId: Int
        var item: [String: JSONValue]

        var media: [String: JSONValue] { item["media"]?.objectValue ?? [:] }
        var isLive: Bool { media["streamType"]?.stringValue == "LIVE" }
        var autoplay: Bool { item["autoplay"]?.boolValue ?? true }
        var json: JSONValue {
            var object = item
            object["itemId"] = .number(Double(itemId))
            if object["autoplay"]?.boolValue == nil { object["autoplay"] = true }
            return .object(object)
        }
        var breaks: [[String: JSONValue]] { media["breaks"]?.arrayValue?.compactMap(\.objectValue) ?? [] }
        func clip(_ id: String) -> [String: JSONValue]? {
            media["breakClips"]?.arrayValue?.compactMap(\.objectValue).first { $0["id"]?.stringValue == id }
        }
    }

    struct AdBreak: Sendable {
        var breakId: String
        var clipIds: [String]
        var clipIndex: Int
        /// Seconds into the current clip at `anchorTime`.
        var clipPosition: Double
        var anchorTime: Double
        /// Content position to resume at; `nil` for a post-roll (the item finishes afterwards).
        var resumePosition: Double?
    }

    struct Session: Sendable {
        var mediaSessionId: Int
        var queue: [Entry]
        var currentIndex: Int
        var playerState = "PLAYING"
        var idleReason: String?
        var position: Double = 0
        var anchorTime: Double = 0
        var rate: Double = 1
        var activeTrackIds: [Int] = []
        var textTrackStyle: JSONValue?
        var repeatMode = "REPEAT_OFF"
        var preloadedItemId: Int?
        var adBreak: AdBreak?
        var watchedBreaks: Set<String> = []
        var queueData: [String: JSONValue]?
        var customData: JSONValue?
        var sequenceNumber = 0
        /// Where the current item started playing (its `startTime`, the LOAD's `currentTime`, or 0).
        var itemStartPosition: Double = 0
        /// Items that ended in a row with (almost) nothing to play: see ``MediaPlayer/shortestPlay``.
        var blankEndings = 0

        var current: Entry { queue[currentIndex] }
    }

    /// An item with less than this much content (seconds) between where it starts and where it ends counts as
    /// blank: a start time at or past its end, or a tiny duration. A whole round of blank items (every item of
    /// the queue once, or the one item under REPEAT_SINGLE) ends playback as FINISHED rather than repeating
    /// without end: a device spends real time on every item it starts, the emulator's clock does not.
    static var shortestPlay: Double { 0.1 }

    struct PendingLoad: Sendable {
        var requester: Requester
        var requestId: JSONValue
        var request: [String: JSONValue]
        var mediaSessionId: Int
        var completesAt: Double
    }

    var settings: Settings
    var session: Session?
    var pendingLoad: PendingLoad?
    var volumeLevel: Double = 1
    var isMuted = false
    var credentials: [String: JSONValue] = [:]
    var nextMediaSessionId = 1
    var nextItemId = 1

    init(settings: Settings = Settings()) { self.settings = settings }

    // MARK: - Time

    /// Content position of the current item at `now`.
    func position(of session: Session, at now: Double) -> Double {
        guard session.playerState == "PLAYING", session.adBreak == nil else { return session.position }
        let moved = session.position + (now - session.anchorTime) * session.rate
        if let duration = duration(of: session.current) { return min(moved, duration) }
        return moved
    }

    /// Where the item ends: its `playbackDuration` after `startTime` when given, else the media's duration (or
    /// the default for BUFFERED media without one); `nil` for live streams.
    func duration(of entry: Entry) -> Double? {
        var full: Double? = entry.isLive ? nil : settings.defaultDuration
        if let value = entry.media["duration"]?.seconds, value > 0 { full = value }
        if let limit = entry.item["playbackDuration"]?.seconds, limit > 0 {
            let end = max(0, entry.item["startTime"]?.seconds ?? 0) + limit
            return full.map { min($0, end) } ?? end
        }
        return full
    }

    /// `time` when it is finite, clamped to ±``longestMediaTime``; `nil` otherwise.
    static func sanitized(_ time: Double?) -> Double? {
        guard let time, time.isFinite else { return nil }
        return min(max(time, -longestMediaTime), longestMediaTime)
    }

    mutating func reanchor(at now: Double) {
        guard var session else { return }
        if var adBreak = session.adBreak {
            if session.playerState == "PLAYING" { adBreak.clipPosition += now - adBreak.anchorTime }
            adBreak.anchorTime = now
            session.adBreak = adBreak
        } else {
            session.position = position(of: session, at: now)
        }
        session.anchorTime = now
        self.session = session
    }

    /// The next moment something happens on its own (a clip or item ends, a break starts, preload, a pending
    /// load completes), if any.
    func nextDeadline(after now: Double) -> Double? {
        var deadlines: [Double] = []
        if let pendingLoad { deadlines.append(pendingLoad.completesAt) }
        guard let session, session.playerState == "PLAYING" else { return deadlines.min() }
        if let adBreak = session.adBreak {
            let clipDuration = clipDuration(session.current, adBreak.clipIds[adBreak.clipIndex])
            deadlines.append(adBreak.anchorTime + max(0, clipDuration - adBreak.clipPosition))
            return deadlines.min()
        }
        let rate = max(session.rate, 0.0001)
        if let duration = duration(of: session.current) {
            deadlines.append(session.anchorTime + max(0, duration - session.position) / rate)
            if session.preloadedItemId == nil, let next = nextIndex(of: session, wrapping: true),
                let preload = session.queue[next].item["preloadTime"]?.seconds, preload > 0
            {
                let at = session.anchorTime + max(0, duration - preload - session.position) / rate
                deadlines.append(max(at, now))
            }
        }
        if let breakPosition = nextMidrollPosition(in: session) {
            deadlines.append(session.anchorTime + max(0, breakPosition - session.position) / rate)
        }
        return deadlines.min()
    }

    private func clipDuration(_ entry: Entry, _ clipId: String) -> Double {
        Self.clipDuration(entry, clipId)
    }

    /// A break clip's length: its `duration`, or 15 s when it gives none (or no usable one).
    static func clipDuration(_ entry: Entry, _ clipId: String) -> Double {
        max(0, entry.clip(clipId)?["duration"]?.seconds ?? 15)
    }

    private func nextMidrollPosition(in session: Session) -> Double? {
        session.current.breaks.compactMap { item -> Double? in
            guard let id = item["id"]?.stringValue, !session.watchedBreaks.contains(id),
                let position = item["position"]?.seconds, position > 0, position > session.position
            else { return nil }
            return position
        }.min()
    }

    /// Applies everything that happened up to `now`: ad clips ending, breaks starting, items ending (with
    /// repeat and autoplay), preloading, pending loads completing.
    mutating func advance(to now: Double) -> [MediaDelivery<Requester>] {
        var deliveries: [MediaDelivery<Requester>] = []
        for _ in 0..<1000 {
            guard let deadline = nextDeadline(after: now - 1e-9), deadline <= now + 1e-9 else { break }
            deliveries += fire(at: deadline)
        }
        return deliveries
    }

    private mutating func fire(at time: Double) -> [MediaDelivery<Requester>] {
        if let pendingLoad, pendingLoad.completesAt <= time + 1e-9 {
            self.pendingLoad = nil
            return completeLoad(pendingLoad, at: time)
        }
        guard var session, session.playerState == "PLAYING" else { return [] }
        if var adBreak = session.adBreak {
            // The clip ended: next clip, or back to content.
            adBreak.clipIndex += 1
            if adBreak.clipIndex < adBreak.clipIds.count {
                adBreak.clipPosition = 0
                adBreak.anchorTime = time
                session.adBreak = adBreak
                self.session = session
                return [broadcastStatus(at: time)]
            }
            session.watchedBreaks.insert(adBreak.breakId)
            session.adBreak = nil
            session.anchorTime = time
            self.session = session
            if let resume = adBreak.resumePosition {
                self.session?.position = resume
                return [broadcastStatus(at: time)]
            }
            return finishItem(at: time)
        }
        let position = position(of: session, at: time)
        if let duration = duration(of: session.current), position >= duration - 1e-6 {
            session.position = duration
            session.anchorTime = time
            self.session = session
            if startBreak(where: { $0 == -1 }, resumeAt: nil, at: time) { return [broadcastStatus(at: time)] }
            return finishItem(at: time)
        }
        if let breakPosition = nextMidrollPosition(in: session), position >= breakPosition - 1e-6 {
            session.position = breakPosition
            session.anchorTime = time
            self.session = session
            _ = startBreak(where: { $0 == breakPosition }, resumeAt: breakPosition, at: time)
            return [broadcastStatus(at: time)]
        }
        if session.preloadedItemId == nil, let next = nextIndex(of: session, wrapping: true) {
            session.preloadedItemId = session.queue[next].itemId
            self.session = session
            return [broadcastStatus(at: time)]
        }
        return []
    }

    /// Starts the first unwatched break whose position satisfies `matches`; `false` when there is none.
    private mutating func startBreak(where matches: (Double) -> Bool, resumeAt: Double?, at time: Double) -> Bool {
        guard var session else { return false }
        for item in session.current.breaks {
            guard let id = item["id"]?.stringValue, !session.watchedBreaks.contains(id),
                let position = item["position"]?.seconds, matches(position)
            else { continue }
            let clipIds = item["breakClipIds"]?.arrayValue?.compactMap(\.stringValue) ?? []
            guard !clipIds.isEmpty else {
                session.watchedBreaks.insert(id)
                continue
            }
            session.adBreak = AdBreak(
                breakId: id,
                clipIds: clipIds,
                clipIndex: 0,
                clipPosition: 0,
                anchorTime: time,
                resumePosition: resumeAt
            )
            self.session = session
            return true
        }
        self.session = session
        return false
    }

    func nextIndex(of session: Session, wrapping: Bool) -> Int? {
        if session.currentIndex + 1 < session.queue.count { return session.currentIndex + 1 }
        if wrapping, session.repeatMode == "REPEAT_ALL" || session.repeatMode == "REPEAT_ALL_AND_SHUFFLE" {
            return session.queue.isEmpty ? nil : 0
        }
        return nil
    }

    private mutating func finishItem(at time: Double) -> [MediaDelivery<Requester>] {
        guard var session else { return [] }
        let span = (duration(of: session.current) ?? .infinity) - session.itemStartPosition
        session.blankEndings = span < Self.shortestPlay ? session.blankEndings + 1 : 0
        let round = session.repeatMode == "REPEAT_SINGLE" ? 1 : session.queue.count
        if session.blankEndings >= round, session.repeatMode != "REPEAT_OFF" {
            session.playerState = "IDLE"
            session.idleReason = "FINISHED"
            session.anchorTime = time
            self.session = session
            return [broadcastStatus(at: time)]
        }
        self.session = session
        switch session.repeatMode {
        case "REPEAT_SINGLE":
            start(index: session.currentIndex, at: time, startTime: 0)
            return [broadcastStatus(at: time)]
        case "REPEAT_ALL_AND_SHUFFLE" where session.currentIndex + 1 >= session.queue.count:
            session.queue.shuffle()
            self.session = session
            start(index: 0, at: time)
            return [broadcastStatus(at: time)]
        default:
            if let next = nextIndex(of: session, wrapping: true) {
                start(index: next, at: time)
                return [broadcastStatus(at: time)]
            }
            session.playerState = "IDLE"
            session.idleReason = "FINISHED"
            session.anchorTime = time
            self.session = session
            return [broadcastStatus(at: time)]
        }
    }

    /// Makes `index` the current item: its start time, tracks, pre-roll, autoplay.
    mutating func start(index: Int, at time: Double, startTime: Double? = nil, autoplay: Bool? = nil) {
        guard var session, session.queue.indices.contains(index) else { return }
        session.currentIndex = index
        let entry = session.queue[index]
        // Never before the start, as SEEK does.
        session.position = max(0, Self.sanitized(startTime) ?? entry.item["startTime"]?.seconds ?? 0)
        session.itemStartPosition = session.position
        session.anchorTime = time
        session.playerState = (autoplay ?? entry.autoplay) ? "PLAYING" : "PAUSED"
        session.idleReason = nil
        session.adBreak = nil
        session.preloadedItemId = nil
        // Breaks the sender marks as watched are not played again.
        session.watchedBreaks = Set(
            entry.breaks.compactMap { item in
                item["isWatched"]?.boolValue == true ? item["id"]?.stringValue : nil
            }
        )
        session.activeTrackIds = entry.item["activeTrackIds"]?.arrayValue?.compactMap(\.intValue) ?? []
        self.session = session
        if session.position == 0 {
            _ = startBreak(where: { $0 == 0 }, resumeAt: 0, at: time)
        }
    }
}

/// The largest time, duration or position (seconds, about 31,700 years) the player counts with: a request may
/// carry any JSON number (`1e300`), and sums and differences of such values must stay finite, so that no deadline
/// or position becomes infinite or NaN. A deadline that far away never comes on the emulator's clock.
let longestMediaTime: Double = 1e12

extension JSONValue {
    /// A time, duration or position in seconds: the number when it is finite, clamped to ±``longestMediaTime``;
    /// `nil` for anything else (absent, not a number, infinite or NaN, which a JSON parser may produce from
    /// `1e400`), so that the player's arithmetic stays finite.
    var seconds: Double? { MediaPlayer<Int>.sanitized(doubleValue) }
}
