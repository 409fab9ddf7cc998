import CastTransport

/// The commands a receiver accepts now (`supportedMediaCommands`, cast-protocol.md §7.4).
public struct MediaCommands: OptionSet, Sendable, Hashable {
    /// The `supportedMediaCommands` bits as the receiver sends them.
    public let rawValue: Int
    /// Commands from their bits, including ones this library does not name.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Pausing (and playing again).
    public static let pause = MediaCommands(rawValue: 1)
    /// Seeking.
    public static let seek = MediaCommands(rawValue: 2)
    /// Setting the stream's volume.
    public static let streamVolume = MediaCommands(rawValue: 4)
    /// Muting the stream.
    public static let streamMute = MediaCommands(rawValue: 8)
    /// Skipping forward within the item.
    public static let skipForward = MediaCommands(rawValue: 16)
    /// Skipping backward within the item.
    public static let skipBackward = MediaCommands(rawValue: 32)
    /// Jumping to the next queue item.
    public static let queueNext = MediaCommands(rawValue: 64)
    /// Jumping to the previous queue item.
    public static let queuePrevious = MediaCommands(rawValue: 128)
    /// Shuffling the queue.
    public static let queueShuffle = MediaCommands(rawValue: 256)
    /// Skipping the ad clip that plays, once it allows.
    public static let skipAd = MediaCommands(rawValue: 512)
    /// Repeating the whole queue.
    public static let queueRepeatAll = MediaCommands(rawValue: 1024)
    /// Repeating one item.
    public static let queueRepeatOne = MediaCommands(rawValue: 2048)
    /// Either repeat mode.
    public static let queueRepeat: MediaCommands = [.queueRepeatAll, .queueRepeatOne]
    /// Changing the active tracks and the text style.
    public static let editTracks = MediaCommands(rawValue: 4096)
    /// Changing the playback rate.
    public static let playbackRate = MediaCommands(rawValue: 8192)
    /// The user action LIKE, for apps that offer it.
    public static let like = MediaCommands(rawValue: 16384)
    /// The user action DISLIKE, for apps that offer it.
    public static let dislike = MediaCommands(rawValue: 32768)
    /// The user action FOLLOW, for apps that offer it.
    public static let follow = MediaCommands(rawValue: 65536)
    /// The user action UNFOLLOW, for apps that offer it.
    public static let unfollow = MediaCommands(rawValue: 131_072)
    /// Moving the session to another device (stream transfer).
    public static let streamTransfer = MediaCommands(rawValue: 262_144)
    /// What the Default Media Receiver reports: pause, seek, volume, mute, tracks, rate.
    public static let allBasicMedia = MediaCommands(rawValue: 12303)
}

/// The player's state.
public enum PlayerState: String, Sendable, Hashable {
    case idle = "IDLE", playing = "PLAYING", paused = "PAUSED", buffering = "BUFFERING"
    /// Only in `extendedStatus`: a LOAD is in progress.
    case loading = "LOADING"
}

/// Why the player is idle.
public enum IdleReason: String, Sendable, Hashable {
    case cancelled = "CANCELLED", interrupted = "INTERRUPTED", finished = "FINISHED", error = "ERROR"
}

/// Video dimensions and dynamic range of what plays (GCKVideoInfo).
public struct VideoInfo: JSONConvertible, Hashable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// `sdr`, `hdr` or `dv` (Dolby Vision).
    public var hdrType: String

    /// Video info for a picture of `width`×`height`.
    public init(width: Int, height: Int, hdrType: String = "sdr") {
        self.width = width
        self.height = height
        self.hdrType = hdrType
    }

    /// Reads the value from the media namespace's wire JSON, ignoring unknown keys.
    public init(json: JSONValue) throws {
        self.init(
            width: json.int("width") ?? 0,
            height: json.int("height") ?? 0,
            hdrType: json.string("hdrType") ?? "sdr"
        )
    }

    /// The value as the media namespace's wire JSON.
    public var json: JSONValue {
        ["width": .number(Double(width)), "height": .number(Double(height)), "hdrType": .string(hdrType)]
    }
}

/// One media session's status (GCKMediaStatus), as MEDIA_STATUS reports it.
///
/// A value of one word: its fields are shared between copies until one of them changes (copy-on-write). A status
/// is several hundred bytes, and each reply hands it from the client to its request, its events and every
/// subscriber.
public struct MediaStatus: JSONConvertible, Hashable {
    private struct Fields: Hashable, Sendable {
        var mediaSessionID: Int
        var media: MediaInformation? = nil
        var playerState: PlayerState = .idle
        var idleReason: IdleReason? = nil
        var extendedPlayerState: PlayerState? = nil
        var currentTime: Double = 0
        var playbackRate: Double = 1
        var supportedMediaCommands: MediaCommands = MediaCommands(rawValue: 0)
        var volumeLevel: Double? = nil
        var isMuted: Bool? = nil
        var activeTrackIDs: [Int] = []
        var currentItemID: Int? = nil
        var loadingItemID: Int? = nil
        var preloadedItemID: Int? = nil
        var items: [QueueItem]? = nil
        var repeatMode: RepeatMode? = nil
        var queueData: QueueData? = nil
        var adBreakStatus: AdBreakStatus? = nil
        var videoInfo: VideoInfo? = nil
        var liveSeekableRange: ClosedRange<Double>? = nil
        var customData: JSONValue? = nil
    }

    private var fields: CopyOnWrite<Fields>

    /// The media session, new with every LOAD; commands must carry it.
    public var mediaSessionID: Int {
        get { fields.value.mediaSessionID }
        set { fields.value.mediaSessionID = newValue }
    }
    /// The media; receivers may omit it after the first status, so the client carries the last one forward.
    public var media: MediaInformation? {
        get { fields.value.media }
        set { fields.value.media = newValue }
    }
    /// Playing, paused, buffering or idle.
    public var playerState: PlayerState {
        get { fields.value.playerState }
        set { fields.value.playerState = newValue }
    }
    /// Why the player is idle (only when ``playerState`` is idle).
    public var idleReason: IdleReason? {
        get { fields.value.idleReason }
        set { fields.value.idleReason = newValue }
    }
    /// `LOADING` while a load is in progress (``playerState`` stays idle then).
    public var extendedPlayerState: PlayerState? {
        get { fields.value.extendedPlayerState }
        set { fields.value.extendedPlayerState = newValue }
    }
    /// The state to show people: ``PlayerState/loading`` while a load is in progress, else ``playerState``.
    public var shownPlayerState: PlayerState { extendedPlayerState ?? playerState }

    /// Whether playback has ended for good (finished, stopped, cancelled or failed), as opposed to idle while
    /// another item loads or after an interruption: what a controller or a file server waits for.
    public var hasEnded: Bool {
        playerState == .idle && extendedPlayerState == nil && idleReason != nil && idleReason != .interrupted
    }
    /// Position in seconds when the status was made.
    public var currentTime: Double {
        get { fields.value.currentTime }
        set { fields.value.currentTime = newValue }
    }
    /// The playback rate; 1 is normal speed.
    public var playbackRate: Double {
        get { fields.value.playbackRate }
        set { fields.value.playbackRate = newValue }
    }
    /// What the receiver accepts now; the client refuses other commands locally.
    public var supportedMediaCommands: MediaCommands {
        get { fields.value.supportedMediaCommands }
        set { fields.value.supportedMediaCommands = newValue }
    }
    /// Stream volume level, 0…1.
    public var volumeLevel: Double? {
        get { fields.value.volumeLevel }
        set { fields.value.volumeLevel = newValue }
    }
    /// Whether the stream is muted.
    public var isMuted: Bool? {
        get { fields.value.isMuted }
        set { fields.value.isMuted = newValue }
    }
    /// The tracks shown or heard now (``MediaTrack/id``).
    public var activeTrackIDs: [Int] {
        get { fields.value.activeTrackIDs }
        set { fields.value.activeTrackIDs = newValue }
    }
    /// The queue item that plays.
    public var currentItemID: Int? {
        get { fields.value.currentItemID }
        set { fields.value.currentItemID = newValue }
    }
    /// The queue item being loaded.
    public var loadingItemID: Int? {
        get { fields.value.loadingItemID }
        set { fields.value.loadingItemID = newValue }
    }
    /// The queue item preloaded next.
    public var preloadedItemID: Int? {
        get { fields.value.preloadedItemID }
        set { fields.value.preloadedItemID = newValue }
    }
    /// The queue items the receiver included (possibly a window); fetch others through ``MediaQueue``.
    public var items: [QueueItem]? {
        get { fields.value.items }
        set { fields.value.items = newValue }
    }
    /// The queue's repeat mode.
    public var repeatMode: RepeatMode? {
        get { fields.value.repeatMode }
        set { fields.value.repeatMode = newValue }
    }
    /// The queue's description, when it was loaded with one.
    public var queueData: QueueData? {
        get { fields.value.queueData }
        set { fields.value.queueData = newValue }
    }
    /// Set while an ad break plays.
    public var adBreakStatus: AdBreakStatus? {
        get { fields.value.adBreakStatus }
        set { fields.value.adBreakStatus = newValue }
    }
    /// What the video plays at, when the receiver says.
    public var videoInfo: VideoInfo? {
        get { fields.value.videoInfo }
        set { fields.value.videoInfo = newValue }
    }
    /// For live streams with a seekable window: the range in seconds.
    public var liveSeekableRange: ClosedRange<Double>? {
        get { fields.value.liveSeekableRange }
        set { fields.value.liveSeekableRange = newValue }
    }
    /// App-specific data.
    public var customData: JSONValue? {
        get { fields.value.customData }
        set { fields.value.customData = newValue }
    }

    /// Reads the value from the media namespace's wire JSON, ignoring unknown keys.
    public init(json: JSONValue) throws {
        var parts = DecodedParts()
        try self.init(json: json, reusing: nil, recording: &parts)
    }

    /// Reads a status as ``init(json:)`` does, taking its `media` and `items` from `previous` where they are the
    /// JSON `previous` recorded, and records the `media` and `items` it reads in `parts` (a key that is absent
    /// leaves its record as it was).
    package init(json: JSONValue, reusing previous: DecodedParts?, recording parts: inout DecodedParts) throws {
        var fields = Fields(mediaSessionID: 0)
        var sessionID: Int?
        var extendedStatus: JSONValue?
        for (key, value) in json.members {
            switch key {
            case "mediaSessionId": sessionID = value.intValue
            case "media":
                fields.media = Self.read(value, reusing: previous?.media, recording: &parts.media) { $0.decoded() }
            case "playerState": fields.playerState = value.stringValue.flatMap(PlayerState.init(rawValue:)) ?? .idle
            case "idleReason": fields.idleReason = value.stringValue.flatMap(IdleReason.init(rawValue:))
            case "extendedStatus": extendedStatus = value
            case "currentTime": fields.currentTime = value.doubleValue ?? 0
            case "playbackRate": fields.playbackRate = value.doubleValue ?? 1
            case "supportedMediaCommands": fields.supportedMediaCommands = MediaCommands(rawValue: value.intValue ?? 0)
            case "volume":
                fields.volumeLevel = value.double("level")
                fields.isMuted = value.bool("muted")
            case "activeTrackIds": fields.activeTrackIDs = value.arrayValue?.compactMap(\.intValue) ?? []
            case "currentItemId": fields.currentItemID = value.intValue
            case "loadingItemId": fields.loadingItemID = value.intValue
            case "preloadedItemId": fields.preloadedItemID = value.intValue
            case "items":
                fields.items = Self.read(value, reusing: previous?.items, recording: &parts.items) { $0.decodedArray() }
            case "repeatMode": fields.repeatMode = value.stringValue.flatMap(RepeatMode.init(rawValue:))
            case "queueData": fields.queueData = value.decoded()
            case "breakStatus": fields.adBreakStatus = value.decoded()
            case "videoInfo": fields.videoInfo = value.decoded()
            case "liveSeekableRange":
                if let start = value.double("start"), let end = value.double("end"), start <= end {
                    fields.liveSeekableRange = start...end
                }
            case "customData": fields.customData = value.present
            default: break
            }
        }
        guard let sessionID else {
            throw CastMediaError(.invalidResponse, "a media status without mediaSessionId")
        }
        fields.mediaSessionID = sessionID
        if let extendedStatus {
            fields.extendedPlayerState = extendedStatus.string("playerState").flatMap(PlayerState.init(rawValue:))
            if fields.media == nil { fields.media = extendedStatus.decode("media") }
        }
        self.fields = CopyOnWrite(fields)
    }

    /// `value` as `decode` reads it, or as `previous` recorded it when it is the same JSON; recorded in `record`.
    private static func read<Value>(
        _ value: JSONValue,
        reusing previous: (json: JSONValue, value: Value?)?,
        recording record: inout (json: JSONValue, value: Value?)?,
        _ decode: (JSONValue) -> Value?
    ) -> Value? {
        if let previous, previous.json == value {
            record = previous
            return previous.value
        }
        let decoded = decode(value)
        record = (value, decoded)
        return decoded
    }

    /// The `media` and `items` JSON of a status with what they decoded to.
    ///
    /// Receivers often repeat both from status to status: the window of queue items around the current one, each
    /// with its media, a few hundred bytes per item, and some the media as well. The next status that carries them
    /// unchanged takes the decoded values from here instead of decoding them again, and, as the same copies, they
    /// then compare equal at once where the client looks for changes. "Unchanged" is `JSONValue`'s equality, which
    /// compares strings as Swift does (by canonical equivalence).
    package struct DecodedParts: Sendable {
        /// The last `media` read, and what it decoded to (`nil` when it did not decode).
        package var media: (json: JSONValue, value: MediaInformation?)?
        /// The last `items` read, and what they decoded to.
        package var items: (json: JSONValue, value: [QueueItem]?)?

        /// An empty record: the first status decodes everything.
        package init() {}
    }

    /// The value as the media namespace's wire JSON.
    public var json: JSONValue {
        var builder = JSONObjectBuilder()
        builder.set("mediaSessionId", mediaSessionID)
        builder.set("media", media)
        builder.set("playerState", playerState == .loading ? PlayerState.idle.rawValue : playerState.rawValue)
        builder.set("idleReason", idleReason?.rawValue)
        if let extendedPlayerState {
            builder["extendedStatus"] = ["playerState": .string(extendedPlayerState.rawValue)]
        }
        builder.set("currentTime", currentTime)
        builder.set("playbackRate", playbackRate)
        builder.set("supportedMediaCommands", supportedMediaCommands.rawValue)
        var volume = JSONObjectBuilder()
        volume.set("level", volumeLevel)
        volume.set("muted", isMuted)
        builder["volume"] = volume.json
        builder.set("activeTrackIds", activeTrackIDs)
        builder.set("currentItemId", currentItemID)
        builder.set("loadingItemId", loadingItemID)
        builder.set("preloadedItemId", preloadedItemID)
        builder.set("items", items)
        builder.set("repeatMode", repeatMode?.rawValue)
        builder.set("queueData", queueData)
        builder.set("breakStatus", adBreakStatus)
        builder.set("videoInfo", videoInfo)
        if let liveSeekableRange {
            builder["liveSeekableRange"] = [
                "start": .number(liveSeekableRange.lowerBound), "end": .number(liveSeekableRange.upperBound),
            ]
        }
        builder["customData"] = customData
        return builder.json
    }

    /// Whether the stream is live: senders offer play/stop rather than play/pause.
    public var isLiveStream: Bool { media?.streamType == .live }

    /// Whether an ad break is playing.
    public var isPlayingAd: Bool { adBreakStatus != nil }

    /// The current queue item, when the status carries it.
    public var currentItem: QueueItem? { items?.first { $0.itemID == currentItemID } }
}

extension MediaStatus {
    /// Which of two entries of one MEDIA_STATUS describes the media: some devices list several media sessions (a
    /// finished one beside the one playing). An entry that is not idle wins, then the session `known` (the one
    /// followed so far), then the newer session.
    package static func prefers(_ candidate: MediaStatus, over other: MediaStatus, known: Int?) -> Bool {
        let (active, otherActive) = (candidate.playerState != .idle, other.playerState != .idle)
        if active != otherActive { return active }
        let (isKnown, otherIsKnown) = (candidate.mediaSessionID == known, other.mediaSessionID == known)
        if isKnown != otherIsKnown { return isKnown }
        return candidate.mediaSessionID > other.mediaSessionID
    }

    /// The entry of a MEDIA_STATUS message that describes the media (``prefers(_:over:known:)``), `nil` for none
    /// (no media session, or no entry that decodes).
    package static func preferred(in message: JSONValue, known: Int?) -> MediaStatus? {
        var best: MediaStatus?
        for entry in message["status"]?.arrayValue ?? [] {
            guard let status = try? MediaStatus(json: entry) else { continue }
            if let current = best, !prefers(status, over: current, known: known) { continue }
            best = status
        }
        return best
    }
}
