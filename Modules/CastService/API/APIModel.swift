import CastDiscovery
import CastMedia
import CastMediaServer
import CastSession
import CastTransport
import OpenAPIRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Conversions between the library's values and the API's schemas (`openapi.yaml`).
enum APIModel {
    static let unsupportedBody = CastServiceError(
        .invalidRequest,
        "the body must be application/json",
        httpStatus: 400,
        field: "body"
    )

    static func device(_ device: CastDevice, activity: DeviceActivity?) -> Components.Schemas.Device {
        Components.Schemas.Device(
            id: device.id,
            name: device.friendlyName,
            model: device.modelName,
            host: device.host,
            port: device.port,
            isGroup: device.isGroup,
            status: activity.map(status)
        )
    }

    static func state(_ activity: DeviceActivity) -> Components.Schemas.DeviceState {
        Components.Schemas.DeviceState(device: device(activity.device, activity: nil), status: status(activity))
    }

    static func status(_ activity: DeviceActivity) -> Components.Schemas.DeviceStatus {
        Components.Schemas.DeviceStatus(
            reachable: activity.isReachable,
            volume: level(activity.deviceStatus.volumeLevel),
            muted: activity.deviceStatus.isMuted,
            app: activity.application.map {
                Components.Schemas.AppStatus(
                    id: $0.applicationID,
                    name: $0.displayName,
                    sessionId: $0.sessionID,
                    statusText: $0.statusText
                )
            },
            media: activity.application == nil ? nil : activity.mediaStatus.map(media),
            mediaError: activity.application == nil ? nil : activity.mediaStatusError,
            authentication: activity.deviceAuthentication.flatMap(authentication),
            members: activity.groupMembers?.map {
                Components.Schemas.GroupMember(
                    id: $0.id,
                    name: $0.name,
                    volume: level($0.volumeLevel),
                    muted: $0.isMuted
                )
            },
            groupRole: activity.application?.groupRole.map { $0 == .leader ? .leader : .follower }
        )
    }

    /// A challenge's result; `nil` when none was sent (the schema leaves it out then).
    static func authentication(_ result: DeviceAuthentication) -> Components.Schemas.DeviceAuthentication? {
        switch result {
        case .notAttempted: return nil
        case .pending: return .init(result: .pending)
        case .verified(let device):
            return .init(
                result: .verified,
                commonName: device.commonName,
                chain: device.chain,
                hashAlgorithm: device.hashAlgorithm,
                audioOnly: device.isAudioOnly
            )
        case .failed(let code, let message):
            return .init(result: .failed, step: code.description, message: message)
        }
    }

    static func media(_ status: MediaStatus) -> Components.Schemas.MediaState {
        Components.Schemas.MediaState(
            mediaSessionId: status.mediaSessionID,
            playerState: Components.Schemas.MediaState.PlayerStatePayload(rawValue: status.shownPlayerState.rawValue)
                ?? .idle,
            idleReason: status.idleReason?.rawValue,
            position: tenths(status.currentTime),
            duration: finite(status.media?.duration),
            playbackRate: finite(status.playbackRate) ?? 1,
            live: status.isLiveStream,
            title: status.media?.metadata?.displayTitle,
            subtitle: status.media?.metadata?.displaySubtitle,
            contentId: status.media?.contentID,
            volume: level(status.volumeLevel),
            muted: status.isMuted,
            activeTrackIds: status.activeTrackIDs,
            currentItemId: status.currentItemID,
            repeatMode: status.repeatMode.flatMap { .init(rawValue: $0.rawValue) },
            tracks: status.media?.tracks.map { $0.map(track) },
            adBreak: status.adBreakStatus.map(adBreak)
        )
    }

    static func adBreak(_ status: AdBreakStatus) -> Components.Schemas.AdBreakState {
        Components.Schemas.AdBreakState(
            breakId: status.breakID,
            clipId: status.breakClipID,
            clipPosition: finite(status.currentBreakClipTime).map(tenths),
            breakPosition: finite(status.currentBreakTime).map(tenths),
            skippable: status.isSkippable,
            skippableIn: finite(status.secondsUntilSkippable).map(tenths)
        )
    }

    /// A number JSON can carry: `nil` for NaN and the infinities, which the encoder refuses (and which a receiver's
    /// `1e400` parses to).
    static func finite(_ value: Double?) -> Double? {
        guard let value, value.isFinite else { return nil }
        return value
    }

    /// A volume level within 0...1, as the schema promises, whatever the receiver reported.
    static func level(_ value: Double?) -> Double? {
        finite(value).map { min(max($0, 0), 1) }
    }

    /// A position to the tenth of a second. Multiplying by 10 overflows to infinity near
    /// `Double.greatestFiniteMagnitude` (a load's `startTime` or a seek can put the receiver there), so such a
    /// position is left as it is.
    static func tenths(_ seconds: Double) -> Double {
        guard seconds.isFinite else { return 0 }
        let rounded = (seconds * 10).rounded() / 10
        return rounded.isFinite ? rounded : seconds
    }

    static func track(_ track: MediaTrack) -> Components.Schemas.Track {
        Components.Schemas.Track(
            id: track.id,
            _type: .init(rawValue: track.kind.rawValue) ?? .text,
            name: track.name,
            language: track.language,
            subtype: track.subtype?.rawValue
        )
    }

    static func queue(_ contents: MediaQueueContents) -> Components.Schemas.Queue {
        Components.Schemas.Queue(
            items: contents.items.compactMap { item in
                item.itemID.map {
                    Components.Schemas.QueueEntry(
                        itemId: $0,
                        title: item.media.metadata?.displayTitle,
                        contentId: item.media.contentID,
                        duration: item.media.duration
                    )
                }
            },
            currentItemId: contents.currentItemID,
            repeatMode: contents.repeatMode.flatMap { .init(rawValue: $0.rawValue) }
        )
    }

    static func source(of request: Components.Schemas.LoadRequest) throws(CastServiceError) -> MediaSource {
        try source(url: request.url, file: request.file, contentType: request.contentType, title: request.title)
    }

    static func source(of item: Components.Schemas.QueueItemSource, at index: Int) throws(CastServiceError)
        -> MediaSource
    {
        do {
            return try source(url: item.url, file: item.file, contentType: item.contentType, title: item.title)
        } catch {
            var error = error
            error.field = "items[\(index)].\(error.field ?? "url")"
            throw error
        }
    }

    /// What a load names: an http(s) URL, or a local file left for the hub to check against the media folders.
    static func source(url: String?, file: String?, contentType: String?, title: String?) throws(CastServiceError)
        -> MediaSource
    {
        switch (url, file) {
        case (let url?, nil):
            guard url.hasPrefix("http://") || url.hasPrefix("https://"), url.count > 8, !url.contains(" ") else {
                throw CastServiceError(
                    .invalidRequest,
                    "url must be an http or https URL",
                    httpStatus: 400,
                    field: "url"
                )
            }
            var media = MediaInformation(
                contentID: url,
                contentType: contentType ?? MediaSniffer.mimeType(forURL: url) ?? "video/mp4"
            )
            let name = url.split(separator: "?").first?.split(separator: "/").last.map(String.init) ?? url
            media.metadata = .generic(title: title ?? name)
            return .media(media)
        case (nil, let file?):
            return .file(file, title: title)
        case (nil, nil):
            throw CastServiceError(.invalidRequest, "give url or file", httpStatus: 400, field: "url")
        case (_?, _?):
            throw CastServiceError(.invalidRequest, "give url or file, not both", httpStatus: 400, field: "file")
        }
    }

    static func command(
        _ name: Components.Schemas.MediaCommand,
        position: Double? = nil,
        relative: Bool? = nil,
        rate: Double? = nil
    ) throws(CastServiceError) -> MediaCommand {
        switch name {
        case .play: return .play
        case .pause: return .pause
        case .stop: return .stop
        case .next: return .next
        case .previous: return .previous
        case .skipAd: return .skipAd
        case .seek:
            guard let position, position.isFinite else {
                throw CastServiceError(.invalidRequest, "seek needs a position", httpStatus: 400, field: "position")
            }
            let relative = relative ?? false
            guard relative || position >= 0 else {
                throw CastServiceError(
                    .invalidRequest,
                    "position must be 0 or more",
                    httpStatus: 400,
                    field: "position"
                )
            }
            return .seek(position: position, relative: relative)
        case .rate:
            guard let rate, (0.5...2).contains(rate) else {
                throw CastServiceError(
                    .invalidRequest,
                    "rate needs a rate within 0.5…2",
                    httpStatus: 400,
                    field: "rate"
                )
            }
            return .rate(rate)
        }
    }

    static func repeatMode(_ mode: Components.Schemas.RepeatMode) -> RepeatMode {
        RepeatMode(rawValue: mode.rawValue) ?? .off
    }

    static func textStyle(_ style: Components.Schemas.TextStyle) throws(CastServiceError) -> TextTrackStyle {
        if let scale = style.fontScale, !(0.1...5).contains(scale) {
            throw CastServiceError(
                .invalidRequest,
                "fontScale must be between 0.1 and 5",
                httpStatus: 400,
                field: "textStyle.fontScale"
            )
        }
        let colors = [
            ("foregroundColor", style.foregroundColor), ("backgroundColor", style.backgroundColor),
            ("edgeColor", style.edgeColor),
        ]
        for case (let name, let color?) in colors
        where color.count != 9 || color.first != "#" || !color.dropFirst().allSatisfy(\.isHexDigit) {
            throw CastServiceError(
                .invalidRequest,
                "\(name) must be #RRGGBBAA",
                httpStatus: 400,
                field: "textStyle.\(name)"
            )
        }
        var result = TextTrackStyle()
        result.fontScale = style.fontScale
        result.foregroundColor = style.foregroundColor
        result.backgroundColor = style.backgroundColor
        result.edgeColor = style.edgeColor
        result.edgeType = style.edgeType?.rawValue
        result.fontFamily = style.fontFamily
        return result
    }

    /// A custom-channel message as text: a JSON string as it is, any other JSON value as its JSON text.
    static func messageText(_ message: OpenAPIValueContainer) -> String {
        if let text = message.value as? String { return text }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(message)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    static func mediaFile(_ file: MediaFolders.File) -> Components.Schemas.MediaFile {
        .init(file: file.path, name: file.name, folder: file.folder, size: file.size, contentType: file.contentType)
    }

    static func problem(_ error: CastServiceError) -> Components.Responses.Problem {
        .init(body: .applicationProblemJson(problemDocument(error)))
    }

    /// The RFC 9457 document for `error`; `type` names the code's documentation.
    static func problemDocument(_ error: CastServiceError) -> Components.Schemas.Problem {
        Components.Schemas.Problem(
            _type: "urn:castd:problem:\(error.code)",
            title: error.code.description,
            status: error.httpStatus,
            detail: error.message,
            code: error.code.description,
            field: error.field
        )
    }

    /// One event in `text/event-stream` framing: `id`, `event` and one `data` line of JSON.
    static func serverSentEvent(_ event: ServiceEvent) -> String {
        var payload: JSONValue = ["device": .string(event.device.id)]
        switch event.change {
        case .deviceAdded(let device), .deviceUpdated(let device), .deviceRemoved(let device):
            payload["name"] = .string(device.friendlyName)
            payload["host"] = .string(device.host)
            payload["port"] = .number(Double(device.port))
        case .status(let activity):
            payload["status"] = json(status(activity))
        case .session(_, let change):
            var session: JSONValue = ["event": .string(change.kind.rawValue)]
            if let id = change.sessionID { session["sessionId"] = .string(id) }
            if let app = change.applicationID { session["appId"] = .string(app) }
            if let reason = change.reason { session["reason"] = .string(reason) }
            payload["session"] = session
        }
        return "id: \(event.id)\nevent: \(event.name)\ndata: \(payload.jsonString)\n\n"
    }

    /// A schema value as JSON, through its Codable form (the same keys the HTTP responses use).
    static func json(_ value: some Encodable) -> JSONValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let data = try? encoder.encode(value),
            let parsed = try? JSONValue(parsing: String(decoding: data, as: UTF8.self))
        else { return .null }
        return parsed
    }
}
