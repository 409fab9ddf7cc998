import CastMedia
import CastTransport

/// A media request whose connection dropped before its reply arrived: the receiver may or may not have acted on
/// it. After the session resumed, the media status read again tells which — so a request the receiver accepted
/// is never sent twice (a second LOAD would restart the media; a second QUEUE_INSERT would add items twice) and
/// one it never saw is sent again.
struct InterruptedRequest: Sendable {
    /// What to do once the session is back.
    enum Decision: Sendable, Equatable {
        /// The receiver had acted on it: the fresh status is its answer.
        case applied
        /// The receiver had not (or sending again does no harm): send this payload again.
        case resend(JSONValue)
        /// Whether it was applied cannot be told; sending again could repeat it.
        case unknown
    }

    /// The request as sent (with `type`, without `requestId`).
    var payload: JSONValue
    /// The media status when it was sent.
    var before: MediaStatus?
    /// Seconds between sending and reading the status again (relative seeks move with playback).
    var elapsed: Double

    /// Decides from `after`, the media status read after the session resumed.
    func decide(after: MediaStatus?) -> Decision {
        let type = payload["type"]?.stringValue ?? ""
        switch type {
        case "LOAD", "QUEUE_LOAD":
            return loaded(after) ? .applied : .resend(refreshed(after))
        case "PLAY":
            return after?.playerState == .playing || after?.playerState == .buffering
                ? .applied : .resend(refreshed(after))
        case "PAUSE":
            return after?.playerState == .paused ? .applied : .resend(refreshed(after))
        case "STOP":
            return after == nil || after?.playerState == .idle ? .applied : .resend(refreshed(after))
        case "SEEK":
            if let relative = payload["relativeTime"]?.doubleValue { return seekedBy(relative, after) }
            guard let target = payload["currentTime"]?.doubleValue else { return .resend(refreshed(after)) }
            return sought(target, after)
        case "QUEUE_UPDATE" where payload["jump"] != nil:
            guard let before, let after else { return .unknown }
            return before.currentItemID != after.currentItemID ? .applied : .resend(refreshed(after))
        case "QUEUE_UPDATE" where payload["currentItemId"] != nil:
            // A jump to an item: applied when that item plays; sent again only when the same item still does
            // (another one means playback or another sender moved on meanwhile).
            guard let target = payload["currentItemId"]?.intValue, let after else { return .unknown }
            if after.currentItemID == target { return .applied }
            return after.currentItemID == before?.currentItemID ? .resend(refreshed(after)) : .unknown
        case "QUEUE_INSERT", "QUEUE_REMOVE", "QUEUE_REORDER",
            "QUEUE_UPDATE" where payload["items"] != nil:
            guard let old = before?.items?.compactMap(\.itemID), let new = after?.items?.compactMap(\.itemID) else {
                return .unknown
            }
            return old != new ? .applied : .resend(refreshed(after))
        case "SKIP_AD":
            guard let before, let after else { return .unknown }
            let skipped =
                after.adBreakStatus == nil || after.adBreakStatus?.breakClipID != before.adBreakStatus?.breakClipID
            return skipped ? .applied : .resend(refreshed(after))
        default:
            // GET_STATUS, SET_VOLUME, SET_PLAYBACK_RATE, EDIT_TRACKS_INFO, QUEUE_UPDATE of the repeat mode,
            // absolute seeks, QUEUE_GET_*: the same request twice has the effect of one.
            return .resend(refreshed(after))
        }
    }

    /// Whether `after` shows this load's media in a media session that did not exist before it.
    private func loaded(_ after: MediaStatus?) -> Bool {
        let start = payload["startIndex"]?.intValue ?? 0
        let first = payload["media"] ?? payload["items"]?[start]?["media"]
        guard let after, let wanted = first?["contentId"]?.stringValue, !wanted.isEmpty else { return false }
        let current = after.media?.contentID ?? after.items?.first { $0.itemID == after.currentItemID }?.media.contentID
        let queued = after.items?.contains { $0.media.contentID == wanted } ?? false
        guard current == wanted || queued else { return false }
        return after.mediaSessionID != before?.mediaSessionID
    }

    /// A relative seek was applied when the position is nearer where it would have taken playback than where
    /// playback alone went. When another item plays now, a seek past the end of the one before moved there (it
    /// was applied); otherwise playback moved on by itself, and a relative seek sent again would move the new item.
    private func seekedBy(_ relative: Double, _ after: MediaStatus?) -> Decision {
        guard let before, let after, after.mediaSessionID == before.mediaSessionID else { return .unknown }
        let drift = playbackDrift
        let without = before.currentTime + drift
        let with = without + relative
        guard after.currentItemID == before.currentItemID else {
            guard let duration = before.media?.duration, duration > 0 else { return .unknown }
            return before.currentTime + relative >= duration ? .applied : .unknown
        }
        return abs(after.currentTime - with) < abs(after.currentTime - without) ? .applied : .resend(refreshed(after))
    }

    /// An absolute seek was applied when the position is nearer where it would be had the seek landed at some
    /// moment since it was sent (from `target` to `target` plus the playback since) than where playback alone
    /// went. Another item playing now is not the one it was meant for: not sent again.
    private func sought(_ target: Double, _ after: MediaStatus?) -> Decision {
        guard let before, let after else { return .resend(refreshed(after)) }
        guard after.mediaSessionID == before.mediaSessionID, after.currentItemID == before.currentItemID else {
            return .unknown
        }
        let drift = playbackDrift
        let without = before.currentTime + drift
        let position = after.currentTime
        let fromSought = position < target ? target - position : max(0, position - (target + drift))
        return fromSought < abs(position - without) ? .applied : .resend(refreshed(after))
    }

    /// How far playback alone moved the position since the request was sent.
    private var playbackDrift: Double {
        guard let before, before.playerState == .playing else { return 0 }
        return elapsed * before.playbackRate
    }

    /// The payload with the media session id of `after` (a resumed session keeps it; a reload changes it).
    func refreshed(_ after: MediaStatus?) -> JSONValue {
        var payload = self.payload
        if payload["mediaSessionId"] != nil, let after {
            payload["mediaSessionId"] = .number(Double(after.mediaSessionID))
        }
        return payload
    }
}
