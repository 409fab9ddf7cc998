import CastDiscovery
import CastService
import CastSession
import CastStyleConfig
import CastTransport
import Foundation
import Testing

@Suite("castd on a real mosquitto broker")
struct MQTTBridgeTests {
    @Test func stateAvailabilityAndHomeAssistantDiscoveryAreRetained() async throws {
        let broker = try TestBroker()
        try await broker.start()
        try await withHub { hub, _ in
            try await withBridge(hub, broker: broker) { bridge in
                let id = hub.devices[0].device.id
                let node = "castd_test_\(MQTTBridge.topicLevel(id))"
                // A subscriber that comes later still gets everything: it is retained.
                let subscriber = try await TestSubscriber(broker: broker)
                defer { subscriber.stop() }
                let state = try await subscriber.message(on: bridge.topic("state", device: id))
                let json = try JSONValue(parsing: state)
                #expect(json["device"]?["name"]?.stringValue == "Room")
                #expect(json["status"]?["volume"]?.doubleValue != nil)
                _ = try await subscriber.message(on: "cast/test/status") { $0 == "online" }
                _ = try await subscriber.message(on: bridge.topic("availability", device: id)) { $0 == "online" }

                let volume = try JSONValue(
                    parsing: try await subscriber.message(on: "homeassistant/number/\(node)/volume/config")
                )
                #expect(volume["command_topic"]?.stringValue == bridge.topic("command", device: id))
                #expect(volume["state_topic"]?.stringValue == bridge.topic("state", device: id))
                #expect(volume["availability_mode"]?.stringValue == "all")
                #expect(volume["device"]?["name"]?.stringValue == "Room")
                #expect(volume["device"]?["via_device"] == nil, "no device of that id is published")
                // Every state the select can show is among its options (HA refuses others): idle, an app not
                // offered.
                let select = try JSONValue(
                    parsing: try await subscriber.message(on: "homeassistant/select/\(node)/app_select/config")
                )
                let choices = select["options"]?.arrayValue?.compactMap(\.stringValue) ?? []
                #expect(choices.first == "Idle" && choices.last == "Other app", "\(choices)")
                for entity in [
                    "sensor/\(node)/player_state", "sensor/\(node)/title", "sensor/\(node)/app",
                    "button/\(node)/pause", "button/\(node)/next",
                ] {
                    _ = try await subscriber.message(on: "homeassistant/\(entity)/config")
                }
            }
        }
    }

    @Test func commandsComeAsTheAPIsJSONAndAreAnswered() async throws {
        let broker = try TestBroker()
        try await broker.start()
        try await withHub { hub, _ in
            try await withBridge(hub, broker: broker) { bridge in
                let id = hub.devices[0].device.id
                let subscriber = try await TestSubscriber(broker: broker)
                defer { subscriber.stop() }
                _ = try await subscriber.message(on: "cast/test/status") { $0 == "online" }
                let commands = bridge.topic("command", device: id)
                let results = bridge.topic("result", device: id)

                subscriber.publish(
                    commands,
                    #"{"command":"load","url":"http://media.example/a.mp4","title":"A","id":7}"#
                )
                let loaded = try JSONValue(
                    parsing: try await subscriber.message(on: results) { $0.contains(#""id":7"#) }
                )
                #expect(loaded["ok"]?.boolValue == true, "\(loaded)")
                #expect(loaded["command"]?.stringValue == "load")
                #expect(loaded["status"]?["media"]?["playerState"]?.stringValue == "PLAYING")

                // A bare word works for commands without arguments (Home Assistant buttons, shell scripts).
                subscriber.publish(commands, "pause")
                let paused = try await subscriber.message(on: bridge.topic("state", device: id)) {
                    $0.contains(#""playerState":"PAUSED""#)
                }
                #expect(paused.contains(#""title":"A""#))

                subscriber.publish(commands, #"{"command":"dance","id":"d"}"#)
                let unknown = try JSONValue(
                    parsing: try await subscriber.message(on: results) { $0.contains(#""id":"d""#) }
                )
                #expect(unknown["ok"]?.boolValue == false)
                #expect(unknown["problem"]?["field"]?.stringValue == "command")

                subscriber.publish(commands, #"{"command":"volume","level":"loud","id":"v"}"#)
                let wrong = try JSONValue(
                    parsing: try await subscriber.message(on: results) { $0.contains(#""id":"v""#) }
                )
                #expect(wrong["problem"]?["code"]?.stringValue == "invalidRequest")
                #expect(wrong["problem"]?["field"]?.stringValue == "level")

                subscriber.publish("cast/test/nope/command", #"{"command":"play","id":1}"#)
                let missing = try JSONValue(parsing: try await subscriber.message(on: "cast/test/nope/result"))
                #expect(missing["problem"]?["code"]?.stringValue == "deviceNotFound")
                #expect(missing["problem"]?["status"]?.intValue == 404)
            }
        }
    }

    @Test func aBrokerRestartGetsEverythingRepublished() async throws {
        let broker = try TestBroker()
        try await broker.start()
        try await withHub { hub, _ in
            try await withBridge(hub, broker: broker) { bridge in
                let id = hub.devices[0].device.id
                let before = try await TestSubscriber(broker: broker, name: "before")
                _ = try await before.message(on: bridge.topic("state", device: id))
                before.stop()

                // The broker goes away (losing every retained message: no persistence) while the device changes.
                broker.stop()
                _ = try await hub.setVolume(of: id, level: 0.35, muted: nil)
                try await broker.start()

                let after = try await TestSubscriber(broker: broker, name: "after")
                defer { after.stop() }
                let state = try await after.message(on: bridge.topic("state", device: id)) { $0.contains("0.35") }
                #expect(try JSONValue(parsing: state)["status"]?["volume"]?.doubleValue == 0.35)
                #expect(try await after.message(on: "cast/test/status") == "online")
                _ = try await after.message(
                    on: "homeassistant/sensor/castd_test_\(MQTTBridge.topicLevel(id))/title/config"
                )
            }
        }
    }

    @Test func aDeviceThatDropsIsOfflineUntilItIsReachedAgain() async throws {
        let broker = try TestBroker()
        try await broker.start()
        let fastReconnect: (inout DeviceHub.Options) -> Void = { options in
            options.cast.reconnectPolicy.initialDelay = .milliseconds(20)
            options.cast.reconnectPolicy.maximumDelay = .milliseconds(20)
        }
        try await withHub(configure: fastReconnect) { hub, emulator in
            try await withBridge(hub, broker: broker) { bridge in
                let id = hub.devices[0].device.id
                let availability = bridge.topic("availability", device: id)
                let subscriber = try await TestSubscriber(broker: broker)
                defer { subscriber.stop() }
                try await subscriber.payloads(on: availability, endingWith: ["online"])

                await emulator.devices[0].dropConnections()
                try await subscriber.payloads(on: availability, endingWith: ["online", "offline", "online"])
                let state = try await subscriber.message(on: bridge.topic("state", device: id))
                #expect(try JSONValue(parsing: state)["status"]?["reachable"]?.boolValue == true)
            }
        }
    }

    @Test func stoppingTheBridgeSaysOffline() async throws {
        let broker = try TestBroker()
        try await broker.start()
        try await withHub { hub, _ in
            let subscriber = try await TestSubscriber(broker: broker)
            defer { subscriber.stop() }
            try await withBridge(hub, broker: broker) { _ in
                _ = try await subscriber.message(on: "cast/test/status") { $0 == "online" }
                subscriber.clear()
            }
            #expect(try await subscriber.message(on: "cast/test/status") == "offline")
        }
    }

    @Test func brokerURLsAndTopicLevels() throws {
        let plain = try MQTTBrokerOptions(url: "mqtt://broker.lan", clientID: "c")
        #expect(plain.host == "broker.lan" && plain.port == 1883 && plain.tls == nil)
        let secure = try MQTTBrokerOptions(url: "mqtts://castd:s3cret@broker.example:8884", clientID: "c")
        #expect(secure.host == "broker.example" && secure.port == 8884 && secure.tls != nil)
        #expect(secure.username == "castd" && secure.password == "s3cret")
        let unix = try MQTTBrokerOptions(url: "unix:///run/mosquitto.sock", clientID: "c")
        #expect(unix.host == "/run/mosquitto.sock" && unix.port == 0)
        let v6 = try MQTTBrokerOptions(url: "mqtt://[::1]:1884", clientID: "c")
        #expect(v6.host == "::1" && v6.port == 1884)
        for bad in ["broker.lan", "http://broker", "mqtt://host:99999", "mqtt://", "unix://relative"] {
            #expect(throws: CastServiceError.self, "\(bad)") { try MQTTBrokerOptions(url: bad, clientID: "c") }
        }
        #expect(MQTTBridge.topicLevel("static:127.0.0.1:8009") == "static_127_0_0_1_8009")
        #expect(MQTTBridge.topicLevel("a/b+#c") == "a_b__c")
    }

    @Test func theDaemonSectionNamesTheBrokerAndSite() throws {
        var settings = DaemonSettings()
        #expect(try MQTTBridge.Options(settings, hostName: "kitchen.local") == nil, "no broker, no MQTT")

        let directory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "s3cret\n".write(toFile: directory + "/password", atomically: true, encoding: .utf8)
        settings.broker = "mqtts://broker.example"
        settings.brokerUsername = "castd"
        settings.brokerPasswordFile = directory + "/password"
        settings.topicPrefix = "home"
        let options = try #require(try MQTTBridge.Options(settings, hostName: "kitchen.local"))
        #expect(options.site == "kitchen_local")
        #expect(options.broker.port == 8883 && options.broker.tls != nil)
        #expect(options.broker.username == "castd" && options.broker.password == "s3cret")
        #expect(options.broker.clientID == "castd-kitchen_local")
        #expect(options.topicPrefix == "home" && options.homeAssistantDiscovery)

        settings.brokerPasswordFile = directory + "/missing"
        #expect(throws: CastServiceError.self) { try MQTTBridge.Options(settings, hostName: "h") }

        let error = #expect(throws: CastConfigError.self) {
            try CastProfile(
                xml: #"<castProfile xmlns="urn:swift-cast:profile:1"><daemon broker="ftp://x"/></castProfile>"#
            )
        }
        #expect(error?.description.contains("'broker' must be mqtt://") == true, "\(String(describing: error))")
    }
}
