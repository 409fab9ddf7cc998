// swift-cast — Apache-2.0

import CastDiscovery
import CastLogging
import CastSession
import CastTransport
import Logging

/// One scalar setting a profile, a `CAST_*` environment variable or a command-line override can set: a row of the
/// settings table that the resolver, `cast config show`, the command-line flags and the docs all read.
public struct ProfileKey: Sendable, Hashable {
    /// The setting key, `element.attribute` of the profile (`timeouts.request`); also the `cliOverrides` key.
    public let key: String
    /// The environment variable that sets it, e.g. `CAST_REQUEST_TIMEOUT`.
    public let environmentVariable: String
    /// The command-line flag that sets it, e.g. `--log-level`; `nil` when no flag does
    /// (``ProfileResolver/overrides(flags:)``).
    public let flag: String?
    /// What a value must be, e.g. `a duration like 5s or 500ms`: the words its errors use.
    public let syntax: String
    /// What it does and which type's field it sets.
    public let summary: String
    /// The built-in default, written as a profile would write it.
    public let defaultValue: String

    /// The profile element (`timeouts`).
    public var element: String { String(key.split(separator: ".")[0]) }
    /// The profile attribute (`request`).
    public var attribute: String { String(key.split(separator: ".")[1]) }
}

/// What settings are applied to while resolving; becomes the public ``ResolvedProfile``.
struct ProfileTarget {
    var options = CastOptions()
    /// `nil` lists every device; mapped by ``makeDiscoveryCriteria()``.
    var discoveryApplicationID: String?
    /// Capability names, mapped by ``makeDiscoveryCriteria()``.
    var discoveryCapabilities: [String] = []
    /// Address ranges discovery scans (`discovery.scanRanges`).
    var discoveryScanRanges: [AddressRange] = []
    var logFilter = LogFilter()
    var credentialsData: String?
    var credentialsType: String?
    var stylePath: String?
    var daemon = DaemonSettings()

    static let capabilities: [String: DeviceCapabilities] = [
        "videoOut": .videoOut, "videoIn": .videoIn, "audioOut": .audioOut, "audioIn": .audioIn,
        "developerMode": .developerMode, "multizoneGroup": .multizoneGroup,
    ]

    /// `logging.level`: the log filter's minimum level, `nil` when logging is off.
    var minimumLogLevel: Logger.Level? {
        get { logFilter.isDisabled ? nil : logFilter.minimumLevel }
        set {
            logFilter.isDisabled = newValue == nil
            if let newValue { logFilter.minimumLevel = newValue }
        }
    }

    /// The profile's discovery settings on `CastDiscovery`'s public API, in one place: `DiscoveryCriteria` has an
    /// application id and required capabilities (it has no namespace criteria).
    func makeDiscoveryCriteria() -> DiscoveryCriteria {
        let capabilities = discoveryCapabilities.compactMap { Self.capabilities[$0] }
        return DiscoveryCriteria(
            applicationID: discoveryApplicationID,
            requiredCapabilities: DeviceCapabilities(capabilities)
        )
    }
}

/// Why a value was refused: what it must be instead (a noun phrase, as in the schema's documentation).
struct ValueProblem: Error {
    var expectation: String
}

/// A row of the settings table: a scalar setting's key, environment variable, flag, value type, the field it sets
/// and what it does. Profiles, the environment and overrides all go through `apply`; provenance through `current`.
struct ProfileSetting: Sendable {
    var key: String
    var environmentVariable: String
    var flag: String?
    var summary: String
    var syntax: String
    /// Shown as `<redacted>` in provenance.
    var isSecret: Bool
    /// A file path: relative values from a profile are resolved against the profile's directory.
    var isPath: Bool
    var apply: @Sendable (inout ProfileTarget, String) throws(ValueProblem) -> Void
    var current: @Sendable (ProfileTarget) -> String

    init<Value>(
        _ key: String,
        _ environmentVariable: String,
        flag: String? = nil,
        _ type: SettingType<Value>,
        _ field: any WritableKeyPath<ProfileTarget, Value> & Sendable,
        _ summary: String
    ) {
        self.key = key
        self.environmentVariable = environmentVariable
        self.flag = flag
        self.summary = summary
        syntax = type.syntax
        isSecret = type.isSecret
        isPath = type.isPath
        apply = { (target, text) throws(ValueProblem) in target[keyPath: field] = try type.parse(text) }
        current = { type.format($0[keyPath: field]) }
    }

    var publicKey: ProfileKey {
        ProfileKey(
            key: key,
            environmentVariable: environmentVariable,
            flag: flag,
            syntax: syntax,
            summary: summary,
            defaultValue: current(ProfileTarget())
        )
    }
}

extension ProfileSetting {
    /// The settings table: every scalar setting, in the order `cast config show` lists them. A row is the key
    /// (`element.attribute` in a profile), the environment variable, the flag if any; the value type and the field
    /// it sets; the summary. Laid out by hand, one row a setting, so swift-format leaves it alone.
    // swift-format-ignore
    static let all: [ProfileSetting] = [
        .init("receiver.applicationID", "CAST_APP_ID",
              .applicationID, \.options.receiverApplicationID,
              "The receiver application sessions launch or join (CastOptions.receiverApplicationID)."),
        .init("discovery.applicationID", "CAST_DISCOVERY_APP_ID",
              .discoveryApplicationID, \.discoveryApplicationID,
              "List only devices where this application is available; any lists all (DiscoveryCriteria)."),
        .init("discovery.requiredCapabilities", "CAST_DISCOVERY_CAPABILITIES",
              .capabilities, \.discoveryCapabilities,
              "Capabilities a device must have to be listed, e.g. videoOut (DiscoveryCriteria)."),
        .init("discovery.scanRanges", "CAST_SCAN_RANGES",
              .scanRanges, \.discoveryScanRanges,
              "IPv4 ranges scanned for devices mDNS cannot see, e.g. 192.168.2.0/24 (AddressScanner)."),
        .init("launch.language", "CAST_LANGUAGE",
              .optional(.language, none: "none"), \.options.launchOptions.language,
              "The BCP-47 language sent with LAUNCH, or none (LaunchOptions.language)."),
        .init("launch.relaunchIfRunning", "CAST_RELAUNCH_IF_RUNNING",
              .bool, \.options.launchOptions.relaunchIfRunning,
              "Relaunch the app even when it already runs (LaunchOptions.relaunchIfRunning)."),
        .init("launch.androidReceiverCompatible", "CAST_ANDROID_RECEIVER_COMPATIBLE",
              .bool, \.options.launchOptions.androidReceiverCompatible,
              "Accept the app's Android TV version, Cast Connect (LaunchOptions.androidReceiverCompatible)."),
        .init("credentials.data", "CAST_CREDENTIALS",
              .secret, \.credentialsData,
              "Credentials sent with LAUNCH (CredentialsData.credentials); shown redacted."),
        .init("credentials.type", "CAST_CREDENTIALS_TYPE",
              .optional(.oneOf("android", "ios", "web", "cloud"), unset: "none"), \.credentialsType,
              "The credentials' type: android, ios, web or cloud (CredentialsData.credentialsType)."),
        .init("timeouts.connect", "CAST_CONNECT_TIMEOUT", flag: "--timeout",
              .duration, \.options.connectTimeout,
              "Limit for TCP connect and, separately, the TLS handshake (CastOptions.connectTimeout)."),
        .init("timeouts.request", "CAST_REQUEST_TIMEOUT", flag: "--timeout",
              .duration, \.options.requestTimeout,
              "Default limit for a request's reply (CastOptions.requestTimeout)."),
        .init("timeouts.launch", "CAST_LAUNCH_TIMEOUT",
              .duration, \.options.launchTimeout,
              "Limit for LAUNCH (CastOptions.launchTimeout)."),
        .init("heartbeat.interval", "CAST_HEARTBEAT_INTERVAL",
              .optional(.duration, none: "none"), \.options.heartbeat.pingInterval,
              "PING after this much silence, or none (HeartbeatConfiguration.pingInterval)."),
        .init("heartbeat.deadAfter", "CAST_HEARTBEAT_DEAD_AFTER",
              .optional(.duration, none: "none"), \.options.heartbeat.deadAfter,
              "Declare the device dead after this much silence, or none (HeartbeatConfiguration.deadAfter)."),
        .init("heartbeat.timerSlack", "CAST_HEARTBEAT_TIMER_SLACK",
              .duration, \.options.heartbeat.timerSlack,
              "How much later a PING may go so many connections share wake-ups (HeartbeatConfiguration.timerSlack)."),
        .init("reconnect.initialDelay", "CAST_RECONNECT_INITIAL_DELAY",
              .duration, \.options.reconnectPolicy.initialDelay,
              "The first wait before reconnecting (ReconnectPolicy.initialDelay)."),
        .init("reconnect.maximumDelay", "CAST_RECONNECT_MAXIMUM_DELAY",
              .duration, \.options.reconnectPolicy.maximumDelay,
              "The longest wait between reconnection attempts (ReconnectPolicy.maximumDelay)."),
        .init("reconnect.multiplier", "CAST_RECONNECT_MULTIPLIER",
              .decimal(1...100, "a number of at least 1, like 2 or 1.5"), \.options.reconnectPolicy.multiplier,
              "Growth of the wait per failed attempt, 1 to 100 (ReconnectPolicy.multiplier)."),
        .init("reconnect.jitter", "CAST_RECONNECT_JITTER",
              .decimal(0...1, "a number from 0 to 1, like 0.2"), \.options.reconnectPolicy.jitter,
              "Random spread as a fraction of the wait, 0 to 1 (ReconnectPolicy.jitter)."),
        .init("reconnect.maximumAttempts", "CAST_RECONNECT_MAXIMUM_ATTEMPTS",
              .optional(.count, none: "unlimited"), \.options.reconnectPolicy.maximumAttempts,
              "Give up after this many failed attempts, or unlimited (ReconnectPolicy.maximumAttempts)."),
        .init("session.resumeSavedSessions", "CAST_RESUME_SAVED_SESSIONS",
              .bool, \.options.resumesSavedSessions,
              "Store sessions so a later process can resume them (CastOptions.resumesSavedSessions)."),
        .init("session.stopReceiverApplicationOnEnd", "CAST_STOP_RECEIVER_APPLICATION_ON_END",
              .bool, \.options.stopsReceiverApplicationWhenEndingSession,
              "Stop the receiver app when ending the session (CastOptions.stopsReceiverApplicationWhenEndingSession)."),
        .init("session.waitWhileSuspended", "CAST_WAIT_WHILE_SUSPENDED",
              .bool, \.options.requestsWaitWhileSuspended,
              "Requests wait for a suspended session to resume (CastOptions.requestsWaitWhileSuspended)."),
        .init("session.stateDirectory", "CAST_STATE_DIRECTORY", flag: "--state-directory",
              .optional(.path, unset: "default"), \.options.stateDirectory,
              "Where session state is stored; default means $XDG_STATE_HOME/cast (CastOptions.stateDirectory)."),
        .init("deviceAuth.policy", "CAST_DEVICE_AUTH", flag: "--device-auth",
              .rawValue("one of off, warn, require"), \.options.deviceAuth.policy,
              "Challenge devices to prove they are genuine: off, warn or require (DeviceAuthOptions.policy)."),
        .init("deviceAuth.trustAnchors", "CAST_TRUST_ANCHORS", flag: "--trust-anchors",
              .trustAnchors, \.options.deviceAuth.trustAnchors,
              "PEM file of the roots device certificates must chain to (DeviceAuthOptions.trustAnchors)."),
        .init("deviceAuth.allowSHA1", "CAST_DEVICE_AUTH_ALLOW_SHA1",
              .bool, \.options.deviceAuth.allowsSHA1,
              "Accept devices that sign with SHA-1 (DeviceAuthOptions.allowsSHA1)."),
        .init("deviceAuth.checkRevocation", "CAST_DEVICE_AUTH_CHECK_REVOCATION",
              .bool, \.options.deviceAuth.checksRevocation,
              "Refuse certificates the device's CRL revokes (DeviceAuthOptions.checksRevocation)."),
        .init("deviceAuth.timeout", "CAST_DEVICE_AUTH_TIMEOUT",
              .duration, \.options.deviceAuth.timeout,
              "How long a device has to answer the challenge (DeviceAuthOptions.timeout)."),
        .init("volume.step", "CAST_VOLUME_STEP",
              .volumeStep, \.options.volumeStep,
              "Device-volume step of the volume keys, or receiver for the receiver's (CastOptions.volumeStep)."),
        .init("logging.level", "CAST_LOG_LEVEL", flag: "--log-level",
              .minimumLevel, \.minimumLogLevel,
              "The minimum log level for categories no rule names, or off (LogFilter.minimumLevel)."),
        .init("style.path", "CAST_STYLE", flag: "--style",
              .stylePath, \.stylePath,
              "The style document the terminal controllers use; built-in for none (ResolvedProfile.style)."),
        .init("daemon.listen", "CAST_DAEMON_LISTEN", flag: "--listen",
              .listenAddress, \.daemon.listen,
              "castd's HOST:PORT; any host but loopback needs a token (DaemonSettings.listen)."),
        .init("daemon.requestsPerSecond", "CAST_DAEMON_REQUESTS_PER_SECOND",
              .requestRate, \.daemon.requestsPerSecond,
              "Requests per second one castd client may keep up, or none (DaemonSettings.requestsPerSecond)."),
        .init("daemon.burst", "CAST_DAEMON_BURST",
              .count, \.daemon.burst,
              "Requests one castd client may make at once after being idle (DaemonSettings.burst)."),
        .init("daemon.maximumBodySize", "CAST_DAEMON_MAXIMUM_BODY_SIZE",
              .count, \.daemon.maximumBodySize,
              "The largest request body castd reads, in bytes (DaemonSettings.maximumBodySize)."),
        .init("daemon.broker", "CAST_DAEMON_BROKER", flag: "--broker",
              .brokerURL, \.daemon.broker,
              "castd's MQTT broker, mqtt://, mqtts:// or unix:// URL, or none (DaemonSettings.broker)."),
        .init("daemon.site", "CAST_DAEMON_SITE", flag: "--site",
              .optional(.topicLevel, unset: "host name"), \.daemon.site,
              "castd's site, the MQTT topic level after the prefix; the host name by default (DaemonSettings.site)."),
        .init("daemon.topicPrefix", "CAST_DAEMON_TOPIC_PREFIX",
              .topicLevel, \.daemon.topicPrefix,
              "The first level of castd's MQTT topics (DaemonSettings.topicPrefix)."),
        .init("daemon.brokerUsername", "CAST_DAEMON_BROKER_USERNAME",
              .optional(.userName, none: "none"), \.daemon.brokerUsername,
              "The MQTT broker user name, or none (DaemonSettings.brokerUsername)."),
        .init("daemon.brokerPasswordFile", "CAST_DAEMON_BROKER_PASSWORD_FILE",
              .optional(.path, unset: "none"), \.daemon.brokerPasswordFile,
              "A file holding the MQTT broker password (DaemonSettings.brokerPasswordFile)."),
        .init("daemon.brokerCAFile", "CAST_DAEMON_BROKER_CA_FILE",
              .optional(.path, unset: "system CAs"), \.daemon.brokerCAFile,
              "A PEM file of the CAs the broker's certificate must chain to (DaemonSettings.brokerCAFile)."),
        .init("daemon.homeAssistant", "CAST_DAEMON_HOME_ASSISTANT",
              .bool, \.daemon.homeAssistant,
              "Whether castd publishes Home Assistant MQTT discovery (DaemonSettings.homeAssistant)."),
        .init("daemon.discoveryPrefix", "CAST_DAEMON_DISCOVERY_PREFIX",
              .topicLevel, \.daemon.discoveryPrefix,
              "Home Assistant's MQTT discovery prefix (DaemonSettings.discoveryPrefix)."),
    ]

    /// The setting called `key`, if any.
    static func named(_ key: String) -> ProfileSetting? {
        all.first { $0.key == key }
    }
}

/// A list setting: entries a profile gives as repeated child elements and, where the row has an environment
/// variable, the environment and command line give as one comma-separated value. A row of the second settings
/// table (``ProfileResolver/lists``), which the resolver, `cast config show` and the docs read as they read
/// ``ProfileResolver/keys``.
public struct ProfileListKey: Sendable, Hashable {
    /// The key of its ``ResolvedProfile/provenance`` rows and of ``ProfileResolver/cliOverrides``
    /// (`staticDevices`).
    public let key: String
    /// The environment variable that sets it, `nil` when only profiles do.
    public let environmentVariable: String?
    /// Where a profile gives the entries: `element/child@attribute,…`, with the most a document may hold.
    public let profilePath: String
    /// The command-line flag that sets it, and which program has it (`--host` (castd)).
    public let flag: String?
    /// What an entry must be.
    public let syntax: String
    /// The fields it sets.
    public let summary: String
}

/// A row of the list table: the public description and, for a list the environment or command line can set, how
/// such a value adds to a layer.
struct ProfileList: Sendable {
    var publicKey: ProfileListKey
    /// For the daemon's lists: the `<daemon>` child, its one attribute, the field its values go to, and whether
    /// they are paths (resolved against the profile).
    var daemonChild: DaemonChild?
    var parse: (@Sendable (String, ConfigSource, inout ProfileLayer) throws(CastConfigError) -> Void)?

    static func named(_ key: String) -> ProfileList? { all.first { $0.publicKey.key == key } }

    // swift-format-ignore
    static let all: [ProfileList] = [
        .init(publicKey: .init(key: "staticDevices", environmentVariable: "CAST_DEVICES",
                               profilePath: "staticDevices/device@host,port,name (up to 64)", flag: "--host (castd)",
                               syntax: "host[:port][=name],… ([v6]:port)", summary: "CastOptions.staticDevices"),
              parse: { (value, source, layer) throws(CastConfigError) in
                  layer.devices = try ProfileResolver.devices(value, source: source)
              }),
        .init(publicKey: .init(key: "logging.filter", environmentVariable: "CAST_LOG_FILTER",
                               profilePath: "logging/category@pattern,level (up to 256), logging/message@pattern,caseInsensitive (up to 64)",
                               flag: "--log-filter", syntax: "the --log-filter syntax, Cast*=debug,/regex/i",
                               summary: "LogFilter.categoryLevels, messagePatterns"),
              parse: { (value, source, layer) throws(CastConfigError) in
                  try ProfileResolver.addFilter(value, to: &layer, source: source)
              }),
        .init(publicKey: .init(key: "daemon.token", environmentVariable: nil,
                               profilePath: "daemon/token@hash (up to 64)", flag: "--token-hash (castd)",
                               syntax: "sha256: and 64 hex digits (castd token)", summary: "DaemonSettings.tokenHashes"),
              daemonChild: .init(element: "token", attribute: "hash", field: \.tokenHashes)),
        .init(publicKey: .init(key: "daemon.mediaFolder", environmentVariable: nil,
                               profilePath: "daemon/mediaFolder@path (up to 64)", flag: "--media-folder (castd)",
                               syntax: "a local folder path", summary: "DaemonSettings.mediaFolders"),
              daemonChild: .init(element: "mediaFolder", attribute: "path", field: \.mediaFolders, isPath: true)),
        .init(publicKey: .init(key: "daemon.allowedOrigin", environmentVariable: nil,
                               profilePath: "daemon/allowedOrigin@origin (up to 64)", flag: "--allow-origin (castd)",
                               syntax: "http(s)://host[:port]", summary: "DaemonSettings.allowedOrigins"),
              daemonChild: .init(element: "allowedOrigin", attribute: "origin", field: \.allowedOrigins)),
    ]

    init(
        publicKey: ProfileListKey,
        daemonChild: DaemonChild? = nil,
        parse: (@Sendable (String, ConfigSource, inout ProfileLayer) throws(CastConfigError) -> Void)? = nil
    ) {
        self.publicKey = publicKey
        self.daemonChild = daemonChild
        self.parse = parse
    }

    /// A `<daemon>` list child.
    struct DaemonChild: Sendable {
        var element: String
        var attribute: String
        var field: any WritableKeyPath<DaemonSettings, [String]> & Sendable
        var isPath = false
    }
}
