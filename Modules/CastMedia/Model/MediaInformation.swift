import CastTransport

/// What to play (GCKMediaInformation): the content, its type, metadata, tracks and ad breaks.
public struct MediaInformation: JSONConvertible, Hashable {
    /// How the content is delivered.
    public enum StreamType: String, Sendable, Hashable {
        /// Seekable content with a known duration.
        case buffered = "BUFFERED"
        /// A live stream: no fixed duration; senders offer play/stop instead of play/pause.
        case live = "LIVE"
        case none = "NONE"
    }

    /// The content id; by convention the URL unless ``contentURL`` is given.
    public var contentID: String
    /// The content URL when ``contentID`` is an app-level id.
    public var contentURL: String?
    /// The stream type.
    public var streamType: StreamType
    /// The MIME type, for example `video/mp4` or `application/x-mpegURL`.
    public var contentType: String
    /// Descriptive metadata.
    public var metadata: MediaMetadata?
    /// Duration in seconds; `nil` for live streams or when unknown.
    public var duration: Double?
    /// Text, audio and video tracks.
    public var tracks: [MediaTrack]?
    /// The style for text tracks.
    public var textTrackStyle: TextTrackStyle?
    /// Ad breaks.
    public var adBreaks: [AdBreakInfo]?
    /// Ad clips the breaks refer to.
    public var adBreakClips: [AdBreakClipInfo]?
    /// HLS segment format (`aac ac3 e_ac3 fmp4 mp3 ts ts_aac`).
    public var hlsSegmentFormat: String?
    /// App-specific data.
    public var customData: JSONValue?
    /// An Assistant deep link.
    public var entity: String?

    /// Media to play from a URL, with what a sender shows about it and, when known, its duration in seconds.
    public init(
        contentID: String,
        contentType: String,
        streamType: StreamType = .buffered,
        metadata: MediaMetadata? = nil,
        duration: Double? = nil
    ) {
        self.contentID = contentID
        self.contentType = contentType
        self.streamType = streamType
        self.metadata = metadata
        self.duration = duration
    }

    /// The URL that actually plays: ``contentURL`` if set, else ``contentID``.
    public var playableURL: String { contentURL ?? contentID }

    /// Reads the value from the media namespace's wire JSON, ignoring unknown keys.
    public init(json: JSONValue) throws {
        guard let id = json.string("contentId") ?? json.string("contentUrl") else {
            throw CastMediaError(.invalidResponse, "media information without contentId")
        }
        contentID = id
        contentURL = json.string("contentUrl")
        streamType = json.string("streamType").flatMap(StreamType.init(rawValue:)) ?? .buffered
        contentType = json.string("contentType") ?? ""
        metadata = json.decode("metadata")
        duration = json.double("duration").flatMap { $0 >= 0 ? $0 : nil }
        tracks = json.decodeArray("tracks")
        textTrackStyle = json.decode("textTrackStyle")
        adBreaks = json.decodeArray("breaks")
        adBreakClips = json.decodeArray("breakClips")
        hlsSegmentFormat = json.string("hlsSegmentFormat")
        customData = json.value("customData")
        entity = json.string("entity")
    }

    /// The value as the media namespace's wire JSON.
    public var json: JSONValue {
        var builder = JSONObjectBuilder()
        builder.set("contentId", contentID)
        builder.set("contentUrl", contentURL)
        builder.set("streamType", streamType.rawValue)
        builder.set("contentType", contentType)
        builder.set("metadata", metadata)
        builder.set("duration", duration)
        builder.set("tracks", tracks)
        builder.set("textTrackStyle", textTrackStyle)
        builder.set("breaks", adBreaks)
        builder.set("breakClips", adBreakClips)
        builder.set("hlsSegmentFormat", hlsSegmentFormat)
        builder["customData"] = customData
        builder.set("entity", entity)
        return builder.json
    }
}
