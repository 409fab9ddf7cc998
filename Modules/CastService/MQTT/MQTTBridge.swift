import CastDiscovery
import CastLogging
import CastSession
import CastTransport
import Logging
import NIOConcurrencyHelpers

/// castd on an MQTT broker, for home automation and for fleets: every device's state as a retained topic, its
/// availability, and a command topic that takes the HTTP API's JSON commands — under `PREFIX/SITE/DEVICE/…`, so
/// many castd (one per site) share one broker.
///
/// Topics (`cast/<site>/` by default):
/// - `status`: `online` while castd is connected, `offline` (retained, also the last will) when it is not.
/// - `<device>/state`: the device and what it does, the JSON of `GET /v1/devices/{id}` (retained).
/// - `<device>/availability`: `online`, or `offline` once the device is gone (retained).
/// - `<device>/command`: a command for the device (`MQTTCommand`); `<device>/result` answers each one.
///
/// With ``Options/homeAssistantDiscovery``, Home Assistant's MQTT discovery configures each device's entities.
/// After the broker restarts (or castd reconnects for any reason) everything retained is published again.
public final class MQTTBridge: Sendable {
    /// How the bridge names its topics and reaches its broker.
    public struct Options: Sendable, Equatable {
        /// The broker.
        public var broker: MQTTBrokerOptions
        /// The first topic level. Defaults to `cast`.
        public var topicPrefix = "cast"
        /// This castd's site, the second topic level: one per castd sharing the broker.
        public var site: String
        /// Whether to publish Home Assistant MQTT discovery. Defaults to `true`.
        public var homeAssistantDiscovery = true
        /// Home Assistant's discovery prefix. Defaults to `homeassistant`.
        public var discoveryPrefix = "homeassistant"
        /// The apps Home Assistant's app select offers, by name. Defaults to the Default Media Receiver.
        public var selectableApps = [
            SelectableApp(name: "Default Media Receiver", id: CastOptions.defaultMediaReceiverApplicationID)
        ]

        /// A bridge for `site` on `broker`.
        public init(broker: MQTTBrokerOptions, site: String) {
            self.broker = broker
            self.site = site
        }
    }

    /// An app Home Assistant's app select offers.
    public struct SelectableApp: Sendable, Equatable {
        /// The name shown in Home Assistant.
        public var name: String
        /// The receiver app id launched when it is chosen.
        public var id: String

        /// An app called `name` in Home Assistant, launching receiver app `id`.
        public init(name: String, id: String) {
            self.name = name
            self.id = id
        }
    }

    private struct Known {
        var device: CastDevice
        var state: String?
        /// `nil` until castd has heard from the device or seen it go.
        var isOnline: Bool?
    }

    private struct State {
        var devices: [String: Known] = [:]
        /// Device ids by their topic level.
        var topicIDs: [String: String] = [:]
        /// The last command of each device, which the next one waits for (commands run in order per device).
        var queues: [String: Task<Void, Never>] = [:]
    }

    /// The options the bridge runs with.
    public let options: Options
    private let hub: DeviceHub
    private let client: MQTTClient
    private let logger: Logger
    private let state = NIOLockedValueBox(State())

    /// A bridge between `hub` and the broker; nothing connects before ``run()``.
    ///
    /// - Throws: ``CastServiceError/Code/invalidConfiguration`` for a site or prefix that cannot be a topic level,
    ///   or broker settings libmosquitto refuses (unreadable TLS files, …).
    public init(hub: DeviceHub, options: Options, logger: Logger = .castDisabled) throws(CastServiceError) {
        for (field, level) in [("site", options.site), ("topicPrefix", options.topicPrefix)]
        where level.isEmpty || level.contains(where: { "/+#".contains($0) }) {
            throw CastServiceError(
                .invalidConfiguration,
                "\(field) '\(level)' cannot be an MQTT topic level (empty, or with /, + or #)",
                httpStatus: 500,
                field: field
            )
        }
        self.hub = hub
        self.options = options
        self.logger = logger.withCategory("castd.mqtt")
        self.client = try MQTTClient(
            options: options.broker,
            will: (topic: "\(options.topicPrefix)/\(options.site)/status", payload: "offline")
        )
    }

    /// The topic `suffix` of the device with `id` (or of the site, for `nil`).
    public func topic(_ suffix: String, device id: String? = nil) -> String {
        let base = "\(options.topicPrefix)/\(options.site)"
        guard let id else { return "\(base)/\(suffix)" }
        return "\(base)/\(Self.topicLevel(id))/\(suffix)"
    }

    /// A device id as one topic level (and Home Assistant object id): characters other than letters, digits,
    /// `-` and `_` become `_`.
    public static func topicLevel(_ id: String) -> String {
        String(id.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : "_" })
    }

    /// Connects (and keeps connecting) to the broker and bridges until cancelled; then publishes `offline` and
    /// disconnects cleanly.
    public func run() async throws {
        try client.start()
        for (device, _) in hub.devices { remember(device) }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.followBroker() }
            group.addTask { await self.followHub() }
            await withTaskCancellationHandler {
                await group.waitForAll()
            } onCancel: {
                self.client.publish(self.topic("status"), "offline", retain: true)
                self.client.stop()
            }
        }
        let pending = state.withLockedValue { $0.queues.values }
        for task in pending { task.cancel() }
    }

    // MARK: - Broker

    private func followBroker() async {
        for await event in client.events {
            switch event {
            case .connected:
                logger.info("connected to the MQTT broker", metadata: ["mqtt.site": "\(options.site)"])
                client.subscribe("\(options.topicPrefix)/\(options.site)/+/command")
                client.publish(topic("status"), "online", retain: true)
                let devices = state.withLockedValue { Array($0.devices.values) }
                for known in devices { publishAll(known) }
            case .disconnected(let reason):
                logger.warning(
                    "the MQTT broker connection is down; connecting again",
                    metadata: ["mqtt.reason": "\(reason)"]
                )
            case .message(let topic, let payload):
                received(payload, on: topic)
            }
        }
    }

    private func publishAll(_ known: Known) {
        let id = known.device.id
        publishDiscovery(for: known.device)
        if let online = known.isOnline {
            client.publish(topic("availability", device: id), online ? "online" : "offline", retain: true)
        }
        if let state = known.state { client.publish(topic("state", device: id), state, retain: true) }
    }

    private func publishDiscovery(for device: CastDevice) {
        guard options.homeAssistantDiscovery else { return }
        for entity in HomeAssistantDiscovery.entities(for: device, bridge: self) {
            client.publish(entity.topic, entity.config, retain: true)
        }
    }

    // MARK: - Devices

    /// Follows the hub's events; a subscription the log dropped (it fell behind) catches up from the last id. A
    /// stopped hub ends every subscription at once, so following stops with it.
    private func followHub() async {
        var lastID: Int?
        while !Task.isCancelled, !hub.isStopped {
            for await event in hub.events(after: lastID) {
                lastID = event.id
                handle(event.change)
            }
        }
    }

    private func handle(_ change: ServiceEvent.Change) {
        switch change {
        case .deviceAdded(let device), .deviceUpdated(let device):
            remember(device)
            publishDiscovery(for: device)
        case .deviceRemoved(let device):
            state.withLockedValue { $0.devices[device.id]?.isOnline = false }
            client.publish(topic("availability", device: device.id), "offline", retain: true)
        case .status(let activity):
            let json = APIModel.json(APIModel.state(activity)).jsonString
            let wasOnline = remember(activity.device, state: json, isOnline: activity.isReachable)?.isOnline == true
            client.publish(topic("state", device: activity.device.id), json, retain: true)
            if wasOnline != activity.isReachable {
                client.publish(
                    topic("availability", device: activity.device.id),
                    activity.isReachable ? "online" : "offline",
                    retain: true
                )
            }
        case .session:
            break  // the state topic shows what a session changes; MQTT keeps states, not a history
        }
    }

    /// Keeps `device` as discovery describes it, or — with a `state` — the state JSON of a status (whose device is
    /// as it was when followed, so it replaces no newer description), marking it online as `isOnline` says. Returns
    /// what was known before.
    @discardableResult
    private func remember(_ device: CastDevice, state json: String? = nil, isOnline: Bool = true) -> Known? {
        state.withLockedValue { state in
            state.topicIDs[Self.topicLevel(device.id)] = device.id
            let before = state.devices[device.id]
            var known = before ?? Known(device: device)
            if json == nil { known.device = device }
            if let json {
                known.state = json
                known.isOnline = isOnline
            }
            state.devices[device.id] = known
            return before
        }
    }

    // MARK: - Commands

    private func received(_ payload: [UInt8], on topic: String) {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 4, levels[3] == "command" else { return }
        let level = String(levels[2])
        let deviceID = state.withLockedValue { $0.topicIDs[level] } ?? level
        let resultTopic = self.topic("result", device: deviceID)
        let command: MQTTCommand
        do {
            command = try MQTTCommand(payload: payload)
        } catch {
            let correlationID = MQTTCommand.correlationID(of: payload)
            publishResult(resultTopic, name: nil, correlationID: correlationID, outcome: .failure(error))
            return
        }
        // One device's commands run in the order they came; different devices' at once.
        state.withLockedValue { state in
            let previous = state.queues[deviceID]
            state.queues[deviceID] = Task {
                await previous?.value
                let outcome = await self.perform(command.action, on: deviceID)
                self.publishResult(
                    resultTopic,
                    name: command.name,
                    correlationID: command.correlationID,
                    outcome: outcome
                )
            }
        }
    }

    private enum Outcome {
        case state(DeviceActivity)
        case reply(String?)
        case failure(CastServiceError)
    }

    private func perform(_ action: MQTTCommand.Action, on id: String) async -> Outcome {
        do {
            switch action {
            case .device(let command):
                return .state(try await hub.perform(command, on: id))
            case .send(let message, let namespace, let awaitingReply):
                return .reply(try await hub.send(message, namespace: namespace, on: id, awaitingReply: awaitingReply))
            }
        } catch {
            logger.debug("an MQTT command failed", metadata: ["cast.device": "\(id)", "cast.error": "\(error)"])
            return .failure(error)
        }
    }

    private func publishResult(_ topic: String, name: String?, correlationID: JSONValue?, outcome: Outcome) {
        var result: JSONValue = [:]
        if let correlationID { result["id"] = correlationID }
        if let name { result["command"] = .string(name) }
        switch outcome {
        case .state(let activity):
            result["ok"] = true
            result["status"] = APIModel.json(APIModel.status(activity))
        case .reply(let reply):
            result["ok"] = true
            if let reply { result["reply"] = .string(reply) }
        case .failure(let error):
            hub.metrics.recordError(error)
            result["ok"] = false
            result["problem"] = APIModel.json(APIModel.problemDocument(error))
        }
        client.publish(topic, result.jsonString, retain: false)
    }
}
