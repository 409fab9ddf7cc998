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
public struct MediaStatus: JSONConvertible, Hashable {
    /// The media session, new with every LOAD; commands must carry it.
    public var mediaSessionID: Int
    /// The media; receivers may omit it after the first status, so the client carries the last one forward.
    public var media: MediaInformation?
    /// Playing, paused, buffering or idle.
    public var playerState: PlayerState
    /// Why the player is idle (only when ``playerState`` is idle).
    public var idleReason: IdleReason?
    /// `LOADING` while a load is in progress (``playerState`` stays idle then).
    public var extendedPlayerState: PlayerState?
    /// The state to show people: ``PlayerState/loading`` while a load is in progress, else ``playerState``.
    public var shownPlayerState: PlayerState { extendedPlayerState ?? playerState }

    /// Whether playback has ended for good (finished, stopped, cancelled or failed), as opposed to idle while
    /// another item loads or after an interruption: what a controller or a file server waits for.
    public var hasEnded: Bool {
        playerState == .idle && extendedPlayerState == nil && idleReason != nil && idleReason != .interrupted
    }
    /// Position in seconds when the status was made.
    public var currentTime: Double
    /// The playback rate; 1 is normal speed.
    public var playbackRate: Double
    /// What the receiver accepts now; the client refuses other commands locally.
    public var supportedMediaCommands: MediaCommands
    /// Stream volume level, 0…1.
    public var volumeLevel: Double?
    /// Whether the stream is muted.
    public var isMuted: Bool?
    /// The tracks shown or heard now (``MediaTrack/id``).
    public var activeTrackIDs: [Int]
    /// The queue item that plays.
    public var currentItemID: Int?
    /// The queue item being loaded.
    public var loadingItemID: Int?
    /// The queue item preloaded next.
    public var preloadedItemID: Int?
    /// The queue items the receiver included (possibly a window); fetch others through ``MediaQueue``.
    public var items: [QueueItem]?
    /// The queue's repeat mode.
    public var repeatMode: RepeatMode?
    /// The queue's description, when it was loaded with one.
    public var queueData: QueueData?
    /// Set while an ad break plays.
    public var adBreakStatus: AdBreakStatus?
    /// What the video plays at, when the receiver says.
    public var videoInfo: VideoInfo?
    /// For live streams with a seekable window: the range in seconds.
    public var liveSeekableRange: ClosedRange<Double>?
    /// App-specific data.
    public var customData: JSONValue?

    /// Reads the value from the media namespace's wire JSON, ignoring unknown keys.
    public init(json: JSONValue) throws {
        guard let sessionID = json.int("mediaSessionId") else {
            throw CastMediaError(.invalidResponse, "a media status without mediaSessionId")
        }
        mediaSessionID = sessionID
        media = json.decode("media")
        playerState = json.string("playerState").flatMap(PlayerState.init(rawValue:)) ?? .idle
        idleReason = json.string("idleReason").flatMap(IdleReason.init(rawValue:))
        let extendedStatus = json["extendedStatus"]
        extendedPlayerState = extendedStatus?.string("playerState").flatMap(PlayerState.init(rawValue:))
        if media == nil, let extended: MediaInformation = extendedStatus?.decode("media") { media = extended }
        currentTime = json.double("currentTime") ?? 0
        playbackRate = json.double("playbackRate") ?? 1
        supportedMediaCommands = MediaCommands(rawValue: json.int("supportedMediaCommands") ?? 0)
        let volume = json["volume"]
        volumeLevel = volume?.double("level")
        isMuted = volume?.bool("muted")
        activeTrackIDs = json.ints("activeTrackIds") ?? []
        currentItemID = json.int("currentItemId")
        loadingItemID = json.int("loadingItemId")
        preloadedItemID = json.int("preloadedItemId")
        items = json.decodeArray("items")
        repeatMode = json.string("repeatMode").flatMap(RepeatMode.init(rawValue:))
        queueData = json.decode("queueData")
        adBreakStatus = json.decode("breakStatus")
        videoInfo = json.decode("videoInfo")
        let range = json["liveSeekableRange"]
        if let start = range?.double("start"), let end = range?.double("end"), start <= end {
            liveSeekableRange = start...end
        }
        customData = json.value("customData")
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
