import CastTransport

/// How a queue repeats (GCKMediaRepeatMode).
public enum RepeatMode: String, Sendable, Hashable, CaseIterable {
    case off = "REPEAT_OFF"
    case all = "REPEAT_ALL"
    case single = "REPEAT_SINGLE"
    case allAndShuffle = "REPEAT_ALL_AND_SHUFFLE"
}

/// One queue entry (GCKMediaQueueItem). The receiver assigns ``itemID``; leave it `nil` when inserting.
public struct QueueItem: JSONConvertible, Hashable {
    /// The receiver-assigned id; `nil` for items not yet in a queue.
    public var itemID: Int?
    /// The media.
    public var media: MediaInformation
    /// Whether the item starts by itself when reached. Defaults to `true`.
    public var autoplay: Bool
    /// Seconds before the previous item ends at which to preload this one.
    public var preloadTime: Double?
    /// Where to start, in seconds.
    public var startTime: Double?
    /// How long to play, in seconds.
    public var playbackDuration: Double?
    /// Tracks active when the item starts.
    public var activeTrackIDs: [Int]?
    /// App-specific data.
    public var customData: JSONValue?

    /// A new item.
    public init(
        media: MediaInformation,
        autoplay: Bool = true,
        preloadTime: Double? = nil,
        startTime: Double? = nil,
        activeTrackIDs: [Int]? = nil,
        customData: JSONValue? = nil
    ) {
        self.media = media
        self.autoplay = autoplay
        self.preloadTime = preloadTime
        self.startTime = startTime
        self.activeTrackIDs = activeTrackIDs
        self.customData = customData
    }

    /// Reads the value from the media namespace's wire JSON, ignoring unknown keys.
    public init(json: JSONValue) throws {
        // Read into locals and initialized once: no placeholder media (a box of its own) made and thrown away for
        // every item of every status.
        var media: MediaInformation?
        var itemID: Int?
        var autoplay = true
        var preloadTime: Double?
        var startTime: Double?
        var playbackDuration: Double?
        var activeTrackIDs: [Int]?
        var customData: JSONValue?
        for (key, value) in json.members {
            switch key {
            case "media": media = value.decoded()
            case "itemId": itemID = value.intValue
            case "autoplay": autoplay = value.boolValue ?? true
            case "preloadTime": preloadTime = value.doubleValue
            case "startTime": startTime = value.doubleValue
            case "playbackDuration": playbackDuration = value.doubleValue
            case "activeTrackIds": activeTrackIDs = value.arrayValue?.compactMap(\.intValue)
            case "customData": customData = value.present
            default: break
            }
        }
        guard let media else { throw CastMediaError(.invalidResponse, "a queue item without media") }
        self.init(
            media: media,
            autoplay: autoplay,
            preloadTime: preloadTime,
            startTime: startTime,
            activeTrackIDs: activeTrackIDs,
            customData: customData
        )
        self.itemID = itemID
        self.playbackDuration = playbackDuration
    }

    /// The value as the media namespace's wire JSON.
    public var json: JSONValue {
        var builder = JSONObjectBuilder()
        builder.set("itemId", itemID)
        builder.set("media", media)
        builder.set("autoplay", autoplay)
        builder.set("preloadTime", preloadTime)
        builder.set("startTime", startTime)
        builder.set("playbackDuration", playbackDuration)
        builder.set("activeTrackIds", activeTrackIDs)
        builder["customData"] = customData
        return builder.json
    }
}

/// A queue to load (GCKMediaQueueData).
public struct QueueData: JSONConvertible, Hashable {
    /// The app's id for the queue.
    public var id: String?
    /// The queue's name.
    public var name: String?
    /// A description of the queue.
    public var queueDescription: String?
    /// `ALBUM PLAYLIST AUDIOBOOK RADIO_STATION PODCAST_SERIES TV_SERIES VIDEO_PLAYLIST LIVE_TV MOVIE`.
    public var queueType: String?
    /// The items.
    public var items: [QueueItem]
    /// The item to start with.
    public var startIndex: Int?
    /// The repeat mode.
    public var repeatMode: RepeatMode?
    /// Where to start in the first item, in seconds.
    public var startTime: Double?

    /// A queue of items.
    public init(items: [QueueItem], startIndex: Int? = nil, repeatMode: RepeatMode? = nil, name: String? = nil) {
        self.items = items
        self.startIndex = startIndex
        self.repeatMode = repeatMode
        self.name = name
    }

    /// Reads the value from the media namespace's wire JSON, ignoring unknown keys.
    public init(json: JSONValue) throws {
        self.init(
            items: json.decodeArray("items") ?? [],
            startIndex: json.int("startIndex"),
            repeatMode: json.string("repeatMode").flatMap(RepeatMode.init(rawValue:)),
            name: json.string("name")
        )
        id = json.string("id")
        queueDescription = json.string("description")
        queueType = json.string("queueType")
        startTime = json.double("startTime")
    }

    /// The value as the media namespace's wire JSON.
    public var json: JSONValue {
        var builder = JSONObjectBuilder()
        builder.set("id", id)
        builder.set("name", name)
        builder.set("description", queueDescription)
        builder.set("queueType", queueType)
        builder.set("items", items)
        builder.set("startIndex", startIndex)
        builder.set("repeatMode", repeatMode?.rawValue)
        builder.set("startTime", startTime)
        return builder.json
    }
}

/// A QUEUE_CHANGE notification: what changed in the receiver's queue.
public struct QueueChange: Sendable, Hashable {
    /// `INSERT`, `REMOVE`, `ITEMS_CHANGE`, `UPDATE` or `NO_CHANGE`.
    public var changeType: String
    /// The items concerned.
    public var itemIDs: [Int]
    /// For inserts: the item the new ones were inserted before.
    public var insertBefore: Int?
    /// Increases with every change; a gap means a change was missed.
    public var sequenceNumber: Int?

    init(json: JSONValue) {
        changeType = json.string("changeType") ?? "UPDATE"
        itemIDs = json.ints("itemIds") ?? []
        insertBefore = json.int("insertBefore")
        sequenceNumber = json.int("sequenceNumber")
    }
}
