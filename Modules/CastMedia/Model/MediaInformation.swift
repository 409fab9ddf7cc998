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

    /// The fields, shared by copies until one changes: media information is some 300 bytes, in every status,
    /// queue item and load request.
    private struct Fields: Hashable, Sendable {
        var contentID: String
        var contentURL: String? = nil
        var streamType: StreamType
        var contentType: String
        var metadata: MediaMetadata? = nil
        var duration: Double? = nil
        var tracks: [MediaTrack]? = nil
        var textTrackStyle: TextTrackStyle? = nil
        var adBreaks: [AdBreakInfo]? = nil
        var adBreakClips: [AdBreakClipInfo]? = nil
        var hlsSegmentFormat: String? = nil
        var customData: JSONValue? = nil
        var entity: String? = nil
    }

    private var fields: CopyOnWrite<Fields>

    /// The content id; by convention the URL unless ``contentURL`` is given.
    public var contentID: String {
        get { fields.value.contentID }
        set { fields.value.contentID = newValue }
    }
    /// The content URL when ``contentID`` is an app-level id.
    public var contentURL: String? {
        get { fields.value.contentURL }
        set { fields.value.contentURL = newValue }
    }
    /// The stream type.
    public var streamType: StreamType {
        get { fields.value.streamType }
        set { fields.value.streamType = newValue }
    }
    /// The MIME type, for example `video/mp4` or `application/x-mpegURL`.
    public var contentType: String {
        get { fields.value.contentType }
        set { fields.value.contentType = newValue }
    }
    /// Descriptive metadata.
    public var metadata: MediaMetadata? {
        get { fields.value.metadata }
        set { fields.value.metadata = newValue }
    }
    /// Duration in seconds; `nil` for live streams or when unknown.
    public var duration: Double? {
        get { fields.value.duration }
        set { fields.value.duration = newValue }
    }
    /// Text, audio and video tracks.
    public var tracks: [MediaTrack]? {
        get { fields.value.tracks }
        set { fields.value.tracks = newValue }
    }
    /// The style for text tracks.
    public var textTrackStyle: TextTrackStyle? {
        get { fields.value.textTrackStyle }
        set { fields.value.textTrackStyle = newValue }
    }
    /// Ad breaks.
    public var adBreaks: [AdBreakInfo]? {
        get { fields.value.adBreaks }
        set { fields.value.adBreaks = newValue }
    }
    /// Ad clips the breaks refer to.
    public var adBreakClips: [AdBreakClipInfo]? {
        get { fields.value.adBreakClips }
        set { fields.value.adBreakClips = newValue }
    }
    /// HLS segment format (`aac ac3 e_ac3 fmp4 mp3 ts ts_aac`).
    public var hlsSegmentFormat: String? {
        get { fields.value.hlsSegmentFormat }
        set { fields.value.hlsSegmentFormat = newValue }
    }
    /// App-specific data.
    public var customData: JSONValue? {
        get { fields.value.customData }
        set { fields.value.customData = newValue }
    }
    /// An Assistant deep link.
    public var entity: String? {
        get { fields.value.entity }
        set { fields.value.entity = newValue }
    }

    /// Media to play from a URL, with what a sender shows about it and, when known, its duration in seconds.
    public init(
        contentID: String,
        contentType: String,
        streamType: StreamType = .buffered,
        metadata: MediaMetadata? = nil,
        duration: Double? = nil
    ) {
        fields = CopyOnWrite(
            Fields(
                contentID: contentID,
                streamType: streamType,
                contentType: contentType,
                metadata: metadata,
                duration: duration
            )
        )
    }

    /// The URL that actually plays: ``contentURL`` if set, else ``contentID``.
    public var playableURL: String { contentURL ?? contentID }

    /// Reads the value from the media namespace's wire JSON, ignoring unknown keys.
    public init(json: JSONValue) throws {
        self.init(contentID: "", contentType: "")
        var id: String?
        for (key, value) in json.members {
            switch key {
            case "contentId": id = value.stringValue
            case "contentUrl": contentURL = value.stringValue
            case "streamType": streamType = value.stringValue.flatMap(StreamType.init(rawValue:)) ?? .buffered
            case "contentType": contentType = value.stringValue ?? ""
            case "metadata": metadata = value.decoded()
            case "duration": duration = value.doubleValue.flatMap { $0 >= 0 ? $0 : nil }
            case "tracks": tracks = value.decodedArray()
            case "textTrackStyle": textTrackStyle = value.decoded()
            case "breaks": adBreaks = value.decodedArray()
            case "breakClips": adBreakClips = value.decodedArray()
            case "hlsSegmentFormat": hlsSegmentFormat = value.stringValue
            case "customData": customData = value.present
            case "entity": entity = value.stringValue
            default: break
            }
        }
        guard let id = id ?? contentURL else {
            throw CastMediaError(.invalidResponse, "media information without contentId")
        }
        contentID = id
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
