import CastDiscovery
import CastMedia
import CastReceiver
import CastService
import CastSession
import CastTransport
import Foundation
import Testing

@Suite("castd's HTTP API against emulated devices")
struct ServiceAPITests {
    @Test func devicesAreListedSortedByNameWithTheirIDs() async throws {
        try await withHub(devices: 2) { hub, emulator in
            try await withServer(hub) { port in
                let reply = try await TestHTTP.send(port: port, "GET", "/v1/devices")
                #expect(reply.status == 200)
                let devices = try #require(reply.json?["devices"]?.arrayValue)
                #expect(devices.compactMap { $0["name"]?.stringValue } == ["Room 1", "Room 2"])
                #expect(devices.compactMap { $0["id"]?.stringValue } == hub.devices.map(\.device.id))
                #expect(devices.first?["port"]?.intValue == emulator.devices[0].port)
            }
        }
    }

    @Test func anAnswerIsWrittenInOnePiece() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let path = "/v1/devices/" + hub.devices[0].device.id
                let text = try await TestHTTP.firstRead(port: port, "GET", path)
                let parts = text.components(separatedBy: "\r\n\r\n")
                #expect(parts.count == 2)
                let length = parts[0].split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                #expect(
                    length.map { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } == parts[1].utf8.count
                )
                #expect(try JSONValue(parsing: parts[1])["device"]?["id"]?.stringValue == hub.devices[0].device.id)
            }
        }
    }

    @Test func loadThenPauseAnswersWithTheReceiversState() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                let loaded = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"url":"http://media.example/films/big-buck-bunny.mp4","title":"Bunny"}"#
                )
                #expect(loaded.status == 200, "\(loaded.body)")
                #expect(loaded.json?["status"]?["app"]?["id"]?.stringValue == "CC1AD845")
                #expect(loaded.json?["status"]?["media"]?["playerState"]?.stringValue == "PLAYING")
                #expect(loaded.json?["status"]?["media"]?["title"]?.stringValue == "Bunny")
                #expect(
                    loaded.json?["status"]?["media"]?["contentId"]?.stringValue
                        == "http://media.example/films/big-buck-bunny.mp4"
                )

                let paused = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media/pause")
                #expect(paused.status == 200, "\(paused.body)")
                #expect(paused.json?["status"]?["media"]?["playerState"]?.stringValue == "PAUSED")

                let sought = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media/seek?position=120")
                #expect(sought.status == 200, "\(sought.body)")
                #expect(sought.json?["status"]?["media"]?["position"]?.doubleValue == 120)

                let read = try await TestHTTP.send(port: port, "GET", "/v1/devices/\(id)")
                #expect(read.status == 200)
                #expect(read.json?["device"]?["name"]?.stringValue == "Room")
            }
        }
    }

    @Test func volumeAndStoppingTheApp() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                let volume = try await TestHTTP.send(
                    port: port,
                    "PUT",
                    "/v1/devices/\(id)/volume",
                    json: #"{"level":0.25,"muted":true}"#
                )
                #expect(volume.status == 200, "\(volume.body)")
                #expect(volume.json?["status"]?["volume"]?.doubleValue == 0.25)
                #expect(volume.json?["status"]?["muted"]?.boolValue == true)

                _ = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"url":"https://media.example/a.mp3"}"#
                )
                let stopped = try await TestHTTP.send(port: port, "DELETE", "/v1/devices/\(id)/app")
                #expect(stopped.status == 200, "\(stopped.body)")
                #expect(stopped.json?["status"]?["app"] == nil || stopped.json?["status"]?["app"] == .null)
            }
        }
    }

    /// A fixed-volume device: a volume or mute change is a conflict with what the device is (409 `notSupported`,
    /// which `cast --via` turns into exit 1 as it is directly), not a success that changed nothing; a receiver
    /// that refuses SET_VOLUME is a 409 `refused`, not a bad gateway.
    @Test func aFixedVolumeIsAConflict() async throws {
        var fixed = DeviceConfiguration(friendlyName: "Soundbar", port: 0)
        fixed.hasFixedVolume = true
        var refusing = DeviceConfiguration(friendlyName: "Stubborn", port: 0)
        refusing.faults.refusesVolumeChanges = true
        try await withCastReceiverEmulator(devices: [fixed, refusing]) { emulator in
            let stateDirectory = temporaryStateDirectory()
            defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
            let hub = try await startedHub(on: emulator, stateDirectory: stateDirectory)
            do {
                try await withServer(hub) { port in
                    for (device, code) in zip(emulator.devices, ["notSupported", "refused"]) {
                        let id = try #require(hub.devices.first { $0.device.port == device.port }?.device.id)
                        for body in [#"{"level":0.3}"#, #"{"muted":true}"#] {
                            let reply = try await TestHTTP.send(
                                port: port,
                                "PUT",
                                "/v1/devices/\(id)/volume",
                                json: body
                            )
                            #expect(reply.status == 409, "\(reply.body)")
                            #expect(reply.json?["code"]?.stringValue == code, "\(reply.body)")
                        }
                        #expect(device.volume == (1.0, false))
                    }
                }
            } catch {
                await hub.stop()
                throw error
            }
            await hub.stop()
        }
    }

    @Test func anUnknownDeviceIsAProblemWithItsCode() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let reply = try await TestHTTP.send(port: port, "POST", "/v1/devices/nope/media/play")
                #expect(reply.status == 404)
                #expect(reply.header("Content-Type")?.hasPrefix("application/problem+json") == true)
                #expect(reply.json?["code"]?.stringValue == "deviceNotFound")
                #expect(reply.json?["status"]?.intValue == 404)
                #expect(reply.json?["detail"]?.stringValue?.contains("nope") == true)
            }
        }
    }

    @Test func badRequestsNameTheField() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                let level = try await TestHTTP.send(
                    port: port,
                    "PUT",
                    "/v1/devices/\(id)/volume",
                    json: #"{"level":7}"#
                )
                #expect(level.status == 400)
                #expect(level.json?["field"]?.stringValue == "level")

                let url = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"url":"file:///etc/passwd"}"#
                )
                #expect(url.status == 400)
                #expect(url.json?["field"]?.stringValue == "url")

                let seek = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media/seek")
                #expect(seek.status == 400)
                #expect(seek.json?["field"]?.stringValue == "position")

                let command = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media/dance")
                #expect(command.status == 400)
                #expect(command.header("Content-Type") == "application/problem+json")
                #expect(command.json?["field"]?.stringValue == "command")

                // Query and path parameters the generated layer cannot read are named too, with what they must be.
                for (path, field, detail) in [
                    ("media/seek?position=abc", "position", "'position' must be a number, not 'abc'"),
                    ("media/seek?position=10&relative=maybe", "relative", "'relative' must be true or false"),
                    ("media/seek?position=", "position", "'position' must be a number, not ''"),
                    ("queue/items/x%20y/play", "itemId", "'itemId' must be an integer, not 'x y'"),
                ] {
                    let reply = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/\(path)")
                    #expect(reply.status == 400, "\(path)")
                    #expect(reply.json?["field"]?.stringValue == field, "\(path): \(reply.body)")
                    #expect(reply.json?["detail"]?.stringValue?.contains(detail) == true, "\(path): \(reply.body)")
                }
                let limit = try await TestHTTP.send(port: port, "GET", "/v1/media-files?limit=lots")
                #expect(limit.status == 400)
                #expect(limit.json?["field"]?.stringValue == "limit", "\(limit.body)")

                // Not JSON at all, or without its required field: refused before the handler, as problems.
                let garbage = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media", json: "{url")
                #expect(garbage.status == 400)
                #expect(garbage.json?["code"]?.stringValue == "invalidRequest")
                let missing = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media", json: "{}")
                #expect(missing.status == 400)
                #expect(missing.json?["field"]?.stringValue == "url")
            }
        }
    }

    @Test func aRestartedServiceTakesUpWhatItsPredecessorPlayed() async throws {
        let configurations = CastReceiverEmulator.configurations(count: 1, basePort: 0, namePrefix: "Room")
        try await withCastReceiverEmulator(devices: configurations) { emulator in
            let stateDirectory = temporaryStateDirectory()
            defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
            let first = try await startedHub(on: emulator, stateDirectory: stateDirectory)
            let id = CastDevice.staticDevice(host: "127.0.0.1", port: emulator.devices[0].port).id
            let loaded = try await first.perform(
                .load(.media(MediaInformation(contentID: "http://media.example/a.mp4", contentType: "video/mp4"))),
                on: id
            )
            let sessionID = loaded.deviceStatus.runningApplication?.sessionID
            await first.stop()  // as on SIGTERM: sessions left playing

            let second = try await startedHub(on: emulator, stateDirectory: stateDirectory)
            defer { Task { await second.stop() } }
            let seen = try await second.activity(of: id)
            #expect(seen.mediaStatus?.playerState == .playing)
            let paused = try await second.perform(.control(.pause), on: id)
            #expect(paused.mediaStatus?.playerState == .paused)
            #expect(paused.deviceStatus.runningApplication?.sessionID == sessionID)
            #expect(emulator.devices[0].launches.count == 1, "the restarted service launched the app again")
        }
    }

    @Test func aClientAcceptingOnlyJSONStillGetsTheProblem() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                let reply = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media/seek",
                    headers: [("Accept", "application/json")]
                )
                #expect(reply.status == 400)
                #expect(reply.header("Content-Type")?.hasPrefix("application/problem+json") == true)
                #expect(reply.json?["field"]?.stringValue == "position")
            }
        }
    }

    @Test func pausingAnIdleDeviceIsAConflict() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let reply = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(hub.devices[0].device.id)/media/pause"
                )
                #expect(reply.status == 409, "\(reply.body)")
                #expect(reply.json?["code"]?.stringValue == "noApplicationRunning")
            }
        }
    }

    /// What Tools/schemathesis.sh found: each answer is a status the operation declares, with the same status in
    /// its problem document, and no client input is answered 5xx.
    @Test func answersTheFuzzerFoundAreDeclaredStatuses() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                // Stopping when no app runs: a conflict (was a 502 whose document said 409).
                let stopped = try await TestHTTP.send(port: port, "DELETE", "/v1/devices/\(id)/app")
                #expect(stopped.status == 409, "\(stopped.body)")
                #expect(stopped.json?["status"]?.intValue == 409)
                #expect(stopped.json?["code"]?.stringValue == "noApplicationRunning")

                // An app id the device does not have (LAUNCH_ERROR NOT_FOUND): the request's fault (was 502).
                let unknown = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/app",
                    json: #"{"appId":"0BADC0DE"}"#
                )
                #expect(unknown.status == 400, "\(unknown.body)")
                #expect(unknown.json?["code"]?.stringValue == "launchFailed")
                #expect(unknown.json?["field"]?.stringValue == "appId")

                // A queue item the receiver does not have, and an item id that is not a number: 400, declared.
                _ = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/queue",
                    json: #"{"items":[{"url":"http://media.example/one.mp3"}]}"#
                )
                let missingItem = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/queue/items/999/play")
                #expect(missingItem.status == 400, "\(missingItem.body)")
                #expect(missingItem.json?["status"]?.intValue == 400)
                let notANumber = try await TestHTTP.send(port: port, "DELETE", "/v1/devices/\(id)/queue/items/one")
                #expect(notANumber.status == 400, "\(notANumber.body)")
                // The spec's maxItems: 200, which the generated layer does not check.
                let items = Array(repeating: #"{"url":"http://media.example/a.mp3"}"#, count: 201)
                let tooMany = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/queue/items",
                    json: #"{"items":["# + items.joined(separator: ",") + "]}"
                )
                #expect(tooMany.status == 400, "\(tooMany.body)")
                #expect(tooMany.json?["field"]?.stringValue == "items")

                // A start time near Double.greatestFiniteMagnitude: the position stays a JSON number (was a 500
                // for this request and for every later GET /v1/devices while the media played).
                let far = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"url":"http://media.example/a.mp4","startTime":1.7e308}"#
                )
                #expect(far.status == 200, "\(far.body)")
                let listed = try await TestHTTP.send(port: port, "GET", "/v1/devices")
                #expect(listed.status == 200, "\(listed.body)")

                // A client that accepts application/json only still gets its problem (was a 500 after the
                // handler ran), and one that accepts neither gets JSON.
                let accepting = try await TestHTTP.send(
                    port: port,
                    "GET",
                    "/v1/devices/nope",
                    headers: [("Accept", "application/json")]
                )
                #expect(accepting.status == 404, "\(accepting.body)")
                #expect(accepting.header("Content-Type")?.hasPrefix("application/problem+json") == true)
                let html = try await TestHTTP.send(port: port, "GET", "/v1/devices", headers: [("Accept", "text/html")])
                #expect(html.status == 200, "\(html.body)")
            }
        }
    }

    @Test func theEventStreamCarriesStatusChangesWithIDs() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                let stream = Task {
                    try await TestHTTP.events(port: port) { text in text.contains("\"playerState\":\"PAUSED\"") }
                }
                // The first status event shows the subscription is live (the device is followed).
                _ = try await TestHTTP.send(port: port, "GET", "/v1/devices/\(id)")
                _ = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"url":"http://media.example/a.mp4","autoplay":false}"#
                )
                let text = try await stream.value
                #expect(
                    text.contains("Content-Type: text/event-stream") || text.contains("content-type: text/event-stream")
                )
                #expect(text.contains("retry: 2000"))
                #expect(text.contains("event: status"))
                #expect(text.contains("\"device\":\"\(id)\""))
                let ids = text.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("id: ") }.compactMap {
                    Int($0.dropFirst(4))
                }
                #expect(!ids.isEmpty, "\(text)")
                #expect(ids == ids.sorted())
            }
        }
    }

    @Test func aReconnectingClientCatchesUpFromLastEventID() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                var events = hub.events().makeAsyncIterator()
                _ = try await hub.setVolume(of: id, level: 0.5, muted: nil)
                _ = try await hub.setVolume(of: id, level: 0.4, muted: nil)
                var seen: [Int] = []
                while let event = await events.next() {
                    seen.append(event.id)
                    if case .status(let activity) = event.change, activity.deviceStatus.volumeLevel == 0.4 { break }
                }
                let first = try #require(seen.first)
                let last = try #require(seen.last)
                let replay = try await TestHTTP.events(port: port, lastEventID: first) { text in
                    text.contains("id: \(last)\n")
                }
                for later in seen.dropFirst() { #expect(replay.contains("id: \(later)\n")) }
                #expect(!replay.contains("id: \(first)\n"))
            }
        }
    }
}

@Suite("castd's view of device authentication")
struct ServiceDeviceAuthTests {
    @Test(.timeLimit(.minutes(1)))
    func eachDevicesStateSaysWhetherItProvedItselfAndAtWhichStepItFailed() async throws {
        let genuine = try EmulatedDeviceAuth(commonName: "Genuine Chromecast", keyBits: 1024)
        let forged = try EmulatedDeviceAuth(fault: .wrongSignature, keyBits: 1024)
        var configurations = CastReceiverEmulator.configurations(count: 2, basePort: 0, namePrefix: "Room")
        configurations[0].deviceAuth = genuine
        configurations[1].deviceAuth = forged
        let anchors = try TrustAnchors(pem: genuine.trustAnchorPEM + forged.trustAnchorPEM)
        try await withCastReceiverEmulator(devices: configurations) { emulator in
            let stateDirectory = temporaryStateDirectory()
            defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
            let hub = try await startedHub(on: emulator, stateDirectory: stateDirectory) { options in
                options.cast.deviceAuth.policy = .warn  // a failure is shown, not refused
                options.cast.deviceAuth.trustAnchors = anchors
            }
            let ids = emulator.devices.map { device in hub.devices.first { $0.device.port == device.port }!.device.id }
            // Subscribing follows every device; each answer to the challenge is a status event.
            var settled: [String: DeviceAuthentication] = [:]
            for await event in hub.events() {
                guard case .status(let activity) = event.change, let result = activity.deviceAuthentication,
                    result.wasAttempted, result != .pending
                else { continue }
                settled[activity.device.id] = result
                if settled.count == ids.count { break }
            }
            #expect(settled[ids[0]]?.isVerified == true)
            try await withServer(hub) { port in
                let verified = try await TestHTTP.send(port: port, "GET", "/v1/devices/" + ids[0])
                let proof = verified.json?["status"]?["authentication"]
                #expect(proof?["result"]?.stringValue == "verified")
                #expect(proof?["commonName"]?.stringValue == "Genuine Chromecast")
                #expect(proof?["hashAlgorithm"]?.stringValue == "SHA-256")
                let failed = try await TestHTTP.send(port: port, "GET", "/v1/devices/" + ids[1])
                let refusal = failed.json?["status"]?["authentication"]
                #expect(refusal?["result"]?.stringValue == "failed")
                #expect(refusal?["step"]?.stringValue == "authInvalidSignature")
            }
            await hub.stop()
        }
    }

    @Test func withoutTrustAnchorsTheStateHasNoAuthentication() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let reply = try await TestHTTP.send(port: port, "GET", "/v1/devices/" + hub.devices[0].device.id)
                #expect(reply.status == 200)
                #expect(reply.json?["status"] != nil)
                #expect(reply.json?["status"]?["authentication"] == nil)
            }
        }
    }
}

@Suite("castd's view of speaker groups")
struct ServiceSpeakerGroupTests {
    @Test("a group's state lists its members; a member playing in it says its part")
    func groupStateListsMembers() async throws {
        let members = CastReceiverEmulator.configurations(count: 2, basePort: 0, namePrefix: "Room")
        try await withCastReceiverEmulator(
            devices: members,
            group: DeviceConfiguration(friendlyName: "Downstairs", port: 0)
        ) { emulator in
            let group = try #require(emulator.group)
            let stateDirectory = temporaryStateDirectory()
            defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
            var discovery = DiscoveryManager.Configuration()
            discovery.browsesMulticastDNS = false
            discovery.staticDevices = (emulator.devices + [group.endpoint]).map {
                CastDevice.staticDevice(host: "127.0.0.1", port: $0.port)
            }
            var options = DeviceHub.Options()
            options.cast.stateDirectory = stateDirectory
            options.cast.heartbeat.pingInterval = nil
            let hub = DeviceHub(options: options, discovery: DiscoveryManager(configuration: discovery))
            try hub.start()
            let listed = await hub.discovery.devices(atLeast: 3)
            let groupID = try #require(listed.first { $0.port == group.endpoint.port }?.id)
            let memberID = try #require(listed.first { $0.port == emulator.devices[1].port }?.id)

            let context = CastContext(options: options.cast)
            let session = try await context.sessionManager.startSession(with: group.endpoint.castDevice)
            try await session.remoteMediaClient!.loadMedia(
                MediaInformation(contentID: "https://example.com/a.mp4", contentType: "audio/mp4")
            ).response()
            try await withServer(hub) { port in
                let reply = try await TestHTTP.send(port: port, "GET", "/v1/devices/" + groupID)
                let names = reply.json?["status"]?["members"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
                #expect(names == ["Room 1", "Room 2"])
                #expect(reply.json?["status"]?["members"]?[0]?["volume"]?.doubleValue == 1)
                let member = try await TestHTTP.send(port: port, "GET", "/v1/devices/" + memberID)
                #expect(member.json?["status"]?["groupRole"]?.stringValue == "follower")
                #expect(member.json?["status"]?["members"] == nil)
            }
            await context.sessionManager.endSession(stopCasting: true)
            await hub.stop()
        }
    }
}
