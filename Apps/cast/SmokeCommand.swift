import ArgumentParser
import CastReceiver
import CastTransport
import Logging

/// `cast smoke`: a self-contained run of the transport against an in-process emulated device over real TLS.
struct SmokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "smoke",
        abstract: "Exercise CastTransport against an in-process receiver emulator on 127.0.0.1.",
        discussion: "Example: cast smoke --log-level debug"
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let logger = try global.bootstrapLogging()
        try await withCastReceiverEmulator(
            devices: [DeviceConfiguration(friendlyName: "Smoke Test TV", port: 0)],
            logger: logger
        ) { emulator in
            let device = emulator.devices[0]
            print("emulated device \"\(device.configuration.friendlyName)\" on \(device.host):\(device.port)")
            let connection = try await CastConnection.connect(host: device.host, port: device.port, logger: logger)
            print("connected over TLS")

            try await connection.openVirtualConnection(to: CastEndpoint.receiver)
            let status = try await connection.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "GET_STATUS"]
            ).json()
            print("receiver status: running \(status["status"]?["applications"]?[0]?["displayName"]?.stringValue ?? "?")")

            let launched = try await connection.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "LAUNCH", "appId": "CC1AD845", "language": "en-US", "supportedAppTypes": ["WEB"]]
            ).json()
            guard let app = launched["status"]?["applications"]?[0], let transport = app["transportId"]?.stringValue
            else { throw ValidationError("LAUNCH failed: \(launched.jsonString)") }
            print("launched \(app["displayName"]?.stringValue ?? "?") session \(app["sessionId"]?.stringValue ?? "?")")

            try await connection.openVirtualConnection(to: transport)
            func media(_ payload: JSONValue) async throws -> JSONValue {
                try await connection.request(namespace: CastNamespace.media, to: transport, payload: payload).json()
            }
            let loaded = try await media([
                "type": "LOAD",
                "autoplay": true,
                "media": [
                    "contentId": "https://example.com/big-buck-bunny.mp4", "contentType": "video/mp4",
                    "streamType": "BUFFERED", "duration": 596,
                    "metadata": ["metadataType": 1, "title": "Big Buck Bunny", "studio": "Blender Foundation"],
                ],
            ])
            let sessionID = loaded["status"]?[0]?["mediaSessionId"] ?? .number(0)
            print("loaded: \(loaded["status"]?[0]?["playerState"]?.stringValue ?? "?")")
            for (label, command) in [
                ("paused", ["type": "PAUSE"] as JSONValue),
                ("seeked", ["type": "SEEK", "currentTime": 120]),
                ("resumed", ["type": "PLAY"]),
                ("stopped", ["type": "STOP"]),
            ] {
                var command = command
                command["mediaSessionId"] = sessionID
                let reply = try await media(command)
                let entry = reply["status"]?[0]
                let position = entry?["currentTime"]?.doubleValue.map { String(Int($0)) } ?? "-"
                print("\(label): \(entry?["playerState"]?.stringValue ?? "?") at \(position) s")
            }
            _ = try await connection.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "STOP"]
            )
            print("app stopped")
            await connection.close()
            print("smoke run passed")
        }
    }
}
