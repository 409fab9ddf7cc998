import CastTransport

/// What a sender asked for in one LAUNCH, as the emulator received it (Cast Connect tests read the credentials).
public struct LaunchRecord: Sendable, Hashable {
    /// The requested app id.
    public var appID: String
    /// The `language` field, if sent.
    public var language: String?
    /// The `supportedAppTypes` field, if sent (`WEB`, `ANDROID_TV`).
    public var supportedAppTypes: [String]?
    /// The `appParams` field, if sent.
    public var appParams: JSONValue?
    /// `credentialsData.credentials`, if sent.
    public var credentials: String?
    /// `credentialsData.credentialsType`, if sent.
    public var credentialsType: String?
    /// Whether the launch succeeded.
    public var succeeded: Bool
}

/// A snapshot of the app running on an emulated device.
public struct RunningAppSnapshot: Sendable, Hashable {
    /// The app's id.
    public var appID: String
    /// The application session id.
    public var sessionID: String
    /// The transport id senders address (equal to the session id unless a fault says otherwise).
    public var transportID: String
    /// Whether this is the idle screen.
    public var isIdleScreen: Bool
    /// The LAUNCH that started it (`nil` for the idle screen).
    public var launch: LaunchRecord?
}
