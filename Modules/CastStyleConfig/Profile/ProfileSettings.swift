// swift-cast — Apache-2.0

import CastDiscovery
import CastLogging
import CastSession
import CastTransport
import Logging

/// One scalar setting a profile, a `CAST_*` environment variable or a command-line override can set.
public struct ProfileKey: Sendable, Hashable {
    /// The setting key, `element.attribute` of the profile (`timeouts.request`); also the `cliOverrides` key.
    public let key: String
    /// The environment variable that sets it, e.g. `CAST_REQUEST_TIMEOUT`.
    public let environmentVariable: String
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

    /// The profile's discovery settings on `CastDiscovery`'s public API, in one place: `DiscoveryCriteria` has an
    /// application id and required capabilities (it has no namespace criteria).
    func makeDiscoveryCriteria() -> DiscoveryCriteria {
        var capabilities: DeviceCapabilities = []
        for name in discoveryCapabilities {
            if let capability = ProfileValues.capabilities[name] {
                capabilities.insert(capability)
            }
        }
        return DiscoveryCriteria(applicationID: discoveryApplicationID, requiredCapabilities: capabilities)
    }
}

/// Why a value was refused: what it must be instead (a noun phrase, as in the schema's documentation).
struct ValueProblem: Error {
    var expectation: String
}

/// A scalar setting with how to apply and show it.
struct ProfileSetting: Sendable {
    var key: String
    var environmentVariable: String
    var summary: String
    /// Shown as `<redacted>` in provenance.
    var isSecret = false
    /// A file path: relative values from a profile are resolved against the profile's directory.
    var isPath = false
    var apply: @Sendable (inout ProfileTarget, String) throws(ValueProblem) -> Void
    var current: @Sendable (ProfileTarget) -> String

    var publicKey: ProfileKey {
        ProfileKey(
            key: key,
            environmentVariable: environmentVariable,
            summary: summary,
            defaultValue: isSecret ? "none" : current(ProfileTarget())
        )
    }
}

/// The value syntaxes shared by profiles, environment variables and overrides.
enum ProfileValues {
    static let applicationIDExpectation = "default-media-receiver or an application id of 8 hex digits like CC1AD845"

    static let capabilities: [String: DeviceCapabilities] = [
        "videoOut": .videoOut, "videoIn": .videoIn, "audioOut": .audioOut, "audioIn": .audioIn,
        "developerMode": .developerMode, "multizoneGroup": .multizoneGroup,
    ]

    static func applicationID(_ text: String) throws(ValueProblem) -> String {
        let value = text.trimmingASCIIWhitespace()
        if value == "default-media-receiver" {
            return CastOptions.defaultMediaReceiverApplicationID
        }
        guard value.count == 8, value.allSatisfy({ $0.isHexDigit && !$0.isLowercase }) else {
            throw ValueProblem(expectation: applicationIDExpectation)
        }
        return value
    }

    /// A local file path (resolved against a profile's folder by the resolver): anything but empty.
    static func path(_ text: String) throws(ValueProblem) -> String {
        guard !text.isEmpty else { throw ValueProblem(expectation: "a local file path") }
        return text
    }

    /// One MQTT topic level: 1 to 64 letters, digits, `-` or `_`.
    static func topicLevel(_ text: String) throws(ValueProblem) -> String {
        let value = text.trimmingASCIIWhitespace()
        guard (1...64).contains(value.count),
            value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { throw ValueProblem(expectation: "1 to 64 letters, digits, - or _") }
        return value
    }

    static func bool(_ text: String) throws(ValueProblem) -> Bool {
        switch text.trimmingASCIIWhitespace().lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw ValueProblem(expectation: "true or false")
        }
    }

    static func duration(_ text: String) throws(ValueProblem) -> Duration {
        guard let duration = ConfigDuration.parse(text) else {
            throw ValueProblem(expectation: "a duration like 5s or 500ms")
        }
        return duration
    }

    static func optionalDuration(_ text: String) throws(ValueProblem) -> Duration? {
        if text.trimmingASCIIWhitespace() == "none" {
            return nil
        }
        guard let duration = ConfigDuration.parse(text) else {
            throw ValueProblem(expectation: "a duration like 5s or 500ms, or none")
        }
        return duration
    }

    static func decimal(_ text: String, in range: ClosedRange<Double>, expectation: String) throws(ValueProblem)
        -> Double
    {
        let value = text.trimmingASCIIWhitespace()
        guard value.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let number = Double(value),
            range.contains(number)
        else {
            throw ValueProblem(expectation: expectation)
        }
        return number
    }

    /// A whole number of at least 1, written in at most 9 characters.
    static func count(_ text: String) throws(ValueProblem) -> Int {
        let value = text.trimmingASCIIWhitespace()
        guard value.count <= 9, value.allSatisfy(\.isASCII), let number = Int(value), number >= 1 else {
            throw ValueProblem(expectation: "a whole number of at least 1")
        }
        return number
    }

    static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    static func format(_ duration: Duration?) -> String {
        duration.map(ConfigDuration.format) ?? "none"
    }

    static func level(_ text: String, allowsOff: Bool) throws(ValueProblem) -> Logger.Level? {
        let name = text.trimmingASCIIWhitespace().lowercased()
        if allowsOff, name == "off" {
            return nil
        }
        guard let level = Logger.Level(rawValue: name) else {
            let names = Logger.Level.allCases.map(\.rawValue) + (allowsOff ? ["off"] : [])
            throw ValueProblem(expectation: "one of " + names.joined(separator: ", "))
        }
        return level
    }
}

extension ProfileSetting {
    /// Every scalar setting, in the order `cast config show` lists them.
    static let all: [ProfileSetting] = [
        ProfileSetting(
            key: "receiver.applicationID",
            environmentVariable: "CAST_APP_ID",
            summary: "The receiver application sessions launch or join (CastOptions.receiverApplicationID).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.receiverApplicationID = try ProfileValues.applicationID(text)
            },
            current: { $0.options.receiverApplicationID }
        ),
        ProfileSetting(
            key: "discovery.applicationID",
            environmentVariable: "CAST_DISCOVERY_APP_ID",
            summary: "List only devices where this application is available; any lists all (DiscoveryCriteria).",
            apply: { (target, text) throws(ValueProblem) in
                if text.trimmingASCIIWhitespace() == "any" {
                    target.discoveryApplicationID = nil
                } else {
                    do {
                        target.discoveryApplicationID = try ProfileValues.applicationID(text)
                    } catch {
                        throw ValueProblem(expectation: "any, " + ProfileValues.applicationIDExpectation)
                    }
                }
            },
            current: { $0.discoveryApplicationID ?? "any" }
        ),
        ProfileSetting(
            key: "discovery.requiredCapabilities",
            environmentVariable: "CAST_DISCOVERY_CAPABILITIES",
            summary: "Capabilities a device must have to be listed, e.g. videoOut (DiscoveryCriteria).",
            apply: { (target, text) throws(ValueProblem) in
                let names = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }).map(String.init)
                if names == ["none"] {
                    target.discoveryCapabilities = []
                    return
                }
                guard !names.isEmpty, names.allSatisfy({ ProfileValues.capabilities[$0] != nil }) else {
                    throw ValueProblem(
                        expectation: "a list of videoOut, videoIn, audioOut, audioIn, developerMode, multizoneGroup "
                            + "(or none)"
                    )
                }
                target.discoveryCapabilities = names
            },
            current: { $0.discoveryCapabilities.isEmpty ? "none" : $0.discoveryCapabilities.joined(separator: " ") }
        ),
        ProfileSetting(
            key: "discovery.scanRanges",
            environmentVariable: "CAST_SCAN_RANGES",
            summary: "IPv4 ranges scanned for devices mDNS cannot see, e.g. 192.168.2.0/24 (AddressScanner).",
            apply: { (target, text) throws(ValueProblem) in
                let items = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }).map(String.init)
                if items == ["none"] {
                    target.discoveryScanRanges = []
                    return
                }
                var ranges: [AddressRange] = []
                for item in items {
                    guard let range = try? AddressRange(item) else {
                        throw ValueProblem(
                            expectation: "none or a list of IPv4 ranges A.B.C.D/N of at most "
                                + "\(AddressRange.maximumAddressCount) addresses each"
                        )
                    }
                    ranges.append(range)
                }
                guard !ranges.isEmpty else { throw ValueProblem(expectation: "none or a list of IPv4 ranges") }
                target.discoveryScanRanges = ranges
            },
            current: {
                $0.discoveryScanRanges.isEmpty
                    ? "none" : $0.discoveryScanRanges.map(\.description).joined(separator: " ")
            }
        ),
        ProfileSetting(
            key: "launch.language",
            environmentVariable: "CAST_LANGUAGE",
            summary: "The BCP-47 language sent with LAUNCH, or none (LaunchOptions.language).",
            apply: { (target, text) throws(ValueProblem) in
                let value = text.trimmingASCIIWhitespace()
                if value == "none" {
                    target.options.launchOptions.language = nil
                    return
                }
                let parts = value.split(separator: "-", omittingEmptySubsequences: false)
                guard let first = parts.first, (1...8).contains(first.count), first.allSatisfy(\.isASCII),
                    first.allSatisfy(\.isLetter),
                    parts.dropFirst().allSatisfy({ (1...8).contains($0.count) && $0.allSatisfy(\.isASCII) }),
                    parts.dropFirst().allSatisfy({ $0.allSatisfy { $0.isLetter || $0.isNumber } })
                else {
                    throw ValueProblem(expectation: "a BCP-47 language tag like en-US, or none")
                }
                target.options.launchOptions.language = value
            },
            current: { $0.options.launchOptions.language ?? "none" }
        ),
        ProfileSetting(
            key: "launch.relaunchIfRunning",
            environmentVariable: "CAST_RELAUNCH_IF_RUNNING",
            summary: "Relaunch the app even when it already runs (LaunchOptions.relaunchIfRunning).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.launchOptions.relaunchIfRunning = try ProfileValues.bool(text)
            },
            current: { String($0.options.launchOptions.relaunchIfRunning) }
        ),
        ProfileSetting(
            key: "launch.androidReceiverCompatible",
            environmentVariable: "CAST_ANDROID_RECEIVER_COMPATIBLE",
            summary: "Accept the app's Android TV version, Cast Connect (LaunchOptions.androidReceiverCompatible).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.launchOptions.androidReceiverCompatible = try ProfileValues.bool(text)
            },
            current: { String($0.options.launchOptions.androidReceiverCompatible) }
        ),
        ProfileSetting(
            key: "credentials.data",
            environmentVariable: "CAST_CREDENTIALS",
            summary: "Credentials sent with LAUNCH (CredentialsData.credentials); shown redacted.",
            isSecret: true,
            apply: { (target, text) throws(ValueProblem) in
                guard !text.isEmpty else { throw ValueProblem(expectation: "non-empty text") }
                target.credentialsData = text
            },
            current: { $0.credentialsData == nil ? "none" : "<redacted>" }
        ),
        ProfileSetting(
            key: "credentials.type",
            environmentVariable: "CAST_CREDENTIALS_TYPE",
            summary: "The credentials' type: android, ios, web or cloud (CredentialsData.credentialsType).",
            apply: { (target, text) throws(ValueProblem) in
                let value = text.trimmingASCIIWhitespace()
                guard ["android", "ios", "web", "cloud"].contains(value) else {
                    throw ValueProblem(expectation: "one of android, ios, web, cloud")
                }
                target.credentialsType = value
            },
            current: { $0.credentialsType ?? "none" }
        ),
        ProfileSetting(
            key: "timeouts.connect",
            environmentVariable: "CAST_CONNECT_TIMEOUT",
            summary: "Limit for TCP connect and, separately, the TLS handshake (CastOptions.connectTimeout).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.connectTimeout = try ProfileValues.duration(text)
            },
            current: { ProfileValues.format($0.options.connectTimeout) }
        ),
        ProfileSetting(
            key: "timeouts.request",
            environmentVariable: "CAST_REQUEST_TIMEOUT",
            summary: "Default limit for a request's reply (CastOptions.requestTimeout).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.requestTimeout = try ProfileValues.duration(text)
            },
            current: { ProfileValues.format($0.options.requestTimeout) }
        ),
        ProfileSetting(
            key: "timeouts.launch",
            environmentVariable: "CAST_LAUNCH_TIMEOUT",
            summary: "Limit for LAUNCH (CastOptions.launchTimeout).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.launchTimeout = try ProfileValues.duration(text)
            },
            current: { ProfileValues.format($0.options.launchTimeout) }
        ),
        ProfileSetting(
            key: "heartbeat.interval",
            environmentVariable: "CAST_HEARTBEAT_INTERVAL",
            summary: "PING after this much silence, or none (HeartbeatConfiguration.pingInterval).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.heartbeat.pingInterval = try ProfileValues.optionalDuration(text)
            },
            current: { ProfileValues.format($0.options.heartbeat.pingInterval) }
        ),
        ProfileSetting(
            key: "heartbeat.deadAfter",
            environmentVariable: "CAST_HEARTBEAT_DEAD_AFTER",
            summary: "Declare the device dead after this much silence, or none (HeartbeatConfiguration.deadAfter).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.heartbeat.deadAfter = try ProfileValues.optionalDuration(text)
            },
            current: { ProfileValues.format($0.options.heartbeat.deadAfter) }
        ),
        ProfileSetting(
            key: "reconnect.initialDelay",
            environmentVariable: "CAST_RECONNECT_INITIAL_DELAY",
            summary: "The first wait before reconnecting (ReconnectPolicy.initialDelay).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.reconnectPolicy.initialDelay = try ProfileValues.duration(text)
            },
            current: { ProfileValues.format($0.options.reconnectPolicy.initialDelay) }
        ),
        ProfileSetting(
            key: "reconnect.maximumDelay",
            environmentVariable: "CAST_RECONNECT_MAXIMUM_DELAY",
            summary: "The longest wait between reconnection attempts (ReconnectPolicy.maximumDelay).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.reconnectPolicy.maximumDelay = try ProfileValues.duration(text)
            },
            current: { ProfileValues.format($0.options.reconnectPolicy.maximumDelay) }
        ),
        ProfileSetting(
            key: "reconnect.multiplier",
            environmentVariable: "CAST_RECONNECT_MULTIPLIER",
            summary: "Growth of the wait per failed attempt, 1 to 100 (ReconnectPolicy.multiplier).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.reconnectPolicy.multiplier = try ProfileValues.decimal(
                    text,
                    in: 1...100,
                    expectation: "a number of at least 1, like 2 or 1.5"
                )
            },
            current: { ProfileValues.format($0.options.reconnectPolicy.multiplier) }
        ),
        ProfileSetting(
            key: "reconnect.jitter",
            environmentVariable: "CAST_RECONNECT_JITTER",
            summary: "Random spread as a fraction of the wait, 0 to 1 (ReconnectPolicy.jitter).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.reconnectPolicy.jitter = try ProfileValues.decimal(
                    text,
                    in: 0...1,
                    expectation: "a number from 0 to 1, like 0.2"
                )
            },
            current: { ProfileValues.format($0.options.reconnectPolicy.jitter) }
        ),
        ProfileSetting(
            key: "reconnect.maximumAttempts",
            environmentVariable: "CAST_RECONNECT_MAXIMUM_ATTEMPTS",
            summary: "Give up after this many failed attempts, or unlimited (ReconnectPolicy.maximumAttempts).",
            apply: { (target, text) throws(ValueProblem) in
                let value = text.trimmingASCIIWhitespace()
                if value == "unlimited" {
                    target.options.reconnectPolicy.maximumAttempts = nil
                    return
                }
                do {
                    target.options.reconnectPolicy.maximumAttempts = try ProfileValues.count(value)
                } catch {
                    throw ValueProblem(expectation: "a whole number of at least 1, or unlimited")
                }
            },
            current: { $0.options.reconnectPolicy.maximumAttempts.map(String.init) ?? "unlimited" }
        ),
        ProfileSetting(
            key: "session.resumeSavedSessions",
            environmentVariable: "CAST_RESUME_SAVED_SESSIONS",
            summary: "Store sessions so a later process can resume them (CastOptions.resumesSavedSessions).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.resumesSavedSessions = try ProfileValues.bool(text)
            },
            current: { String($0.options.resumesSavedSessions) }
        ),
        ProfileSetting(
            key: "session.stopReceiverApplicationOnEnd",
            environmentVariable: "CAST_STOP_RECEIVER_APPLICATION_ON_END",
            summary: "Stop the receiver app when ending the session "
                + "(CastOptions.stopsReceiverApplicationWhenEndingSession).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.stopsReceiverApplicationWhenEndingSession = try ProfileValues.bool(text)
            },
            current: { String($0.options.stopsReceiverApplicationWhenEndingSession) }
        ),
        ProfileSetting(
            key: "session.waitWhileSuspended",
            environmentVariable: "CAST_WAIT_WHILE_SUSPENDED",
            summary: "Requests wait for a suspended session to resume (CastOptions.requestsWaitWhileSuspended).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.requestsWaitWhileSuspended = try ProfileValues.bool(text)
            },
            current: { String($0.options.requestsWaitWhileSuspended) }
        ),
        ProfileSetting(
            key: "session.stateDirectory",
            environmentVariable: "CAST_STATE_DIRECTORY",
            summary: "Where session state is stored; default means $XDG_STATE_HOME/cast (CastOptions.stateDirectory).",
            isPath: true,
            apply: { (target, text) throws(ValueProblem) in
                target.options.stateDirectory = try ProfileValues.path(text)
            },
            current: { $0.options.stateDirectory ?? "default" }
        ),
        ProfileSetting(
            key: "deviceAuth.policy",
            environmentVariable: "CAST_DEVICE_AUTH",
            summary: "Challenge devices to prove they are genuine: off, warn or require (DeviceAuthOptions.policy).",
            apply: { (target, text) throws(ValueProblem) in
                guard let policy = DeviceAuthPolicy(rawValue: text.trimmingASCIIWhitespace()) else {
                    throw ValueProblem(expectation: "one of off, warn, require")
                }
                target.options.deviceAuth.policy = policy
            },
            current: { $0.options.deviceAuth.policy.rawValue }
        ),
        ProfileSetting(
            key: "deviceAuth.trustAnchors",
            environmentVariable: "CAST_TRUST_ANCHORS",
            summary: "PEM file of the roots device certificates must chain to (DeviceAuthOptions.trustAnchors).",
            isPath: true,
            apply: { (target, text) throws(ValueProblem) in
                let path = try ProfileValues.path(text)
                do throws(CastTransportError) {
                    target.options.deviceAuth.trustAnchors = try TrustAnchors(contentsOfFile: path)
                } catch {
                    throw ValueProblem(expectation: "a readable PEM file of certificates (\(error.message))")
                }
            },
            current: { $0.options.deviceAuth.trustAnchors?.source ?? "none" }
        ),
        ProfileSetting(
            key: "deviceAuth.allowSHA1",
            environmentVariable: "CAST_DEVICE_AUTH_ALLOW_SHA1",
            summary: "Accept devices that sign with SHA-1 (DeviceAuthOptions.allowsSHA1).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.deviceAuth.allowsSHA1 = try ProfileValues.bool(text)
            },
            current: { String($0.options.deviceAuth.allowsSHA1) }
        ),
        ProfileSetting(
            key: "deviceAuth.checkRevocation",
            environmentVariable: "CAST_DEVICE_AUTH_CHECK_REVOCATION",
            summary: "Refuse certificates the device's CRL revokes (DeviceAuthOptions.checksRevocation).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.deviceAuth.checksRevocation = try ProfileValues.bool(text)
            },
            current: { String($0.options.deviceAuth.checksRevocation) }
        ),
        ProfileSetting(
            key: "deviceAuth.timeout",
            environmentVariable: "CAST_DEVICE_AUTH_TIMEOUT",
            summary: "How long a device has to answer the challenge (DeviceAuthOptions.timeout).",
            apply: { (target, text) throws(ValueProblem) in
                target.options.deviceAuth.timeout = try ProfileValues.duration(text)
            },
            current: { ProfileValues.format($0.options.deviceAuth.timeout) }
        ),
        ProfileSetting(
            key: "volume.step",
            environmentVariable: "CAST_VOLUME_STEP",
            summary: "Device-volume step of the volume keys, or receiver for the receiver's (CastOptions.volumeStep).",
            apply: { (target, text) throws(ValueProblem) in
                if text.trimmingASCIIWhitespace() == "receiver" {
                    target.options.volumeStep = nil
                    return
                }
                let step = try ProfileValues.decimal(
                    text,
                    in: 0...1,
                    expectation: "a volume fraction above 0 and at most 1, like 0.05, or receiver"
                )
                guard step > 0 else {
                    throw ValueProblem(expectation: "a volume fraction above 0 and at most 1, like 0.05, or receiver")
                }
                target.options.volumeStep = step
            },
            current: { $0.options.volumeStep.map(ProfileValues.format) ?? "receiver" }
        ),
        ProfileSetting(
            key: "logging.level",
            environmentVariable: "CAST_LOG_LEVEL",
            summary: "The minimum log level for categories no rule names, or off (LogFilter.minimumLevel).",
            apply: { (target, text) throws(ValueProblem) in
                if let level = try ProfileValues.level(text, allowsOff: true) {
                    target.logFilter.minimumLevel = level
                    target.logFilter.isDisabled = false
                } else {
                    target.logFilter.isDisabled = true
                }
            },
            current: { $0.logFilter.isDisabled ? "off" : $0.logFilter.minimumLevel.rawValue }
        ),
        ProfileSetting(
            key: "style.path",
            environmentVariable: "CAST_STYLE",
            summary: "The style document the terminal controllers use; built-in for none (ResolvedProfile.style).",
            isPath: true,
            apply: { (target, text) throws(ValueProblem) in
                target.stylePath = try ProfileValues.path(text) == "built-in" ? nil : text
            },
            current: { $0.stylePath ?? "built-in" }
        ),
        ProfileSetting(
            key: "daemon.listen",
            environmentVariable: "CAST_DAEMON_LISTEN",
            summary: "castd's HOST:PORT; any host but loopback needs a token (DaemonSettings.listen).",
            apply: { (target, text) throws(ValueProblem) in
                let value = text.trimmingASCIIWhitespace()
                guard let colon = value.lastIndex(of: ":"), colon != value.startIndex,
                    let port = Int(value[value.index(after: colon)...]), (0...65535).contains(port)
                else {
                    throw ValueProblem(expectation: "HOST:PORT like 127.0.0.1:8765 or [::1]:8765")
                }
                target.daemon.listen = value
            },
            current: { $0.daemon.listen }
        ),
        ProfileSetting(
            key: "daemon.requestsPerSecond",
            environmentVariable: "CAST_DAEMON_REQUESTS_PER_SECOND",
            summary: "Requests per second one castd client may keep up, or none (DaemonSettings.requestsPerSecond).",
            apply: { (target, text) throws(ValueProblem) in
                if text.trimmingASCIIWhitespace() == "none" {
                    target.daemon.requestsPerSecond = nil
                    return
                }
                let expectation = "requests per second like 50 or 0.5, or none"
                let rate = try ProfileValues.decimal(text, in: 0...1_000_000, expectation: expectation)
                guard rate > 0 else { throw ValueProblem(expectation: expectation) }
                target.daemon.requestsPerSecond = rate
            },
            current: { $0.daemon.requestsPerSecond.map(ProfileValues.format) ?? "none" }
        ),
        ProfileSetting(
            key: "daemon.burst",
            environmentVariable: "CAST_DAEMON_BURST",
            summary: "Requests one castd client may make at once after being idle (DaemonSettings.burst).",
            apply: { (target, text) throws(ValueProblem) in
                target.daemon.burst = try ProfileValues.count(text)
            },
            current: { String($0.daemon.burst) }
        ),
        ProfileSetting(
            key: "daemon.maximumBodySize",
            environmentVariable: "CAST_DAEMON_MAXIMUM_BODY_SIZE",
            summary: "The largest request body castd reads, in bytes (DaemonSettings.maximumBodySize).",
            apply: { (target, text) throws(ValueProblem) in
                target.daemon.maximumBodySize = try ProfileValues.count(text)
            },
            current: { String($0.daemon.maximumBodySize) }
        ),
        ProfileSetting(
            key: "daemon.broker",
            environmentVariable: "CAST_DAEMON_BROKER",
            summary: "castd's MQTT broker, mqtt://, mqtts:// or unix:// URL, or none (DaemonSettings.broker).",
            apply: { (target, text) throws(ValueProblem) in
                let value = text.trimmingASCIIWhitespace()
                if value == "none" {
                    target.daemon.broker = nil
                    return
                }
                let schemes = ["mqtt://", "mqtts://", "unix:///"]
                guard schemes.contains(where: { value.hasPrefix($0) && value.count > $0.count }), !value.contains(" ")
                else {
                    throw ValueProblem(expectation: "mqtt://host[:port], mqtts://host[:port], unix:///path or none")
                }
                target.daemon.broker = value
            },
            current: { $0.daemon.broker ?? "none" }
        ),
        ProfileSetting(
            key: "daemon.site",
            environmentVariable: "CAST_DAEMON_SITE",
            summary:
                "castd's site, the MQTT topic level after the prefix; the host name by default (DaemonSettings.site).",
            apply: { (target, text) throws(ValueProblem) in
                target.daemon.site = try ProfileValues.topicLevel(text)
            },
            current: { $0.daemon.site ?? "host name" }
        ),
        ProfileSetting(
            key: "daemon.topicPrefix",
            environmentVariable: "CAST_DAEMON_TOPIC_PREFIX",
            summary: "The first level of castd's MQTT topics (DaemonSettings.topicPrefix).",
            apply: { (target, text) throws(ValueProblem) in
                target.daemon.topicPrefix = try ProfileValues.topicLevel(text)
            },
            current: { $0.daemon.topicPrefix }
        ),
        ProfileSetting(
            key: "daemon.brokerUsername",
            environmentVariable: "CAST_DAEMON_BROKER_USERNAME",
            summary: "The MQTT broker user name, or none (DaemonSettings.brokerUsername).",
            apply: { (target, text) throws(ValueProblem) in
                let value = text.trimmingASCIIWhitespace()
                guard !value.isEmpty, value.utf8.count <= 256 else {
                    throw ValueProblem(expectation: "a user name of 1 to 256 bytes, or none")
                }
                target.daemon.brokerUsername = value == "none" ? nil : value
            },
            current: { $0.daemon.brokerUsername ?? "none" }
        ),
        ProfileSetting(
            key: "daemon.brokerPasswordFile",
            environmentVariable: "CAST_DAEMON_BROKER_PASSWORD_FILE",
            summary: "A file holding the MQTT broker password (DaemonSettings.brokerPasswordFile).",
            isPath: true,
            apply: { (target, text) throws(ValueProblem) in
                target.daemon.brokerPasswordFile = try ProfileValues.path(text)
            },
            current: { $0.daemon.brokerPasswordFile ?? "none" }
        ),
        ProfileSetting(
            key: "daemon.brokerCAFile",
            environmentVariable: "CAST_DAEMON_BROKER_CA_FILE",
            summary: "A PEM file of the CAs the broker's certificate must chain to (DaemonSettings.brokerCAFile).",
            isPath: true,
            apply: { (target, text) throws(ValueProblem) in
                target.daemon.brokerCAFile = try ProfileValues.path(text)
            },
            current: { $0.daemon.brokerCAFile ?? "system CAs" }
        ),
        ProfileSetting(
            key: "daemon.homeAssistant",
            environmentVariable: "CAST_DAEMON_HOME_ASSISTANT",
            summary: "Whether castd publishes Home Assistant MQTT discovery (DaemonSettings.homeAssistant).",
            apply: { (target, text) throws(ValueProblem) in
                target.daemon.homeAssistant = try ProfileValues.bool(text)
            },
            current: { String($0.daemon.homeAssistant) }
        ),
        ProfileSetting(
            key: "daemon.discoveryPrefix",
            environmentVariable: "CAST_DAEMON_DISCOVERY_PREFIX",
            summary: "Home Assistant's MQTT discovery prefix (DaemonSettings.discoveryPrefix).",
            apply: { (target, text) throws(ValueProblem) in
                target.daemon.discoveryPrefix = try ProfileValues.topicLevel(text)
            },
            current: { $0.daemon.discoveryPrefix }
        ),
    ]

    /// The setting called `key`, if any.
    static func named(_ key: String) -> ProfileSetting? {
        all.first { $0.key == key }
    }
}
