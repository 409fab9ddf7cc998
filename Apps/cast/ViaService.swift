import CastControllers
import CastMediaServer
import CastSession
import CastTransport
import NIOHTTP1

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `cast … --via http://HOST:PORT` (or `CAST_VIA` in the environment): the command goes to a running `castd`,
/// whose connection and session with the device are already open, so it is answered in one local round trip
/// instead of a TLS connection, a launch or join and a status read per command.
///
/// The device is picked as without `--via`: the one `--device` names (name or id) or `--host` gives, else the
/// only one castd knows, else the only one where castd follows an app. Commands castd cannot do yet refuse an
/// explicit `--via` (exit 2) and run directly when it comes from `CAST_VIA`.
enum ViaService {
    /// What a command asks of castd.
    enum Request {
        case status
        case devices
        /// `play`, `pause`, `stop`, `next`, `previous` or `skipAd`: the API's media command of that name.
        case media(String)
        case toggle
        case seek(Double, relative: Bool)
        case rate(Double)
        case volume(VolumeCommand.Change)
        case muted(Bool)
        case leave
        /// Loads the sources (URLs or local files), or with `append` adds them to the queue.
        case load([JSONValue], append: Bool, repeatMode: String?, startTime: Double?)
        case queueList
        /// Adds the sources at the end, or with `next` after the current item.
        case queueAdd([JSONValue], next: Bool)
        case queueRemove([Int])
        case queueMove(Int, before: Int?)
        case queueJump(Int)
        /// The API's repeat mode (`REPEAT_OFF`, …).
        case queueRepeat(String)
        case tracksList
        /// Makes `ids` the active tracks (keeping the active ones when `nil`), styled by `style` (the API's
        /// `TextStyle`) when given.
        case tracks(ids: [Int]?, style: JSONValue?)
        case send(namespace: String, message: String, waitForReply: Bool)
        case launch(String, relaunch: Bool)
        case stopApp
    }

    /// Whether commands go through castd: `--via URL`, else `CAST_VIA`; `--via direct` turns it off.
    static func url(_ global: GlobalOptions) -> String? {
        let via = global.via ?? ProcessInfo.processInfo.environment["CAST_VIA"]
        guard let via, !via.isEmpty, via != "direct" else { return nil }
        return via
    }

    /// Sends `request` through castd when configured and prints the device's state; `false` when commands go to
    /// the device directly.
    static func handle(_ global: GlobalOptions, _ request: Request) async throws -> Bool {
        guard let url = url(global) else { return false }
        let runtime = try CLIRuntime(global, throughService: true)
        do {
            let token = global.viaToken ?? ProcessInfo.processInfo.environment["CAST_VIA_TOKEN"]
            let client = try ServiceClient(url: url, token: token, timeout: global.timeout.map { $0 + 5 } ?? 30)
            try await perform(request, client, runtime)
        } catch {
            throw runtime.fail(error)
        }
        return true
    }

    private static func perform(_ request: Request, _ client: ServiceClient, _ runtime: CLIRuntime) async throws {
        if case .devices = request {
            let devices = try await client.send(.GET, "/v1/devices").body["devices"]?.arrayValue ?? []
            runtime.emit(json: ["devices": .array(devices)], text: devices.map(deviceLine).joined(separator: "\n"))
            return
        }
        let (path, known) = try await device(runtime.global, client)
        /// The device's state: the one read to find the device, else read now.
        func state() async throws -> JSONValue {
            if let known { return known }
            return try await client.send(.GET, path).body
        }
        let reply: ServiceClient.Reply
        switch request {
        case .status, .devices:
            let state = try await state()
            runtime.emit(json: state, text: stateText(state))
            return
        case .media(let command):
            reply = try await client.send(.POST, path + "/media/" + command)
        case .toggle:
            let playing = try await state()["status"]?["media"]?["playerState"]?.stringValue == "PLAYING"
            reply = try await client.send(.POST, path + "/media/" + (playing ? "pause" : "play"))
        case .seek(let seconds, let relative):
            reply = try await client.send(.POST, path + "/media/seek?position=\(seconds)&relative=\(relative)")
        case .rate(let rate):
            reply = try await client.send(.POST, path + "/media/rate?rate=\(rate)")
        case .volume(.level(let level)):
            reply = try await client.send(.PUT, path + "/volume", body: ["level": .number(level)])
        case .volume(.steps(let steps)):
            // castd sets levels; a step is the profile's volume step, else the receiver's usual 5 %.
            let level = try await state()["status"]?["volume"]?.doubleValue
            let target = try DeviceStatus.level(from: level, bySteps: steps, of: runtime.options.volumeStep ?? 0.05)
            reply = try await client.send(.PUT, path + "/volume", body: ["level": .number(target)])
        case .muted(let muted):
            reply = try await client.send(.PUT, path + "/volume", body: ["muted": .bool(muted)])
        case .leave:
            reply = try await client.send(.DELETE, path + "/session")
        case .load(let items, let append, let repeatMode, let startTime):
            reply = try await load(items, append: append, repeatMode: repeatMode, startTime: startTime, path, client)
        case .queueList:
            let queue = try await client.send(.GET, path + "/queue").body
            let items = (queue["items"]?.arrayValue ?? []).map { item in
                (item["itemId"]?.intValue ?? 0, item["title"]?.stringValue ?? item["contentId"]?.stringValue ?? "")
            }
            runtime.emit(json: queue, text: ListingText.queue(items, current: queue["currentItemId"]?.intValue))
            return
        case .queueAdd(let items, let next):
            var insert: JSONValue = ["items": .array(items)]
            if next, let before = try await itemAfterCurrent(path, client) {
                insert["insertBefore"] = .number(Double(before))
            }
            reply = try await client.send(.POST, path + "/queue/items", body: insert)
        case .queueRemove(let ids):
            var last: ServiceClient.Reply?
            for id in ids { last = try await client.send(.DELETE, path + "/queue/items/\(id)") }
            guard let last else { throw CLIError(.usage, "name the items to remove") }
            reply = last
        case .queueMove(let id, let before):
            let move: JSONValue = before.map { ["before": .number(Double($0))] } ?? [:]
            reply = try await client.send(.POST, path + "/queue/items/\(id)/move", body: move)
        case .queueJump(let id):
            reply = try await client.send(.POST, path + "/queue/items/\(id)/play")
        case .queueRepeat(let mode):
            reply = try await client.send(.PUT, path + "/queue/repeat", body: ["mode": .string(mode)])
        case .tracksList:
            let media = try await state()["status"]?["media"]
            let tracks = media?["tracks"]?.arrayValue ?? []
            let active = media?["activeTrackIds"]?.arrayValue ?? []
            runtime.emit(
                json: ["activeTrackIds": .array(active), "tracks": .array(tracks)],
                text: ListingText.tracks(
                    tracks.map { track in
                        (
                            track["id"]?.intValue ?? 0, track["type"]?.stringValue ?? "",
                            track["name"]?.stringValue ?? "", track["language"]?.stringValue ?? ""
                        )
                    },
                    active: active.compactMap(\.intValue)
                )
            )
            return
        case .tracks(let ids, let style):
            let active: [JSONValue]
            if let ids {
                active = ids.map { .number(Double($0)) }
            } else {
                active = try await state()["status"]?["media"]?["activeTrackIds"]?.arrayValue ?? []
            }
            var change: JSONValue = ["activeTrackIds": .array(active)]
            if let style { change["textStyle"] = style }
            reply = try await client.send(.PUT, path + "/tracks", body: change)
        case .send(let namespace, let message, let waitForReply):
            let answer = try await client.send(
                .POST,
                path + "/channels/" + escaped(namespace),
                body: ["message": .string(message), "waitForReply": .bool(waitForReply)]
            ).body
            if waitForReply, let text = answer["reply"]?.stringValue {
                runtime.emit(json: ["reply": .string(text)], text: text)
            } else {
                runtime.emit(json: ["sent": true], text: "sent")
            }
            return
        case .launch(let appID, let relaunch):
            reply = try await client.send(
                .POST,
                path + "/app",
                body: ["appId": .string(appID), "relaunch": .bool(relaunch)]
            )
        case .stopApp:
            reply = try await client.send(.DELETE, path + "/app")
        }
        runtime.emit(json: reply.body, text: stateText(reply.body))
    }

    /// The id of the queue item after the current one, if there is one.
    private static func itemAfterCurrent(_ path: String, _ client: ServiceClient) async throws -> Int? {
        let queue = try await client.send(.GET, path + "/queue").body
        let ids = queue["items"]?.arrayValue?.compactMap { $0["itemId"]?.intValue } ?? []
        guard let current = queue["currentItemId"]?.intValue, let index = ids.firstIndex(of: current),
            index + 1 < ids.count
        else { return nil }
        return ids[index + 1]
    }

    private static func load(
        _ items: [JSONValue],
        append: Bool,
        repeatMode: String?,
        startTime: Double?,
        _ path: String,
        _ client: ServiceClient
    ) async throws -> ServiceClient.Reply {
        if append { return try await client.send(.POST, path + "/queue/items", body: ["items": .array(items)]) }
        if items.count == 1, repeatMode == nil, var item = items.first {
            if let startTime { item["startTime"] = .number(startTime) }
            return try await client.send(.POST, path + "/media", body: item)
        }
        var queue: JSONValue = ["items": .array(items)]
        if let repeatMode { queue["repeatMode"] = .string(repeatMode) }
        return try await client.send(.POST, path + "/queue", body: queue)
    }

    /// One queue item for castd: a URL it passes on, or a local file by its absolute path (castd casts it when
    /// it lies in one of castd's media folders).
    static func item(_ source: String, title: String?, contentType: String?) -> JSONValue {
        var item: JSONValue = [:]
        if source.contains("://") {
            item["url"] = .string(source)
        } else {
            let path = source.hasPrefix("/") ? source : FileManager.default.currentDirectoryPath + "/" + source
            item["file"] = .string(URL(fileURLWithPath: path).standardizedFileURL.path)
        }
        if let title { item["title"] = .string(title) }
        if let contentType { item["contentType"] = .string(contentType) }
        return item
    }

    /// The API path of the device the user means and, when finding it read it, its state.
    ///
    /// A device named by id is asked for directly (castd answers in one request, however many devices it has);
    /// a name, an address or no choice at all needs castd's list.
    private static func device(
        _ global: GlobalOptions,
        _ client: ServiceClient
    ) async throws -> (path: String, state: JSONValue?) {
        if let wanted = global.device {
            let path = "/v1/devices/" + escaped(wanted)
            let reply = try await client.exchange(.GET, path)
            if reply.status == 200, reply.body["device"]?["id"]?.stringValue == wanted { return (path, reply.body) }
            guard reply.status == 404 else { throw ServiceClient.failure(reply) }
        }
        let devices = try await client.send(.GET, "/v1/devices").body["devices"]?.arrayValue ?? []
        let device = try pick(from: devices, global)
        return ("/v1/devices/" + escaped(device["id"]?.stringValue ?? ""), nil)
    }

    /// The device the user means among castd's.
    private static func pick(from devices: [JSONValue], _ global: GlobalOptions) throws -> JSONValue {
        func named(_ device: JSONValue) -> String { device["name"]?.stringValue ?? "?" }
        if let wanted = global.device {
            let match =
                devices.first { $0["id"]?.stringValue == wanted }
                ?? devices.first { named($0).lowercased() == wanted.lowercased() }
            guard let match else {
                throw CLIError(.noDevice, "castd knows no device '\(wanted)' (it knows: \(list(devices)))")
            }
            return match
        }
        if !global.host.isEmpty {
            let wanted = global.staticDevices.map { ($0.host, $0.port) }
            let match = devices.first { device in
                wanted.contains { $0.0 == device["host"]?.stringValue && $0.1 == device["port"]?.intValue }
            }
            guard let match else {
                throw CLIError(.noDevice, "castd knows no device at \(global.host.joined(separator: ", "))")
            }
            return match
        }
        if devices.count == 1 { return devices[0] }
        let busy = devices.filter { $0["status"]?["app"].map { !$0.isNull } == true }
        if busy.count == 1 { return busy[0] }
        guard !devices.isEmpty else { throw CLIError(.noDevice, "castd knows no Cast device yet") }
        throw CLIError(.noDevice, "castd knows several devices; name one with --device (\(list(devices)))")
    }

    private static func list(_ devices: [JSONValue]) -> String {
        devices.isEmpty ? "none" : devices.compactMap { $0["name"]?.stringValue }.joined(separator: ", ")
    }

    private static func escaped(_ id: String) -> String {
        RequestPath.encode(id)
    }

    // MARK: Output

    private static func deviceLine(_ device: JSONValue) -> String {
        let name = device["name"]?.stringValue ?? "?"
        let model = device["model"]?.stringValue.map { " (\($0))" } ?? ""
        let address = "\(device["host"]?.stringValue ?? "?"):\(device["port"]?.intValue ?? 0)"
        let app = device["status"]?["app"]?["name"]?.stringValue.map { " — \($0)" } ?? ""
        return "\(name)\(model)  \(address)  \(device["id"]?.stringValue ?? "")\(app)"
    }

    /// A device state as the status lines of a direct `cast status`, from castd's JSON.
    static func stateText(_ state: JSONValue) -> String {
        let status = state["status"]
        var lines = ["device: \(state["device"]?["name"]?.stringValue ?? "?")"]
        lines.append("app: \(status?["app"]?["name"]?.stringValue ?? "none")")
        if let media = status?["media"], !media.isNull {
            var line = "media: \(media["playerState"]?.stringValue ?? "?")"
            if let title = media["title"]?.stringValue ?? media["contentId"]?.stringValue { line += " \"\(title)\"" }
            line += " \(TimeFormatting.clock(media["position"]?.doubleValue))"
            if let duration = media["duration"]?.doubleValue { line += " / \(TimeFormatting.clock(duration))" }
            lines.append(line)
        } else if status?["app"].map({ !$0.isNull }) == true, let error = status?["mediaError"]?.stringValue {
            lines.append("media: unknown (\(error))")
        }
        if let volume = status?["volume"]?.doubleValue {
            let muted = status?["muted"]?.boolValue == true ? " (muted)" : ""
            lines.append("volume: \(Int((volume * 100).rounded()))%\(muted)")
        }
        return lines.joined(separator: "\n")
    }
}
