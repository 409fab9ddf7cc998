import CastDiscovery
import CastLogging
@_spi(CastInternal) import CastTransport
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Starts, ends, resumes and tracks sessions (GCKSessionManager). At most one session at a time.
public final class SessionManager: Sendable {
    private struct Listener {
        weak var object: (any SessionManagerListener)?
    }

    private struct State {
        var current: CastSession?
        var isStarting = false
        var castState: CastState
        var listeners: [ObjectIdentifier: Listener] = [:]
        var deviceLocator: (any CastDeviceLocator)?
    }

    /// The options sessions are started with.
    public let options: CastOptions
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let sleep: @Sendable (Duration) async throws -> Void
    private let store: SessionStore?
    private let state: Mutex<State>
    private let eventBroadcaster = EventBroadcaster<SessionEvent>()
    private let castStateBroadcaster = EventBroadcaster<CastState>()

    init(
        options: CastOptions,
        eventLoopGroup: any EventLoopGroup,
        sleep: @escaping @Sendable (Duration) async throws -> Void,
        logger: Logger
    ) {
        self.options = options
        self.eventLoopGroup = eventLoopGroup
        self.sleep = sleep
        self.logger = logger.withCategory(CastLogCategory.session)
        self.store =
            options.resumesSavedSessions
            ? SessionStore(directory: options.stateDirectory ?? SessionStore.defaultDirectory()) : nil
        self.state = Mutex(
            State(castState: options.staticDevices.isEmpty ? .noDevicesAvailable : .notConnected)
        )
    }

    // MARK: - Observing

    /// The running session, if any.
    public var currentSession: CastSession? { state.withLock { $0.current } }

    /// Whether a session is connected (not suspended).
    public var hasConnectedSession: Bool { currentSession?.connectionState == .connected }

    /// The cast state.
    public var castState: CastState { state.withLock { $0.castState } }

    /// Where sessions look a device up before reconnecting: typically the app's `DiscoveryManager`, so that a
    /// session on a speaker group follows the group when its leader (and with it the group's address and port)
    /// moves to another member, as GCK's sessions do. `nil` (the default) reconnects where the device was.
    public var deviceLocator: (any CastDeviceLocator)? {
        get { state.withLock { $0.deviceLocator } }
        set { state.withLock { $0.deviceLocator = newValue } }
    }

    /// A new, independent stream of session events.
    public func events() -> CastEventStream<SessionEvent> { eventBroadcaster.makeStream() }

    /// A new stream of cast-state changes.
    public func castStateUpdates() -> CastEventStream<CastState> { castStateBroadcaster.makeStream() }

    /// Registers a listener object (held weakly) that gets every event as a method call.
    public func addListener(_ listener: any SessionManagerListener) {
        state.withLock { $0.listeners[ObjectIdentifier(listener)] = Listener(object: listener) }
    }

    /// Unregisters a listener.
    public func removeListener(_ listener: any SessionManagerListener) {
        _ = state.withLock { $0.listeners.removeValue(forKey: ObjectIdentifier(listener)) }
    }

    /// Tells the manager whether devices are known (discovery calls this), for ``castState``.
    public func setDevicesAvailable(_ available: Bool) {
        updateCastState { state in
            switch state {
            case .noDevicesAvailable where available: return .notConnected
            case .notConnected where !available: return .noDevicesAvailable
            default: return state
            }
        }
    }

    private func emit(_ event: SessionEvent) {
        switch event {
        case .willStart, .willResume: updateCastState { _ in .connecting }
        case .didStart, .didResume: updateCastState { _ in .connected }
        case .didSuspend: updateCastState { _ in .connecting }
        case .didEnd(let session, _):
            state.withLock { state in if state.current === session { state.current = nil } }
            updateCastState { _ in .notConnected }
        case .didFailToStart: updateCastState { _ in .notConnected }
        case .willEnd, .didFailToResume, .didAuthenticateDevice: break
        }
        eventBroadcaster.yield(event)
        let listeners = state.withLock { $0.listeners.values.compactMap(\.object) }
        for listener in listeners { event.deliver(to: listener, from: self) }
    }

    private func updateCastState(_ change: (CastState) -> CastState) {
        let changed = state.withLock { state -> CastState? in
            let new = change(state.castState)
            guard new != state.castState else { return nil }
            state.castState = new
            return new
        }
        if let changed { castStateBroadcaster.yield(changed) }
    }

    // MARK: - Starting

    /// Starts a session with `device`: connects, launches the receiver app (or joins it when it already runs and
    /// ``LaunchOptions/relaunchIfRunning`` is off), connects to the app and sets up its media client.
    ///
    /// - Throws: ``CastSessionError`` — ``CastSessionError/Code/sessionInProgress``,
    ///   ``CastSessionError/Code/connectFailed``, ``CastSessionError/Code/launchFailed`` (with the receiver's
    ///   reason), ``CastSessionError/Code/timedOut``.
    @discardableResult
    public func startSession(with device: CastDevice) async throws -> CastSession {
        try await start(with: device, mode: .launch)
    }

    /// Joins the session another sender started on `device` (GCK's join): connects to the app the device runs
    /// and, when it plays media, reads its media status — without launching anything and without ending the
    /// other sender's session. Ending the joined session with `stopCasting: false` leaves it playing.
    ///
    /// - Parameters:
    ///   - device: The device another sender casts to.
    ///   - applicationID: Join only this app; `nil` joins whatever runs.
    /// - Throws: ``CastSessionError`` — ``CastSessionError/Code/noApplicationRunning`` (the device is idle, runs
    ///   another app, or only follows its speaker group's playback), ``CastSessionError/Code/sessionInProgress``, ``CastSessionError/Code/connectFailed``,
    ///   ``CastSessionError/Code/timedOut``.
    @discardableResult
    public func joinSession(on device: CastDevice, applicationID: String? = nil) async throws -> CastSession {
        try await start(with: device, mode: .joinRunning(applicationID: applicationID))
    }

    /// Starts (launch or join) with the start events, the current session and the cast state.
    private func start(with device: CastDevice, mode: EstablishMode) async throws -> CastSession {
        try claimStart()
        emit(.willStart(device))
        do {
            let (session, joined) = try await establishRidingThroughDrops(with: device, mode: mode)
            state.withLock { state in
                state.current = session
                state.isStarting = false
            }
            await session.attach(awaitingMediaStatus: joined)
            emit(.didStart(session))
            return session
        } catch {
            state.withLock { $0.isStarting = false }
            let sessionError = Self.sessionError(error)
            emit(.didFailToStart(device, sessionError))
            throw sessionError
        }
    }

    private func claimStart() throws {
        try state.withLock { state in
            guard state.current == nil, !state.isStarting else {
                throw CastSessionError(.sessionInProgress, "a session is already running or starting; end it first")
            }
            state.isStarting = true
        }
    }

    /// How long session start waits for a static device's `DEVICE_INFO` after its status: not at all. A device
    /// that answers does so before the status (it was asked first), and one that does not must not slow every
    /// command down.
    static let deviceInfoGrace: Duration = .zero

    /// What ``establish(with:mode:)`` does once it knows what the device runs.
    private enum EstablishMode: Equatable {
        /// Launch the options' app (or join it when it runs and relaunching is off).
        case launch
        /// Join the options' app when it runs, else launch it (never relaunch): a retry after a drop.
        case launchOrJoin
        /// Join the session with this id (and app, when known); fail when it no longer runs.
        case resume(sessionID: String, applicationID: String?)
        /// Join whatever app runs (or only `applicationID`); fail when the device is idle.
        case joinRunning(applicationID: String?)

        /// Whether it may launch an app: a start that only joins has no launch to wait for.
        var mayLaunch: Bool { self == .launch || self == .launchOrJoin }
    }

    /// ``establish(with:mode:)``, carried through connections that drop after they were made (as Wi-Fi does):
    /// connects again with the reconnect policy's backoff, within the connect and launch timeouts together. A
    /// LAUNCH the receiver may have accepted before the drop is not repeated: the next attempt joins the app
    /// if it runs (never relaunches). A device that cannot be reached at all fails at once.
    ///
    /// It runs on the event loop its connections use: each reply resumes it in the turn of the loop that read it,
    /// instead of waking a thread of the global executor, which then wakes the loop again to write the next
    /// request (two thread hops per round trip, five round trips to a session).
    private func establishRidingThroughDrops(with device: CastDevice, mode: EstablishMode) async throws
        -> (session: CastSession, joined: Bool)
    {
        let eventLoop = eventLoopGroup.next()
        return try await withTaskExecutorPreference(EventLoopTaskExecutor(eventLoop)) {
            try await establishRidingThroughDrops(with: device, mode: mode, on: eventLoop)
        }
    }

    private func establishRidingThroughDrops(with device: CastDevice, mode: EstablishMode, on eventLoop: any EventLoop)
        async throws -> (session: CastSession, joined: Bool)
    {
        let policy = options.reconnectPolicy
        let started = ContinuousClock.now
        var mode = mode
        var failures = 0
        while true {
            do {
                return try await establish(with: device, mode: mode, on: eventLoop)
            } catch {
                let error = Self.sessionError(error)
                failures += 1
                // A connection lost midway may be retried within the connect and launch timeouts (a join's
                // request timeout: it launches nothing); a device that does not answer at all (a link that is down)
                // within the connect timeout; a refusal never.
                let deadline: ContinuousClock.Instant
                switch error.code {
                case .connectionLost:
                    deadline =
                        started + options.connectTimeout
                        + (mode.mayLaunch ? options.launchTimeout : options.requestTimeout)
                case .connectFailed where Self.mayPass(error): deadline = started + options.connectTimeout
                default: throw error
                }
                guard policy.allowsAttempt(afterFailedAttempts: failures) else { throw error }
                let delay = policy.delay(afterFailedAttempts: failures - 1, random: Double.random(in: 0..<1))
                guard ContinuousClock.now + delay < deadline else { throw error }
                logger.debug(
                    "the connection dropped while starting; connecting again",
                    metadata: ["cast.attempt": "\(failures)", "cast.error": "\(error)"]
                )
                try await sleep(delay)
                if case .launch = mode { mode = .launchOrJoin }
            }
        }
    }

    /// Whether a failed connect may succeed a moment later: no answer at TCP level, not a refusal and not a peer
    /// that answered with something other than TLS.
    static func mayPass(_ error: CastSessionError) -> Bool {
        var cause = error.cause
        while let current = cause {
            if let transport = current as? CastTransportError {
                return transport.code == .connectFailed && !transport.isRefusal
            }
            cause = (current as? CastSessionError)?.cause
        }
        return false
    }

    /// Connects on `eventLoop`, then launches or joins as `mode` says; `joined` tells whether the app already ran
    /// (and may play).
    private func establish(with device: CastDevice, mode: EstablishMode, on eventLoop: any EventLoop) async throws
        -> (session: CastSession, joined: Bool)
    {
        let connection = try await options.connect(to: device, eventLoopGroup: eventLoop, logger: logger)
        do {
            try await connection.openVirtualConnection(to: CastEndpoint.receiver)
            let watcher = connection.messages()
            // Known only by address: the device's own name, model and capabilities, if it answers at once.
            var device = device
            let (json, info) = try await DeviceInfo.ask(
                connection,
                describing: device.isStatic,
                grace: Self.deviceInfoGrace
            )
            let status = DeviceStatus(json: json)
            if let info { device.apply(info) }
            var application: ApplicationMetadata
            var finalStatus = status
            var joined = true
            if case .resume(let sessionID, let joiningApplicationID) = mode {
                guard let running = status.application(sessionID: sessionID, applicationID: joiningApplicationID),
                    !running.isIdleScreen
                else {
                    throw CastSessionError(
                        .sessionNotFound,
                        "\(device.friendlyName) no longer runs session \(sessionID)"
                    )
                }
                application = running
            } else if case .joinRunning(let wanted) = mode {
                guard let running = status.runningApplication else {
                    throw CastSessionError(.noApplicationRunning, "\(device.friendlyName) is idle: no app is running")
                }
                if let wanted {
                    guard let listed = status.application(applicationID: wanted), !listed.isIdleScreen else {
                        throw CastSessionError(
                            .noApplicationRunning,
                            "\(device.friendlyName) runs \(running.displayName), not \(wanted)"
                        )
                    }
                    application = listed
                } else {
                    // A member's part in its group's playback is no app to join: the group plays, the member
                    // follows it (its follower app lists no namespaces, so waiting for them would time out).
                    guard running.groupRole != .follower else {
                        throw CastSessionError(
                            .noApplicationRunning,
                            "\(device.friendlyName) only follows its speaker group's playback (the group's session "
                                + "is the one to control)"
                        )
                    }
                    application = running
                }
            } else if let running = status.application(applicationID: options.receiverApplicationID),
                !running.isIdleScreen, !options.launchOptions.relaunchIfRunning || mode == .launchOrJoin
            {
                application = running
            } else {
                if let running = status.application(applicationID: options.receiverApplicationID), !running.isIdleScreen
                {
                    // Relaunch: end the running instance first, so LAUNCH starts a new session instead of joining.
                    let stopped = running.sessionID
                    _ = try await connection.receiverRequest(
                        ["type": "STOP", "sessionId": .string(stopped)],
                        timeout: nil,
                        answeredBy: { $0.application(sessionID: stopped) == nil }
                    )
                }
                joined = false
                (application, finalStatus) = try await launch(
                    on: connection,
                    watching: watcher,
                    previous: status.application(applicationID: options.receiverApplicationID)
                )
            }
            if joined, !application.isListedWhole {
                // Joined an app still starting (a LAUNCH whose reply the drop took, say): it is reachable once the
                // device lists its transport id and namespaces.
                finalStatus = DeviceStatus(
                    json: try await listedWhole(
                        sessionID: application.sessionID,
                        watching: watcher,
                        timeout: mode.mayLaunch ? options.launchTimeout : options.requestTimeout
                    )
                )
                application = finalStatus.application(sessionID: application.sessionID) ?? application
            }
            try await connection.openVirtualConnection(to: application.transportID)
            let session = CastSession(
                device: device,
                application: application,
                connection: connection,
                deviceStatus: finalStatus,
                options: options,
                store: store,
                locator: deviceLocator,
                sleep: sleep,
                logger: logger,
                emit: { [weak self] event in self?.emit(event) }
            )
            return (session, joined)
        } catch {
            await connection.close()
            throw error
        }
    }

    /// LAUNCH, accepting either the reply or (a real-device quirk) a requestId-0 RECEIVER_STATUS showing the app.
    private func launch(
        on connection: CastConnection,
        watching watcher: CastEventStream<CastMessage>,
        previous: ApplicationMetadata?
    ) async throws -> (ApplicationMetadata, DeviceStatus) {
        let appID = options.receiverApplicationID
        var payload: JSONValue = ["type": "LAUNCH", "appId": .string(appID)]
        if let language = options.launchOptions.language { payload["language"] = .string(language) }
        payload["supportedAppTypes"] =
            options.launchOptions.androidReceiverCompatible ? ["WEB", "ANDROID_TV"] : ["WEB"]
        if let parameters = options.launchOptions.appParameters { payload["appParams"] = parameters }
        if let credentials = options.launchCredentials { payload["credentialsData"] = credentials.json }
        let previousSession = previous?.sessionID
        let timeout = options.launchTimeout
        let deadline = ContinuousClock.now + timeout
        let request = payload
        let reply: JSONValue = try await withThrowingTaskGroup(of: JSONValue?.self) { group in
            group.addTask {
                try await connection.request(
                    namespace: CastNamespace.receiver,
                    to: CastEndpoint.receiver,
                    payload: request,
                    timeout: timeout
                ).json()
            }
            group.addTask {
                for await message in watcher where message.namespace == CastNamespace.receiver {
                    guard let json = try? message.json(), json["type"]?.stringValue == "RECEIVER_STATUS",
                        DeviceStatus(json: json).applications.contains(where: {
                            $0.applicationID == appID && $0.sessionID != previousSession && $0.isListedWhole
                        })
                    else { continue }
                    return json
                }
                throw CancellationError()
            }
            defer { group.cancelAll() }
            while let answer = try await group.next() {
                guard let answer else {
                    throw CastSessionError(
                        .launchFailed,
                        "the receiver started \(appID) but did not list its transport id and namespaces in time"
                    )
                }
                // A reply showing the app before it lists how to reach it: wait for a status that does (as
                // Chrome, which takes a session without namespaces for an invalid one), within the launch timeout.
                if answer["type"]?.stringValue == "RECEIVER_STATUS",
                    let app = Self.launched(appID, in: DeviceStatus(json: answer), after: previousSession),
                    !app.isListedWhole
                {
                    logger.debug("the launched app is not listed whole yet; waiting for its status")
                    group.addTask {
                        try await Task.sleep(until: deadline)
                        return nil
                    }
                    continue
                }
                return answer
            }
            throw CastSessionError(.connectionLost, "the connection closed during LAUNCH")
        }
        switch reply["type"]?.stringValue {
        case "RECEIVER_STATUS":
            let status = DeviceStatus(json: reply)
            guard let app = Self.launched(appID, in: status, after: previousSession) else {
                throw CastSessionError(.launchFailed, "the receiver did not start \(appID)")
            }
            return (app, status)
        case "LAUNCH_ERROR":
            let reason = reply["reason"]?.stringValue
            throw CastSessionError(.launchFailed, "the receiver could not launch \(appID)", receiverReason: reason)
        default:
            throw CastSessionError(
                .launchFailed,
                "unexpected answer to LAUNCH: \(reply["type"]?.stringValue ?? "none")",
                receiverReason: reply["reason"]?.stringValue
            )
        }
    }

    /// The app of `appID` a status lists after a LAUNCH: the instance that is not `previousSession` (the one a
    /// relaunch stopped) if the device lists one, else the one it lists — whatever else it lists beside or
    /// before it (a group member's part in its group's playback, the idle screen).
    static func launched(_ appID: String, in status: DeviceStatus, after previousSession: String?)
        -> ApplicationMetadata?
    {
        status.applications.first { $0.applicationID == appID && $0.sessionID != previousSession }
            ?? status.application(applicationID: appID)
    }

    /// The status that lists the app of `sessionID` whole (``ApplicationMetadata/isListedWhole``), from the
    /// device's next broadcasts, within `timeout`: an app still starting is listed without its transport id or
    /// namespaces.
    ///
    /// - Throws: ``CastSessionError`` — `.launchFailed` when the app is not listed whole in time, `.connectionLost`
    ///   when the connection ends first.
    private func listedWhole(
        sessionID: String,
        watching watcher: CastEventStream<CastMessage>,
        timeout: Duration
    ) async throws -> JSONValue {
        logger.debug("the running app is not listed whole yet; waiting for its status")
        return try await withThrowingTaskGroup(of: JSONValue?.self) { group in
            group.addTask {
                for await message in watcher where message.namespace == CastNamespace.receiver {
                    guard let json = try? message.json(), json["type"]?.stringValue == "RECEIVER_STATUS",
                        DeviceStatus(json: json).application(sessionID: sessionID)?.isListedWhole == true
                    else { continue }
                    return json
                }
                throw CastSessionError(.connectionLost, "the connection closed while the app was starting")
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let answer = try await group.next(), let json = answer else {
                throw CastSessionError(
                    .launchFailed,
                    "the running app did not list its transport id and namespaces within \(timeout)"
                )
            }
            return json
        }
    }

    static func sessionError(_ error: any Error) -> CastSessionError {
        if let error = error as? CastSessionError { return error }
        if let error = error as? CastTransportError {
            switch error.code {
            case .requestTimedOut: return CastSessionError(.timedOut, error.message, cause: error)
            case .connectFailed, .tlsHandshakeFailed, .notTLS:
                return CastSessionError(.connectFailed, error.message, cause: error)
            default: return CastSessionError(.connectionLost, error.message, cause: error)
            }
        }
        if error is CancellationError { return CastSessionError(.cancelled, "cancelled") }
        return CastSessionError(.connectionLost, "\(error)", cause: error)
    }

    // MARK: - Ending

    /// Ends the current session. With `stopCasting` the receiver app is stopped too (and the saved session
    /// forgotten); otherwise the app keeps running and another process can resume it.
    public func endSession(stopCasting: Bool? = nil) async {
        guard let session = currentSession else { return }
        await session.finish(
            stopApplication: stopCasting ?? options.stopsReceiverApplicationWhenEndingSession,
            error: nil
        )
    }

    // MARK: - Resuming saved sessions

    /// The session a previous process stored most recently, if any.
    public func savedSession() throws -> SavedSession? { try store?.load() }

    /// Every stored session (one per device), the most recently stored first.
    public func savedSessions() throws -> [SavedSession] { try store?.loadAll() ?? [] }

    /// Joins a session a previous process stored, if the receiver still runs it.
    ///
    /// Sessions are stored when they start and again on every resume, so "most recent" is the one used last.
    /// Without `candidates`, the most recently stored session is resumed on its device. With `candidates` (the
    /// devices the user named), only they are tried: a session stored for one of them first; otherwise the most
    /// recent session, in case it moved to one of them (a streaming transfer: the candidate runs the same session
    /// id, and ``SessionEvent/didResume(_:transferredFrom:)`` names the old device). A session stored for another
    /// device is never resumed on its own device here, and stays stored for a later call that names it.
    ///
    /// - Throws: ``CastSessionError`` — ``CastSessionError/Code/sessionNotFound`` (nothing stored for these
    ///   devices, or the session ended; a stored session its own device no longer runs is then forgotten),
    ///   ``CastSessionError/Code/connectFailed``.
    @discardableResult
    public func resumeSavedSession(candidates: [CastDevice] = []) async throws -> CastSession {
        guard let store else {
            throw CastSessionError(.sessionNotFound, "there is no saved session to resume")
        }
        let saved = try store.loadAll()
        // Each session on its own device first, then on the other candidates (where it may have moved).
        var attempts: [(saved: SavedSession, device: CastDevice)] = []
        if candidates.isEmpty {
            if let latest = saved.first { attempts = [(latest, latest.device)] }
        } else {
            let own = saved.filter { entry in candidates.contains { entry.belongs(to: $0) } }
            for entry in own.isEmpty ? Array(saved.prefix(1)) : own {
                let (home, others) = (
                    candidates.filter { entry.belongs(to: $0) }, candidates.filter { !entry.belongs(to: $0) }
                )
                attempts += (home + others).map { (entry, $0) }
            }
        }
        guard !attempts.isEmpty else {
            let named = candidates.map(\.friendlyName).joined(separator: ", ")
            throw CastSessionError(
                .sessionNotFound,
                saved.isEmpty ? "there is no saved session to resume" : "there is no saved session on \(named)"
            )
        }
        try claimStart()
        updateCastState { _ in .connecting }
        var lastError: CastSessionError?
        for (entry, device) in attempts {
            let isOwnDevice = entry.belongs(to: device)
            do {
                let (session, _) = try await establishRidingThroughDrops(
                    with: device,
                    mode: .resume(sessionID: entry.sessionID, applicationID: entry.applicationID)
                )
                state.withLock { state in
                    state.current = session
                    state.isStarting = false
                }
                if !isOwnDevice { store.clear(deviceID: entry.deviceID) }
                emit(.willResume(session))
                await session.attach(awaitingMediaStatus: true)
                emit(.didResume(session, transferredFrom: isOwnDevice ? nil : entry.device))
                return session
            } catch {
                let error = Self.sessionError(error)
                // Only the session's own device can say that the session is over.
                if error.code == .sessionNotFound, isOwnDevice { store.clear(deviceID: entry.deviceID) }
                lastError = error
            }
        }
        state.withLock { $0.isStarting = false }
        let error = lastError ?? CastSessionError(.sessionNotFound, "the saved session was not found")
        emit(.didFailToResume(nil, error))
        throw error
    }
}
