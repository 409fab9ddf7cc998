import CastTransport
import Testing

@testable import CastReceiver

// What independent senders found over the wire: requests that must neither stop the device nor go unanswered.

private let dmr = "CC1AD845"

@Suite("EmulatedDevice: robustness")
struct EmulatedDeviceRobustnessTests {
    /// A delay of any size converts to a `Duration` without trapping: beyond the horizon it is the horizon.
    @Test(arguments: [1e10, 1e12, 1e300, .infinity, -.infinity, .nan, -1])
    func emulatorSecondsIsTotal(seconds: Double) {
        let duration = Duration.emulatorSeconds(seconds)
        #expect(duration >= .zero)
        #expect(duration <= .seconds(Int64(Duration.emulatorHorizon)))
    }

    /// A LOAD of media ten billion seconds long used to kill the process converting its end to a timer.
    @Test func aLoadWithAHugeDurationIsAnsweredAndTheDeviceGoesOn() async throws {
        try await withDevice { device, clock in
            let sender = try await TestSender.connect(to: device)
            let transportID = try await sender.launchAndConnect(dmr)
            for duration: Double in [1e10, 1e12, 1e300] {
                let media: JSONValue = [
                    "contentId": "http://x/a.mp4", "contentType": "video/mp4", "streamType": "BUFFERED",
                    "duration": .number(duration),
                ]
                let loaded = try await sender.media(["type": "LOAD", "media": media], to: transportID)
                #expect(loaded.firstStatus?["playerState"] == "PLAYING", "\(duration)")
            }
            #expect(clock.pendingTimerCount == 0, "an end beyond the horizon arms nothing")
            clock.advance(by: .seconds(5))
            let status = try await sender.media(["type": "GET_STATUS"], to: transportID)
            #expect(status.firstStatus?["currentTime"] == 5)
            await sender.close()
        }
    }

    /// A status repeats the media in `items[].media`: media of 33 kB made a 66 kB reply no frame can carry, and
    /// the sender never got it (nor any later status). The items lose their media first.
    @Test func aReplyOverTheFrameLimitLosesItemMediaAndStillArrives() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            let transportID = try await sender.launchAndConnect(dmr)
            let title = String(repeating: "t", count: 33_000)
            let media: JSONValue = [
                "contentId": "http://x/a.mp4", "contentType": "video/mp4", "streamType": "BUFFERED",
                "metadata": ["metadataType": 0, "title": .string(title)],
            ]
            let loaded = try await sender.media(
                ["type": "LOAD", "media": media],
                to: transportID,
                timeout: .seconds(10)
            )
            let status = try #require(loaded.firstStatus)
            #expect(status["media"]?["metadata"]?["title"] == .string(title))
            #expect(status["items"]?[0]?["media"] == nil)
            #expect(status["items"]?[0]?["itemId"] == 1)
            let again = try await sender.media(["type": "GET_STATUS"], to: transportID, timeout: .seconds(10))
            #expect(again.firstStatus?["mediaSessionId"] == 1)
            await sender.close()
        }
    }

    /// Eleven items of 5.6 kB each: the reply keeps the current item only, without its media.
    @Test func aQueueOverTheFrameLimitIsShortenedInTheReply() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            let transportID = try await sender.launchAndConnect(dmr)
            let items: [JSONValue] = (0..<11).map { index in
                [
                    "media": [
                        "contentId": .string("http://x/\(index).mp4"), "contentType": "video/mp4",
                        "streamType": "BUFFERED",
                        "metadata": ["metadataType": 0, "title": .string(String(repeating: "t", count: 5_600))],
                    ]
                ]
            }
            let loaded = try await sender.media(
                ["type": "QUEUE_LOAD", "items": .array(items)],
                to: transportID,
                timeout: .seconds(10)
            )
            let status = try #require(loaded.firstStatus)
            #expect(status["currentItemId"] == 1)
            #expect(status["media"]?["contentId"] == "http://x/0.mp4")
            let listed = status["items"]?.arrayValue ?? []
            #expect(!listed.isEmpty && listed.allSatisfy { $0["media"] == nil })
            let ids = try await sender.media(
                ["type": "QUEUE_GET_ITEM_IDS", "mediaSessionId": 1],
                to: transportID,
                timeout: .seconds(10)
            )
            #expect(ids["itemIds"]?.arrayValue?.count == 11)
            await sender.close()
        }
    }

    @Test func shrinkingDropsItemMediaThenItemsThenMedia() throws {
        let entry: JSONValue = [
            "mediaSessionId": 1, "currentItemId": 2, "media": ["contentId": "b"],
            "items": [["itemId": 1, "media": ["contentId": "a"]], ["itemId": 2, "media": ["contentId": "b"]]],
        ]
        var payload: JSONValue = ["type": "MEDIA_STATUS", "requestId": 3, "status": [entry]]
        var stages: [JSONValue] = []
        while let smaller = MediaStatusFitting.shrunk(payload) {
            payload = smaller
            stages.append(try #require(smaller.firstStatus))
        }
        #expect(stages.count == 4)
        #expect(stages[0]["items"] == [["itemId": 1], ["itemId": 2]])
        #expect(stages[1]["items"] == [["itemId": 2]])
        #expect(stages[2]["items"] == nil && stages[2]["media"] != nil)
        #expect(stages[3] == ["mediaSessionId": 1, "currentItemId": 2])
        #expect(payload["requestId"] == 3)
    }

    /// A request id a sender used before on its connection is refused (cast-protocol.md §10); a new connection
    /// counts from scratch.
    @Test func aReusedRequestIdIsRefused() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            let transportID = try await sender.launchAndConnect(dmr)
            _ = try await sender.media(["type": "LOAD", "media": shortMedia], to: transportID)
            for _ in 0..<2 {
                try await sender.connection.send(
                    namespace: CastNamespace.media,
                    to: transportID,
                    payload: ["type": "PAUSE", "requestId": 77, "mediaSessionId": 1]
                )
            }
            let first = try await sender.inbox.reply(to: 77).json()
            let second = try await sender.inbox.reply(to: 77).json()
            #expect(first.type == "MEDIA_STATUS")
            #expect(second == ["type": "INVALID_REQUEST", "reason": "DUPLICATE_REQUEST_ID", "requestId": 77])

            let other = try await TestSender.connect(to: device)
            try await other.connection.openVirtualConnection(to: transportID)
            try await other.connection.send(
                namespace: CastNamespace.media,
                to: transportID,
                payload: ["type": "GET_STATUS", "requestId": 77]
            )
            #expect(try await other.inbox.reply(to: 77).json().type == "MEDIA_STATUS")
            await sender.close()
            await other.close()
        }
    }

    @Test func recentRequestIdsAreBounded() {
        var recent = EmulatedDevice.RecentRequestIDs()
        var answers = [recent.insert(1, from: "a"), recent.insert(1, from: "a"), recent.insert(1, from: "b")]
        #expect(answers == [true, false, true])
        answers = (2...(EmulatedDevice.RecentRequestIDs.capacity + 1)).map { id in
            recent.insert(.number(Double(id)), from: "a")
        }
        #expect(answers.allSatisfy { $0 })
        // The oldest ids are forgotten.
        let again = recent.insert(1, from: "a")
        #expect(again)
    }

    /// LAUNCH over an invisible virtual connection is not accepted (cast-protocol.md §3.1).
    @Test func anInvisibleConnectionCannotLaunch() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device, openReceiver: false)
            try await sender.connection.send(
                namespace: CastNamespace.connection,
                to: CastEndpoint.receiver,
                payload: ["type": "CONNECT", "connType": 2]
            )
            let refused = try await sender.receiver(["type": "LAUNCH", "appId": .string(dmr)])
            #expect(refused["type"] == "INVALID_REQUEST")
            #expect(device.runningApp.isIdleScreen)
            #expect(device.launches.isEmpty)
            #expect(try await sender.receiver(["type": "GET_STATUS"]).type == "RECEIVER_STATUS")
            try await sender.connection.send(
                namespace: CastNamespace.connection,
                to: CastEndpoint.receiver,
                payload: ["type": "CONNECT", "connType": 0]
            )
            #expect(try await sender.launch(dmr).firstApplication?["appId"] == .string(dmr))
            await sender.close()
        }
    }

    /// The deviceauth namespace is binary: a STRING payload is ignored, not answered with an error.
    @Test func aStringOnTheDeviceAuthNamespaceIsIgnored() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            try await sender.connection.send(
                CastMessage(
                    sourceID: CastEndpoint.sender,
                    destinationID: CastEndpoint.receiver,
                    namespace: CastNamespace.deviceAuth,
                    payload: .string("{}")
                )
            )
            // Answered in order: once GET_STATUS is, the string was handled.
            _ = try await sender.receiver(["type": "GET_STATUS"])
            #expect(!sender.inbox.all.contains { $0.namespace == CastNamespace.deviceAuth })
            #expect(device.deviceAuthChallenges == 0)
            await sender.close()
        }
    }
}

private let shortMedia: JSONValue = [
    "contentId": "https://media.example.com/short.mp4", "contentType": "video/mp4", "streamType": "BUFFERED",
    "duration": 30,
]

@Suite("EmulatedDevice: start")
struct EmulatedDeviceStartTests {
    /// A port in use is said once, with balanced parentheses, not the transport's message and its cause again.
    @Test func aPortInUseIsSaidOnce() async throws {
        try await withDevice { device, _ in
            let second = EmulatedDevice(configuration: testDevice { $0.port = device.port })
            let error = await #expect(throws: CastReceiverError.self) { try await second.start() }
            let text = error.map { "\($0)" } ?? ""
            #expect(error?.code == .listenFailed)
            #expect(text.components(separatedBy: "cannot listen").count == 2, "\(text)")
            #expect(text.filter { $0 == "(" }.count == text.filter { $0 == ")" }.count, "\(text)")
        }
    }
}
