import CastLogging
import CastTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A command message from an MQTT command topic: the HTTP API's request body with a `command` member naming the
/// operation (`{"command":"load","url":"https://…"}`, `{"command":"volume","level":0.3}`), or a bare command
/// word (`pause`). An optional `id` member is echoed in the result, so a client can match results to commands.
struct MQTTCommand: Sendable {
    /// What to do.
    enum Action: Sendable {
        case device(DeviceCommand)
        /// A custom-channel message (its reply, if awaited, goes in the result).
        case send(message: String, namespace: String, awaitingReply: Bool)
    }

    /// The command's name as sent.
    var name: String
    /// The client's correlation id, echoed in the result.
    var correlationID: JSONValue?
    var action: Action

    /// Every command name, as the README documents them.
    static let names = [
        "load", "play", "pause", "stop", "seek", "rate", "next", "previous", "skipAd", "volume", "launch", "stopApp",
        "join", "leave", "tracks", "queueLoad", "queueInsert", "queueRemove", "queuePlay", "queueMove", "repeat",
        "send",
    ]

    /// The `id` member of a command message, to echo even when the command itself is invalid.
    static func correlationID(of payload: [UInt8]) -> JSONValue? {
        (try? JSONValue(parsing: String(decoding: payload, as: UTF8.self)))?["id"]
    }

    /// Parses a command message.
    ///
    /// - Throws: ``CastServiceError/Code/invalidRequest`` naming the field that is missing or wrong.
    init(payload: [UInt8]) throws(CastServiceError) {
        let text = String(String(decoding: payload, as: UTF8.self).trimmingWhitespace())
        let json: JSONValue
        if text.hasPrefix("{") {
            guard let parsed = try? JSONValue(parsing: text), parsed.objectValue != nil else {
                throw CastServiceError(
                    .invalidRequest,
                    "the command is not a JSON object",
                    httpStatus: 400,
                    field: "body"
                )
            }
            json = parsed
        } else {
            json = ["command": .string(text)]
        }
        guard let name = json["command"]?.stringValue, !name.isEmpty else {
            throw CastServiceError(.invalidRequest, "give the command's name", httpStatus: 400, field: "command")
        }
        self.name = name
        self.correlationID = json["id"]
        self.action = try Self.action(name, json, body: Data(text.hasPrefix("{") ? payload : Array("{}".utf8)))
    }

    private static func action(_ name: String, _ json: JSONValue, body: Data) throws(CastServiceError) -> Action {
        switch name {
        case "play": return .device(.control(.play))
        case "pause": return .device(.control(.pause))
        case "stop": return .device(.control(.stop))
        case "next": return .device(.control(.next))
        case "previous": return .device(.control(.previous))
        case "skipAd": return .device(.control(.skipAd))
        case "seek":
            return .device(
                .control(
                    try APIModel.command(
                        .seek,
                        position: try number(json, "position"),
                        relative: json["relative"]?.boolValue
                    )
                )
            )
        case "rate": return .device(.control(try APIModel.command(.rate, rate: try number(json, "rate"))))
        case "volume": return .device(try APIModel.volume(try decode(body)))
        case "launch": return .device(APIModel.launch(try decode(body)))
        case "stopApp": return .device(.stopApplication)
        case "join": return .device(.join)
        case "leave": return .device(.leave)
        case "load": return .device(try APIModel.load(try decode(body)))
        case "tracks": return .device(try APIModel.tracks(try decode(body)))
        case "queueLoad": return .device(try APIModel.queueLoad(try decode(body)))
        case "queueInsert": return .device(try APIModel.queueInsert(try decode(body)))
        case "queueRemove": return .device(.removeFromQueue(itemID: try itemID(json)))
        case "queuePlay": return .device(.playQueueItem(itemID: try itemID(json)))
        case "queueMove":
            return .device(.moveQueueItem(itemID: try itemID(json), before: json["before"]?.intValue))
        case "repeat":
            let change: Components.Schemas.RepeatChange = try decode(body)
            return .device(.setRepeatMode(APIModel.repeatMode(change.mode)))
        case "send":
            guard let namespace = json["namespace"]?.stringValue else {
                throw CastServiceError(.invalidRequest, "send needs a namespace", httpStatus: 400, field: "namespace")
            }
            let message: Components.Schemas.ChannelMessage = try decode(body)
            return .send(
                message: APIModel.messageText(message.message),
                namespace: namespace,
                awaitingReply: message.waitForReply ?? false
            )
        default:
            throw CastServiceError(
                .invalidRequest,
                "unknown command '\(name)'; commands are \(names.joined(separator: ", "))",
                httpStatus: 400,
                field: "command"
            )
        }
    }

    /// The request body type the command carries, decoded as the HTTP API decodes it.
    private static func decode<Body: Decodable>(_ body: Data) throws(CastServiceError) -> Body {
        do {
            return try JSONDecoder().decode(Body.self, from: body)
        } catch {
            throw CastServiceError(unreadableRequest: error)
        }
    }

    private static func number(_ json: JSONValue, _ key: String) throws(CastServiceError) -> Double? {
        guard let value = json[key] else { return nil }
        guard let number = value.doubleValue else {
            throw CastServiceError(.invalidRequest, "'\(key)' must be a number", httpStatus: 400, field: key)
        }
        return number
    }

    private static func itemID(_ json: JSONValue) throws(CastServiceError) -> Int {
        guard let id = json["itemId"]?.intValue else {
            throw CastServiceError(.invalidRequest, "give the queue item's itemId", httpStatus: 400, field: "itemId")
        }
        return id
    }
}
