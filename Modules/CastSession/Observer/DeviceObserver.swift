import CastDiscovery
import CastLogging
import CastMedia
@_spi(CastInternal) import CastTransport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// What a device is doing now, seen without a session: its receiver status, the running app and, when that app
/// plays media, its media status. The status column of a device list, or one entity of a home-automation hub.
public struct DeviceActivity: Sendable, Hashable {
    /// The device, with what it said about itself (`DeviceInfo`) applied to a static entry.
    public var device: CastDevice
    /// The latest RECEIVER_STATUS: volume, mute, standby, the running app.
    public var deviceStatus: DeviceStatus
    /// The running app's media status; `nil` when it plays nothing or speaks no media namespace.
    public var mediaStatus: MediaStatus?
    /// `false` while the connection to the device is lost and being re-established (or was given up): the
    /// statuses are then the last ones known.
    public var isReachable: Bool
    /// Whether the device proved it is a genuine Cast device on the observer's connection; `nil` when unknown.
    public var deviceAuthentication: DeviceAuthentication?
    /// A speaker group's members, as the group tells them (their names and own volumes); `nil` for a device that
    /// is no group, or a group that did not answer. ``SpeakerGroupMembership`` turns many activities into which
    /// groups each device belongs to.
    public var groupMembers: [MultizoneMember]?
    /// Why the running app's media status is unknown (it did not answer, the connection failed): then a `nil`
    /// ``mediaStatus`` does not mean that nothing plays.
    public var mediaStatusError: String?

    /// Creates an activity snapshot.
    public init(
        device: CastDevice,
        deviceStatus: DeviceStatus,
        mediaStatus: MediaStatus? = nil,
        isReachable: Bool = true,
        deviceAuthentication: DeviceAuthentication? = nil,
        groupMembers: [MultizoneMember]? = nil,
        mediaStatusError: String? = nil
    ) {
        self.device = device
        self.deviceStatus = deviceStatus
        self.mediaStatus = mediaStatus
        self.isReachable = isReachable
        self.deviceAuthentication = deviceAuthentication
        self.groupMembers = groupMembers
        self.mediaStatusError = mediaStatusError
    }

    /// The running app; `nil` when the device is idle (its idle screen counts as idle).
    public var application: ApplicationMetadata? { deviceStatus.runningApplication }

    /// Whether the device runs no app.
    public var isIdle: Bool { application == nil }

    /// Whether the running app speaks the media namespace (and so can be paused, sought, …).
    public var playsMedia: Bool { application?.playsMedia == true }
}

/// Follows what one device is doing without starting or joining a session (a GCK sender's Cast dialog, Home
/// Assistant's cast integration): a virtual connection to `receiver-0` for RECEIVER_STATUS and, while a media
/// app runs, one to the app for MEDIA_STATUS. It never launches, stops or controls an app; it can set the
/// device's volume, which needs none.
///
/// ```swift
/// let observer = DeviceObserver(device: device)
/// let now = try await observer.start()          // connected, first status read
/// for await activity in observer.updates() { print(activity.application?.name ?? "idle") }
/// ```
///
/// A lost connection is re-established with the options' ``ReconnectPolicy``. Observers own no thread: one
/// process can follow many devices (``activities(of:options:timeout:eventLoopGroup:logger:)``).
public final class DeviceObserver: Sendable {
    private struct State {
        var device: CastDevice
        var deviceStatus: DeviceStatus?
        /// The media app followed, and the client whose status is reported: the observer's own, fed by its
        /// virtual connection to the app, or the shared session's (``share(_:)``).
        var mediaTransportID: String?
        var mediaClient: RemoteMediaClient? {
            didSet { if mediaClient !== oldValue { mediaStatusError = nil } }
        }
        /// The app the observer's own connection has a virtual connection to (none while it shares a session's).
        var ownMediaConnection: String?
        /// The session whose media client is followed instead of a virtual connection of the observer's own.
        var sharedSession: CastSession?
        /// Watches the shared session until it is no longer connected.
        var shareWatcher: Task<Void, Never>?
        /// The id of the shared client's handler that publishes its statuses.
        var sharedStatusHandler: Int?
        var connection: CastConnection?
        var tasks: [Task<Void, Never>] = []
        var isStopped = false
        var reconnects = 0
        var isReachable = true
        /// What ``publish()`` yielded last: an unchanged activity is not yielded again.
        var published: DeviceActivity?
        /// The highest `requestId` of a RECEIVER_STATUS the message task applied, and who waits for one.
        var appliedReplyID = 0
        var replyWaiters: [(requestID: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// The last receiver broadcasts the message task handled, and the commands waiting for one that answered
        /// them (a device that answers only by broadcast).
        var handledBroadcasts: [(number: Int, broadcast: JSONValue)] = []
        var handledBroadcastCount = 0
        var broadcastWaiters: [(broadcast: JSONValue, after: Int, continuation: CheckedContinuation<Void, Never>)] =
            []
        /// A group's membership (multizone namespace); `nil` for other devices.
        var multizoneStatus: MultizoneStatus?
        /// Why the followed app's media status could not be read, until it is.
        var mediaStatusError: String?

        /// Forgets the shared session and its status handler; answers its watcher for the caller to cancel.
        mutating func endSharing() -> Task<Void, Never>? {
            if let handler = sharedStatusHandler { sharedSession?.remoteMediaClient?.removeStatusHandler(handler) }
            defer { (sharedSession, sharedStatusHandler, shareWatcher) = (nil, nil, nil) }
            return shareWatcher
        }

        var activity: DeviceActivity? {
            deviceStatus.map {
                let mediaStatus = mediaClient?.mediaStatus
                return DeviceActivity(
                    device: device,
                    deviceStatus: $0,
                    mediaStatus: mediaStatus,
                    isReachable: isReachable,
                    deviceAuthentication: connection?.deviceAuthentication,
                    groupMembers: multizoneStatus?.members,
                    mediaStatusError: mediaStatus == nil ? mediaStatusError : nil
                )
            }
        }
    }

    /// The options this observer uses: timeouts, heartbeat and reconnect policy.
    public let options: CastOptions
    private let eventLoopGroup: any EventLoopGroup
    private let sleep: @Sendable (Duration) async throws -> Void
    private let logger: Logger
    private let locator: (any CastDeviceLocator)?
    private let state: NIOLockedValueBox<State>
    private let broadcaster = EventBroadcaster<DeviceActivity>()
    /// Held while an activity is compared and yielded, so that activities are yielded in the order they were
    /// read even when statuses come from two connections.
    private let publishing = NIOLock()

    /// Creates a stopped observer.
    ///
    /// - Parameters:
    ///   - device: The device to follow.
    ///   - options: Connect and request timeouts, heartbeat, reconnect policy.
    ///   - eventLoopGroup: Where network I/O runs.
    ///   - locator: Where to look the device up before reconnecting (a speaker group moves with its leader);
    ///     `nil` reconnects where it was.
    ///   - sleep: How reconnect backoff waits; tests inject one that does not really sleep.
    ///   - logger: Silent by default.
    public init(
        device: CastDevice,
        options: CastOptions = CastOptions(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        locator: (any CastDeviceLocator)? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        logger: Logger = .castDisabled
    ) {
        self.options = options
        self.locator = locator
        self.eventLoopGroup = eventLoopGroup
        self.sleep = sleep
        self.logger = logger.withCategory(CastLogCategory.session)
            .withMetadata([CastLogMetadataKey.deviceID: "\(device.id)"])
        self.state = NIOLockedValueBox(State(device: device))
    }

    deinit {
        for task in state.withLockedValue({ $0.tasks }) { task.cancel() }
    }

    /// What the device is doing now; `nil` before the first status.
    public var activity: DeviceActivity? { state.withLockedValue { $0.activity } }

    /// Every change from now on, latest wins: a slow consumer sees the newest activity, not a backlog.
    public func updates() -> CastEventStream<DeviceActivity> {
        broadcaster.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Calls `handler` synchronously with every change, in order (no task per change; it must be quick): for a
    /// sibling module that records every change. Answers the id ``removeUpdateHandler(_:)`` takes.
    package func addUpdateHandler(_ handler: @escaping @Sendable (DeviceActivity) -> Void) -> Int {
        broadcaster.addHandler(handler)
    }

    /// Stops calling a handler of ``addUpdateHandler(_:)``.
    package func removeUpdateHandler(_ id: Int) { broadcaster.removeHandler(id) }

    /// Connects, reads the device's status (and the media status of a media app) and keeps following it.
    ///
    /// - Throws: ``CastSessionError`` — ``CastSessionError/Code/connectFailed``,
    ///   ``CastSessionError/Code/timedOut``, ``CastSessionError/Code/connectionLost``.
    @discardableResult
    public func start() async throws -> DeviceActivity {
        let device = state.withLockedValue { $0.device }
        let connection = try await options.connect(to: device, eventLoopGroup: eventLoopGroup, logger: logger)
        let messages = connection.messages()
        let events = connection.events()
        let stopped = state.withLockedValue { state -> Bool in
            state.connection = connection
            return state.isStopped
        }
        let reading: StatusReading?
        do {
            if stopped { throw CancellationError() }
            try await connection.openVirtualConnection(to: CastEndpoint.receiver)
            // Only a device known by its address is asked what it is (and only then waited for).
            let (status, info) = try await DeviceInfo.ask(connection, describing: device.isStatic)
            if let info { state.withLockedValue { $0.device.apply(info) } }
            await readMultizoneStatus(on: connection)
            reading = await apply(DeviceStatus(json: status), on: connection)
        } catch {
            await stop()
            throw SessionManager.sessionError(error)
        }
        // On the connection's event loop: a message is handled in the turn of the loop that read it.
        let messageTask = Task(executorPreference: connection.taskExecutor) { [weak self] in
            for await message in messages {
                guard let self else { return }
                await self.handle(message, on: connection)
            }
        }
        let eventTask = Task(executorPreference: connection.taskExecutor) { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.handle(event, on: connection)
            }
        }
        state.withLockedValue { $0.tasks += [messageTask, eventTask] }
        // The media status, now that the message task delivers what answers it.
        if let reading { await finish(reading) }
        return activity!
    }

    /// How many times the connection was re-established after a drop (for metrics).
    public var reconnectCount: Int { state.withLockedValue { $0.reconnects } }

    /// Stops following and closes the connection; the device keeps doing what it does.
    public func stop() async {
        let (connection, tasks) = state.withLockedValue { state -> (CastConnection?, [Task<Void, Never>]) in
            state.isStopped = true
            state.endSharing()?.cancel()
            defer { state.tasks = [] }
            return (state.connection, state.tasks)
        }
        for task in tasks { task.cancel() }
        resumeReplyWaiters(upTo: .max)
        let broadcastWaiters = state.withLockedValue { state in
            defer { state.broadcastWaiters = [] }
            return state.broadcastWaiters.map(\.continuation)
        }
        for continuation in broadcastWaiters { continuation.resume() }
        await connection?.close()
        broadcaster.finish()
    }

    // MARK: - Device controls (no app needed)

    /// Sets the device volume, 0…1, as the device's own volume keys do: it needs no app and no session.
    ///
    /// - Throws: ``CastSessionError`` — ``CastSessionError/Code/invalidArgument``,
    ///   ``CastSessionError/Code/notConnected`` (not started), ``CastSessionError/Code/timedOut``,
    ///   ``CastSessionError/Code/notSupported`` (the device's volume is fixed; nothing is sent),
    ///   ``CastSessionError/Code/refused`` (the receiver refused it).
    public func setVolume(_ level: Double) async throws {
        guard (0...1).contains(level) else {
            throw CastSessionError(.invalidArgument, "volume \(level) is outside 0…1")
        }
        try await receiverCommand(["type": "SET_VOLUME", "volume": ["level": .number(level)]])
    }

    /// Mutes or unmutes the device.
    ///
    /// - Throws: as ``setVolume(_:)``.
    public func setMuted(_ muted: Bool) async throws {
        try await receiverCommand(["type": "SET_VOLUME", "volume": ["muted": .bool(muted)]])
    }

    /// Moves the volume by `steps` steps of ``CastOptions/volumeStep`` or the receiver's `stepInterval`.
    ///
    /// - Throws: as ``setVolume(_:)``.
    public func adjustVolume(bySteps steps: Int) async throws {
        let (status, device) = state.withLockedValue { ($0.deviceStatus, $0.device) }
        try status?.requireSettableVolume(of: device.friendlyName)
        let step = options.volumeStep ?? status?.volumeStepInterval ?? 0.05
        try await setVolume(try DeviceStatus.level(from: status?.volumeLevel, bySteps: steps, of: step))
    }

    /// Sends a SET_VOLUME (the only receiver command an observer sends), refused here on a fixed-volume device.
    private func receiverCommand(_ payload: JSONValue) async throws {
        let (connection, status, device) = state.withLockedValue {
            ($0.isStopped ? nil : $0.connection, $0.deviceStatus, $0.device)
        }
        guard let connection else {
            throw CastSessionError(.notConnected, "the observer is not connected; start it first")
        }
        try status?.requireSettableVolume(of: device.friendlyName)
        // A broadcast that answers it comes after this one: an equal status handled before (the same volume set
        // twice) is not its answer.
        let handledBefore = state.withLockedValue { $0.handledBroadcastCount }
        let reply: JSONValue
        do {
            reply = try await connection.receiverRequest(
                payload,
                timeout: nil,
                answeredBy: DeviceStatus.showsVolume(of: payload)
            )
        } catch {
            throw SessionManager.sessionError(error)
        }
        // A refusal (INVALID_REQUEST, …) throws its error here.
        _ = try DeviceStatus(commandReply: reply, to: payload["type"]?.stringValue ?? "the command")
        await applied(reply, broadcastAfter: handledBefore)
    }

    /// Waits until the message task applied `reply`, a RECEIVER_STATUS it also receives.
    ///
    /// Statuses are applied in the order the device sent them, by the message task alone: a request's caller
    /// applying its reply too raced the broadcasts that followed it, so an older volume could be published
    /// after a newer one.
    private func applied(_ reply: JSONValue, broadcastAfter handledBefore: Int = .max) async {
        guard let requestID = reply["requestId"]?.intValue, requestID != 0 else {
            if handledBefore != .max { await handled(broadcast: reply, after: handledBefore) }
            return
        }
        await withCheckedContinuation { continuation in
            let waiting = state.withLockedValue { state -> Bool in
                guard !state.isStopped, state.appliedReplyID < requestID else { return false }
                state.replyWaiters.append((requestID, continuation))
                return true
            }
            if !waiting { continuation.resume() }
        }
    }

    /// Waits until the message task handled `broadcast`, a receiver status without a request's id that answered a
    /// command: the activity read next then shows it.
    private func handled(broadcast: JSONValue, after handledBefore: Int) async {
        await withCheckedContinuation { continuation in
            let waiting = state.withLockedValue { state -> Bool in
                guard !state.isStopped,
                    !state.handledBroadcasts.contains(where: { $0.number > handledBefore && $0.broadcast == broadcast })
                else { return false }
                state.broadcastWaiters.append((broadcast, handledBefore, continuation))
                return true
            }
            if !waiting { continuation.resume() }
        }
    }

    /// Notes a receiver broadcast the message task handled, and lets the commands it answered go on.
    private func noteHandled(broadcast: JSONValue) {
        let ready = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.handledBroadcastCount += 1
            state.handledBroadcasts.append((state.handledBroadcastCount, broadcast))
            // Enough that a command registers before its answer leaves, even under a flood of statuses.
            if state.handledBroadcasts.count > 32 { state.handledBroadcasts.removeFirst() }
            guard !state.broadcastWaiters.isEmpty else { return [] }
            let number = state.handledBroadcastCount
            let ready = state.broadcastWaiters.filter { $0.after < number && $0.broadcast == broadcast }
            state.broadcastWaiters.removeAll { $0.after < number && $0.broadcast == broadcast }
            return ready.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    private func resumeReplyWaiters(upTo requestID: Int) {
        let ready = state.withLockedValue { state in
            state.appliedReplyID = max(state.appliedReplyID, requestID)
            let ready = state.replyWaiters.filter { $0.requestID <= requestID }
            state.replyWaiters.removeAll { $0.requestID <= requestID }
            return ready
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    // MARK: - Following

    private func handle(_ message: CastMessage, on connection: CastConnection) async {
        if message.namespace == CastNamespace.multizone, message.sourceID == CastEndpoint.receiver {
            guard let json = try? message.json(), let event = MultizoneEvent(json: json) else { return }
            state.withLockedValue { state in
                var status = state.multizoneStatus ?? MultizoneStatus(members: [])
                status.apply(event)
                state.multizoneStatus = status
            }
            publish()
            return
        }
        if message.namespace == CastNamespace.receiver {
            guard let json = try? message.json() else { return }
            if message.sourceID == CastEndpoint.receiver, json["type"]?.stringValue == "RECEIVER_STATUS",
                let reading = await apply(DeviceStatus(json: json), on: connection)
            {
                Task { [weak self] in await self?.finish(reading) }
            }
            if let requestID = json["requestId"]?.intValue, requestID != 0 {
                resumeReplyWaiters(upTo: requestID)
            } else {
                noteHandled(broadcast: json)
            }
            return
        }
        guard message.namespace == CastNamespace.media else { return }
        // While a session is shared its client has every status: a late one from here could undo a newer one.
        let client = state.withLockedValue { state in
            message.sourceID == state.mediaTransportID && state.sharedSession == nil ? state.mediaClient : nil
        }
        guard let client, let json = try? message.json() else { return }
        client.receive(json)
        publish()
    }

    private func handle(_ event: CastConnectionEvent, on connection: CastConnection) async {
        switch event {
        case .connected:
            break
        case .deviceAuthenticated:
            publish()
        case .virtualConnectionClosed(let endpoint):
            // The app went away; the RECEIVER_STATUS that follows says what runs now.
            let dropped = state.withLockedValue { state -> Bool in
                guard endpoint == state.mediaTransportID, state.sharedSession == nil else { return false }
                state.mediaTransportID = nil
                state.mediaClient = nil
                state.ownMediaConnection = nil
                return true
            }
            if dropped { publish() }
        case .disconnected(let code):
            guard code != nil, !connection.isConnected else { return }
            state.withLockedValue { $0.isReachable = false }
            publish()
            await reconnect(connection)
        }
    }

    /// Reconnects with the reconnect policy, then reads the status again (virtual connections are re-opened by
    /// the connection itself).
    private func reconnect(_ connection: CastConnection) async {
        let policy = options.reconnectPolicy
        var failures = 0
        while policy.allowsAttempt(afterFailedAttempts: failures), !state.withLockedValue({ $0.isStopped }) {
            do {
                try await sleep(policy.delay(afterFailedAttempts: failures, random: Double.random(in: 0..<1)))
                if let moved = try await connection.reconnect(to: device, locatedBy: locator) {
                    state.withLockedValue { $0.device = moved }
                }
                // The app's virtual connection is gone with the old transport: the status read next follows it
                // again.
                state.withLockedValue { state in
                    state.mediaTransportID = nil
                    state.mediaClient = nil
                    state.reconnects += 1
                    state.isReachable = true
                }
                let reply = try await connection.request(
                    namespace: CastNamespace.receiver,
                    to: CastEndpoint.receiver,
                    payload: ["type": "GET_STATUS"]
                )
                await applied(try reply.json())
                await readMultizoneStatus(on: connection)
                publish()
                return
            } catch is CancellationError {
                return
            } catch {
                failures += 1
                logger.debug("observer reconnect failed", metadata: ["cast.error": "\(error)"])
            }
        }
        logger.notice("stopped following the device: it could not be reached again")
        await stop()
    }

    /// The device this observer follows, as last told (a static entry renamed by its answer, a group moved).
    public var device: CastDevice { state.withLockedValue { $0.device } }

    /// Reads a speaker group's membership; other devices are not asked. A group that does not answer keeps the
    /// membership it had.
    private func readMultizoneStatus(on connection: CastConnection) async {
        guard device.isGroup else { return }
        do {
            let status = try await MultizoneStatus.ask(connection, timeout: options.requestTimeout)
            state.withLockedValue { $0.multizoneStatus = status }
        } catch {
            logger.debug("the group did not tell its members", metadata: ["cast.error": "\(error)"])
        }
    }

    /// Takes a new receiver status: follows the media app it names (closing the previous app's virtual
    /// connection), reads its media status, and publishes. A shared session whose app is gone is let go.
    private func apply(_ status: DeviceStatus, on connection: CastConnection) async -> StatusReading? {
        let mediaTransport = status.runningApplication.flatMap { $0.playsMedia ? $0.transportID : nil }
        let plan = state.withLockedValue { state -> (close: String?, follow: String?)? in
            state.deviceStatus = status
            if let shared = state.sharedSession, shared.transportID != mediaTransport, mediaTransport != nil {
                state.endSharing()?.cancel()
            }
            guard state.mediaTransportID != mediaTransport else { return nil }
            state.mediaTransportID = mediaTransport
            state.mediaClient = mediaTransport == nil ? nil : state.sharedSession?.remoteMediaClient
            let wanted = state.sharedSession == nil ? mediaTransport : nil
            let close = state.ownMediaConnection.flatMap { $0 == wanted ? nil : $0 }
            if close != nil { state.ownMediaConnection = nil }
            return (close, wanted)
        }
        if let close = plan?.close { try? await connection.closeVirtualConnection(to: close) }
        var reading: StatusReading?
        if let follow = plan?.follow { reading = await followOwnMediaConnection(to: follow, on: connection) }
        publish()
        return reading
    }

    /// Follows the media app `transportID` through a virtual connection of the observer's own and asks for its
    /// media status (unless another app or a shared session came first); returns the request, which the caller
    /// awaits with ``finish(_:)`` outside the message task.
    private func followOwnMediaConnection(to transportID: String, on connection: CastConnection) async
        -> StatusReading?
    {
        let client = RemoteMediaClient(
            channel: ObserverMediaChannel(connection: connection, transportID: transportID),
            requestTimeout: options.requestTimeout,
            logger: logger
        )
        let current = state.withLockedValue { state -> Bool in
            guard state.mediaTransportID == transportID, state.sharedSession == nil else { return false }
            state.mediaClient = client
            state.ownMediaConnection = transportID
            return true
        }
        guard current else { return nil }
        do {
            try await connection.openVirtualConnection(to: transportID)
        } catch {
            noteMediaStatusFailure(error, of: client)
            return nil
        }
        return StatusReading(client: client, request: client.requestStatus())
    }

    /// A media status asked for. Awaited apart from the message task, which must go on delivering messages while
    /// it waits: a device that answers GET_STATUS only with a broadcast answers it through them.
    private struct StatusReading {
        let client: RemoteMediaClient
        let request: MediaRequest
    }

    private func finish(_ reading: StatusReading) async {
        do {
            _ = try await reading.request.response()
            state.withLockedValue { state in
                if state.mediaClient === reading.client { state.mediaStatusError = nil }
            }
        } catch {
            noteMediaStatusFailure(error, of: reading.client)
        }
        publish()
    }

    /// Keeps why `client`'s media status could not be read, while it is the followed one: told with the activity,
    /// where a nil media status would otherwise say that nothing plays.
    private func noteMediaStatusFailure(_ error: any Error, of client: RemoteMediaClient) {
        logger.debug("cannot read the media status", metadata: ["cast.error": "\(error)"])
        let reason = (error as? CastMediaError)?.message ?? "\(error)"
        state.withLockedValue { state in
            if state.mediaClient === client { state.mediaStatusError = reason }
        }
    }

    // MARK: - Sharing a session's connection

    /// Follows the media app through `session`, a session on this device, while it stays connected (a session on
    /// another device, or one without a media client, is not shared).
    ///
    /// A session's connection already receives every MEDIA_STATUS of its app, so the observer closes its own
    /// virtual connection to the app: each status is then sent by the device, decrypted and decoded once, not
    /// once per connection (castd, which observes every device it also controls, halves its work per command).
    /// When the session is suspended or ends, the observer follows the app through its own connection again and
    /// reads its status. Calling it again with the same session does nothing.
    public func share(_ session: CastSession) async {
        // castd calls this on every command: the session already shared costs one lock, no subscription.
        guard let client = session.remoteMediaClient, state.withLockedValue({ $0.sharedSession !== session }) else {
            return
        }
        // The stream before the state is read: a change after the read is then seen by the watcher.
        let connectionStates = session.connectionStateUpdates()
        guard session.connectionState == .connected else { return }
        let plan = state.withLockedValue { state -> (replaced: Task<Void, Never>?, close: String?, CastConnection)? in
            guard !state.isStopped, state.sharedSession !== session, session.device.id == state.device.id,
                let connection = state.connection
            else { return nil }
            let replaced = state.endSharing()
            state.sharedSession = session
            state.sharedStatusHandler = client.addStatusHandler { [weak self] _ in self?.publish() }
            var close: String?
            if state.mediaTransportID == session.transportID {
                state.mediaClient = client
                close = state.ownMediaConnection
                state.ownMediaConnection = nil
            }
            state.shareWatcher = Task { [weak self] in
                for await connectionState in connectionStates where connectionState != .connected { break }
                guard !Task.isCancelled else { return }
                await self?.stopSharing(session)
            }
            return (replaced, close, connection)
        }
        guard let (replaced, close, connection) = plan else { return }
        replaced?.cancel()
        if let close { try? await connection.closeVirtualConnection(to: close) }
        publish()
    }

    /// Whether the media app is followed through a shared session (``share(_:)``) rather than a connection of
    /// the observer's own.
    public var isSharingSession: Bool { state.withLockedValue { $0.sharedSession != nil } }

    /// Lets `session` go (it is no longer connected) and follows its app through the observer's own connection.
    private func stopSharing(_ session: CastSession) async {
        let follow = state.withLockedValue { state -> (String, CastConnection)? in
            guard state.sharedSession === session else { return nil }
            _ = state.endSharing()  // its watcher is this task
            guard !state.isStopped, let transport = state.mediaTransportID, let connection = state.connection else {
                return nil
            }
            state.mediaClient = nil
            return (transport, connection)
        }
        guard let (transport, connection) = follow else { return }
        // The share watcher's task, not the message task: it may wait here.
        if let reading = await followOwnMediaConnection(to: transport, on: connection) { await finish(reading) }
        publish()
    }

    /// Yields the activity when it differs from the one yielded last.
    private func publish() {
        publishing.withLock {
            let changed = state.withLockedValue { state -> DeviceActivity? in
                guard let activity = state.activity, activity != state.published else { return nil }
                state.published = activity
                return activity
            }
            if let changed { broadcaster.yield(changed) }
        }
    }

    // MARK: - Many devices

    /// What each of `devices` is doing, read concurrently (one connection each, closed afterwards) within
    /// `timeout`; a device that cannot be reached in time gets its error, in the same order as `devices`.
    public static func activities(
        of devices: [CastDevice],
        options: CastOptions = CastOptions(),
        timeout: Duration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = .castDisabled
    ) async -> [Result<DeviceActivity, CastSessionError>] {
        var options = options
        options.connectTimeout = min(options.connectTimeout, timeout)
        options.requestTimeout = min(options.requestTimeout, timeout)
        options.heartbeat.pingInterval = nil
        let bounded = options
        return await withTaskGroup(of: (Int, Result<DeviceActivity, CastSessionError>).self) { group in
            for (index, device) in devices.enumerated() {
                group.addTask {
                    let observer = DeviceObserver(
                        device: device,
                        options: bounded,
                        eventLoopGroup: eventLoopGroup,
                        logger: logger
                    )
                    do {
                        let activity = try await withThrowingTaskGroup(of: DeviceActivity?.self) { race in
                            race.addTask { try await observer.start() }
                            race.addTask {
                                try await Task.sleep(for: timeout)
                                return nil
                            }
                            defer { race.cancelAll() }
                            guard let first = try await race.next(), let activity = first else {
                                throw CastSessionError(
                                    .timedOut,
                                    "\(device.friendlyName) did not tell what it is doing within \(timeout)"
                                )
                            }
                            return activity
                        }
                        await observer.stop()
                        return (index, .success(activity))
                    } catch {
                        await observer.stop()
                        return (index, .failure(SessionManager.sessionError(error)))
                    }
                }
            }
            var results = [Result<DeviceActivity, CastSessionError>?](repeating: nil, count: devices.count)
            for await (index, result) in group { results[index] = result }
            return results.map { $0! }
        }
    }
}

/// The media namespace of an observed app: requests go straight to its transport (no session to wait for).
struct ObserverMediaChannel: MediaChannel {
    /// The session (observer) feeds every media message from the app, replies included, to the client in order.
    var deliversRepliesInOrder: Bool { true }
    var replyExecutor: (any TaskExecutor)? { connection.taskExecutor }
    let connection: CastConnection
    let transportID: String

    func startMediaRequest(_ payload: JSONValue, timeout: Duration?) throws -> MediaReply {
        let pending = try connection.startRequest(
            namespace: CastNamespace.media,
            to: transportID,
            payload: payload,
            timeout: timeout ?? connection.configuration.requestTimeout
        )
        return MediaReply(message: pending.futureResult, requestID: pending.requestID)
    }
}
