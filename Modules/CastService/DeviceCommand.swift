import CastMedia

/// Something a client asks of one device: what the HTTP API's operations and MQTT's command messages become,
/// performed by ``DeviceHub/perform(_:on:)``.
public enum DeviceCommand: Sendable {
    /// Loads media in the Default Media Receiver (launched, or joined when it runs).
    case load(MediaSource, autoplay: Bool = true, startTime: Double? = nil)
    /// A transport command for what plays.
    case control(MediaCommand)
    /// Sets the device's volume level, its mute state, or both.
    case setVolume(level: Double?, muted: Bool?)
    /// Launches a receiver app (joins it when it runs, unless `relaunch`).
    case launch(applicationID: String, relaunch: Bool = false)
    /// Stops the app the device runs.
    case stopApplication
    /// Joins the app the device runs, whoever started it.
    case join
    /// Leaves the service's session; the app keeps running.
    case leave
    /// Enables these tracks (an empty list turns subtitles off) and, when given, styles the subtitles.
    case setTracks(activeTrackIDs: [Int], style: TextTrackStyle? = nil)
    /// Loads a queue in the Default Media Receiver and plays it from `startIndex`.
    case loadQueue([MediaSource], startIndex: Int = 0, repeatMode: RepeatMode? = nil)
    /// Inserts items before the item `before`, or appends them; `play` plays the one inserted item at once.
    case insertIntoQueue([MediaSource], before: Int? = nil, play: Bool = false)
    /// Removes an item from the queue.
    case removeFromQueue(itemID: Int)
    /// Plays an item of the queue.
    case playQueueItem(itemID: Int)
    /// Moves an item before another one, or to the end.
    case moveQueueItem(itemID: Int, before: Int?)
    /// Sets how the queue repeats.
    case setRepeatMode(RepeatMode)

    /// The command's name in metrics: the name an MQTT command message gives it (`load`, `pause`, `volume`, …),
    /// so the service speaks of its commands one way.
    public var name: String {
        switch self {
        case .load: "load"
        case .control(let command):
            switch command {
            case .play: "play"
            case .pause: "pause"
            case .stop: "stop"
            case .seek: "seek"
            case .rate: "rate"
            case .next: "next"
            case .previous: "previous"
            case .skipAd: "skipAd"
            }
        case .setVolume: "volume"
        case .launch: "launch"
        case .stopApplication: "stopApp"
        case .join: "join"
        case .leave: "leave"
        case .setTracks: "tracks"
        case .loadQueue: "queueLoad"
        case .insertIntoQueue: "queueInsert"
        case .removeFromQueue: "queueRemove"
        case .playQueueItem: "queuePlay"
        case .moveQueueItem: "queueMove"
        case .setRepeatMode: "repeat"
        }
    }
}

/// Media to cast: a URL the device fetches, or a local file the service serves.
public enum MediaSource: Sendable {
    /// Media the device fetches itself.
    case media(MediaInformation)
    /// A local file, absolute or relative to a media folder (``DeviceHub/Options/mediaFolders``).
    case file(String, title: String? = nil)
}

/// The queue a device plays, in order.
public struct MediaQueueContents: Sendable {
    /// The items, in queue order.
    public var items: [QueueItem]
    /// The item playing, when known.
    public var currentItemID: Int?
    /// How the queue repeats, when the receiver says.
    public var repeatMode: RepeatMode?
}
