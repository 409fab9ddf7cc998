import CastDiscovery
import CastTransport
import Logging
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Everything a ``CastContext`` needs to know (GCKCastOptions). Every value has a documented default; start
/// from `CastOptions()` and change what you need.
public struct CastOptions: Sendable {
    /// The Default Media Receiver's application id.
    public static let defaultMediaReceiverApplicationID = "CC1AD845"

    /// The receiver application sessions launch or join. Defaults to the Default Media Receiver.
    public var receiverApplicationID: String {
        get { values.value.receiverApplicationID }
        set { values.value.receiverApplicationID = newValue }
    }
    /// How to launch it.
    public var launchOptions: LaunchOptions {
        get { values.value.launchOptions }
        set { values.value.launchOptions = newValue }
    }
    /// Credentials passed with LAUNCH (Cast Connect); `nil` (the default) sends none.
    public var launchCredentials: CredentialsData? {
        get { values.value.launchCredentials }
        set { values.value.launchCredentials = newValue }
    }
    /// Devices that are not on mDNS, listed alongside discovered ones. Defaults to none.
    public var staticDevices: [CastDevice] {
        get { values.value.staticDevices }
        set { values.value.staticDevices = newValue }
    }
    /// Limit for TCP connect and, separately, the TLS handshake. Defaults to 10 s.
    public var connectTimeout: Duration {
        get { values.value.connectTimeout }
        set { values.value.connectTimeout = newValue }
    }
    /// Default limit for a request's reply. Defaults to 10 s.
    public var requestTimeout: Duration {
        get { values.value.requestTimeout }
        set { values.value.requestTimeout = newValue }
    }
    /// Limit for LAUNCH, which can take long on real devices. Defaults to 30 s.
    public var launchTimeout: Duration {
        get { values.value.launchTimeout }
        set { values.value.launchTimeout = newValue }
    }
    /// Keep-alive: ping after 5 s of silence, connection dead after 15 s.
    public var heartbeat: HeartbeatConfiguration {
        get { values.value.heartbeat }
        set { values.value.heartbeat = newValue }
    }
    /// Whether devices must prove they are genuine Cast devices (`tp.deviceauth`) on every connect. Defaults to
    /// `DeviceAuthPolicy.warn` without trust anchors, which sends no challenge until anchors are set.
    public var deviceAuth: DeviceAuthOptions {
        get { values.value.deviceAuth }
        set { values.value.deviceAuth = newValue }
    }
    /// How a suspended session reconnects: 1 s doubling to 30 s with jitter, unlimited attempts.
    public var reconnectPolicy: ReconnectPolicy {
        get { values.value.reconnectPolicy }
        set { values.value.reconnectPolicy = newValue }
    }
    /// Store the session so a later process can resume it. Defaults to `true`.
    public var resumesSavedSessions: Bool {
        get { values.value.resumesSavedSessions }
        set { values.value.resumesSavedSessions = newValue }
    }
    /// Stop the receiver app when ending the session, instead of leaving it running. Defaults to `false`.
    public var stopsReceiverApplicationWhenEndingSession: Bool {
        get { values.value.stopsReceiverApplicationWhenEndingSession }
        set { values.value.stopsReceiverApplicationWhenEndingSession = newValue }
    }
    /// While suspended, requests wait for the session to resume (up to their timeout) instead of failing at
    /// once with ``CastSessionError/Code/suspended``. Defaults to `false`.
    public var requestsWaitWhileSuspended: Bool {
        get { values.value.requestsWaitWhileSuspended }
        set { values.value.requestsWaitWhileSuspended = newValue }
    }
    /// Device-volume step for volume keys (the physical-volume-buttons option); `nil` uses the receiver's
    /// `stepInterval`. Defaults to `nil`.
    public var volumeStep: Double? {
        get { values.value.volumeStep }
        set { values.value.volumeStep = newValue }
    }
    /// Where session state is stored; `nil` (the default) means `$XDG_STATE_HOME/cast`, else
    /// `~/.local/state/cast`.
    public var stateDirectory: String? {
        get { values.value.stateDirectory }
        set { values.value.stateDirectory = newValue }
    }

    /// The XDG state folder of `application`: `$XDG_STATE_HOME/<application>`, else
    /// `~/.local/state/<application>`. `cast` (the default) is where ``stateDirectory`` `nil` points.
    public static func defaultStateDirectory(for application: String = "cast") -> String {
        if let state = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), !state.isEmpty {
            return state + "/" + application
        }
        let home = getenv("HOME").map { String(cString: $0) } ?? "/tmp"
        return home + "/.local/state/" + application
    }

    /// Options for `receiverApplicationID` (the Default Media Receiver by default).
    public init(receiverApplicationID: String = CastOptions.defaultMediaReceiverApplicationID) {
        values = CopyOnWrite(Values(receiverApplicationID: receiverApplicationID))
    }

    // MARK: - Storage

    /// The values, shared by copies until one changes (copy on write): a context, its session manager, each
    /// session and its media channel hold the options, and inline they are over 400 bytes each.
    private var values: CopyOnWrite<Values>

    private struct Values: Sendable {
        var receiverApplicationID: String
        var launchOptions: LaunchOptions = LaunchOptions()
        var launchCredentials: CredentialsData?
        var staticDevices: [CastDevice] = []
        var connectTimeout: Duration = .seconds(10)
        var requestTimeout: Duration = .seconds(10)
        var launchTimeout: Duration = .seconds(30)
        var heartbeat: HeartbeatConfiguration = HeartbeatConfiguration()
        var deviceAuth: DeviceAuthOptions = DeviceAuthOptions()
        var reconnectPolicy: ReconnectPolicy = ReconnectPolicy()
        var resumesSavedSessions: Bool = true
        var stopsReceiverApplicationWhenEndingSession: Bool = false
        var requestsWaitWhileSuspended: Bool = false
        var volumeStep: Double?
        var stateDirectory: String?
    }
}

/// How the receiver app is launched (GCKLaunchOptions).
public struct LaunchOptions: Sendable, Hashable {
    /// Relaunch the app even when it already runs (instead of joining). Defaults to `false`.
    public var relaunchIfRunning = false
    /// The BCP-47 language sent with LAUNCH. Defaults to `en-US`.
    public var language: String? = "en-US"
    /// Also accept the app's Android TV version (Cast Connect): LAUNCH lists `ANDROID_TV` in
    /// `supportedAppTypes`. Defaults to `false`.
    public var androidReceiverCompatible = false
    /// Parameters passed to the app in LAUNCH `appParams`. Defaults to none.
    public var appParameters: JSONValue?

    /// The defaults.
    public init() {}
}

/// Credentials for the receiver app (GCKCredentialsData), sent with LAUNCH as `credentialsData`.
public struct CredentialsData: Sendable, Hashable {
    /// The opaque credentials (for example a user token).
    public var credentials: String
    /// `android`, `ios`, `web` or `cloud`; `nil` lets the receiver assume `web`.
    public var credentialsType: String?

    /// Creates credentials.
    public init(credentials: String, credentialsType: String? = nil) {
        self.credentials = credentials
        self.credentialsType = credentialsType
    }

    var json: JSONValue {
        var object: [String: JSONValue] = ["credentials": .string(credentials)]
        if let credentialsType { object["credentialsType"] = .string(credentialsType) }
        return .object(object)
    }
}

extension CastOptions {
    /// A connection to `device` with these options' connect and request timeouts and heartbeat.
    ///
    /// - Throws: ``CastSessionError/Code/connectFailed``, naming the device, with the transport's error as cause.
    func connect(to device: CastDevice, eventLoopGroup: any EventLoopGroup, logger: Logger) async throws
        -> CastConnection
    {
        var configuration = CastConnection.Configuration()
        configuration.connectTimeout = connectTimeout
        configuration.requestTimeout = requestTimeout
        configuration.heartbeat = heartbeat
        configuration.deviceAuth = deviceAuth
        configuration.deviceAuth.deviceHasVideoOutput = device.capabilities.contains(.videoOut)
        do {
            return try await CastConnection.connect(
                host: device.host,
                port: device.port,
                configuration: configuration,
                eventLoopGroup: eventLoopGroup,
                logger: logger
            )
        } catch let error as CastTransportError where error.isDeviceAuthFailure {
            throw CastSessionError(
                .deviceAuthenticationFailed,
                "\(device.friendlyName) at \(device.host):\(device.port) failed device authentication at "
                    + "\(error.code): \(error.message)",
                cause: error
            )
        } catch {
            // A device known only by its address is named by it: said once.
            let address = "\(device.host):\(device.port)"
            let named = device.friendlyName != address && device.friendlyName != device.host
            let name = named ? "\(device.friendlyName) at \(address)" : address
            throw CastSessionError(.connectFailed, "cannot connect to \(name)", cause: error)
        }
    }
}
