import CastTransport
import Testing

@testable import CastReceiver

/// The player under test: requesters are plain integers.
typealias Player = MediaPlayer<Int>

extension MediaDelivery where Requester == Int {
    /// The requester this reply goes to, `nil` for a broadcast.
    var replyTarget: Int? {
        if case .requester(let requester) = recipient { return requester }
        return nil
    }

    /// Whether this goes to every sender.
    var isBroadcast: Bool {
        if case .everyone = recipient { return true }
        return false
    }

    /// For broadcasts: the sender left out (`.some(nil)` when nobody is).
    var excluded: Int?? {
        if case .everyone(let except) = recipient { return .some(except) }
        return nil
    }
}

/// What one request produced.
struct Outcome {
    var requestId: Int
    var requester: Int
    var deliveries: [MediaDelivery<Int>]

    /// The one reply carrying the request's id (`.null` when there is none; ``PlayerHarness/send`` records an
    /// issue then).
    var reply: JSONValue {
        deliveries.first { $0.replyTarget == requester && $0.payload["requestId"]?.intValue == requestId }?.payload
            ?? .null
    }

    /// The reply's `status[0]`.
    var status: JSONValue? { reply.firstStatus }

    /// Every broadcast payload, in order.
    var broadcasts: [JSONValue] { deliveries.filter(\.isBroadcast).map(\.payload) }

    /// Broadcast MEDIA_STATUS entries, in order.
    var broadcastStatuses: [JSONValue] {
        broadcasts.filter { $0.type == "MEDIA_STATUS" }.compactMap(\.firstStatus)
    }

    /// Broadcast QUEUE_CHANGE messages.
    var queueChanges: [JSONValue] { broadcasts.filter { $0.type == "QUEUE_CHANGE" } }
}

/// Drives a ``MediaPlayer`` with a notion of "now", numbering requests and checking the protocol's invariants on
/// every output: exactly one reply per request carrying its id, broadcasts carry requestId 0, and LOADING never
/// appears as a `playerState` (cast-protocol.md §7.3, §9).
struct PlayerHarness {
    var player: Player
    var now: Double = 0
    var nextRequestId = 1
    /// Every payload the player produced, in order.
    var log: [JSONValue] = []

    init(settings: Player.Settings = Player.Settings()) {
        player = Player(settings: settings)
    }

    /// Sends `type` with `fields`; adds `requestId` and (for session commands) the current `mediaSessionId`.
    @discardableResult
    mutating func send(
        _ type: String,
        _ fields: [String: JSONValue] = [:],
        from requester: Int = 1,
        expectReply: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Outcome {
        var request = fields
        request["type"] = .string(type)
        let requestId = request["requestId"]?.intValue ?? nextRequestId
        nextRequestId = max(nextRequestId, requestId) + 1
        request["requestId"] = .number(Double(requestId))
        if request["mediaSessionId"] == nil, !["LOAD", "QUEUE_LOAD", "GET_STATUS"].contains(type),
            let session = player.session
        {
            request["mediaSessionId"] = .number(Double(session.mediaSessionId))
        }
        let deliveries = player.handle(request, from: requester, at: now)
        let outcome = Outcome(requestId: requestId, requester: requester, deliveries: deliveries)
        check(deliveries, sourceLocation: sourceLocation)
        let replies = deliveries.filter {
            $0.replyTarget == requester && $0.payload["requestId"]?.intValue == requestId
        }
        if expectReply {
            #expect(
                replies.count == 1,
                "\(type) must get exactly one reply, got \(replies.map(\.payload))",
                sourceLocation: sourceLocation
            )
        }
        return outcome
    }

    /// Sends a raw request exactly as given (no ids added).
    mutating func sendRaw(_ request: [String: JSONValue], from requester: Int = 1) -> [MediaDelivery<Int>] {
        let deliveries = player.handle(request, from: requester, at: now)
        check(deliveries)
        return deliveries
    }

    /// Moves time to `time` and applies what happened meanwhile.
    @discardableResult
    mutating func advance(to time: Double, sourceLocation: SourceLocation = #_sourceLocation) -> [MediaDelivery<Int>] {
        now = time
        let deliveries = player.advance(to: time)
        check(deliveries, sourceLocation: sourceLocation)
        return deliveries
    }

    /// Moves time forward by `seconds`.
    @discardableResult
    mutating func advance(by seconds: Double, sourceLocation: SourceLocation = #_sourceLocation) -> [MediaDelivery<Int>]
    {
        advance(to: now + seconds, sourceLocation: sourceLocation)
    }

    /// The current MEDIA_STATUS entry, `nil` without a session.
    var status: JSONValue? { player.session.map { player.statusEntry(of: $0, at: now) } }

    /// The current item ids, in queue order.
    var itemIds: [Int] { player.session?.queue.map(\.itemId) ?? [] }

    private mutating func check(_ deliveries: [MediaDelivery<Int>], sourceLocation: SourceLocation = #_sourceLocation) {
        for delivery in deliveries {
            log.append(delivery.payload)
            if delivery.isBroadcast {
                #expect(
                    delivery.payload["requestId"] == 0,
                    "broadcast with a requestId: \(delivery.payload)",
                    sourceLocation: sourceLocation
                )
            }
            for entry in delivery.payload["status"]?.arrayValue ?? [] {
                #expect(
                    entry["playerState"] != "LOADING",
                    "LOADING as a playerState: \(entry)",
                    sourceLocation: sourceLocation
                )
            }
        }
    }
}

/// Media and queue items used across the player tests.
enum Fixture {
    static let movieURL = "https://media.example.com/movie.mp4"

    static let tracks: JSONValue = [
        [
            "trackId": 1, "type": "TEXT", "subtype": "SUBTITLES", "language": "en", "name": "English",
            "trackContentId": "https://media.example.com/en.vtt", "trackContentType": "text/vtt",
        ],
        [
            "trackId": 2, "type": "TEXT", "subtype": "SUBTITLES", "language": "fr", "name": "Français",
            "trackContentId": "https://media.example.com/fr.vtt", "trackContentType": "text/vtt",
        ],
        ["trackId": 3, "type": "AUDIO", "language": "en", "name": "English audio"],
        ["trackId": 4, "type": "AUDIO", "language": "de", "name": "Deutsch"],
    ]

    static let textTrackStyle: JSONValue = [
        "backgroundColor": "#00000000", "foregroundColor": "#FFFFFFFF", "edgeType": "OUTLINE",
        "edgeColor": "#000000FF", "fontScale": 1,
    ]

    /// A BUFFERED video.
    static func movie(
        duration: Double? = 100,
        url: String = movieURL,
        _ extra: [String: JSONValue] = [:]
    ) -> JSONValue {
        var media: [String: JSONValue] = [
            "contentId": .string(url), "streamType": "BUFFERED", "contentType": "video/mp4",
            "metadata": ["metadataType": 1, "title": "Example Movie", "studio": "Example Studio"],
        ]
        if let duration { media["duration"] = .number(duration) }
        media.merge(extra) { _, new in new }
        return .object(media)
    }

    /// A BUFFERED song `n` of `duration` seconds.
    static func song(_ n: Int, duration: Double) -> JSONValue {
        [
            "contentId": .string("https://media.example.com/\(n).mp3"), "streamType": "BUFFERED",
            "contentType": "audio/mpeg", "duration": .number(duration),
            "metadata": ["metadataType": 3, "title": .string("Song \(n)")],
        ]
    }

    /// A queue item for `media`.
    static func item(_ media: JSONValue, _ extra: [String: JSONValue] = [:]) -> JSONValue {
        var item: [String: JSONValue] = ["media": media]
        item.merge(extra) { _, new in new }
        return .object(item)
    }

    /// Three songs of 10, 20 and 30 seconds as QUEUE_LOAD items.
    static let threeSongs: JSONValue = [
        item(song(1, duration: 10)), item(song(2, duration: 20)), item(song(3, duration: 30)),
    ]

    /// A harness with `threeSongs` queue-loaded (item ids 1, 2, 3) at time 0.
    static func queued(repeatMode: String = "REPEAT_OFF") -> PlayerHarness {
        var harness = PlayerHarness()
        harness.send("QUEUE_LOAD", ["items": threeSongs, "startIndex": 0, "repeatMode": .string(repeatMode)])
        return harness
    }

    /// A harness with `movie()` loaded at time 0.
    static func loaded(_ media: JSONValue = movie(), _ extra: [String: JSONValue] = [:]) -> PlayerHarness {
        var harness = PlayerHarness()
        var fields = extra
        fields["media"] = media
        harness.send("LOAD", fields)
        return harness
    }
}

/// Bits of `supportedMediaCommands` (cast-protocol.md §7.4).
enum Bits {
    static let pause = 1
    static let seek = 2
    static let streamVolume = 4
    static let streamMute = 8
    static let queueNext = 64
    static let queuePrev = 128
    static let skipAd = 512
    static let editTracks = 4096
    static let playbackRate = 8192
    /// ALL_BASIC_MEDIA: PAUSE|SEEK|STREAM_VOLUME|STREAM_MUTE|EDIT_TRACKS|PLAYBACK_RATE.
    static let basic = 12303
}

extension JSONValue {
    /// `supportedMediaCommands` as an integer (0 when absent).
    var commands: Int { self["supportedMediaCommands"]?.intValue ?? 0 }
}
