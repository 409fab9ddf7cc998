// swift-cast — Apache-2.0

import CastTransport

#if DEBUG || CAST_FUZZING
@testable import CastMedia
#else
import CastMedia
#endif

/// Media-namespace messages from the receiver app: MEDIA_STATUS, QUEUE_CHANGE, replies.
enum MediaFuzz {
    /// A `MEDIA_STATUS` message (each entry of `status`) or a bare status object, with everything nested in it:
    /// media information, metadata, tracks, text style, ad breaks and clips, queue items and queue data.
    static func mediaStatus(_ bytes: [UInt8]) {
        guard let json = FuzzInput.json(bytes) else { return }
        for entry in json["status"]?.arrayValue ?? [json] {
            guard let status = try? MediaStatus(json: entry) else { continue }
            _ = status.isLiveStream
            _ = status.isPlayingAd
            _ = status.currentItem
            // What the model writes must be JSON, and a status it writes must read back.
            let written = status.json
            FuzzInput.checkWritable(written)
            guard let again = try? MediaStatus(json: written) else {
                fatalError("a status the model wrote does not read back: \(written.jsonString)")
            }
            _ = again.hashValue
        }
    }

    #if DEBUG || CAST_FUZZING
    /// A `QUEUE_CHANGE` message, then the same JSON as the reply to a queue request.
    static func queueChange(_ bytes: [UInt8]) {
        guard let json = FuzzInput.json(bytes) else { return }
        let change = QueueChange(json: json)
        _ = change.hashValue
        let client = RemoteMediaClient(channel: RefusingMediaChannel(), now: { 0 })
        client.receive(json)
        _ = client.interpret(json, for: "QUEUE_GET_ITEMS")
    }

    /// A media session as the client sees it: each line is one inbound media message, given to `receive(_:)`
    /// and, when it carries a `requestId`, also to the reply path (CastSession's channel delivers replies both
    /// ways). Then the client is asked what it knows and given every command, which it must refuse or send.
    static func mediaClient(_ bytes: [UInt8]) {
        let clock = FuzzClock()
        let client = RemoteMediaClient(channel: RefusingMediaChannel(), now: { clock.seconds })
        for (index, line) in FuzzInput.lines(bytes).prefix(64).enumerated() {
            guard let json = FuzzInput.json(Array(line)) else { continue }
            clock.seconds = Double(index)
            client.receive(json)
            if let requestID = json["requestId"]?.intValue, requestID > 0 {
                _ = client.interpret(json, for: json["type"]?.stringValue ?? "GET_STATUS")
            }
            _ = client.approximateStreamPosition
            _ = client.playerState
        }
        let status = client.mediaStatus
        for item in status?.items ?? [] {
            guard let id = item.itemID else { continue }
            _ = client.queue.cachedItem(withID: id)
            _ = client.queue.index(ofItemID: id)
        }
        let firstItem = status?.items?.first
        let requests: [MediaRequest] = [
            client.play(), client.pause(), client.stop(), client.seek(.to(status?.currentTime ?? 0)),
            client.seek(.by(-10)), client.setPlaybackRate(status?.playbackRate ?? 1),
            client.setStreamVolume(status?.volumeLevel ?? 1), client.setStreamMuted(!(status?.isMuted ?? false)),
            client.setActiveTrackIDs(status?.activeTrackIDs ?? []), client.setTextTrackStyle(TextTrackStyle()),
            client.skipAd(), client.requestStatus(), client.queueNext(), client.queuePrevious(),
            client.queueRemove(status?.currentItemID.map { [$0] } ?? []),
            client.queueJump(toItemID: status?.preloadedItemID ?? 1),
            client.queueSetRepeatMode(status?.repeatMode ?? .all),
            client.queueUpdate(firstItem.map { [$0] } ?? []),
        ]
        _ = requests.count
        client.reset()
    }
    #endif
}

#if DEBUG || CAST_FUZZING
/// A media channel that sends nothing: every request fails at once, so no task outlives the input.
private struct RefusingMediaChannel: MediaChannel {
    var deliversRepliesInOrder: Bool { true }

    func startMediaRequest(_ payload: JSONValue, timeout: Duration?) throws -> MediaReply {
        throw CastTransportError(.connectionClosed, "fuzzing: nothing is sent")
    }
}

/// The client's clock: one second per inbound message.
private final class FuzzClock: @unchecked Sendable {
    var seconds: Double = 0
}
#endif
