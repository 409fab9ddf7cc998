import CastTransport

/// What a broadcast status (`requestId` 0) must show to answer a request, for receivers that report a command only
/// by broadcasting the new status, never with a reply carrying the request's id. Each case is the very state the
/// request asked for, so that on a device that does reply, another sender's change broadcast meanwhile does not pass
/// for ours. Requests whose effect no status shows for sure (queue inserts, removals and reorders, ad skips, text
/// styles) have none and wait for their reply.
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
    case repeatMode(String, session: Int?)

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
                let target = payload["currentTime"]?.doubleValue
                    ?? payload["relativeTime"]?.doubleValue.map({ position + $0 })
            else { return nil }
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
            guard let ids = payload["activeTrackIds"]?.arrayValue?.compactMap(\.intValue) else { return nil }
            self = .tracks(Set(ids), session: session)
        case "QUEUE_UPDATE" where payload["jump"] != nil:
            self = .jumped(from: before?.currentItemID, session: session)
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
            .volume(_, _, let session), .tracks(_, let session), .jumped(_, let session), .repeatMode(_, let session):
            guard let status, status.mediaSessionID == session else { return false }
            return shows(status)
        }
    }

    /// Whether a status of the same session shows the state asked for.
    private func shows(_ status: MediaStatus) -> Bool {
        switch self {
        case .playing: return status.playerState == .playing || status.playerState == .buffering
        case .paused: return status.playerState == .paused
        case .position(let target, _): return abs(status.currentTime - target) < 1.5
        case .rate(let rate, _): return abs(status.playbackRate - rate) < 0.001
        case .volume(let level, let muted, _):
            if let level, abs((status.volumeLevel ?? -1) - level) > 0.005 { return false }
            if let muted, status.isMuted != muted { return false }
            return true
        case .tracks(let ids, _): return Set(status.activeTrackIDs) == ids
        case .jumped(let item, _): return status.currentItemID != nil && status.currentItemID != item
        case .repeatMode(let mode, _): return status.repeatMode?.rawValue == mode
        case .anyStatus, .loaded, .stopped: return false
        }
    }
}
