import CastTransport
import Foundation
import Testing

@testable import CastReceiver

// An emulated device over real TLS on 127.0.0.1, driven by CastConnection (cast-protocol.md §3, §6, §7, §9, §12).
// Time on the device is a ManualCastClock: media ends and delayed replies happen only on advance(by:).

private let dmr = "CC1AD845"
private let backdrop = "E8C28D3C"
private let echoNamespace = "urn:x-cast:com.example.echo"

private let shortMovie: JSONValue = [
    "contentId": "https://media.example.com/short.mp4", "contentType": "video/mp4", "streamType": "BUFFERED",
    "duration": 30, "metadata": ["metadataType": 0, "title": "Short"],
]

@Suite("EmulatedDevice: receiver namespace")
struct EmulatedDeviceReceiverTests {
    @Test func getStatusShowsTheBackdrop() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            let message = try await sender.connection.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "GET_STATUS"]
            )
            #expect(message.sourceID == CastEndpoint.receiver)
            #expect(message.destinationID == CastEndpoint.sender)
            #expect(message.namespace == CastNamespace.receiver)
            let status = try message.json()
            #expect(status.type == "RECEIVER_STATUS")
            #expect(status["requestId"] == 1)
            let app = try #require(status.firstApplication)
            #expect(status["status"]?["applications"]?.arrayValue?.count == 1)
            #expect(app["appId"] == .string(backdrop))
            #expect(app["displayName"] == "Backdrop")
            #expect(app["isIdleScreen"] == true)
            #expect(app["namespaces"] == [])
            #expect(app["sessionId"] == app["transportId"])
            #expect(app["sessionId"]?.stringValue?.count == 36)
            #expect(
                status["status"]?["volume"]
                    == ["controlType": "attenuation", "level": 1, "muted": false, "stepInterval": 0.05]
            )
            #expect(device.runningApp.isIdleScreen)
            #expect(device.runningApp.appID == backdrop)
            await sender.close()
        }
    }

    @Test func receiverMessagesWithoutConnectAreDropped() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device, openReceiver: false)
            await expectTransportError(.requestTimedOut) {
                try await sender.receiver(["type": "GET_STATUS"], timeout: .milliseconds(300))
            }
            try await sender.connection.openVirtualConnection(to: CastEndpoint.receiver)
            #expect(try await sender.receiver(["type": "GET_STATUS"]).type == "RECEIVER_STATUS")
            await sender.close()
        }
    }

    @Test func connectToAnUnknownEndpointIsAnsweredWithClose() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            try await sender.connection.send(
                namespace: CastNamespace.connection,
                to: "no-such-app",
                payload: ["type": "CONNECT"]
            )
            let close = try await sender.inbox.first { $0.namespace == CastNamespace.connection }
            #expect(close.sourceID == "no-such-app")
            #expect(close.destinationID == CastEndpoint.sender)
            #expect(try close.json() == ["type": "CLOSE", "reasonCode": 3])
            await sender.close()
        }
    }

    /// connType must be 0, 1 or 2 (absent or null is strong): any other is refused with CLOSE (cast-protocol.md
    /// §3.1), and no virtual connection is made.
    @Test func connectWithAnUnknownConnTypeIsAnsweredWithClose() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device, openReceiver: false)
            for connType: JSONValue in [7, -1, "0", 1.5] {
                try await sender.connection.send(
                    namespace: CastNamespace.connection,
                    to: CastEndpoint.receiver,
                    payload: ["type": "CONNECT", "connType": connType]
                )
                let close = try await sender.inbox.first { $0.namespace == CastNamespace.connection }
                #expect(close.sourceID == CastEndpoint.receiver)
                #expect(try close.json() == ["type": "CLOSE", "reasonCode": 3], "\(connType)")
            }
            await expectTransportError(.requestTimedOut) {
                try await sender.receiver(["type": "GET_STATUS"], timeout: .milliseconds(300))
            }
            try await sender.connection.send(
                namespace: CastNamespace.connection,
                to: CastEndpoint.receiver,
                payload: ["type": "CONNECT", "connType": .null]
            )
            #expect(try await sender.receiver(["type": "GET_STATUS"]).type == "RECEIVER_STATUS")
            await sender.close()
        }
    }

    @Test func launchRepliesWithTheRequestIdAndBroadcastsToOtherSenders() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            let other = try await TestSender.connect(to: device)
            _ = try await other.receiver(["type": "GET_STATUS"])  // its CONNECT has been handled

            let reply = try await sender.launch(dmr, extra: ["language": "en-US", "supportedAppTypes": ["WEB"]])
            #expect(reply.type == "RECEIVER_STATUS")
            #expect(reply["requestId"] == 1)
            let app = try #require(reply.firstApplication)
            #expect(app["appId"] == .string(dmr))
            #expect(app["displayName"] == "Default Media Receiver")
            #expect(app["isIdleScreen"] == false)
            let sessionID = try #require(app["sessionId"]?.stringValue)
            #expect(app["transportId"] == .string(sessionID))
            let namespaces = try #require(app["namespaces"]?.arrayValue)
            #expect(namespaces.allSatisfy { $0["name"]?.stringValue != nil }, "namespaces are objects")
            #expect(namespaces.contains(["name": .string(CastNamespace.media)]))
            #expect(device.runningApp.sessionID == sessionID)
            #expect(device.runningApp.launch?.language == "en-US")

            // The other sender learns about it from a requestId-0 broadcast to `*`.
            let broadcast = try await other.inbox.first(within: .seconds(60), "the RECEIVER_STATUS broadcast") {
                $0.namespace == CastNamespace.receiver && (try? $0.json())?["requestId"] == 0
            }
            #expect(broadcast.destinationID == CastEndpoint.broadcast)
            #expect(try broadcast.json().firstApplication?["sessionId"] == .string(sessionID))

            // The requester gets only the reply: nothing with requestId 0 came before its next reply.
            _ = try await sender.receiver(["type": "GET_STATUS"])
            _ = try await sender.inbox.reply(to: 2)
            #expect(!sender.inbox.all.contains { (try? $0.json())?["requestId"] == 0 })

            // Launching the running app again joins it.
            let again = try await sender.launch(dmr)
            #expect(again.firstApplication?["sessionId"] == .string(sessionID))
            await sender.close()
            await other.close()
        }
    }

    @Test func launchErrors() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            let unknown = try await sender.launch("BADAPPID")
            #expect(unknown == ["type": "LAUNCH_ERROR", "reason": "NOT_FOUND", "requestId": 1])
            let empty = try await sender.launch("")
            #expect(empty == ["type": "LAUNCH_ERROR", "reason": "BAD_PARAMETER", "requestId": 2])
            let missing = try await sender.receiver(["type": "LAUNCH"])
            #expect(missing == ["type": "LAUNCH_ERROR", "reason": "BAD_PARAMETER", "requestId": 3])
            #expect(device.launches.map(\.appID) == ["BADAPPID", "", ""])
            #expect(device.launches.allSatisfy { !$0.succeeded })
            #expect(device.runningApp.appID == backdrop)
            await sender.close()
        }
    }

    @Test func androidTVAppNeedsTheAndroidTVAppTypeAndRecordsCredentials() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            #expect(try await sender.launch("A1B2C3D4", extra: ["supportedAppTypes": ["WEB"]])["reason"] == "NOT_FOUND")
            #expect(try await sender.launch("A1B2C3D4")["reason"] == "NOT_FOUND")

            let reply = try await sender.launch(
                "A1B2C3D4",
                extra: [
                    "language": "en-US",
                    "supportedAppTypes": ["WEB", "ANDROID_TV"],
                    "appParams": ["launchHint": "resume"],
                    "credentialsData": ["credentials": "opaque-user-token", "credentialsType": "android"],
                ]
            )
            #expect(reply.type == "RECEIVER_STATUS")
            #expect(reply.firstApplication?["appId"] == "A1B2C3D4")
            #expect(reply.firstApplication?["appType"] == "ANDROID_TV")
            let expected = LaunchRecord(
                appID: "A1B2C3D4",
                language: "en-US",
                supportedAppTypes: ["WEB", "ANDROID_TV"],
                appParams: ["launchHint": "resume"],
                credentials: "opaque-user-token",
                credentialsType: "android",
                succeeded: true
            )
            #expect(device.launches.last == expected)
            #expect(device.launches.count == 3)
            #expect(device.runningApp.launch == expected)

            // The app serves the media namespace; LOAD credentials are recorded too.
            let transportID = try #require(reply.firstApplication?["transportId"]?.stringValue)
            try await sender.connection.openVirtualConnection(to: transportID)
            let loaded = try await sender.media(
                ["type": "LOAD", "media": shortMovie, "credentials": "load-token", "credentialsType": "android"],
                to: transportID
            )
            #expect(loaded.firstStatus?["playerState"] == "PLAYING")
            #expect(device.mediaCredentials == ["credentials": "load-token", "credentialsType": "android"])
            await sender.close()
        }
    }

    @Test func stopWithTheWrongSessionIdIsRejected() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            _ = try await sender.launchAndConnect(dmr)
            let reply = try await sender.receiver(["type": "STOP", "sessionId": "not-the-session"])
            #expect(reply == ["type": "INVALID_REQUEST", "reason": "INVALID_SESSION_ID", "requestId": 2])
            #expect(device.runningApp.appID == dmr)
            await sender.close()
        }
    }

    @Test(arguments: [true, false])
    func stopClosesTheAppsVirtualConnectionsAndShowsTheBackdrop(withSessionId: Bool) async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            let transportID = try await sender.launchAndConnect(dmr)
            let sessionID = device.runningApp.sessionID
            #expect(sender.connection.virtualConnections == [CastEndpoint.receiver, transportID])

            var stop: [String: JSONValue] = ["type": "STOP"]
            if withSessionId { stop["sessionId"] = .string(sessionID) }
            let reply = try await sender.receiver(.object(stop))
            #expect(reply.type == "RECEIVER_STATUS")
            #expect(reply["requestId"] == 2)
            #expect(reply.firstApplication?["appId"] == .string(backdrop))
            #expect(reply.firstApplication?["isIdleScreen"] == true)
            #expect(reply.firstApplication?["sessionId"] != .string(sessionID))

            // CLOSE from the app's transport id, before the status reply.
            _ = try await sender.inbox.reply(to: 2)
            let close = try await sender.inbox.first { $0.namespace == CastNamespace.connection }
            #expect(close.sourceID == transportID)
            #expect(close.destinationID == CastEndpoint.sender)
            #expect(try close.json()["type"] == "CLOSE")
            let all = sender.inbox.all
            let closeIndex = all.firstIndex { $0.namespace == CastNamespace.connection }
            let replyIndex = all.firstIndex { (try? $0.json())?["requestId"] == 2 }
            #expect(closeIndex != nil && replyIndex != nil && closeIndex! < replyIndex!)

            let event = try await sender.events.first { if case .virtualConnectionClosed = $0 { true } else { false } }
            #expect(event == .virtualConnectionClosed(endpoint: transportID))
            #expect(sender.connection.virtualConnections == [CastEndpoint.receiver])

            let status = try await sender.receiver(["type": "GET_STATUS"])
            #expect(status.firstApplication?["appId"] == .string(backdrop))
            #expect(device.runningApp.isIdleScreen)
            #expect(device.mediaStatus == nil)
            await sender.close()
        }
    }

    @Test func setVolumeLevelAndMute() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            let other = try await TestSender.connect(to: device)
            _ = try await other.receiver(["type": "GET_STATUS"])

            let level = try await sender.receiver(["type": "SET_VOLUME", "volume": ["level": 0.35]])
            #expect(level.type == "RECEIVER_STATUS")
            #expect(level["status"]?["volume"]?["level"] == 0.35)
            #expect(level["status"]?["volume"]?["muted"] == false)

            let muted = try await sender.receiver(["type": "SET_VOLUME", "volume": ["muted": true]])
            #expect(muted["status"]?["volume"]?["level"] == 0.35)
            #expect(muted["status"]?["volume"]?["muted"] == true)
            #expect(device.volume.level == 0.35)
            #expect(device.volume.muted)

            let broadcast = try await other.inbox.json(on: CastNamespace.receiver) {
                $0["requestId"] == 0 && $0["status"]?["volume"]?["muted"] == true
            }
            #expect(broadcast["status"]?["volume"]?["level"] == 0.35)

            // A level outside 0…1 is refused, as on the media namespace.
            let beyond = try await sender.receiver(["type": "SET_VOLUME", "volume": ["level": 1.7]])
            #expect(beyond == ["type": "INVALID_REQUEST", "reason": "INVALID_PARAMS", "requestId": 3])
            #expect(device.volume.level == 0.35)
            #expect(
                try await sender.receiver(["type": "SET_VOLUME", "volume": ["level": 1]])["type"] == "RECEIVER_STATUS"
            )
            let invalid = try await sender.receiver(["type": "SET_VOLUME", "volume": [:]])
            #expect(invalid == ["type": "INVALID_REQUEST", "reason": "INVALID_PARAMS", "requestId": 5])
            // Values of the wrong type are refused too, rather than answered with an unchanged status.
            for volume: JSONValue in [
                ["level": "0.5"], ["level": .null], ["muted": "yes"], ["level": 0.5, "muted": 1],
            ] {
                let refused = try await sender.receiver(["type": "SET_VOLUME", "volume": volume])
                #expect(refused["reason"] == "INVALID_PARAMS", "\(volume)")
            }
            #expect(device.volume.level == 1)
            let nullIsAbsent = try await sender.receiver([
                "type": "SET_VOLUME", "volume": ["level": 0.5, "muted": .null],
            ])
            #expect(nullIsAbsent["status"]?["volume"]?["level"] == 0.5)
            #expect(nullIsAbsent["status"]?["volume"]?["muted"] == true)
            await sender.close()
            await other.close()
        }
    }

    @Test func getAppAvailability() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            let reply = try await sender.receiver([
                "type": "GET_APP_AVAILABILITY", "appId": [.string(dmr), "NOPE1234"],
            ])
            #expect(
                reply
                    == [
                        "responseType": "GET_APP_AVAILABILITY", "requestId": 1,
                        "availability": [dmr: "APP_AVAILABLE", "NOPE1234": "APP_UNAVAILABLE"],
                    ]
            )
            #expect(reply["type"] == nil)
            await sender.close()
        }
    }

    @Test func unknownReceiverTypeIsInvalidCommand() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            let reply = try await sender.receiver(["type": "DANCE"])
            #expect(reply == ["type": "INVALID_REQUEST", "reason": "INVALID_COMMAND", "requestId": 1])
            await sender.close()
        }
    }

    /// A sender's `requestId` comes back as it was sent, whatever its JSON type (receivers written in JavaScript
    /// echo it), on the platform's namespace and the app's; a request without one (or with null) is answered with 0.
    @Test func repliesEchoTheRequestIdAsSent() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            let transportID = try await sender.launchAndConnect(EmulatedApp.defaultMediaReceiver.id)
            let ids: [JSONValue] = ["abc", 1.5, .number(0x1p60), -7, ["nested": true]]
            for (index, id) in ids.enumerated() {
                for (namespace, destination) in [
                    (CastNamespace.receiver, CastEndpoint.receiver), (CastNamespace.media, transportID),
                ] {
                    try await sender.connection.send(
                        namespace: namespace,
                        to: destination,
                        payload: ["type": "GET_STATUS", "requestId": id]
                    )
                    let reply = try await sender.inbox.json(on: namespace, "reply \(index) on \(namespace)") {
                        $0["requestId"] == id
                    }
                    #expect(reply["type"] == (namespace == CastNamespace.media ? "MEDIA_STATUS" : "RECEIVER_STATUS"))
                }
            }
            for payload: JSONValue in [["type": "GET_STATUS", "requestId": .null], ["type": "GET_STATUS"]] {
                try await sender.connection.send(
                    namespace: CastNamespace.media,
                    to: transportID,
                    payload: payload
                )
                let reply = try await sender.inbox.json(on: CastNamespace.media) { $0["type"] == "MEDIA_STATUS" }
                #expect(reply["requestId"] == 0)
            }
            await sender.close()
        }
    }

    @Test func deviceAuthChallengeGetsABinaryAuthError() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device, openReceiver: false)
            // DeviceAuthMessage{challenge{sender_nonce: 16 bytes, hash_algorithm: SHA256}} (cast-protocol.md §5.1).
            let nonce: [UInt8] = Array(0..<16)
            let challenge: [UInt8] = [0x0A, 0x14, 0x12, 0x10] + nonce + [0x18, 0x01]
            try await sender.connection.send(
                CastMessage(
                    sourceID: CastEndpoint.sender,
                    destinationID: CastEndpoint.receiver,
                    namespace: CastNamespace.deviceAuth,
                    payload: .binary(challenge)
                )
            )
            let reply = try await sender.inbox.first { $0.namespace == CastNamespace.deviceAuth }
            #expect(reply.sourceID == CastEndpoint.receiver)
            #expect(reply.destinationID == CastEndpoint.sender)
            guard case .binary(let bytes) = reply.payload else {
                Issue.record("the deviceauth reply is not BINARY: \(reply)")
                return
            }
            // DeviceAuthMessage{error{error_type: INTERNAL_ERROR}}: field 3, length 2, field 1 = 0.
            #expect(bytes == [0x1A, 0x02, 0x08, 0x00])
            let decoded = try ProtoDeviceAuthMessage(serializedBytes: bytes)
            #expect(decoded.hasError)
            #expect(!decoded.hasResponse)
            #expect(decoded.error.errorType == .internalError)
            await sender.close()
        }
    }
}

@Suite("EmulatedDevice: apps and media")
struct EmulatedDeviceMediaTests {
    @Test func mediaOverTheWireWithBroadcastsToASecondSender() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            let transportID = try await sender.launchAndConnect(dmr)

            // A second sender joins: GET_STATUS, then a virtual connection to the app (§12.2).
            let other = try await TestSender.connect(to: device)
            let joined = try await other.receiver(["type": "GET_STATUS"])
            #expect(joined.firstApplication?["transportId"] == .string(transportID))
            try await other.connection.openVirtualConnection(to: transportID)
            #expect(try await other.media(["type": "GET_STATUS"], to: transportID)["status"] == [])

            let loadMessage = try await sender.connection.request(
                namespace: CastNamespace.media,
                to: transportID,
                payload: ["type": "LOAD", "media": shortMovie, "autoplay": true]
            )
            #expect(loadMessage.sourceID == transportID)
            #expect(loadMessage.destinationID == CastEndpoint.sender)
            let loaded = try loadMessage.json()
            #expect(loaded.type == "MEDIA_STATUS")
            #expect(loaded["requestId"] == 2)
            #expect(loaded.firstStatus?["mediaSessionId"] == 1)
            #expect(loaded.firstStatus?["playerState"] == "PLAYING")
            #expect(loaded.firstStatus?["media"] == shortMovie)

            let loading = try await other.inbox.json(on: CastNamespace.media) {
                $0["requestId"] == 0 && $0.firstStatus?["extendedStatus"]?["playerState"] == "LOADING"
            }
            #expect(loading.firstStatus?["playerState"] == "IDLE")
            let playing = try await other.inbox.first {
                $0.namespace == CastNamespace.media && (try? $0.json())?.firstStatus?["playerState"] == "PLAYING"
            }
            #expect(playing.destinationID == CastEndpoint.broadcast)
            #expect(playing.sourceID == transportID)
            #expect(try playing.json()["requestId"] == 0)

            let paused = try await sender.media(["type": "PAUSE", "mediaSessionId": 1], to: transportID)
            #expect(paused.firstStatus?["playerState"] == "PAUSED")
            let pausedBroadcast = try await other.inbox.json(on: CastNamespace.media) {
                $0.firstStatus?["playerState"] == "PAUSED"
            }
            #expect(pausedBroadcast["requestId"] == 0)
            #expect(device.mediaStatus?["playerState"] == "PAUSED")

            // An error reply goes to the requester only.
            let wrong = try await other.media(["type": "PLAY", "mediaSessionId": 7], to: transportID)
            #expect(wrong["type"] == "INVALID_REQUEST")
            #expect(wrong["reason"] == "INVALID_MEDIA_SESSION_ID")
            await sender.close()
            await other.close()
        }
    }

    @Test func mediaWithoutAVirtualConnectionToTheAppIsDropped() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            let reply = try await sender.launch(dmr)
            let transportID = try #require(reply.firstApplication?["transportId"]?.stringValue)
            await expectTransportError(.requestTimedOut) {
                try await sender.media(["type": "GET_STATUS"], to: transportID, timeout: .milliseconds(300))
            }
            await sender.close()
        }
    }

    @Test func mediaEndsWhenTheManualClockAdvances() async throws {
        try await withDevice { device, clock in
            let sender = try await TestSender.connect(to: device)
            let transportID = try await sender.launchAndConnect(dmr)
            let loaded = try await sender.media(["type": "LOAD", "media": shortMovie], to: transportID)
            #expect(loaded.firstStatus?["playerState"] == "PLAYING")
            #expect(clock.pendingTimerCount == 1, "the end of the item is armed")

            clock.advance(by: .seconds(29))
            #expect(device.mediaStatus?["currentTime"] == 29)
            #expect(device.mediaStatus?["playerState"] == "PLAYING")

            // Until then only the LOADING notice (IDLE with extendedStatus) was broadcast; the LOAD reply follows it.
            _ = try await sender.inbox.reply(to: 2)
            let broadcasts = sender.inbox.all.filter { (try? $0.json())?["requestId"] == 0 }
            #expect(broadcasts.count == 1)
            #expect(try broadcasts.first?.json().firstStatus?["extendedStatus"]?["playerState"] == "LOADING")

            clock.advance(by: .seconds(1))
            let finished = try await sender.inbox.json(on: CastNamespace.media) {
                $0["requestId"] == 0 && $0.firstStatus?["idleReason"] == "FINISHED"
            }
            #expect(finished.firstStatus?["playerState"] == "IDLE")
            #expect(finished.firstStatus?["currentTime"] == 30)
            #expect(clock.pendingTimerCount == 0)
            await sender.close()
        }
    }

    @Test func echoAppEchoesTextAndBinary() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            let reply = try await sender.launch("E0C40001")
            #expect(reply.firstApplication?["namespaces"] == [["name": .string(echoNamespace)]])
            let transportID = try #require(reply.firstApplication?["transportId"]?.stringValue)
            try await sender.connection.openVirtualConnection(to: transportID)

            // A namespace the app does not serve gets nothing; the served one is echoed.
            try await sender.connection.send(
                CastMessage(
                    sourceID: CastEndpoint.sender,
                    destinationID: transportID,
                    namespace: "urn:x-cast:com.example.other",
                    payload: .string("ignored")
                )
            )
            try await sender.connection.send(
                CastMessage(
                    sourceID: CastEndpoint.sender,
                    destinationID: transportID,
                    namespace: echoNamespace,
                    payload: .string("hello, not JSON {")
                )
            )
            let text = try await sender.inbox.first { $0.sourceID == transportID }
            #expect(text.namespace == echoNamespace)
            #expect(text.destinationID == CastEndpoint.sender)
            #expect(text.payload == .string("hello, not JSON {"))

            let bytes: [UInt8] = [0, 1, 2, 0xFE, 0xFF]
            try await sender.connection.send(
                CastMessage(
                    sourceID: CastEndpoint.sender,
                    destinationID: transportID,
                    namespace: echoNamespace,
                    payload: .binary(bytes)
                )
            )
            let binary = try await sender.inbox.first { $0.sourceID == transportID }
            #expect(binary.payload == .binary(bytes))
            #expect(!sender.inbox.all.contains { $0.payload == .string("ignored") })
            await sender.close()
        }
    }

    @Test func aReconnectingSenderRejoinsTheRunningAppAndItsMedia() async throws {
        try await withDevice { device, clock in
            let first = try await TestSender.connect(to: device)
            let transportID = try await first.launchAndConnect(dmr)
            let sessionID = device.runningApp.sessionID
            _ = try await first.media(["type": "LOAD", "media": shortMovie], to: transportID)
            clock.advance(by: .seconds(12))
            _ = try await first.media(["type": "PAUSE", "mediaSessionId": 1], to: transportID)
            await first.close()
            try await waitUntil("the device noticed the disconnect") { device.connectionCount == 0 }

            let second = try await TestSender.connect(to: device)
            let status = try await second.receiver(["type": "GET_STATUS"])
            #expect(status.firstApplication?["sessionId"] == .string(sessionID))
            #expect(status.firstApplication?["transportId"] == .string(transportID))
            try await second.connection.openVirtualConnection(to: transportID)
            let media = try await second.media(["type": "GET_STATUS"], to: transportID)
            #expect(media.firstStatus?["mediaSessionId"] == 1)
            #expect(media.firstStatus?["playerState"] == "PAUSED")
            #expect(media.firstStatus?["currentTime"] == 12)
            #expect(media.firstStatus?["media"] == shortMovie)
            #expect(
                try await second.media(["type": "PLAY", "mediaSessionId": 1], to: transportID).firstStatus?[
                    "playerState"
                ] == "PLAYING"
            )
            await second.close()
        }
    }
}

@Suite("EmulatedDevice: fault injection")
struct EmulatedDeviceFaultTests {
    @Test func refusesConnections() async throws {
        let configuration = testDevice { $0.faults.refusesConnections = true }
        try await withDevice(configuration) { device, _ in
            var client = quietClientConfiguration()
            client.connectTimeout = .seconds(5)
            let error = await #expect(throws: CastTransportError.self) {
                _ = try await CastConnection.connect(host: device.host, port: device.port, configuration: client)
            }
            #expect(error?.code == .tlsHandshakeFailed, "got \(String(describing: error))")
        }
    }

    @Test func closesAfterMessages() async throws {
        let configuration = testDevice { $0.faults.closesAfterMessages = 2 }
        try await withDevice(configuration) { device, _ in
            let sender = try await TestSender.connect(to: device)  // CONNECT is message 1
            #expect(try await sender.receiver(["type": "GET_STATUS"]).type == "RECEIVER_STATUS")  // message 2
            await expectTransportError(.connectionClosed) {
                try await sender.receiver(["type": "GET_STATUS"])  // message 3: the device drops the connection
            }
            let event = try await sender.events.first { if case .disconnected = $0 { true } else { false } }
            guard case .disconnected(let code) = event else { return }
            #expect(code != nil, "an abrupt close is an error, not our own close")
            #expect(!sender.connection.isConnected)
            try await waitUntil("the device forgot the connection") { device.connectionCount == 0 }
            await sender.close()
        }
    }

    @Test func stopsAnsweringPingsAfter() async throws {
        let healthy = testDevice("Healthy")
        let stuck = testDevice("Stuck") { $0.faults.stopsAnsweringPingsAfter = 2 }
        try await withCastReceiverEmulator(devices: [healthy, stuck], clock: ManualCastClock()) { emulator in
            // Both ping every 50 ms. The stuck device's sender gives up after 3 s of silence (long enough for its
            // own connect to finish on a machine stalled by other work: it once took over 1.2 s); the healthy
            // device's sender allows 30 s, so a stalled machine cannot fail it, and the request below shows that
            // the healthy device still serves after its neighbour went quiet.
            var patient = CastConnection.Configuration()
            patient.heartbeat.pingInterval = .milliseconds(50)
            patient.heartbeat.deadAfter = .seconds(30)
            var strict = patient
            strict.heartbeat.deadAfter = .seconds(3)
            let good = try await TestSender.connect(to: emulator.devices[0], configuration: patient)
            let bad = try await TestSender.connect(to: emulator.devices[1], configuration: strict)

            let event = try await bad.events.first(within: .seconds(10), "the heartbeat timeout") {
                if case .disconnected = $0 { true } else { false }
            }
            #expect(event == .disconnected(.heartbeatTimeout))
            #expect(good.connection.isConnected)
            #expect(!good.events.all.contains { if case .disconnected = $0 { true } else { false } })
            #expect(try await good.receiver(["type": "GET_STATUS"]).type == "RECEIVER_STATUS")
            await good.close()
            await bad.close()
        }
    }

    @Test func replyDelayHoldsRepliesUntilTheClockAdvances() async throws {
        let configuration = testDevice { $0.faults.replyDelay = 2 }
        try await withDevice(configuration) { device, clock in
            let sender = try await TestSender.connect(to: device)
            let request = Task { try await sender.receiver(["type": "GET_STATUS"]) }
            try await waitUntil("the device scheduled the delayed reply") { clock.pendingTimerCount == 1 }
            #expect(sender.inbox.all.isEmpty)

            clock.advance(by: .milliseconds(1500))
            #expect(clock.pendingTimerCount == 1)
            #expect(sender.inbox.all.isEmpty)

            clock.advance(by: .milliseconds(500))
            #expect(clock.pendingTimerCount == 0)
            let reply = try await request.value
            #expect(reply.type == "RECEIVER_STATUS")
            #expect(reply["requestId"] == 1)
            await sender.close()
        }
    }

    @Test func launchRepliesOnlyByBroadcast() async throws {
        let configuration = testDevice { $0.faults.launchRepliesOnlyByBroadcast = true }
        try await withDevice(configuration) { device, _ in
            let sender = try await TestSender.connect(to: device)
            await expectTransportError(.requestTimedOut) {
                try await sender.receiver(["type": "LAUNCH", "appId": .string(dmr)], timeout: .milliseconds(300))
            }
            let broadcast = try await sender.inbox.first {
                $0.namespace == CastNamespace.receiver && (try? $0.json())?["requestId"] == 0
            }
            #expect(broadcast.destinationID == CastEndpoint.broadcast)
            #expect(try broadcast.json().firstApplication?["appId"] == .string(dmr))
            // Other receiver requests still get proper replies.
            #expect(try await sender.receiver(["type": "GET_STATUS"])["requestId"] == 2)
            await sender.close()
        }
    }

    @Test func addressesRepliesToBroadcast() async throws {
        let configuration = testDevice { $0.faults.addressesRepliesToBroadcast = true }
        try await withDevice(configuration) { device, _ in
            let sender = try await TestSender.connect(to: device)
            let status = try await sender.connection.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "GET_STATUS"]
            )
            #expect(status.destinationID == CastEndpoint.broadcast)
            #expect(try status.json()["requestId"] == 1)

            let launch = try await sender.connection.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "LAUNCH", "appId": .string(dmr)]
            )
            #expect(launch.destinationID == CastEndpoint.broadcast)
            let transportID = try #require(try launch.json().firstApplication?["transportId"]?.stringValue)
            try await sender.connection.openVirtualConnection(to: transportID)
            let load = try await sender.connection.request(
                namespace: CastNamespace.media,
                to: transportID,
                payload: ["type": "LOAD", "media": shortMovie]
            )
            #expect(load.destinationID == CastEndpoint.broadcast)
            #expect(try load.json().firstStatus?["playerState"] == "PLAYING")
            await sender.close()
        }
    }

    @Test func transportIDDiffersFromSessionID() async throws {
        let configuration = testDevice { $0.faults.transportIDDiffersFromSessionID = true }
        try await withDevice(configuration) { device, _ in
            let sender = try await TestSender.connect(to: device)
            let reply = try await sender.launch(dmr)
            let app = try #require(reply.firstApplication)
            #expect(app["transportId"] == "web-1")
            #expect(app["sessionId"]?.stringValue?.count == 36)
            #expect(device.runningApp.transportID == "web-1")
            try await sender.connection.openVirtualConnection(to: "web-1")
            let loaded = try await sender.media(["type": "LOAD", "media": shortMovie], to: "web-1")
            #expect(loaded.firstStatus?["playerState"] == "PLAYING")

            // N counts LAUNCH requests, failed ones included.
            _ = try await sender.launch("BADAPPID")
            #expect(try await sender.launch("E0C40001").firstApplication?["transportId"] == "web-3")
            let close = try await sender.inbox.first { $0.namespace == CastNamespace.connection }
            #expect(close.sourceID == "web-1")
            await sender.close()
        }
    }

    @Test func writesInChunks() async throws {
        let configuration = testDevice { $0.faults.writesInChunksOf = 7 }
        try await withDevice(configuration) { device, _ in
            let sender = try await TestSender.connect(to: device)
            #expect(try await sender.receiver(["type": "GET_STATUS"]).firstApplication?["appId"] == .string(backdrop))
            let transportID = try await sender.launchAndConnect(dmr)
            let loaded = try await sender.media(["type": "LOAD", "media": shortMovie], to: transportID)
            #expect(loaded.firstStatus?["media"] == shortMovie)

            // Changing the chunk size applies to the open connection.
            var faults = device.faults
            faults.writesInChunksOf = 1
            device.setFaults(faults)
            #expect(try await sender.media(["type": "GET_STATUS"], to: transportID).firstStatus?["mediaSessionId"] == 1)
            faults.writesInChunksOf = nil
            device.setFaults(faults)
            #expect(try await sender.receiver(["type": "GET_STATUS"]).firstApplication?["appId"] == .string(dmr))
            #expect(sender.connection.isConnected)
            await sender.close()
        }
    }

    @Test func sendsMalformedFrameAfterMessages() async throws {
        let configuration = testDevice { $0.faults.sendsMalformedFrameAfterMessages = 2 }
        try await withDevice(configuration) { device, _ in
            let sender = try await TestSender.connect(to: device)  // CONNECT is message 1
            _ = try? await sender.receiver(["type": "GET_STATUS"])  // message 2, then the bad frame
            let event = try await sender.events.first { if case .disconnected = $0 { true } else { false } }
            #expect(event == .disconnected(.malformedMessage))
            #expect(!sender.connection.isConnected)
            await sender.close()
        }
    }

    @Test func setFaultsAppliesToLaterConnections() async throws {
        try await withDevice { device, _ in
            var faults = FaultInjection()
            faults.closesAfterMessages = 1
            device.setFaults(faults)
            #expect(device.faults == faults)
            let sender = try await TestSender.connect(to: device)
            await expectTransportError(.connectionClosed) {
                try await sender.receiver(["type": "GET_STATUS"])
            }
            await sender.close()
        }
    }
}

@Suite("EmulatedDevice: configuration")
struct EmulatedDeviceConfigurationTests {
    @Test func loadDurationAndDefaultMediaDurationRunOnTheEmulatorClock() async throws {
        let configuration = testDevice { configuration in
            configuration.loadDuration = 2
            configuration.defaultMediaDuration = 10
        }
        try await withDevice(configuration) { device, clock in
            let sender = try await TestSender.connect(to: device)
            let transportID = try await sender.launchAndConnect(dmr)
            var media = shortMovie
            media["duration"] = nil
            let load = Task { try await sender.media(["type": "LOAD", "media": media], to: transportID) }

            let loading = try await sender.inbox.json(on: CastNamespace.media) {
                $0["requestId"] == 0 && $0.firstStatus?["extendedStatus"]?["playerState"] == "LOADING"
            }
            #expect(loading.firstStatus?["playerState"] == "IDLE")
            #expect(clock.pendingTimerCount == 1, "the load's completion is armed")
            #expect(device.mediaStatus == nil)

            clock.advance(by: .seconds(1))
            #expect(device.mediaStatus == nil)
            #expect(!sender.inbox.all.contains { (try? $0.json())?["requestId"] == 2 })

            clock.advance(by: .seconds(1))
            let loaded = try await load.value
            #expect(loaded["requestId"] == 2)
            #expect(loaded.firstStatus?["playerState"] == "PLAYING")
            #expect(loaded.firstStatus?["currentTime"] == 0)

            clock.advance(by: .seconds(10))
            let finished = try await sender.inbox.json(on: CastNamespace.media) {
                $0.firstStatus?["idleReason"] == "FINISHED"
            }
            #expect(finished.firstStatus?["currentTime"] == 10)
            await sender.close()
        }
    }

    @Test func contentFailureDecidesWhichContentFails() async throws {
        let configuration = testDevice { $0.contentFailure = { $0.contains("geo") ? 301 : nil } }
        try await withDevice(configuration) { device, _ in
            let sender = try await TestSender.connect(to: device)
            let transportID = try await sender.launchAndConnect(dmr)
            var media = shortMovie
            media["contentId"] = "https://media.example.com/geo.m3u8"
            let failed = try await sender.media(["type": "LOAD", "media": media], to: transportID)
            #expect(failed["type"] == "LOAD_FAILED")
            #expect(failed["detailedErrorCode"] == 301)
            media["contentId"] = "https://media.example.com/a.mp4?fail=1"
            let loaded = try await sender.media(["type": "LOAD", "media": media], to: transportID)
            #expect(loaded.firstStatus?["playerState"] == "PLAYING")
            await sender.close()
        }
    }

    @Test func aStoppedDeviceCanStartAgainAndKeepsItsState() async throws {
        try await withDevice { device, _ in
            let sender = try await TestSender.connect(to: device)
            _ = try await sender.launch(dmr)
            let sessionID = device.runningApp.sessionID
            await device.stop()
            #expect(device.connectionCount == 0)
            _ = try await sender.events.first { if case .disconnected = $0 { true } else { false } }

            try await device.start()
            let again = try await TestSender.connect(to: device)
            #expect(
                try await again.receiver(["type": "GET_STATUS"]).firstApplication?["sessionId"] == .string(sessionID)
            )
            await again.close()
            await sender.close()
        }
    }

    @Test func anUnusableIdentityIsAnInvalidConfiguration() async throws {
        var configuration = testDevice()
        configuration.identity = TLSIdentity(certificatePEM: "not a certificate", privateKeyPEM: "not a key")
        let device = EmulatedDevice(configuration: configuration, clock: ManualCastClock())
        let error = await #expect(throws: CastReceiverError.self) { try await device.start() }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test func wireLogRecordsEveryFrameInBothDirections() async throws {
        let clock = ManualCastClock()
        let path = "/tmp/cast-receiver-tests-wirelog-\(Identifiers.uuid()).jsonl"
        let log = try WireLog(path: path, clock: clock)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let configuration = testDevice()
        let emulator = try CastReceiverEmulator(devices: [configuration], clock: clock, wireLog: log)
        try await emulator.start()
        let sender = try await TestSender.connect(to: emulator.devices[0])
        _ = try await sender.receiver(["type": "GET_STATUS"])
        await sender.close()
        await emulator.stop()

        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = try text.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        // CONNECT, GET_STATUS, RECEIVER_STATUS (then perhaps the sender's CLOSE, if it arrived before the stop).
        #expect(lines.prefix(3).map { $0["dir"] } == ["recv", "recv", "send"])
        #expect(lines.dropFirst(3).allSatisfy { $0["payload"]?["type"] == "CLOSE" })
        #expect(lines.allSatisfy { $0["device"] == .string(configuration.id) && $0["t"] == 0 })
        #expect(lines[0]["namespace"] == .string(CastNamespace.connection))
        #expect(lines[0]["payload"]?["type"] == "CONNECT")
        #expect(lines[1]["payload"]?["type"] == "GET_STATUS")
        #expect(lines[2]["source_id"] == .string(CastEndpoint.receiver))
        #expect(lines[2]["destination_id"] == .string(CastEndpoint.sender))
        #expect(lines[2]["payload_type"] == "STRING")
        #expect(lines[2]["payload"]?["type"] == "RECEIVER_STATUS")
        let frame = try #require(lines[2]["frame_hex"]?.stringValue.flatMap(bytes(fromHex:)))
        #expect(frame.count > 4)
        #expect(Array(frame.dropFirst(4)).count == frame.prefix(4).reduce(0) { $0 << 8 | Int($1) })

        let error = #expect(throws: CastReceiverError.self) {
            _ = try WireLog(path: "/nonexistent-directory/wire.jsonl", clock: clock)
        }
        #expect(error?.code == .invalidConfiguration)
    }
}
