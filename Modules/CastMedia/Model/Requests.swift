import CastTransport

/// Everything a LOAD can carry (GCKMediaLoadRequestData): media or a queue, and how to start.
public struct LoadRequestData: Sendable, Hashable {
    /// The media to load (or the first item of ``queueData``).
    public var media: MediaInformation?
    /// A queue to load instead of (or around) a single item.
    public var queueData: QueueData?
    /// Start playing at once. Defaults to `true`.
    public var autoplay = true
    /// Where to start, in seconds; `nil` for the beginning (or the live edge).
    public var currentTime: Double?
    /// The playback rate; `nil` for 1.
    public var playbackRate: Double?
    /// Tracks to activate.
    public var activeTrackIDs: [Int]?
    /// User credentials for the receiver app (Cast Connect).
    public var credentials: String?
    /// Their type: `android`, `ios`, `web` or `cloud`.
    public var credentialsType: String?
    /// App-specific data.
    public var customData: JSONValue?

    /// A load of one media item.
    public init(media: MediaInformation) { self.media = media }

    /// A load of a queue.
    public init(queue: QueueData) { self.queueData = queue }

    /// The LOAD request payload (without `type` and `requestId`, which the client adds).
    var payload: JSONValue {
        var builder = JSONObjectBuilder()
        let start = queueData.map { $0.items.indices.contains($0.startIndex ?? 0) ? $0.startIndex ?? 0 : 0 } ?? 0
        builder.set("media", media ?? queueData.flatMap { $0.items.isEmpty ? nil : $0.items[start].media })
        builder.set("queueData", queueData)
        builder.set("autoplay", autoplay)
        builder.set("currentTime", currentTime)
        builder.set("playbackRate", playbackRate)
        builder.set("activeTrackIds", activeTrackIDs)
        builder.set("credentials", credentials)
        builder.set("credentialsType", credentialsType)
        builder["customData"] = customData
        return builder.json
    }
}

/// A seek (GCKMediaSeekOptions).
public struct SeekOptions: Sendable, Hashable {
    /// What to do after seeking.
    public enum ResumeState: String, Sendable, Hashable {
        /// Keep playing or paused as before.
        case unchanged
        /// Play after the seek.
        case play = "PLAYBACK_START"
        /// Pause after the seek.
        case pause = "PLAYBACK_PAUSE"
    }

    /// The target, in seconds: absolute, or relative to the current position when ``isRelative``.
    public var interval: Double
    /// Whether ``interval`` is relative to the current position.
    public var isRelative: Bool
    /// What to do after seeking. Defaults to ``ResumeState/unchanged``.
    public var resumeState: ResumeState
    /// App-specific data.
    public var customData: JSONValue?

    /// Seeks to `position` seconds.
    public static func to(_ position: Double, resumeState: ResumeState = .unchanged) -> SeekOptions {
        SeekOptions(interval: position, isRelative: false, resumeState: resumeState)
    }

    /// Seeks by `offset` seconds from the current position.
    public static func by(_ offset: Double, resumeState: ResumeState = .unchanged) -> SeekOptions {
        SeekOptions(interval: offset, isRelative: true, resumeState: resumeState)
    }

    /// Creates seek options.
    public init(
        interval: Double,
        isRelative: Bool = false,
        resumeState: ResumeState = .unchanged,
        customData: JSONValue? = nil
    ) {
        self.interval = interval
        self.isRelative = isRelative
        self.resumeState = resumeState
        self.customData = customData
    }
}
