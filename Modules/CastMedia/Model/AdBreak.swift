import CastTransport

/// An ad break in a media item (GCKAdBreakInfo): which clips play at which content position.
public struct AdBreakInfo: JSONConvertible, Hashable, Identifiable {
    /// The break id.
    public var id: String
    /// The clips, in play order.
    public var breakClipIDs: [String]
    /// Content position in seconds; 0 is a pre-roll, −1 a post-roll.
    public var position: Double
    /// Total duration, if known.
    public var duration: Double?
    /// Whether the break was already played.
    public var isWatched: Bool
    /// Whether the break is part of the content stream.
    public var isEmbedded: Bool?

    /// Creates a break.
    public init(id: String, breakClipIDs: [String], position: Double, isWatched: Bool = false) {
        self.id = id
        self.breakClipIDs = breakClipIDs
        self.position = position
        self.isWatched = isWatched
    }

    /// Reads the value from the media namespace's wire JSON, ignoring unknown keys.
    public init(json: JSONValue) throws {
        guard let id = json.string("id") else { throw CastMediaError(.invalidResponse, "a break without id") }
        self.init(
            id: id,
            breakClipIDs: json.strings("breakClipIds") ?? [],
            position: json.double("position") ?? 0,
            isWatched: json.bool("isWatched") ?? false
        )
        duration = json.double("duration")
        isEmbedded = json.bool("isEmbedded")
    }

    /// The value as the media namespace's wire JSON.
    public var json: JSONValue {
        var builder = JSONObjectBuilder()
        builder.set("id", id)
        builder["breakClipIds"] = .array(breakClipIDs.map { .string($0) })
        builder.set("position", position)
        builder.set("duration", duration)
        builder.set("isWatched", isWatched)
        builder.set("isEmbedded", isEmbedded)
        return builder.json
    }
}

/// One ad clip (GCKAdBreakClipInfo).
public struct AdBreakClipInfo: JSONConvertible, Hashable, Identifiable {
    /// The clip id.
    public var id: String
    /// The clip's media URL or id, as `contentId`.
    public var contentID: String?
    /// The clip's URL when ``contentID`` is an id.
    public var contentURL: String?
    /// The clip's MIME type.
    public var contentType: String?
    /// Duration in seconds.
    public var duration: Double?
    /// The clip's title, shown while it plays.
    public var title: String?
    /// An image shown while the clip loads.
    public var posterURL: String?
    /// Where a click on the ad leads.
    public var clickThroughURL: String?
    /// Seconds after which the clip may be skipped; `nil` when it cannot be skipped.
    public var whenSkippable: Double?
    /// App-specific data.
    public var customData: JSONValue?

    /// Creates a clip.
    public init(
        id: String,
        contentID: String? = nil,
        contentType: String? = nil,
        duration: Double? = nil,
        title: String? = nil,
        whenSkippable: Double? = nil
    ) {
        self.id = id
        self.contentID = contentID
        self.contentType = contentType
        self.duration = duration
        self.title = title
        self.whenSkippable = whenSkippable
    }

    /// Reads the value from the media namespace's wire JSON, ignoring unknown keys.
    public init(json: JSONValue) throws {
        guard let id = json.string("id") else { throw CastMediaError(.invalidResponse, "a break clip without id") }
        self.init(
            id: id,
            contentID: json.string("contentId"),
            contentType: json.string("contentType"),
            duration: json.double("duration"),
            title: json.string("title"),
            whenSkippable: json.double("whenSkippable")
        )
        contentURL = json.string("contentUrl")
        posterURL = json.string("posterUrl")
        clickThroughURL = json.string("clickThroughUrl")
        customData = json.value("customData")
    }

    /// The value as the media namespace's wire JSON.
    public var json: JSONValue {
        var builder = JSONObjectBuilder()
        builder.set("id", id)
        builder.set("contentId", contentID)
        builder.set("contentUrl", contentURL)
        builder.set("contentType", contentType)
        builder.set("duration", duration)
        builder.set("title", title)
        builder.set("posterUrl", posterURL)
        builder.set("clickThroughUrl", clickThroughURL)
        builder.set("whenSkippable", whenSkippable)
        builder["customData"] = customData
        return builder.json
    }
}

/// Progress through the ad break that is playing (`breakStatus`).
public struct AdBreakStatus: JSONConvertible, Hashable {
    /// The break that is playing.
    public var breakID: String?
    /// The clip that is playing.
    public var breakClipID: String?
    /// Seconds into the whole break.
    public var currentBreakTime: Double?
    /// Seconds into the current clip.
    public var currentBreakClipTime: Double?
    /// When the current clip becomes skippable, in seconds into the clip; `nil` if never.
    public var whenSkippable: Double?

    /// Creates a status.
    public init(breakID: String? = nil, breakClipID: String? = nil) {
        self.breakID = breakID
        self.breakClipID = breakClipID
    }

    /// Whether SKIP_AD would be accepted now.
    public var isSkippable: Bool {
        guard let whenSkippable else { return false }
        return (currentBreakClipTime ?? 0) >= whenSkippable
    }

    /// Seconds until the clip becomes skippable (0 when it already is); `nil` if it never will.
    public var secondsUntilSkippable: Double? {
        whenSkippable.map { max(0, $0 - (currentBreakClipTime ?? 0)) }
    }

    /// Reads the value from the media namespace's wire JSON, ignoring unknown keys.
    public init(json: JSONValue) throws {
        breakID = json.string("breakId")
        breakClipID = json.string("breakClipId")
        currentBreakTime = json.double("currentBreakTime")
        currentBreakClipTime = json.double("currentBreakClipTime")
        whenSkippable = json.double("whenSkippable")
    }

    /// The value as the media namespace's wire JSON.
    public var json: JSONValue {
        var builder = JSONObjectBuilder()
        builder.set("breakId", breakID)
        builder.set("breakClipId", breakClipID)
        builder.set("currentBreakTime", currentBreakTime)
        builder.set("currentBreakClipTime", currentBreakClipTime)
        builder.set("whenSkippable", whenSkippable)
        return builder.json
    }
}
