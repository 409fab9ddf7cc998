import CastDiscovery
import CastLogging
import CastMedia
@_spi(CastInternal) import CastTransport
import Logging
import NIOCore
import Synchronization

/// A session with a receiver app on one device (GCKCastSession): the connection, the app, its media client,
/// custom channels and device controls.
///
/// Sessions come from ``SessionManager``. A session survives connection loss: it is suspended, reconnects with
/// the context's ``ReconnectPolicy``, re-opens its virtual connections, re-attaches channels, re-fetches
/// receiver and media status, and resumes — or ends if the app is gone.
public final class CastSession: Sendable {
    /// The executor of the event loop the session's connection runs on. A task that awaits the session's requests
    /// with it as its preference (`withTaskExecutorPreference(session.executor) { … }`) runs a round trip on that
    /// one thread: no other thread wakes for the request or its reply. Such a task must not block.
    public var executor: any TaskExecutor { connection.taskExecutor }
    /// Where the session is in its life.
    public enum ConnectionState: Sendable, Hashable {
        case connected, suspended, disconnected
    }

    struct State {
        var device: CastDevice
        var connectionState = ConnectionState.connected
        var application: ApplicationMetadata
        var deviceStatus: DeviceStatus?
        var channels: [String: CastChannel] = [:]
        var resumeWaiters: [Int: CheckedContinuation<Bool, Never>] = [:]
        var nextWaiterID = 0
        /// The background work running now, by id (see ``BackgroundWork``); `nil` once the session ended.
        var backgroundWork: [Int: Task<Void, Never>]? = [:]
        var nextWorkID = 0
        var messageHandler: Int?
        var eventHandler: Int?
        var isEnding = false
        /// Why the session ended, when it did on its own (the app stopped, reconnecting failed).
        var endError: CastSessionError?
        /// Whether ending finished (``SessionEvent/didEnd(_:_:)`` sent), and who waits for it meanwhile.
        var hasEnded = false
        var endWaiters: [CheckedContinuation<Void, Never>] = []
        var reportedAuthentication: DeviceAuthentication?
        var multizoneStatus: MultizoneStatus?
    }

    /// The session's options (from its context).
    public let options: CastOptions
    /// The media client, when the app serves the media namespace.
    public let remoteMediaClient: RemoteMediaClient?
    let connection: CastConnection
    let state: Mutex<State>
    let logger: Logger
    let sleep: @Sendable (Duration) async throws -> Void
    let emit: @Sendable (SessionEvent) -> Void
    let store: SessionStore?
    private let deviceStatusBroadcaster = EventBroadcaster<DeviceStatus>()
    private let stateBroadcaster = EventBroadcaster<ConnectionState>()
    let multizoneBroadcaster = EventBroadcaster<MultizoneEvent>()
    /// Where the device is now, asked before each reconnect attempt (a speaker group moves with its leader).
    let locator: (any CastDeviceLocator)?

    /// What the session does in the background besides following its connection. Each runs in a task of its own
    /// that exists only while it runs (an idle session parks no task), and ending the session cancels every one
    /// of them: a reconnection's backoff, a group's member query. Nothing outlives the session.
    enum BackgroundWork: Sendable {
        /// Suspend and reconnect (the connection dropped).
        case suspend(SuspendReason)
        /// End the session (another sender stopped or replaced the app).
        case finish(CastSessionError)
        /// Ask a speaker group for its members.
        case refreshMultizone
        /// Follow our app to the transport id a later status gives it (pychromecast does too).
        case follow(ApplicationMetadata)
    }

    init(
        device: CastDevice,
        application: ApplicationMetadata,
        connection: CastConnection,
        deviceStatus: DeviceStatus?,
        options: CastOptions,
        store: SessionStore?,
        locator: (any CastDeviceLocator)? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void,
        logger: Logger,
        emit: @escaping @Sendable (SessionEvent) -> Void
    ) {
        self.options = options
        self.locator = locator
        self.connection = connection
        self.store = store
        self.sleep = sleep
        self.emit = emit
        self.logger = logger.withCategory(CastLogCategory.session).withMetadata([
            CastLogMetadataKey.sessionID: "\(application.sessionID)",
            CastLogMetadataKey.deviceID: "\(device.id)",
        ])
        self.state = Mutex(State(device: device, application: application, deviceStatus: deviceStatus))
        let box = SessionBox()
        if application.playsMedia {
            remoteMediaClient = RemoteMediaClient(
                channel: SessionMediaChannel(
                    connection: connection,
                    transportID: application.transportID,
                    options: options,
                    box: box
                ),
                requestTimeout: options.requestTimeout,
                logger: logger
            )
        } else {
            remoteMediaClient = nil
        }
        box.session = self
    }

    // MARK: - Identity

    /// The device the session runs on (it changes after a streaming transfer).
    public var device: CastDevice { state.withLock { $0.device } }
    /// The running app.
    public var application: ApplicationMetadata { state.withLock { $0.application } }
    /// The application session id.
    public var sessionID: String { state.withLock { $0.application.sessionID } }
    /// The app's transport id (it may move while the session runs, when a status gives the app another one).
    public var transportID: String { state.withLock { $0.application.transportID } }
    /// Where the session is in its life.
    public var connectionState: ConnectionState { state.withLock { $0.connectionState } }
    /// A new stream of connection-state changes.
    public func connectionStateUpdates() -> CastEventStream<ConnectionState> { stateBroadcaster.makeStream() }
    /// Whether the device proved it is a genuine Cast device on the current connection (see
    /// ``CastOptions/deviceAuth``); each result also comes as ``SessionEvent/didAuthenticateDevice(_:_:)``.
    public var deviceAuthentication: DeviceAuthentication { connection.deviceAuthentication }

    // MARK: - Attaching

    /// Starts following the connection, asks for media status and connects channels. With `awaitingMediaStatus`
    /// (a join of an app that already ran), returns once the app answered with its media status (or failed to,
    /// within the request timeout), so that a joined session shows what plays from its first moment.
    func attach(awaitingMediaStatus: Bool) async {
        // Messages and events are handled as they happen, on the thread that reads or reports them: no task waits
        // for them (with thousands of sessions, parked tasks would be most of an idle session's memory).
        let messageHandler = connection.addMessageHandler { [weak self] message in self?.handle(message) }
        let eventHandler = connection.addEventHandler { [weak self] event in self?.handle(event) }
        state.withLock { state in
            state.messageHandler = messageHandler
            state.eventHandler = eventHandler
        }
        // A drop between the session's start and the subscription above came as an event nobody read.
        if !connection.isConnected, let code = connection.lastDropCode {
            startInBackground(.suspend(code == .heartbeatTimeout ? .heartbeatTimeout : .networkLost))
        }
        reportDeviceAuthentication(connection.deviceAuthentication)
        connectChannels()
        refreshMultizoneStatus()
        let status = remoteMediaClient?.requestStatus()
        persist()
        if awaitingMediaStatus, let status {
            do { try await status.response() } catch {
                logger.debug("the joined app did not tell its media status", metadata: ["cast.error": "\(error)"])
            }
        }
    }

    private func handle(_ message: CastMessage) {
        let transportID = self.transportID
        if message.namespace == CastNamespace.receiver, message.sourceID == CastEndpoint.receiver {
            guard let json = try? message.json(), json["type"]?.stringValue == "RECEIVER_STATUS" else { return }
            let status = DeviceStatus(json: json)
            state.withLock { $0.deviceStatus = status }
            deviceStatusBroadcaster.yield(status)
            let ours = status.application(sessionID: sessionID)
            if ours == nil, connectionState == .connected {
                // Someone else stopped or replaced our app.
                startInBackground(.finish(CastSessionError(.appStopped, "the receiver app is no longer running")))
            } else if let app = ours, Self.moved(application, to: app) {
                startInBackground(.follow(app))
            }
            return
        }
        if message.namespace == CastNamespace.multizone, message.sourceID == CastEndpoint.receiver {
            receiveMultizone(message)
            return
        }
        guard message.sourceID == transportID || message.sourceID == CastEndpoint.broadcast else { return }
        if message.namespace == CastNamespace.media {
            if let json = try? message.json() { remoteMediaClient?.receive(json) }
            return
        }
        let channel = state.withLock { $0.channels[message.namespace] }
        channel?.deliver(message.payload)
    }

    /// Emits a finished authentication result once (the connection's event and the value read at attach may
    /// report the same one).
    private func reportDeviceAuthentication(_ result: DeviceAuthentication) {
        switch result {
        case .pending, .notAttempted: return
        case .verified, .failed: break
        }
        let isNew = state.withLock { state -> Bool in
            defer { state.reportedAuthentication = result }
            return state.reportedAuthentication != result
        }
        if isNew { emit(.didAuthenticateDevice(self, result)) }
    }

    private func handle(_ event: CastConnectionEvent) {
        switch event {
        case .connected:
            break
        case .deviceAuthenticated(let result):
            reportDeviceAuthentication(result)
        case .virtualConnectionClosed(let endpoint):
            if endpoint == transportID {
                startInBackground(
                    .finish(CastSessionError(.appStopped, "the receiver app closed the connection (it stopped)"))
                )
            }
        case .disconnected(let code):
            // A drop of an earlier transport is stale once the connection is back up (suspend checks again).
            guard let code, !connection.isConnected else { return }
            startInBackground(.suspend(code == .heartbeatTimeout ? .heartbeatTimeout : .networkLost))
        }
    }

    /// Runs `work` in a task of its own, on the connection's event loop; nothing happens once the session ended.
    func startInBackground(_ work: BackgroundWork) {
        state.withLock { state in
            guard state.backgroundWork != nil else { return }
            let id = state.nextWorkID
            state.nextWorkID += 1
            state.backgroundWork?[id] = Task(executorPreference: connection.taskExecutor) { [weak self] in
                await self?.perform(work)
                _ = self?.state.withLock { $0.backgroundWork?.removeValue(forKey: id) }
            }
        }
    }

    private func perform(_ work: BackgroundWork) async {
        switch work {
        case .suspend(let reason): await suspend(reason: reason)
        case .finish(let error): await finish(error: error)
        case .refreshMultizone: _ = try? await requestMultizoneStatus()
        case .follow(let app): await follow(app)
        }
    }

    /// Whether `app`, a later status of our app, reaches it elsewhere: another transport id (with namespaces,
    /// so not a status that lists the app before it is whole).
    static func moved(_ current: ApplicationMetadata, to app: ApplicationMetadata) -> Bool {
        app.sessionID == current.sessionID && app.transportID != current.transportID && !app.namespaces.isEmpty
    }

    /// Follows our app to its new transport id: a virtual connection there, the channels and the media client
    /// addressed to it, the saved session updated, and the media status read again.
    private func follow(_ app: ApplicationMetadata) async {
        guard Self.moved(application, to: app) else { return }
        // Connected there before anything is addressed there.
        try? await connection.openVirtualConnection(to: app.transportID)
        let previous = state.withLock { state -> ApplicationMetadata? in
            guard Self.moved(state.application, to: app) else { return nil }
            defer { state.application = app }
            return state.application
        }
        guard let previous else { return }
        logger.debug(
            "the app moved to another transport id",
            metadata: ["cast.from": "\(previous.transportID)", "cast.to": "\(app.transportID)"]
        )
        try? await connection.closeVirtualConnection(to: previous.transportID)
        connectChannels()
        persist()
        _ = try? await remoteMediaClient?.requestStatus().response()
    }

    // MARK: - Suspension and resumption

    private func suspend(reason: SuspendReason) async {
        // A drop reported twice (its event, and the check at attach) suspends once; one from before a completed
        // reconnection is stale.
        guard !connection.isConnected else { return }
        let proceed = state.withLock { state -> Bool in
            guard state.connectionState == .connected, !state.isEnding else { return false }
            state.connectionState = .suspended
            return true
        }
        guard proceed else { return }
        logger.debug("suspended", metadata: ["cast.reason": "\(reason)"])
        stateBroadcaster.yield(.suspended)
        disconnectChannels()
        emit(.didSuspend(self, reason))
        emit(.willResume(self))
        let policy = options.reconnectPolicy
        var failures = 0
        var lastError: (any Error)?
        while policy.allowsAttempt(afterFailedAttempts: failures) {
            if state.withLock({ $0.isEnding }) { return }
            do {
                try await sleep(policy.delay(afterFailedAttempts: failures, random: Double.random(in: 0..<1)))
                try await reconnectToCurrentRecord()
                let status = try await fetchDeviceStatusNow()
                guard status.application(sessionID: sessionID) != nil else {
                    await finish(
                        error: CastSessionError(.appStopped, "the app stopped while the session was suspended")
                    )
                    return
                }
                resumed(status: status)
                return
            } catch is CancellationError {
                return
            } catch {
                failures += 1
                lastError = error
                logger.debug(
                    "reconnect attempt failed",
                    metadata: ["cast.attempt": "\(failures)", "cast.error": "\(error)"]
                )
            }
        }
        let error = CastSessionError(
            .resumeFailed,
            "could not reconnect to \(device.friendlyName) after \(failures) attempts",
            cause: lastError
        )
        emit(.didFailToResume(self, error))
        await finish(error: error)
    }

    /// Reconnects where the device is now: where the locator's latest record puts it (a speaker group's new
    /// leader), else where it was.
    private func reconnectToCurrentRecord() async throws {
        guard let moved = try await connection.reconnect(to: device, locatedBy: locator) else { return }
        logger.debug("the device moved", metadata: ["cast.peer": "\(moved.host):\(moved.port)"])
        state.withLock { $0.device = moved }
    }

    private func resumed(status: DeviceStatus, transferredFrom: CastDevice? = nil) {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.connectionState = .connected
            state.deviceStatus = status
            defer { state.resumeWaiters = [:] }
            return Array(state.resumeWaiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
        stateBroadcaster.yield(.connected)
        deviceStatusBroadcaster.yield(status)
        connectChannels()
        refreshMultizoneStatus()
        remoteMediaClient?.requestStatus()
        persist()
        logger.debug("resumed")
        emit(.didResume(self, transferredFrom: transferredFrom))
    }

    /// Moves the session to another device that runs the same session (streaming transfer on resume).
    func transfer(to device: CastDevice) {
        state.withLock { $0.device = device }
    }

    /// Waits until the session is connected again; `false` if it ended instead, or at `deadline`.
    func waitUntilResumed(deadline: ContinuousClock.Instant) async -> Bool {
        let id = state.withLock { state -> Int in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        // A real deadline, not the injected backoff sleep: request timeouts are wall-clock limits.
        let timer = Task { [weak self] in
            try? await Task.sleep(until: deadline)
            self?.cancelWaiter(id)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now: Bool? = state.withLock { state in
                    switch state.connectionState {
                    case .connected: return true
                    case .disconnected: return false
                    case .suspended:
                        state.resumeWaiters[id] = continuation
                        return nil
                    }
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            self.cancelWaiter(id)
        }
    }

    private func cancelWaiter(_ id: Int) {
        let waiter = state.withLock { $0.resumeWaiters.removeValue(forKey: id) }
        waiter?.resume(returning: false)
    }

    // MARK: - Ending

    /// Ends the session; used by ``SessionManager`` and when the app goes away.
    func finish(stopApplication: Bool = false, error: CastSessionError?) async {
        let (proceed, waiters) = state.withLock { state -> (Bool, [CheckedContinuation<Bool, Never>]) in
            guard !state.isEnding else { return (false, []) }
            state.isEnding = true
            defer { state.resumeWaiters = [:] }
            return (true, Array(state.resumeWaiters.values))
        }
        guard proceed else {
            // Ending already (the session saw its app stop, say): returns once that is done too.
            await withCheckedContinuation { continuation in
                let ended = state.withLock { state -> Bool in
                    if !state.hasEnded { state.endWaiters.append(continuation) }
                    return state.hasEnded
                }
                if ended { continuation.resume() }
            }
            return
        }
        state.withLock { $0.endError = error }
        emit(.willEnd(self))
        let sessionID = self.sessionID
        if stopApplication, connectionState == .connected,
            let json = try? await connection.receiverRequest(
                ["type": "STOP", "sessionId": .string(sessionID)],
                timeout: options.requestTimeout,
                answeredBy: { $0.application(sessionID: sessionID) == nil }
            ), json["type"]?.stringValue == "RECEIVER_STATUS"
        {
            // The receiver's answer to STOP is the session's last word on the device: its app is gone.
            let status = DeviceStatus(json: json)
            state.withLock { $0.deviceStatus = status }
            deviceStatusBroadcaster.yield(status)
        }
        state.withLock { $0.connectionState = .disconnected }
        for waiter in waiters { waiter.resume(returning: false) }
        disconnectChannels()
        remoteMediaClient?.reset()
        await connection.close()
        // Ends the background work too (this may be part of it: it has nothing left to await).
        let (work, handlers) = state.withLock { state in
            defer { state.backgroundWork = nil }
            return (state.backgroundWork ?? [:], (state.messageHandler, state.eventHandler))
        }
        for task in work.values { task.cancel() }
        if let messageHandler = handlers.0 { connection.removeMessageHandler(messageHandler) }
        if let eventHandler = handlers.1 { connection.removeEventHandler(eventHandler) }
        if stopApplication || error?.code == .appStopped { store?.clear(deviceID: device.id) }
        stateBroadcaster.yield(.disconnected)
        logger.debug("ended")
        emit(.didEnd(self, error))
        deviceStatusBroadcaster.finish()
        stateBroadcaster.finish()
        multizoneBroadcaster.finish()
        let endWaiters = state.withLock { state in
            state.hasEnded = true
            defer { state.endWaiters = [] }
            return state.endWaiters
        }
        for waiter in endWaiters { waiter.resume() }
    }

    private func persist() {
        guard let store else { return }
        let device = self.device
        let app = application
        do {
            try store.save(
                SavedSession(
                    deviceID: device.id,
                    deviceName: device.friendlyName,
                    host: connection.host,
                    port: connection.port,
                    applicationID: app.applicationID,
                    sessionID: app.sessionID,
                    transportID: app.transportID
                )
            )
        } catch {
            logger.warning("cannot store the session for later resumption", metadata: ["cast.error": "\(error)"])
        }
    }

    // MARK: - Device controls

    /// The latest receiver status.
    public var deviceStatus: DeviceStatus? { state.withLock { $0.deviceStatus } }

    /// A new stream of receiver status updates (volume, mute, standby, input, running app).
    public func deviceStatusUpdates() -> CastEventStream<DeviceStatus> { deviceStatusBroadcaster.makeStream() }

    /// Sets the device volume, 0…1.
    ///
    /// - Throws: ``CastSessionError`` — `.notSupported` on a device whose volume is fixed (not sent: the device
    ///   would ignore or refuse it), `.refused` when the receiver refuses it, `.invalidArgument` for a level
    ///   outside 0…1.
    public func setDeviceVolume(_ level: Double) async throws {
        guard (0...1).contains(level) else {
            throw CastSessionError(.invalidArgument, "volume \(level) is outside 0…1")
        }
        try await volumeCommand(["level": .number(level)])
    }

    /// Mutes or unmutes the device.
    ///
    /// - Throws: ``CastSessionError`` — `.notSupported` on a device whose volume is fixed, `.refused` when the
    ///   receiver refuses it.
    public func setDeviceMuted(_ muted: Bool) async throws {
        try await volumeCommand(["muted": .bool(muted)])
    }

    /// Moves the device volume by `steps` steps of ``CastOptions/volumeStep`` or the receiver's `stepInterval`.
    ///
    /// - Throws: as ``setDeviceVolume(_:)``.
    public func adjustDeviceVolume(bySteps steps: Int) async throws {
        let status = deviceStatus
        try status?.requireSettableVolume(of: device.friendlyName)
        let step = options.volumeStep ?? status?.volumeStepInterval ?? 0.05
        try await setDeviceVolume(try DeviceStatus.level(from: status?.volumeLevel, bySteps: steps, of: step))
    }

    /// Fetches the receiver status now.
    @discardableResult
    public func fetchDeviceStatus() async throws -> DeviceStatus {
        try requireConnected()
        return try await fetchDeviceStatusNow()
    }

    /// GET_STATUS without the connection-state check (the resume path uses it while still suspended).
    private func fetchDeviceStatusNow(timeout: Duration? = nil) async throws -> DeviceStatus {
        let reply = try await receiverRequest(["type": "GET_STATUS"], timeout: timeout) { _ in true }
        let status = DeviceStatus(json: reply)
        state.withLock { $0.deviceStatus = status }
        deviceStatusBroadcaster.yield(status)
        return status
    }

    func requireConnected() throws {
        switch connectionState {
        case .connected: return
        case .suspended: throw CastSessionError(.suspended, "the session is suspended (reconnecting)")
        case .disconnected: throw CastSessionError(.notConnected, "the session has ended")
        }
    }

    /// Sends a device command (SET_VOLUME, STOP) and applies the status that answers it.
    ///
    /// With ``CastOptions/requestsWaitWhileSuspended`` the command rides through a dropped connection until the
    /// request timeout: one that never left is sent again; one that may have reached the device is decided by the
    /// status read after the reconnection — done when it shows `isAnswer`, sent again when `untouched` says the
    /// device still shows the state from before it (compared with `before`, the status when it was first sent),
    /// and not repeated otherwise (another sender changed it meanwhile: sending it again would undo theirs).
    @discardableResult
    private func receiverCommand(
        _ payload: JSONValue,
        answeredBy isAnswer: @escaping @Sendable (DeviceStatus) -> Bool,
        untouched: @escaping @Sendable (_ before: DeviceStatus?, _ after: DeviceStatus) -> Bool
    ) async throws -> DeviceStatus {
        let reply: JSONValue
        if options.requestsWaitWhileSuspended {
            let deadline = ContinuousClock.now + options.requestTimeout
            let before = deviceStatus
            let type = payload["type"]?.stringValue ?? "the command"
            var mayHaveArrived = false
            var attempts = 1
            while true {
                guard await waitForReconnection(deadline: deadline) else {
                    if connectionState == .disconnected {
                        throw CastSessionError(
                            .notConnected,
                            "the session has ended",
                            cause: state.withLock { $0.endError }
                        )
                    }
                    throw CastSessionError(.timedOut, "the session did not reconnect in time")
                }
                do {
                    if mayHaveArrived {
                        let after = try await fetchDeviceStatusNow(timeout: deadline - ContinuousClock.now)
                        if isAnswer(after) { return after }
                        guard untouched(before, after) else {
                            throw CastSessionError(
                                .connectionLost,
                                "the connection dropped before the device answered \(type), and its status changed "
                                    + "otherwise meanwhile (another sender?); it was not sent again"
                            )
                        }
                    }
                    reply = try await receiverRequest(
                        payload,
                        timeout: deadline - ContinuousClock.now,
                        answeredBy: isAnswer
                    )
                    break
                } catch let error as CastSessionError
                    where error.isConnectionLoss && attempts < Self.rideThroughAttempts
                {
                    if (error.cause as? CastTransportError)?.code == .connectionClosed { mayHaveArrived = true }
                    attempts += 1
                    continue
                }
            }
        } else {
            try requireConnected()
            reply = try await receiverRequest(payload, answeredBy: isAnswer)
        }
        let status = try DeviceStatus(commandReply: reply, to: payload["type"]?.stringValue ?? "the command")
        state.withLock { $0.deviceStatus = status }
        deviceStatusBroadcaster.yield(status)
        return status
    }

    /// SET_VOLUME with `volume` (a level, a mute state or both), ridden through drops as
    /// ``receiverCommand(_:answeredBy:untouched:)`` does.
    private func volumeCommand(_ volume: JSONValue) async throws {
        try deviceStatus?.requireSettableVolume(of: device.friendlyName)
        let payload: JSONValue = ["type": "SET_VOLUME", "volume": volume]
        try await receiverCommand(
            payload,
            answeredBy: DeviceStatus.showsVolume(of: payload),
            untouched: DeviceStatus.leavesVolumeAsItWas(for: payload)
        )
    }

    /// Stops the receiver app (STOP) and ends the session.
    ///
    /// Unlike ``SessionManager/endSession(stopCasting:)``, which ends the session whatever the device answers,
    /// this fails when the app could not be stopped, and with ``CastOptions/requestsWaitWhileSuspended`` rides
    /// through a dropped connection: a STOP that never reached the device is sent again.
    ///
    /// - Throws: ``CastSessionError`` — `.timedOut`, `.connectionLost`, `.notConnected`, or the receiver's refusal
    ///   (`.refused`), also when it answers `INVALID_SESSION_ID` but still lists the app.
    public func stopApplication() async throws {
        let sessionID = self.sessionID
        do {
            try await receiverCommand(
                ["type": "STOP", "sessionId": .string(sessionID)],
                answeredBy: { $0.application(sessionID: sessionID) == nil },
                untouched: { _, _ in true }  // the app still runs: nobody else restarts our session id
            )
        } catch let error as CastSessionError where (error.cause as? CastSessionError)?.code == .appStopped {
            // Stopped all the same: the session ended when it saw the app gone.
        } catch let error as CastSessionError where error.receiverReason == "INVALID_SESSION_ID" {
            // The device does not know the session id: stopped only if the app is gone (another sender stopped it
            // a moment before). One it still lists is one it will not stop by that id — a speaker group member's
            // part in its group's playback, say — and reporting it stopped would be a lie.
            let status = try await fetchDeviceStatusNow()
            if let running = status.application(sessionID: sessionID) {
                throw CastSessionError(
                    .refused,
                    "\(device.friendlyName) did not stop \(running.displayName): it does not know session "
                        + "\(sessionID), yet still runs it",
                    receiverReason: error.receiverReason,
                    cause: error
                )
            }
        }
        store?.clear(deviceID: device.id)
        await finish(error: nil)
    }

    /// A request to `receiver-0`, answered by its reply or by a broadcast status `isAnsweredBy` accepts.
    private func receiverRequest(
        _ payload: JSONValue,
        timeout: Duration? = nil,
        answeredBy isAnsweredBy: @escaping @Sendable (DeviceStatus) -> Bool
    ) async throws -> JSONValue {
        do {
            return try await connection.receiverRequest(
                payload,
                timeout: timeout ?? options.requestTimeout,
                answeredBy: isAnsweredBy
            )
        } catch let error as CastTransportError {
            throw CastSessionError(
                error.code == .requestTimedOut ? .timedOut : .connectionLost,
                error.message,
                cause: error
            )
        }
    }

    // MARK: - Channels

    /// Registers a custom channel; it connects now if the session is connected and the app lists its namespace.
    /// A channel already registered for the namespace is replaced (and disconnected).
    public func add(_ channel: CastChannel) {
        let replaced = state.withLock { state -> CastChannel? in
            defer { state.channels[channel.namespace] = channel }
            return state.channels[channel.namespace]
        }
        if replaced !== channel { replaced?.disconnect() }
        connectChannels()
    }

    /// Unregisters a channel and disconnects it.
    public func remove(_ channel: CastChannel) {
        let removed = state.withLock { state -> Bool in
            guard state.channels[channel.namespace] === channel else { return false }
            state.channels[channel.namespace] = nil
            return true
        }
        if removed { channel.disconnect() }
    }

    private func connectChannels() {
        let (channels, app, connected) = state.withLock {
            ($0.channels, $0.application, $0.connectionState == .connected)
        }
        guard connected else { return }
        for (namespace, channel) in channels where app.namespaces.contains(namespace) {
            let connection = self.connection
            let transportID = app.transportID
            let message = { @Sendable (payload: CastMessage.Payload) in
                CastMessage(
                    sourceID: connection.configuration.localID,
                    destinationID: transportID,
                    namespace: namespace,
                    payload: payload
                )
            }
            channel.connect(
                CastChannel.Link(
                    send: { payload in try await connection.enqueue(message(payload)) },
                    post: { payload in try connection.enqueueWithoutWaiting(message(payload)) }
                )
            )
        }
    }

    private func disconnectChannels() {
        for channel in state.withLock({ Array($0.channels.values) }) { channel.disconnect() }
    }
}

/// A weak reference to a session, filled in once the session exists.
final class SessionBox: Sendable {
    private let reference = Mutex<WeakSession>(WeakSession())

    private struct WeakSession: @unchecked Sendable {
        // @unchecked: a weak reference to a Sendable class, only read and written under the lock.
        weak var session: CastSession?
    }

    var session: CastSession? {
        get { reference.withLock { $0.session } }
        set { reference.withLock { $0.session = newValue } }
    }
}

/// The media namespace of a session's app, as the RemoteMediaClient sees it.
struct SessionMediaChannel: MediaChannel {
    /// The session (observer) feeds every media message from the app, replies included, to the client in order.
    var deliversRepliesInOrder: Bool { true }
    var replyExecutor: (any TaskExecutor)? { connection.taskExecutor }
    let connection: CastConnection
    let transportID: String
    let options: CastOptions
    let box: SessionBox

    func startMediaRequest(_ payload: JSONValue, timeout: Duration?) throws -> MediaReply {
        let timeout = timeout ?? options.requestTimeout
        let connection = self.connection
        let session = box.session
        // The app's transport id now (it may move while the session runs).
        let transportID = session?.transportID ?? self.transportID
        if let session, session.connectionState != .connected {
            guard session.connectionState == .suspended, options.requestsWaitWhileSuspended else {
                throw CastMediaError(
                    .notConnected,
                    session.connectionState == .suspended
                        ? "the session is suspended (reconnecting)" : "the session has ended"
                )
            }
            // Wait for the resume (bounded by the request's own timeout), then send.
            let deadline = ContinuousClock.now + timeout
            return MediaReply {
                guard await session.waitUntilResumed(deadline: deadline) else {
                    if session.connectionState == .disconnected {
                        throw session.endedWhileWaiting(for: payload["type"]?.stringValue ?? "the request")
                    }
                    throw CastMediaError(.timedOut, "the session did not resume within \(timeout)")
                }
                return try await connection.request(
                    namespace: CastNamespace.media,
                    to: transportID,
                    payload: payload,
                    timeout: deadline - ContinuousClock.now
                ).json()
            }
        }
        // With waiting on, a request the connection drops under is carried through the reconnection: sent again
        // only when the receiver had not acted on it (InterruptedRequest).
        let ridesThrough = options.requestsWaitWhileSuspended
        let before = ridesThrough ? box.session?.remoteMediaClient?.mediaStatus : nil
        let sentAt = ContinuousClock.now
        let box = self.box
        let pending: PendingReply
        do {
            pending = try connection.startRequest(
                namespace: CastNamespace.media,
                to: transportID,
                payload: payload,
                timeout: timeout
            )
        } catch let error as CastTransportError where ridesThrough && error.isConnectionLoss {
            // Never sent: the connection is down and the session has not noticed yet.
            guard let session = box.session else { throw error }
            return MediaReply {
                try await session.complete(
                    InterruptedRequest(payload: payload, before: nil, elapsed: 0),
                    wasSent: false,
                    sentAt: sentAt,
                    deadline: sentAt + timeout
                )
            }
        }
        guard ridesThrough else { return MediaReply(message: pending.futureResult, requestID: pending.requestID) }
        return MediaReply(requestID: pending.requestID) {
            do {
                return try await pending.response().json()
            } catch let error as CastTransportError where ridesThrough && error.isConnectionLoss {
                guard let session = box.session else { throw error }
                return try await session.complete(
                    InterruptedRequest(payload: payload, before: before, elapsed: 0),
                    wasSent: true,
                    sentAt: sentAt,
                    deadline: sentAt + timeout
                )
            }
        }
    }
}

extension CastTransportError {
    /// Whether the connection went away under the request (as opposed to the receiver not answering in time).
    var isConnectionLoss: Bool { code == .connectionClosed || code == .notConnected }
}

extension CastSessionError {
    /// Whether a request failed because the connection went away under it (see ``CastTransportError``'s).
    var isConnectionLoss: Bool {
        code == .connectionLost && (cause as? CastTransportError)?.isConnectionLoss == true
    }
}

extension CastSession {
    /// Finishes a media request the connection dropped under: waits (until `deadline`) for the session to
    /// reconnect and resume, reads the media status again, and answers with it when the receiver had acted on
    /// the request, or sends the request again when it had not.
    ///
    /// - Throws: ``CastMedia/CastMediaError`` — `.timedOut` (no resumption by the deadline), `.notConnected`
    ///   (the session ended meanwhile), `.connectionLost` (whether the receiver acted on it cannot be told, so it
    ///   is not repeated).
    func complete(
        _ request: InterruptedRequest,
        wasSent: Bool,
        sentAt: ContinuousClock.Instant,
        deadline: ContinuousClock.Instant
    ) async throws -> JSONValue {
        let type = request.payload["type"]?.stringValue ?? "request"
        // Whether the request (or a resend of it) may have reached the receiver: then what the status shows
        // decides, else it is sent again as it is.
        var mayHaveArrived = wasSent
        // Round again after each drop, until the deadline: every drop leaves the same question, answered the
        // same way from the status read after it.
        for attempt in 1...Self.rideThroughAttempts {
            guard await waitForReconnection(deadline: deadline) else {
                if connectionState == .disconnected { throw endedWhileWaiting(for: type) }
                throw CastMediaError(.timedOut, "the session did not reconnect in time to finish \(type)")
            }
            let transportID = self.transportID
            do {
                // A device that reports statuses only by broadcast answers this GET_STATUS with one.
                let statusReply = try await mediaRequest(["type": "GET_STATUS"], to: transportID, until: deadline) {
                    $0["type"]?.stringValue == "MEDIA_STATUS"
                }
                var after = MediaStatus.preferred(in: statusReply, known: request.before?.mediaSessionID)
                if after?.media == nil, let before = request.before, before.mediaSessionID == after?.mediaSessionID {
                    after?.media = before.media
                }
                var interrupted = request
                interrupted.elapsed = (ContinuousClock.now - sentAt).inSeconds
                let decision = mayHaveArrived ? interrupted.decide(after: after) : .resend(interrupted.refreshed(after))
                logger.debug(
                    "finishing an interrupted request",
                    metadata: ["cast.type": "\(type)", "cast.decision": "\(decision)"]
                )
                switch decision {
                case .applied:
                    return statusReply
                case .resend(let payload):
                    let answer = BroadcastAnswer(
                        to: type,
                        payload.objectValue ?? [:],
                        before: after,
                        position: after?.currentTime ?? 0
                    )
                    let known = after?.mediaSessionID
                    do {
                        return try await mediaRequest(payload, to: transportID, until: deadline) { json in
                            guard let answer, json["type"]?.stringValue == "MEDIA_STATUS" else { return false }
                            return answer.isAnswered(by: MediaStatus.preferred(in: json, known: known))
                        }
                    } catch let error as CastTransportError where error.code == .connectionClosed {
                        mayHaveArrived = true
                        throw error
                    }
                case .unknown:
                    throw CastMediaError(
                        .connectionLost,
                        "the connection dropped before the receiver answered \(type), and whether it acted on it "
                            + "cannot be told from its status; it was not sent again"
                    )
                }
            } catch let error as CastTransportError where error.isConnectionLoss && attempt < Self.rideThroughAttempts {
                logger.debug("dropped again while finishing an interrupted request", metadata: ["cast.type": "\(type)"])
                continue
            }
        }
        preconditionFailure("the last attempt returns or throws")
    }

    /// How many times a command rides through drops within its timeout at most: a connection that is up for the
    /// session but fails every send must not make it spin until the deadline.
    static let rideThroughAttempts = 10

    /// The error for a request that waited for a reconnection the session ended instead: nothing to control when
    /// the app is gone (the device restarted, another sender stopped it), else the session's end.
    func endedWhileWaiting(for type: String) -> CastMediaError {
        let endError = state.withLock { $0.endError }
        if endError?.code == .appStopped {
            return CastMediaError(
                .noMediaSession,
                "the receiver app stopped while \(type) waited for the reconnection (\(endError?.message ?? "")); "
                    + "there is nothing to control"
            )
        }
        return CastMediaError(
            .notConnected,
            "the session ended while \(type) waited for it to reconnect"
                + (endError.map { " (\($0.message))" } ?? "")
        )
    }

    /// A media request answered by its reply, or by a broadcast `isAnswer` accepts (devices that report statuses
    /// only by broadcast).
    private func mediaRequest(
        _ payload: JSONValue,
        to transportID: String,
        until deadline: ContinuousClock.Instant,
        orBroadcast isAnswer: @escaping @Sendable (JSONValue) -> Bool
    ) async throws -> JSONValue {
        try await connection.request(
            namespace: CastNamespace.media,
            to: transportID,
            payload: payload,
            timeout: deadline - ContinuousClock.now,
            orBroadcast: isAnswer
        )
    }

    /// Waits until the session is connected over a live connection again: `false` when it ended instead, or at
    /// `deadline`. The connection can be down while the session has not yet noticed (its events come after).
    func waitForReconnection(deadline: ContinuousClock.Instant) async -> Bool {
        let updates = connectionStateUpdates()
        let connection = self.connection
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { [weak self] in
                guard let self else { return false }
                if self.connectionState == .connected, connection.isConnected { return true }
                for await state in updates {
                    switch state {
                    case .connected where connection.isConnected: return true
                    case .disconnected: return false
                    default: continue
                    }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(until: deadline)
                return false
            }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
    }
}

extension CastConnection {
    /// Reconnects where `locator` says `device` is now, when that is elsewhere (a speaker group moved with its
    /// leader), else where it was; answers the moved record, or `nil` when the device stayed.
    func reconnect(to device: CastDevice, locatedBy locator: (any CastDeviceLocator)?) async throws -> CastDevice? {
        let moved = await locator?.currentRecord(of: device).flatMap { record in
            record.host.isEmpty || (record.host == host && record.port == port) ? nil : record
        }
        guard let moved else {
            try await reconnect()
            return nil
        }
        try await reconnect(toHost: moved.host, port: moved.port)
        return moved
    }
}
