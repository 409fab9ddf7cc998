import CastDiscovery
import CastTransport

/// Why a session was suspended.
public enum SuspendReason: Sendable, Hashable {
    /// The connection dropped (reset, closed, unreachable).
    case networkLost
    /// The device stopped answering heartbeats.
    case heartbeatTimeout
}

/// Session lifecycle events, with GCKSessionManagerListener's meaning.
public enum SessionEvent: Sendable {
    /// A session is about to start with the device.
    case willStart(CastDevice)
    /// The session started (connected and the app launched or joined).
    case didStart(CastSession)
    /// Starting failed.
    case didFailToStart(CastDevice, CastSessionError)
    /// The session is about to end.
    case willEnd(CastSession)
    /// The session ended; `error` is `nil` when it ended because we asked.
    case didEnd(CastSession, CastSessionError?)
    /// The connection was lost; the session reconnects by itself.
    case didSuspend(CastSession, SuspendReason)
    /// Reconnection is being attempted.
    case willResume(CastSession)
    /// The session is connected again. `transferredFrom` is set when it was found on another device than the
    /// one stored (streaming transfer).
    case didResume(CastSession, transferredFrom: CastDevice?)
    /// Resuming failed for good (the session then ends).
    case didFailToResume(CastSession?, CastSessionError)
    /// The device's authentication finished on the session's connection (verified, or failed under
    /// `DeviceAuthPolicy.warn`; `DeviceAuthPolicy.require` refuses to start instead).
    case didAuthenticateDevice(CastSession, DeviceAuthentication)
}

/// Whether casting is possible and happening (GCKCastState).
public enum CastState: Sendable, Hashable {
    /// No device is known.
    case noDevicesAvailable
    /// Devices are known; no session.
    case notConnected
    /// A session is starting or resuming.
    case connecting
    /// A session is connected.
    case connected
}

/// GCKSessionManagerListener for apps that prefer objects to streams. Every method has an empty default.
public protocol SessionManagerListener: AnyObject, Sendable {
    func sessionManager(_ manager: SessionManager, willStartSessionWith device: CastDevice)
    func sessionManager(_ manager: SessionManager, didStart session: CastSession)
    func sessionManager(
        _ manager: SessionManager,
        didFailToStartSessionWith device: CastDevice,
        error: CastSessionError
    )
    func sessionManager(_ manager: SessionManager, willEnd session: CastSession)
    func sessionManager(_ manager: SessionManager, didEnd session: CastSession, error: CastSessionError?)
    func sessionManager(_ manager: SessionManager, didSuspend session: CastSession, reason: SuspendReason)
    func sessionManager(_ manager: SessionManager, willResume session: CastSession)
    func sessionManager(_ manager: SessionManager, didResume session: CastSession)
    func sessionManager(_ manager: SessionManager, didFailToResume session: CastSession?, error: CastSessionError)
    func sessionManager(
        _ manager: SessionManager,
        didAuthenticateDeviceOf session: CastSession,
        result: DeviceAuthentication
    )
}

extension SessionManagerListener {
    /// Does nothing unless the listener implements it.
    public func sessionManager(_ manager: SessionManager, willStartSessionWith device: CastDevice) {}
    /// Does nothing unless the listener implements it.
    public func sessionManager(_ manager: SessionManager, didStart session: CastSession) {}
    /// Does nothing unless the listener implements it.
    public func sessionManager(
        _ manager: SessionManager,
        didFailToStartSessionWith device: CastDevice,
        error: CastSessionError
    ) {}
    /// Does nothing unless the listener implements it.
    public func sessionManager(_ manager: SessionManager, willEnd session: CastSession) {}
    /// Does nothing unless the listener implements it.
    public func sessionManager(_ manager: SessionManager, didEnd session: CastSession, error: CastSessionError?) {}
    /// Does nothing unless the listener implements it.
    public func sessionManager(_ manager: SessionManager, didSuspend session: CastSession, reason: SuspendReason) {}
    /// Does nothing unless the listener implements it.
    public func sessionManager(_ manager: SessionManager, willResume session: CastSession) {}
    /// Does nothing unless the listener implements it.
    public func sessionManager(_ manager: SessionManager, didResume session: CastSession) {}
    /// Does nothing unless the listener implements it.
    public func sessionManager(
        _ manager: SessionManager,
        didFailToResume session: CastSession?,
        error: CastSessionError
    ) {}
    /// Does nothing unless the listener implements it.
    public func sessionManager(
        _ manager: SessionManager,
        didAuthenticateDeviceOf session: CastSession,
        result: DeviceAuthentication
    ) {}
}

extension SessionEvent {
    /// Calls the listener method matching this event.
    func deliver(to listener: any SessionManagerListener, from manager: SessionManager) {
        switch self {
        case .willStart(let device): listener.sessionManager(manager, willStartSessionWith: device)
        case .didStart(let session): listener.sessionManager(manager, didStart: session)
        case .didFailToStart(let device, let error):
            listener.sessionManager(manager, didFailToStartSessionWith: device, error: error)
        case .willEnd(let session): listener.sessionManager(manager, willEnd: session)
        case .didEnd(let session, let error): listener.sessionManager(manager, didEnd: session, error: error)
        case .didSuspend(let session, let reason): listener.sessionManager(manager, didSuspend: session, reason: reason)
        case .willResume(let session): listener.sessionManager(manager, willResume: session)
        case .didResume(let session, _): listener.sessionManager(manager, didResume: session)
        case .didFailToResume(let session, let error):
            listener.sessionManager(manager, didFailToResume: session, error: error)
        case .didAuthenticateDevice(let session, let result):
            listener.sessionManager(manager, didAuthenticateDeviceOf: session, result: result)
        }
    }
}
