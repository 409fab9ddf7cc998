import CastDiscovery
import CastMedia
import CastSession
import CastTransport

/// Everything a status display shows, captured at one moment from a session: device, app and media.
///
/// ``json`` is the stable machine-readable form behind `cast … --json`; `lines(style:width:)` the
/// human-readable one.
public struct StatusSnapshot: Sendable {
    /// The device's name as the user knows it.
    public var deviceName: String
    /// The device's address.
    public var host: String
    /// The device's Cast port.
    public var port: Int
    /// How the device was reached: `connected` (a session) or `observed` (only looked at).
    public var connection: String
    /// The running receiver app's id; `nil` when the device is idle.
    public var appID: String?
    /// The running app's name, when it has one.
    public var appName: String?
    /// The receiver app's session id, which another sender joins by.
    public var sessionID: String?
    /// Device volume, 0…1, when known.
    public var deviceVolume: Double?
    /// Whether the device is muted, when known.
    public var deviceMuted: Bool?
    /// The media status; `nil` when nothing plays (or when it is unknown: ``mediaError``).
    public var media: MediaStatus?
    /// Why the media status is unknown, when the app did not tell it.
    public var mediaError: String?
    /// The extrapolated position now.
    public var position: Double?
    /// The current item's position in the queue (0-based), when a queue plays.
    public var queueIndex: Int?
    /// The number of items in the queue, when a queue plays.
    public var queueCount: Int?
    /// Whether the device proved it is a genuine Cast device; `nil` when unknown.
    public var deviceAuthentication: DeviceAuthentication?
    /// A speaker group's members (the device is a group); `nil` otherwise.
    public var groupMembers: [MultizoneMember]?
    /// The device's part in a speaker group's playback: it runs the leader or follower app, not one of its own.
    public var groupRole: ApplicationMetadata.GroupRole?
    /// The name of the group playing on the device (with ``groupRole``), when it is known.
    public var playingGroup: String?

    /// Captures `session` now.
    public init(session: CastSession) {
        let device = session.device
        deviceName = device.friendlyName
        host = device.host
        port = device.port
        connection = "\(session.connectionState)"
        appID = session.application.applicationID
        appName = session.application.name
        sessionID = session.sessionID
        deviceAuthentication = session.deviceAuthentication
        deviceVolume = session.deviceStatus?.volumeLevel
        deviceMuted = session.deviceStatus?.isMuted
        groupMembers = session.multizoneStatus?.members
        if let client = session.remoteMediaClient, var status = client.mediaStatus {
            // The ad's clock moves on as the stream's does: a countdown to skipping, and when it may be skipped.
            status.adBreakStatus = client.approximateAdBreakStatus
            media = status
            position = client.approximateStreamPosition
            if let ids = client.queue.itemIDs ?? status.items?.compactMap(\.itemID), let current = status.currentItemID
            {
                queueIndex = ids.firstIndex(of: current)
                queueCount = ids.count
            }
        }
    }

    /// Captures a device that plays in a speaker group: the member's own state, and the app and media of
    /// `group` — what it really plays — named as the group's.
    public init(member activity: DeviceActivity, playingGroup group: DeviceActivity?) {
        self.init(activity: activity)
        guard let role = activity.application?.groupRole else { return }
        groupRole = role
        guard let group else { return }
        playingGroup = group.device.friendlyName
        appID = group.application?.applicationID
        appName = group.application?.name
        sessionID = group.application?.sessionID
        media = group.mediaStatus
        position = group.mediaStatus?.currentTime
    }

    /// Captures an observed device (no session): its app, if any, and its media, if it plays any.
    public init(activity: DeviceActivity, position: Double? = nil) {
        let device = activity.device
        deviceName = device.friendlyName
        host = device.host
        port = device.port
        connection = "observed"
        appID = activity.application?.applicationID
        appName = activity.application?.name
        sessionID = activity.application?.sessionID
        deviceAuthentication = activity.deviceAuthentication
        deviceVolume = activity.deviceStatus.volumeLevel
        deviceMuted = activity.deviceStatus.isMuted
        media = activity.mediaStatus
        mediaError = activity.mediaStatusError
        groupMembers = activity.groupMembers
        self.position = position ?? activity.mediaStatus?.currentTime
        if let status = activity.mediaStatus, let items = status.items?.compactMap(\.itemID),
            let current = status.currentItemID, let index = items.firstIndex(of: current)
        {
            queueIndex = index
            queueCount = items.count
        }
    }

    /// The player state shown to people: `LOADING` while loading, else the player state.
    public var playerState: String {
        guard let media else { return "NO_MEDIA" }
        return media.shownPlayerState.rawValue
    }

    /// The stable JSON form (documented in the README's `--json` section).
    public var json: JSONValue {
        var device: JSONValue = [
            "name": .string(deviceName), "host": .string(host), "port": .number(Double(port)),
            "connection": .string(connection),
        ]
        if let deviceVolume { device["volume"] = .number(deviceVolume) }
        if let deviceMuted { device["muted"] = .bool(deviceMuted) }
        if let deviceAuthentication { device["authentication"] = deviceAuthentication.json }
        if let groupMembers { device["members"] = .array(groupMembers.map(Self.json)) }
        var result: JSONValue = ["device": device, "app": .null]
        if let groupRole {
            result["group"] = [
                "name": playingGroup.map { .string($0) } ?? .null, "role": .string("\(groupRole)"),
            ]
        }
        if let appID {
            var app: JSONValue = ["id": .string(appID)]
            if let appName { app["name"] = .string(appName) }
            if let sessionID { app["sessionId"] = .string(sessionID) }
            result["app"] = app
        }
        guard let media else {
            result["media"] = .null
            if let mediaError { result["mediaError"] = .string(mediaError) }
            return result
        }
        var entry: JSONValue = [
            "mediaSessionId": .number(Double(media.mediaSessionID)),
            "playerState": .string(playerState),
            "position": .number(((position ?? media.currentTime) * 10).rounded() / 10),
            "playbackRate": .number(media.playbackRate),
            "live": .bool(media.isLiveStream),
            "activeTrackIds": .array(media.activeTrackIDs.map { .number(Double($0)) }),
        ]
        if let reason = media.idleReason { entry["idleReason"] = .string(reason.rawValue) }
        if let duration = media.media?.duration { entry["duration"] = .number(duration) }
        if let title = media.media?.metadata?.displayTitle { entry["title"] = .string(title) }
        if let subtitle = media.media?.metadata?.displaySubtitle { entry["subtitle"] = .string(subtitle) }
        if let url = media.media?.contentID { entry["contentId"] = .string(url) }
        if let level = media.volumeLevel { entry["volume"] = .number(level) }
        if let muted = media.isMuted { entry["muted"] = .bool(muted) }
        if let current = media.currentItemID { entry["currentItemId"] = .number(Double(current)) }
        if let queueIndex, let queueCount {
            entry["queue"] = ["index": .number(Double(queueIndex)), "count": .number(Double(queueCount))]
        }
        if let repeatMode = media.repeatMode { entry["repeatMode"] = .string(repeatMode.rawValue) }
        if let ad = media.adBreakStatus {
            var adJSON: JSONValue = ["breakId": .string(ad.breakID ?? ""), "clipId": .string(ad.breakClipID ?? "")]
            if let wait = ad.secondsUntilSkippable { adJSON["secondsUntilSkippable"] = .number(wait.rounded()) }
            adJSON["skippable"] = .bool(ad.isSkippable)
            entry["adBreak"] = adJSON
        }
        if let video = media.videoInfo { entry["videoInfo"] = video.json }
        result["media"] = entry
        return result
    }

    /// Human-readable lines.
    public func lines(style: ControllerStyle = .plain) -> [String] {
        var lines = [
            style.paint("\(deviceName)", style.heading) + style.paint("  \(host):\(port)  \(connection)", style.caption)
        ]
        var app = "app: \(appName ?? appID ?? "none")"
        if let groupRole {
            let group = playingGroup.map { "group \($0)" } ?? "a speaker group"
            app = "playing in \(group) (\(groupRole))" + (playingGroup == nil ? "" : ": \(appName ?? appID ?? "idle")")
        }
        if let deviceVolume {
            app += "  volume \(Int((deviceVolume * 100).rounded()))%\(deviceMuted == true ? " (muted)" : "")"
        }
        lines.append(style.paint(app, style.body))
        if let groupMembers {
            lines.append(style.paint("members: " + groupMembers.map(Self.line).joined(separator: ", "), style.body))
        }
        if let authentication = deviceAuthentication, authentication.wasAttempted {
            lines.append(style.paint("device authentication: \(authentication)", style.caption))
        }
        guard let media else {
            lines.append(style.paint(mediaError.map { "media: unknown (\($0))" } ?? "media: none", style.body))
            return lines
        }
        let title = media.media?.metadata?.displayTitle ?? media.media?.contentID ?? "untitled"
        lines.append(
            style.paint(title, style.heading)
                + (media.media?.metadata?.displaySubtitle.map { style.paint("  \($0)", style.caption) } ?? "")
        )
        var state = "\(playerState.lowercased())"
        if let reason = media.idleReason { state += " (\(reason.rawValue.lowercased()))" }
        let time =
            media.isLiveStream
            ? style.glyph("live")
            : "\(TimeFormatting.clock(position ?? media.currentTime)) / \(TimeFormatting.clock(media.media?.duration))"
        var info = "\(state)  \(time)"
        if media.playbackRate != 1 { info += "  ×\(media.playbackRate)" }
        if let queueIndex, let queueCount { info += "  item \(queueIndex + 1)/\(queueCount)" }
        if !media.activeTrackIDs.isEmpty {
            info += "  tracks \(media.activeTrackIDs.map(String.init).joined(separator: ","))"
        }
        if let ad = media.adBreakStatus {
            info +=
                ad.isSkippable
                ? "  \(style.glyph("ad")) skippable"
                : "  \(style.glyph("ad")) skip in \(Int((ad.secondsUntilSkippable ?? 0).rounded()))s"
        }
        lines.append(style.paint(info, style.body))
        return lines
    }

    /// A member in `--json`: `{id, name, volume, muted}`.
    public static func json(_ member: MultizoneMember) -> JSONValue {
        [
            "id": .string(member.id), "name": .string(member.name),
            "volume": member.volumeLevel.map { .number($0) } ?? .null,
            "muted": member.isMuted.map { .bool($0) } ?? .null,
        ]
    }

    /// A member in text: "Kitchen 40%", "Bedroom (muted)".
    public static func line(_ member: MultizoneMember) -> String {
        if member.isMuted == true { return "\(member.name) (muted)" }
        return member.volumeLevel.map { "\(member.name) \(Int(($0 * 100).rounded()))%" } ?? member.name
    }
}
