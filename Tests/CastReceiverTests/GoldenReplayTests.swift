import Foundation
import Testing

@testable import CastReceiver
@testable import CastTransport

// Replays the frames pychromecast 14.0.10 sent to a real device, byte for byte, against an emulated device and
// checks the replies have the shapes pychromecast waits for (cast-protocol.md §6, §7, §9, §12).

/// One frame pychromecast sent, as recorded in Golden/pychromecast-14.0.10-sent.jsonl.
struct GoldenFrame: Sendable {
    var scenario: String
    var seq: Int
    var op: String
    var sourceID: String
    var destinationID: String
    var namespace: String
    var payloadText: String
    var payload: JSONValue
    /// The complete frame, length prefix included.
    var frame: [UInt8]

    /// The request id of a receiver or media request (heartbeat PINGs carry one too but get no correlated reply).
    var requestId: Int? {
        guard namespace == CastNamespace.receiver || namespace == CastNamespace.media else { return nil }
        return payload["requestId"]?.intValue
    }
}

enum Golden {
    static let resourceName = "pychromecast-14.0.10-sent"

    /// The bundled file: `.copy("Golden")` keeps the directory, so the file sits in a `Golden` subdirectory.
    static var url: URL? {
        Bundle.module.url(forResource: resourceName, withExtension: "jsonl", subdirectory: "Golden")
            ?? Bundle.module.url(forResource: "Golden/\(resourceName)", withExtension: "jsonl")
    }

    static func frames() throws -> [GoldenFrame] {
        let url = try #require(url, "the golden file is not in the test bundle")
        let text = try String(contentsOf: url, encoding: .utf8)
        return try text.split(separator: "\n").filter { !$0.isEmpty }.map { line in
            let json = try JSONValue(parsing: String(line))
            let hex = try #require(json["frame_hex"]?.stringValue)
            return GoldenFrame(
                scenario: try #require(json["scenario"]?.stringValue),
                seq: try #require(json["seq"]?.intValue),
                op: try #require(json["op"]?.stringValue),
                sourceID: try #require(json["source_id"]?.stringValue),
                destinationID: try #require(json["destination_id"]?.stringValue),
                namespace: try #require(json["namespace"]?.stringValue),
                payloadText: try #require(json["payload_utf8"]?.stringValue),
                payload: try #require(json["payload"]),
                frame: try #require(bytes(fromHex: hex))
            )
        }
    }

    static func scenario(_ name: String) throws -> [GoldenFrame] {
        let frames = try frames().filter { $0.scenario == name }
        try #require(!frames.isEmpty, "no frames for scenario \(name)")
        return frames
    }
}

/// What a replay produced: the reply to each request id, and everything the sender received.
struct ReplayResult: Sendable {
    var replies: [Int: CastMessage]
    var received: [CastMessage]
    var stillConnected: Bool
    var connectionCount: Int

    func reply(_ requestId: Int) throws -> JSONValue {
        try #require(replies[requestId], "no reply to request \(requestId)").json()
    }
}

/// Writes every frame of `frames` in order to a fresh device whose app transport ids are `web-N` and whose session
/// ids are `sessionID`, waiting (bounded) for the reply to each receiver/media request before the next frame.
func replay(_ frames: [GoldenFrame], sessionID: String) async throws -> ReplayResult {
    let configuration = testDevice("Golden") { configuration in
        configuration.faults.transportIDDiffersFromSessionID = true
        configuration.sessionIDGenerator = { sessionID }
    }
    return try await withDevice(configuration) { device, _ in
        let sender = try await TestSender.connect(to: device, openReceiver: false)
        var replies: [Int: CastMessage] = [:]
        for frame in frames {
            try await sender.connection.writeRawFrameBytes(frame.frame)
            if let requestId = frame.requestId {
                replies[requestId] = try await sender.inbox.reply(to: requestId)
            }
        }
        let result = ReplayResult(
            replies: replies,
            received: sender.inbox.all,
            stillConnected: sender.connection.isConnected,
            connectionCount: device.connectionCount
        )
        await sender.close()
        return result
    }
}

@Suite("Golden replay: pychromecast 14.0.10")
struct GoldenReplayTests {
    @Test func theGoldenFileIsBundledAndWellFormed() throws {
        // `.copy("Golden")` keeps the directory: the subdirectory lookup is the one that works on Linux.
        #expect(
            Bundle.module.url(forResource: Golden.resourceName, withExtension: "jsonl", subdirectory: "Golden") != nil
        )
        let frames = try Golden.frames()
        #expect(Set(frames.map(\.scenario)) == ["default", "errors_and_extras", "heartbeat_idle_no_receiver_ping"])
        for frame in frames {
            // The length prefix covers exactly the body, and the body is the recorded message.
            let length = frame.frame.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            #expect(length == frame.frame.count - 4, "\(frame.scenario) #\(frame.seq)")
            let message = try CastMessageDecoder.decodeMessage(Array(frame.frame.dropFirst(4)))
            #expect(message.sourceID == frame.sourceID)
            #expect(message.destinationID == frame.destinationID)
            #expect(message.namespace == frame.namespace)
            #expect(message.payload == .string(frame.payloadText))
            #expect(try message.json() == frame.payload)
        }
    }

    @Test func defaultScenario() async throws {
        let sessionID = "07B9997E-DDC5-4F78-8CCF-EBD0D6297949"
        let frames = try Golden.scenario("default")
        #expect(frames.compactMap(\.requestId) == Array(1...14).filter { $0 != 2 && $0 != 15 })
        let result = try await replay(frames, sessionID: sessionID)

        let initial = try result.reply(1)
        #expect(initial.type == "RECEIVER_STATUS")
        #expect(initial.firstApplication?["appId"] == "E8C28D3C")

        let launchMessage = try #require(result.replies[3])
        #expect(launchMessage.sourceID == CastEndpoint.receiver)
        #expect(launchMessage.destinationID == CastEndpoint.sender)
        let launch = try result.reply(3)
        #expect(launch.type == "RECEIVER_STATUS")
        #expect(launch["requestId"] == 3)
        #expect(launch.firstApplication?["appId"] == "CC1AD845")
        #expect(launch.firstApplication?["transportId"] == "web-1")
        #expect(launch.firstApplication?["sessionId"] == .string(sessionID))
        #expect(
            launch.firstApplication?["namespaces"]?.arrayValue?.contains(["name": .string(CastNamespace.media)]) == true
        )

        let mediaStatus = try #require(result.replies[4])
        #expect(mediaStatus.sourceID == "web-1")
        #expect(try mediaStatus.json() == ["type": "MEDIA_STATUS", "requestId": 4, "status": []])

        let load = try result.reply(5)
        #expect(load.type == "MEDIA_STATUS")
        #expect(load.firstStatus?["mediaSessionId"] == 1)
        #expect(load.firstStatus?["playerState"] == "PLAYING")
        #expect(
            load.firstStatus?["media"]?["contentId"]
                == "http://commondatastorage.googleapis.com/gtv-videos-bucket/sample/BigBuckBunny.mp4"
        )
        #expect(load.firstStatus?["media"]?["metadata"]?["title"] == "Big Buck Bunny")

        #expect(try result.reply(6).firstStatus?["playerState"] == "PAUSED")
        #expect(try result.reply(7).firstStatus?["playerState"] == "PLAYING")
        let seek = try result.reply(8)
        #expect(seek.firstStatus?["currentTime"] == 120.5)
        #expect(seek.firstStatus?["playerState"] == "PLAYING")

        let volume = try result.reply(9)
        #expect(volume.type == "RECEIVER_STATUS")
        #expect(volume["status"]?["volume"]?["level"] == 0.35)
        #expect(try result.reply(10)["status"]?["volume"]?["muted"] == true)
        let unmuted = try result.reply(11)
        #expect(unmuted["status"]?["volume"]?["muted"] == false)
        #expect(unmuted["status"]?["volume"]?["level"] == 0.35)

        let stopped = try result.reply(12)
        #expect(stopped.type == "MEDIA_STATUS")
        #expect(stopped.firstStatus?["playerState"] == "IDLE")
        #expect(stopped.firstStatus?["idleReason"] == "CANCELLED")

        let quit = try result.reply(13)
        #expect(quit.type == "RECEIVER_STATUS")
        #expect(quit.firstApplication?["appId"] == "E8C28D3C")
        #expect(quit.firstApplication?["isIdleScreen"] == true)
        let close = try #require(result.received.first { $0.namespace == CastNamespace.connection })
        #expect(close.sourceID == "web-1")
        #expect(close.destinationID == CastEndpoint.sender)
        #expect(try close.json()["type"] == "CLOSE")

        #expect(try result.reply(14).firstApplication?["appId"] == "E8C28D3C")
        #expect(result.stillConnected)
        #expect(result.connectionCount == 1)
    }

    @Test func errorsAndExtrasScenario() async throws {
        let sessionID = "75B188B7-8643-4412-9B62-2A09CDCA37B2"
        let result = try await replay(try Golden.scenario("errors_and_extras"), sessionID: sessionID)

        #expect(try result.reply(1).firstApplication?["appId"] == "E8C28D3C")
        #expect(try result.reply(3) == ["type": "LAUNCH_ERROR", "reason": "NOT_FOUND", "requestId": 3])

        let launch = try result.reply(4)
        #expect(launch.firstApplication?["appId"] == "CC1AD845")
        #expect(launch.firstApplication?["transportId"] == "web-2", "the failed LAUNCH counted as web-1")
        #expect(launch.firstApplication?["sessionId"] == .string(sessionID))
        #expect(try result.reply(5)["status"] == [])

        let failed = try result.reply(6)
        #expect(failed.type == "LOAD_FAILED")
        #expect(failed["detailedErrorCode"] == 104)
        #expect(failed["itemId"]?.intValue != nil)
        let errorIndex = result.received.firstIndex {
            (try? $0.json())?.firstStatus?["idleReason"] == "ERROR"
        }
        let failedIndex = result.received.firstIndex { (try? $0.json())?["requestId"] == 6 }
        #expect(
            errorIndex != nil && failedIndex != nil && errorIndex! < failedIndex!,
            "IDLE/ERROR precedes LOAD_FAILED"
        )

        let load = try result.reply(7)
        #expect(load.firstStatus?["mediaSessionId"] == 2)
        #expect(load.firstStatus?["playerState"] == "PLAYING")

        let rate = try result.reply(8)
        #expect(rate.type == "MEDIA_STATUS")
        #expect(rate.firstStatus?["playbackRate"] == 1.5)
        #expect(rate.firstStatus?["mediaSessionId"] == 2)

        let status = try result.reply(9)
        #expect(status.firstStatus?["mediaSessionId"] == 2)
        #expect(status.firstStatus?["playbackRate"] == 1.5)

        let receiver = try result.reply(10)
        #expect(receiver.type == "RECEIVER_STATUS")
        #expect(receiver.firstApplication?["transportId"] == "web-2")
        #expect(result.stillConnected)
    }

    @Test func heartbeatIdleScenario() async throws {
        let frames = try Golden.scenario("heartbeat_idle_no_receiver_ping")
        #expect(frames.filter { $0.namespace == CastNamespace.heartbeat }.count == 3)
        let result = try await replay(frames, sessionID: "00000000-0000-0000-0000-000000000000")
        #expect(try result.reply(1).type == "RECEIVER_STATUS")
        #expect(result.replies.count == 1, "PINGs are answered by the heartbeat layer, not with a correlated reply")
        #expect(!result.received.contains { $0.namespace == CastNamespace.heartbeat })
        #expect(result.stillConnected)
        #expect(result.connectionCount == 1)
    }
}
