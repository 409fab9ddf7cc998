import CastDiscovery
import CastTransport

/// Home Assistant MQTT discovery for one device: the entity kinds HA's MQTT integration has — sensors for the
/// player state, title and app, a number for the volume, buttons for play/pause/stop/next/previous and a select
/// for the app — all reading the device's retained state topic and writing its command topic.
enum HomeAssistantDiscovery {
    struct Entity {
        /// `<discovery prefix>/<component>/<node>/<object>/config`.
        var topic: String
        /// The retained config JSON.
        var config: String
    }

    static func entities(for device: CastDevice, bridge: MQTTBridge) -> [Entity] {
        let options = bridge.options
        let node = "castd_\(MQTTBridge.topicLevel(options.site))_\(MQTTBridge.topicLevel(device.id))"
        let state = JSONValue.string(bridge.topic("state", device: device.id))
        let command = JSONValue.string(bridge.topic("command", device: device.id))
        var deviceBlock: JSONValue = [
            "identifiers": [.string(node)],
            "name": .string(device.friendlyName),
            "manufacturer": "Google Cast",
        ]
        if let model = device.modelName { deviceBlock["model"] = .string(model) }
        let common: JSONValue = [
            "device": deviceBlock,
            "availability": [
                ["topic": .string(bridge.topic("status"))],
                ["topic": .string(bridge.topic("availability", device: device.id))],
            ],
            "availability_mode": "all",
        ]

        func entity(_ component: String, _ object: String, _ name: String, _ fields: JSONValue) -> Entity {
            var config = common
            config["name"] = .string(name)
            config["unique_id"] = .string("\(node)_\(object)")
            config["object_id"] = .string("\(node)_\(object)")
            for (key, value) in fields.objectValue ?? [:] { config[key] = value }
            return Entity(
                topic: "\(options.discoveryPrefix)/\(component)/\(node)/\(object)/config",
                config: config.jsonString
            )
        }

        let media = "(value_json.status.media | default({}))"
        let app = "(value_json.status.app | default({}))"
        var entities = [
            entity(
                "sensor",
                "player_state",
                "Player state",
                ["state_topic": state, "value_template": .string("{{ \(media).playerState | default('IDLE') }}")]
            ),
            entity(
                "sensor",
                "title",
                "Title",
                ["state_topic": state, "value_template": .string("{{ \(media).title | default('') }}")]
            ),
            entity(
                "sensor",
                "app",
                "App",
                ["state_topic": state, "value_template": .string("{{ \(app).name | default('None') }}")]
            ),
            entity(
                "number",
                "volume",
                "Volume",
                [
                    "state_topic": state, "command_topic": command, "min": 0, "max": 100, "step": 1,
                    "unit_of_measurement": "%",
                    // "None" resets the number to unknown (its payload_reset) while the device has not told its level.
                    "value_template":
                        "{{ (value_json.status.volume * 100) | round(0) if value_json.status.volume is defined else None }}",
                    "command_template": #"{"command":"volume","level":{{ value / 100 }}}"#,
                ]
            ),
        ]
        for (object, name) in [
            ("play", "Play"), ("pause", "Pause"), ("stop", "Stop"), ("next", "Next"), ("previous", "Previous"),
        ] {
            entities.append(
                entity(
                    "button",
                    object,
                    name,
                    ["command_topic": command, "payload_press": .string(#"{"command":"\#(object)"}"#)]
                )
            )
        }
        // A select's state must be one of its options (HA refuses any other, and takes "None" for no state): no
        // app is "Idle", an app not offered is "Other app" (choosing it joins what runs).
        let apps = options.selectableApps
        let ids = apps.map { #""\#($0.name)":"\#($0.id)""# }.joined(separator: ",")
        let names = apps.map { #""\#($0.name)""# }.joined(separator: ",")
        entities.append(
            entity(
                "select",
                "app_select",
                "App",
                [
                    "state_topic": state, "command_topic": command,
                    "options": .array((["Idle"] + apps.map(\.name) + ["Other app"]).map(JSONValue.string)),
                    "value_template": .string(
                        "{% set name = \(app).name | default('') %}"
                            + "{{ 'Idle' if name == '' else (name if name in [\(names)] else 'Other app') }}"
                    ),
                    "command_template": .string(
                        "{% set ids = {\(ids)} %}{% if value in ids %}"
                            + #"{"command":"launch","appId":"{{ ids[value] }}"}"#
                            + #"{% elif value == 'Idle' %}{"command":"stopApp"}{% else %}{"command":"join"}{% endif %}"#
                    ),
                ]
            )
        )
        return entities
    }
}
