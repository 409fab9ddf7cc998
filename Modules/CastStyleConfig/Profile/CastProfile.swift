// swift-cast — Apache-2.0

/// An option profile (the GCKCastOptions replacement): a validated profile document and the documents it extends.
///
/// ## The document
///
/// ```xml
/// <?xml version="1.0" encoding="UTF-8"?>
/// <castProfile xmlns="urn:swift-cast:profile:1" extends="default.xml">
///   <receiver applicationID="default-media-receiver"/>
///   <discovery applicationID="any" requiredCapabilities="videoOut" scanRanges="192.168.2.0/24"/>
///   <launch language="en-US" relaunchIfRunning="false" androidReceiverCompatible="false"/>
///   <credentials data="user-token" type="android"/>
///   <timeouts connect="10s" request="10s" launch="30s"/>
///   <heartbeat interval="5s" deadAfter="15s"/>
///   <reconnect initialDelay="1s" maximumDelay="30s" multiplier="2" jitter="0.2" maximumAttempts="unlimited"/>
///   <session resumeSavedSessions="true" stopReceiverApplicationOnEnd="false" waitWhileSuspended="false"/>
///   <volume step="0.05"/>
///   <staticDevices>
///     <device host="192.168.1.20" port="8009" name="Living Room TV"/>
///   </staticDevices>
///   <logging level="info">
///     <category pattern="CastSession*" level="debug"/>
///     <message pattern="LOAD|SEEK" caseInsensitive="true"/>
///   </logging>
///   <style path="styles/solarized.xml"/>
///   <daemon listen="127.0.0.1:8765"><mediaFolder path="/srv/media"/></daemon>
/// </castProfile>
/// ```
///
/// Every element is optional and appears at most once, in any order; every attribute not marked required is
/// optional. What is not set keeps its built-in default (or the value from the document this one extends).
///
/// Element by element, `attribute` — value (default) → what it sets:
///
/// - `castProfile`: `extends` — a path relative to this document (none) → the base profile.
/// - `receiver`: `applicationID` (required) — `default-media-receiver` or 8 upper-case hex digits (`CC1AD845`)
///   → `CastOptions.receiverApplicationID`.
/// - `discovery`: `applicationID` — `any`, `default-media-receiver` or an application id (`any`) →
///   `DiscoveryCriteria.applicationID`; `requiredCapabilities` — `none` or a space-separated list of `videoOut`,
///   `videoIn`, `audioOut`, `audioIn`, `developerMode`, `multizoneGroup` (`none`) →
///   `DiscoveryCriteria.requiredCapabilities`; `scanRanges` — `none` or a space-separated list of IPv4 ranges
///   `A.B.C.D/N` of at most 4096 addresses each (`none`) → ``ResolvedProfile/discoveryScanRanges``.
/// - `launch`: `language` — a BCP-47 tag or `none` (`en-US`); `relaunchIfRunning` — boolean (`false`);
///   `androidReceiverCompatible` — boolean (`false`) → `LaunchOptions`.
/// - `credentials`: `data` (required) — text; `type` — `android`, `ios`, `web` or `cloud` (none) →
///   `CastOptions.launchCredentials` (none by default).
/// - `timeouts`: `connect` (`10s`), `request` (`10s`), `launch` (`30s`) — durations →
///   `CastOptions.connectTimeout`, `requestTimeout`, `launchTimeout`.
/// - `heartbeat`: `interval` (`5s`), `deadAfter` (`15s`) — durations or `none` —, `timerSlack` (`250ms`) →
///   `HeartbeatConfiguration.pingInterval`, `deadAfter`, `timerSlack`.
/// - `reconnect`: `initialDelay` (`1s`), `maximumDelay` (`30s`) — durations; `multiplier` — 1 to 100 (`2`);
///   `jitter` — 0 to 1 (`0.2`); `maximumAttempts` — a whole number ≥ 1 or `unlimited` (`unlimited`) →
///   `ReconnectPolicy`.
/// - `session`: `resumeSavedSessions` (`true`), `stopReceiverApplicationOnEnd` (`false`), `waitWhileSuspended`
///   (`false`) — booleans → `CastOptions.resumesSavedSessions`, `stopsReceiverApplicationWhenEndingSession`,
///   `requestsWaitWhileSuspended`; `stateDirectory` — a path relative to this document (`$XDG_STATE_HOME/cast`) →
///   `CastOptions.stateDirectory`.
/// - `volume`: `step` — a fraction in (0, 1] or `receiver` (`receiver`) → `CastOptions.volumeStep`, the step of
///   the terminal controllers' volume keys.
/// - `staticDevices`: `inherit` — boolean (`true`: keep the base profile's devices); up to 64 `device` children
///   with `host` (required), `port` (`8009`) and `name` (the host) → `CastOptions.staticDevices`.
/// - `logging`: `level` — `trace` … `critical` or `off` (`info`) → `LogFilter.minimumLevel` / `isDisabled`;
///   `inherit` — boolean (`true`: keep the base profile's rules and patterns); up to 256 `category` children
///   with `pattern` (a glob such as `CastSession*`) and `level`, both required → `LogFilter.categoryLevels`; then
///   up to 64 `message` children with `pattern` (a Swift `Regex`, the ICU/PCRE-style syntax; required) and
///   `caseInsensitive` (`false`) → `LogFilter.messagePatterns`.
/// - `style`: `path` (required) — a path relative to this document (the built-in style) →
///   ``ResolvedProfile/style``.
/// - `daemon` (castd): `listen` — `HOST:PORT` (`127.0.0.1:8765`); `requestsPerSecond` — a positive number or
///   `none` (`50`); `burst` (`100`) and `maximumBodySize` (`65536`) — whole numbers ≥ 1; `broker` — an MQTT
///   broker URL (none); `site` (the host name), `topicPrefix` (`cast`) and `discoveryPrefix` (`homeassistant`) —
///   topic levels; `brokerUsername`; `brokerPasswordFile` and `brokerCAFile` — paths; `homeAssistant` — boolean
///   (`true`); `inherit` — boolean
///   (`true`: keep the base profile's lists); then up to 64 each of `token` (`hash`: `sha256:` and 64 hex digits),
///   `mediaFolder` (`path`, relative to this document) and `allowedOrigin` (`origin`: `http(s)://host[:port]`)
///   → ``ResolvedProfile/daemon``.
///
/// - Durations: a number and a unit, `500ms`, `5s`, `1.5s`, `2m`, `1h` (``ConfigDuration``).
/// - Booleans: `true`, `false`, `1`, `0`.
/// - Paths are local: anything with a URL scheme (`http://`, `file://`) is refused.
///
/// With `extends`, the base profile applies first and this one overrides it attribute by attribute; the lists
/// (`staticDevices`, and `logging`'s categories and messages) are appended to the base's unless `inherit="false"`.
/// Chains are followed up to ``DocumentLimits/maximumExtendsDepth`` documents; a cycle fails with
/// ``CastConfigError/Code/extendsCycle`` naming it.
///
/// ## Failing loudly
///
/// Every document is checked for hostile constructs and validated against the profile schema before it is mapped,
/// and every value is checked as it is mapped. Any problem throws ``CastConfigError`` with the file, line and
/// column; a profile that fails never yields defaults.
public struct CastProfile: Sendable {
    /// The namespace of profile documents.
    public static let namespace = "urn:swift-cast:profile:1"

    /// The documents read, base-most first (the document itself is last).
    public var paths: [String]
    /// Every setting the documents set (after `extends` merging), with the file and line that set it.
    public var values: [ConfigValue] {
        layer.describedValues()
    }

    /// The merged raw settings.
    var layer: ProfileLayer

    /// Loads the profile at `path` and the profiles it extends, then checks every value.
    ///
    /// - Throws: ``CastConfigError`` for a missing or unreadable file, a hostile or malformed document, a schema
    ///   violation, an invalid value, or an `extends` cycle; never falls back to defaults.
    public init(contentsOfFile path: String, limits: DocumentLimits = DocumentLimits()) throws(CastConfigError) {
        let chain = try DocumentLoader.loadChain(path: path, as: .profile, limits: limits)
        try self.init(chain: chain, limits: limits)
    }

    /// Parses a profile held in memory; `file` names it in errors and anchors relative paths.
    public init(xml: String, file: String = "profile.xml", limits: DocumentLimits = DocumentLimits())
        throws(CastConfigError)
    {
        let root = try DocumentLoader.parse(Array(xml.utf8), file: file, as: .profile, limits: limits)
        let chain = try DocumentLoader.followExtends(
            from: DocumentLoader.Document(path: file, root: root),
            as: .profile,
            limits: limits
        )
        try self.init(chain: chain, limits: limits)
    }

    private init(chain: [DocumentLoader.Document], limits: DocumentLimits) throws(CastConfigError) {
        paths = chain.map(\.path)
        layer = ProfileLayer()
        for document in chain {
            layer.merge(ProfileLayer(document: document))
        }
        // Check every value now, so a bad value fails at load time rather than when first used.
        _ = try ProfileResolution(profile: layer, profilePaths: paths).run(loadsStyle: false, limits: limits)
    }

    /// This profile over the built-in defaults, with no environment or command-line overrides, and its style
    /// loaded.
    public func resolved(limits: DocumentLimits = DocumentLimits()) throws(CastConfigError) -> ResolvedProfile {
        try ProfileResolution(profile: layer, profilePaths: paths).run(loadsStyle: true, limits: limits)
    }
}

// MARK: - Raw settings

/// A value before it is checked, with its origin.
struct RawSetting: Sendable {
    var value: String
    var source: ConfigSource
    /// Where in a document; `nil` for the environment and command line.
    var location: DocumentLocation?
}

/// A static device entry before it is mapped.
struct RawDevice: Sendable {
    var host: String
    var port: Int
    var name: String?
    var source: ConfigSource
    var location: DocumentLocation?

    var description: String {
        let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        return name.map { "\(address) \"\($0)\"" } ?? address
    }
}

/// A category rule or message pattern before it is checked.
struct RawLogRule: Sendable {
    var pattern: String
    /// The level name for category rules; `nil` for message patterns.
    var level: String?
    var caseInsensitive = false
    var source: ConfigSource
    var location: DocumentLocation?
}

/// Everything one precedence layer sets.
struct ProfileLayer: Sendable {
    var scalars: [String: RawSetting] = [:]
    /// `nil` when the layer says nothing about static devices.
    var devices: [RawDevice]?
    var categoryRules: [RawLogRule] = []
    var messagePatterns: [RawLogRule] = []
    /// Whether `categoryRules`/`messagePatterns` replace, rather than extend, those of lower layers.
    var replacesLogRules = false
    /// Whether `devices` replace, rather than extend, those of lower layers (profiles: `inherit="false"`).
    var replacesDevices = true
    /// The `<daemon>` section's lists by child element (`token`, `mediaFolder`, `allowedOrigin`); the value is the
    /// child's one attribute. `nil` when the layer has no `<daemon>` element.
    var daemonLists: [String: [RawSetting]]?
    /// Whether `daemonLists` replace, rather than extend, those of lower layers (`inherit="false"`).
    var replacesDaemonLists = false

    init() {}

    /// The settings one validated profile document makes.
    init(document: DocumentLoader.Document) {
        let root = document.root
        for element in root.children {
            switch element.name {
            case "staticDevices":
                replacesDevices = element.attribute("inherit").map { $0.value == "false" || $0.value == "0" } ?? false
                devices = element.children(named: "device").map { device in
                    let host = device.attribute("host")?.value.trimmingASCIIWhitespace() ?? ""
                    return RawDevice(
                        host: host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host,
                        port: device.attribute("port").flatMap { Int($0.value.trimmingASCIIWhitespace()) } ?? 8009,
                        name: device.attribute("name")?.value,
                        source: Self.source(device.location),
                        location: device.location
                    )
                }
            case "logging":
                replacesLogRules = element.attribute("inherit").map { $0.value == "false" || $0.value == "0" } ?? false
                if let level = element.attribute("level") {
                    record(element: "logging", level)
                }
                categoryRules = element.children(named: "category").map { rule in
                    RawLogRule(
                        pattern: rule.attribute("pattern")?.value ?? "",
                        level: rule.attribute("level")?.value.trimmingASCIIWhitespace(),
                        source: Self.source(rule.location),
                        location: rule.location
                    )
                }
                messagePatterns = element.children(named: "message").map { message in
                    let flag = message.attribute("caseInsensitive")?.value.trimmingASCIIWhitespace()
                    return RawLogRule(
                        pattern: message.attribute("pattern")?.value ?? "",
                        caseInsensitive: flag == "true" || flag == "1",
                        source: Self.source(message.location),
                        location: message.location
                    )
                }
            case "daemon":
                replacesDaemonLists =
                    element.attribute("inherit").map { $0.value == "false" || $0.value == "0" } ?? false
                for attribute in element.attributes where attribute.name != "inherit" {
                    record(element: "daemon", attribute)
                }
                var lists: [String: [RawSetting]] = [:]
                for case let child? in ProfileList.all.map(\.daemonChild) {
                    lists[child.element] = element.children(named: child.element).compactMap { entry in
                        entry.attribute(child.attribute).map { attribute in
                            RawSetting(
                                value: attribute.value.trimmingASCIIWhitespace(),
                                source: Self.source(entry.location),
                                location: attribute.location
                            )
                        }
                    }
                }
                daemonLists = lists
            default:
                for attribute in element.attributes {
                    record(element: element.name, attribute)
                }
            }
        }
    }

    private mutating func record(element: String, _ attribute: ConfigElement.Attribute) {
        scalars["\(element).\(attribute.name)"] = RawSetting(
            value: attribute.value,
            source: Self.source(attribute.location),
            location: attribute.location
        )
    }

    private static func source(_ location: DocumentLocation) -> ConfigSource {
        ConfigSource(kind: .profile, name: location.file, line: location.line)
    }

    /// Applies `derived` (a document extending this layer's documents) on top.
    mutating func merge(_ derived: ProfileLayer) {
        scalars.merge(derived.scalars) { _, new in new }
        if let derivedDevices = derived.devices {
            devices = derived.replacesDevices ? derivedDevices : (devices ?? []) + derivedDevices
        }
        if let derivedLists = derived.daemonLists {
            daemonLists = derivedLists.merging(derived.replacesDaemonLists ? [:] : daemonLists ?? [:]) { new, old in
                old + new
            }
        }
        if derived.replacesLogRules {
            categoryRules = derived.categoryRules
            messagePatterns = derived.messagePatterns
        } else {
            categoryRules += derived.categoryRules
            messagePatterns += derived.messagePatterns
        }
    }

    /// The layer's settings as provenance rows, in ``ProfileSetting/all`` order, then the lists.
    func describedValues() -> [ConfigValue] {
        var rows: [ConfigValue] = []
        for setting in ProfileSetting.all {
            if let raw = scalars[setting.key] {
                rows.append(
                    ConfigValue(
                        key: setting.key,
                        value: setting.isSecret ? "<redacted>" : raw.value,
                        source: raw.source
                    )
                )
            }
        }
        for device in devices ?? [] {
            rows.append(ConfigValue(key: "staticDevices.device", value: device.description, source: device.source))
        }
        for rule in categoryRules {
            rows.append(
                ConfigValue(key: "logging.category", value: "\(rule.pattern)=\(rule.level ?? "")", source: rule.source)
            )
        }
        for pattern in messagePatterns {
            rows.append(
                ConfigValue(
                    key: "logging.message",
                    value: "/\(pattern.pattern)/\(pattern.caseInsensitive ? "i" : "")",
                    source: pattern.source
                )
            )
        }
        for list in ProfileList.all {
            guard let child = list.daemonChild else { continue }
            for entry in daemonLists?[child.element] ?? [] {
                rows.append(ConfigValue(key: list.publicKey.key, value: entry.value, source: entry.source))
            }
        }
        return rows
    }
}
