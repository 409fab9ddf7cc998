import CastTransport

/// What a broadcast status (`requestId` 0) must show to answer a request, for receivers that report a command only
/// by broadcasting the new status, never with a reply carrying the request's id. Each case is the very state the
/// request asked for, so that on a device that does reply, another sender's change broadcast meanwhile does not pass
/// for ours. Queue inserts, removals and reorders are answered by the QUEUE_CHANGE that announces them; ad skips
/// have no answer and wait for their reply.
package enum BroadcastAnswer: Sendable {
    /// Any status (GET_STATUS).
    case anyStatus
    /// A new session playing or paused on one of these content ids (LOAD, QUEUE_LOAD); buffering is not loaded
    /// yet (a load that fails does so after it), and a new session idle with an error is the load failing.
    case loaded(Set<String>, replacing: Int?)
    case playing(session: Int?)
    case paused(session: Int?)
    /// Idle, or the session gone.
    case stopped(session: Int?)
    case position(Double, session: Int?)
    case rate(Double, session: Int?)
    case volume(level: Double?, muted: Bool?, session: Int?)
    case tracks(Set<Int>, session: Int?)
    /// Another current item than `from` (QUEUE_UPDATE's jump).
    case jumped(from: Int?, session: Int?)
    /// That item current (QUEUE_UPDATE's `currentItemId`).
    case jumpedTo(Int, session: Int?)
    case repeatMode(String, session: Int?)
    /// The media's text style (EDIT_TRACKS_INFO with a style alone).
    case textStyle(TextTrackStyle, session: Int?)
    /// A QUEUE_CHANGE announcing the edit (QUEUE_INSERT, QUEUE_REMOVE, QUEUE_REORDER), or a status whose items
    /// show it against `items`, the ids the status listed before.
    case queueChange(QueueEdit, items: [Int]?, session: Int?)

    /// A queue edit as its QUEUE_CHANGE announces it.
    package enum QueueEdit: Sendable {
        /// `count` new items before `before` (`nil`: appended).
        case insert(count: Int, before: Int?)
        /// Some of these items removed (an unknown id is left out of the announcement).
        case remove(Set<Int>)
        /// These items moved before `before` (`nil`: to the end).
        case reorder(Set<Int>, before: Int?)
    }

    /// The answer to a request of `type` with `payload`, sent while `before` was the status and `position` the
    /// stream position; `nil` when no status shows its effect for sure.
    package init?(to type: String, _ payload: [String: JSONValue], before: MediaStatus?, position: Double) {
        let session = before?.mediaSessionID
        switch type {
        case "GET_STATUS":
            self = .anyStatus
        case "LOAD", "QUEUE_LOAD":
            let media = type == "LOAD" ? [payload["media"]] : payload["items"]?.arrayValue?.map { $0["media"] } ?? []
            self = .loaded(
                Set(media.compactMap { $0.flatMap { try? MediaInformation(json: $0).contentID } }),
                replacing: session
            )
        case "PLAY":
            self = .playing(session: session)
        case "PAUSE":
            self = .paused(session: session)
        case "STOP":
            self = .stopped(session: session)
        case "SEEK":
            guard
                var target = payload["currentTime"]?.doubleValue
                    ?? payload["relativeTime"]?.doubleValue.map({ position + $0 })
            else { return nil }
            // A device clamps a seek past the end to the end.
            if let duration = before?.media?.duration, duration > 0 { target = min(target, duration) }
            self = .position(max(0, target), session: session)
        case "SET_PLAYBACK_RATE":
            guard let rate = payload["playbackRate"]?.doubleValue else { return nil }
            self = .rate(rate, session: session)
        case "SET_VOLUME":
            let level = payload["volume"]?["level"]?.doubleValue
            let muted = payload["volume"]?["muted"]?.boolValue
            guard level != nil || muted != nil else { return nil }
            self = .volume(level: level, muted: muted, session: session)
        case "EDIT_TRACKS_INFO":
            if let ids = payload["activeTrackIds"]?.arrayValue?.compactMap(\.intValue) {
                self = .tracks(Set(ids), session: session)
            } else if let style = payload["textTrackStyle"].flatMap({ try? TextTrackStyle(json: $0) }) {
                self = .textStyle(style, session: session)
            } else {
                return nil
            }
        case "QUEUE_UPDATE" where payload["jump"] != nil:
            self = .jumped(from: before?.currentItemID, session: session)
        case "QUEUE_UPDATE" where payload["currentItemId"] != nil:
            guard let item = payload["currentItemId"]?.intValue else { return nil }
            self = .jumpedTo(item, session: session)
        case "QUEUE_INSERT":
            // One that also plays what it inserts waits for the status showing it (its reply, on devices that reply).
            guard payload["currentItemIndex"] == nil, payload["currentItemId"] == nil,
                let count = payload["items"]?.arrayValue?.count, count > 0
            else { return nil }
            let edit = QueueEdit.insert(count: count, before: payload["insertBefore"]?.intValue)
            self = .queueChange(edit, items: before?.items?.compactMap(\.itemID), session: session)
        case "QUEUE_REMOVE", "QUEUE_REORDER":
            let ids = Set(payload["itemIds"]?.arrayValue?.compactMap(\.intValue) ?? [])
            guard !ids.isEmpty else { return nil }
            let edit =
                type == "QUEUE_REMOVE"
                ? QueueEdit.remove(ids) : .reorder(ids, before: payload["insertBefore"]?.intValue)
            self = .queueChange(edit, items: before?.items?.compactMap(\.itemID), session: session)
        case "QUEUE_UPDATE" where payload.count <= 3:
            // Only the repeat mode (with `type` and `mediaSessionId`).
            guard let mode = payload["repeatMode"]?.stringValue else { return nil }
            self = .repeatMode(mode, session: session)
        default:
            return nil
        }
    }

    /// What a status says of the request.
    package enum Verdict: Sendable, Equatable {
        /// It shows what the request asked for.
        case answered
        /// It shows the request failed: a load's new session idle with an error.
        case failed
        /// Neither: another change, or not yet.
        case neither
    }

    /// What `status` (`nil`: no media session) says of the request.
    package func verdict(on status: MediaStatus?) -> Verdict {
        if case .loaded(let contentIDs, let previous) = self, let status, status.mediaSessionID != previous,
            status.playerState == .idle, status.idleReason == .error
        {
            // A failed load's status may leave its media out.
            return status.media.map { contentIDs.contains($0.contentID) } ?? true ? .failed : .neither
        }
        return isAnswered(by: status) ? .answered : .neither
    }

    /// Whether `status` (`nil`: no media session) shows it.
    package func isAnswered(by status: MediaStatus?) -> Bool {
        switch self {
        case .anyStatus:
            return true
        case .loaded(let contentIDs, let previous):
            guard let status, status.mediaSessionID != previous,
                status.playerState == .playing || status.playerState == .paused,
                let contentID = status.media?.contentID
            else { return false }
            return contentIDs.contains(contentID)
        case .stopped(let session):
            return status == nil || status?.mediaSessionID != session || status?.playerState == .idle
        case .playing(let session), .paused(let session), .position(_, let session), .rate(_, let session),
            .volume(_, _, let session), .tracks(_, let session), .jumped(_, let session), .jumpedTo(_, let session),
            .repeatMode(_, let session), .textStyle(_, let session), .queueChange(_, _, let session):
            guard let status, status.mediaSessionID == session else { return false }
            return shows(status)
        }
    }

    /// Whether a QUEUE_CHANGE announces this queue edit: the same kind of change, of the same items (an insert: as
    /// many, before the same item).
    package func isAnswered(by change: QueueChange) -> Bool {
        guard case .queueChange(let edit, _, _) = self else { return false }
        switch edit {
        case .insert(let count, let before):
            return change.changeType == "INSERT" && change.itemIDs.count == count && change.insertBefore == before
        case .remove(let ids):
            return change.changeType == "REMOVE" && !change.itemIDs.isEmpty && Set(change.itemIDs).isSubset(of: ids)
        case .reorder(let ids, _):
            return change.changeType != "INSERT" && change.changeType != "REMOVE" && Set(change.itemIDs) == ids
        }
    }

    /// Whether the items a status lists, against those listed before (`old`), show the edit: new ids as many as
    /// inserted, before the item asked (or last); the removed ids listed before and gone; the moved ids together,
    /// in the order asked, before the item asked (or last). Statuses list a window of the queue, so an edit
    /// outside it is told by its QUEUE_CHANGE or its reply.
    private static func shows(_ edit: QueueEdit, old: [Int], new: [Int]) -> Bool {
        switch edit {
        case .insert(let count, let before):
            let added = new.filter { !old.contains($0) }
            guard added.count == count, let last = added.last, let index = new.firstIndex(of: last) else {
                return false
            }
            return sits(at: index, before: before, in: new)
        case .remove(let ids):
            return old.contains { ids.contains($0) } && !new.contains { ids.contains($0) }
        case .reorder(let ids, let before):
            let moved = new.filter { ids.contains($0) }
            guard moved.count == ids.count, old != new, let last = moved.last, let index = new.firstIndex(of: last),
                let first = new.firstIndex(of: moved[0]), index - first == moved.count - 1
            else { return false }
            return sits(at: index, before: before, in: new)
        }
    }

    /// Whether the item at `index` of `items` comes right before `before`, or last when `before` is `nil`.
    private static func sits(at index: Int, before: Int?, in items: [Int]) -> Bool {
        guard let before else { return index == items.count - 1 }
        return items.indices.contains(index + 1) && items[index + 1] == before
    }

    /// Whether a status of the same session shows the state asked for.
    private func shows(_ status: MediaStatus) -> Bool {
        switch self {
        case .playing: return status.playerState == .playing || status.playerState == .buffering
        case .paused: return status.playerState == .paused
        case .position(let target, _):
            // At the end, the item may have finished already.
            if let duration = status.media?.duration, duration > 0, target >= duration, status.playerState == .idle {
                return true
            }
            return abs(status.currentTime - target) < 1.5
        case .rate(let rate, _): return abs(status.playbackRate - rate) < 0.001
        case .volume(let level, let muted, _):
            if let level, abs((status.volumeLevel ?? -1) - level) > 0.005 { return false }
            if let muted, status.isMuted != muted { return false }
            return true
        case .tracks(let ids, _): return Set(status.activeTrackIDs) == ids
        case .jumped(let item, _): return status.currentItemID != nil && status.currentItemID != item
        case .jumpedTo(let item, _): return status.currentItemID == item
        case .textStyle(let style, _): return status.media?.textTrackStyle == style
        case .queueChange(let edit, let old, _):
            guard let old, let new = status.items?.compactMap(\.itemID) else { return false }
            return Self.shows(edit, old: old, new: new)
        case .repeatMode(let mode, _): return status.repeatMode?.rawValue == mode
        case .anyStatus, .loaded, .stopped: return false
        }
    }
}
