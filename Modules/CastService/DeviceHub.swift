import CastDiscovery
import CastLogging
import CastMedia
import CastMediaServer
import CastSession
import CastTransport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Every device one service knows, what each does, and commands for them: the logic behind `castd`, usable
/// without HTTP.
///
/// Devices come from a `DiscoveryManager` (mDNS and static hosts). A device is followed — a virtual
/// connection to its receiver, and to its media app while one runs, through a `DeviceObserver` — once
/// something needs it: a status read, a command, or an event subscriber (which follows every device). Commands
/// that need a session join the app that plays (or launch the receiver app to load), one `CastContext` per
/// device, so sessions on different devices never wait for each other. Every change becomes a
/// ``ServiceEvent`` with an increasing id, and the last ``Options/eventWindow`` are kept for subscribers that
/// reconnect.
public final class DeviceHub: Sendable {
    /// How the hub behaves.
    public struct Options: Sendable {
        /// Timeouts, heartbeat, reconnect policy and the receiver app loads launch; its state directory keeps the
        /// devices' saved sessions. Defaults to `CastOptions`' defaults, but requests wait for a suspended session
        /// to resume (`requestsWaitWhileSuspended`): a command sent just after a drop rides through it.
        public var cast: CastOptions = {
            var options = CastOptions()
            options.requestsWaitWhileSuspended = true
            return options
        }()
        /// How many past events a reconnecting subscriber can catch up on.
        public var eventWindow = 1024
        /// Folders whose media files (and files below them) may be cast; symbolic links leading out are refused.
        /// Defaults to none: no local file is cast.
        public var mediaFolders: [String] = []
        /// How many events beyond ``eventWindow`` a subscriber may fall behind before it is dropped (it
        /// reconnects with its last id); a subscriber starts with up to a whole window to replay.
        public var subscriberBuffer = 256

        /// The defaults.
        public init() {}
    }

    /// What the hub holds for one followed device.
    final class Link: Sendable {
        let observer: DeviceObserver
        private let currentContext: NIOLockedValueBox<CastContext>
        let started = NIOLockedValueBox<Task<DeviceActivity, any Error>?>(nil)
        /// One command at a time joins or launches the device's session; the others then use it.
        let sessionGate = SessionGate()
        /// Serves the local files the device plays; replaced (and the old one stopped) by the next load or queue.
        let fileServer = NIOLockedValueBox<MediaServer?>(nil)
        /// The observer's handler that records its changes as events, once following started.
        let statusRecorder = NIOLockedValueBox<Int?>(nil)
        /// Ends the forwarding of the current context's session events (see ``DeviceHub/BackgroundWork``);
        /// replaced when the context is.
        let sessionFollower = NIOLockedValueBox<(context: ObjectIdentifier, stop: AsyncStream<Void>.Continuation)?>(
            nil
        )

        /// Stops forwarding session events.
        func stopFollowingSessions() {
            sessionFollower.withLockedValue { follower in
                follower?.stop.finish()
                follower = nil
            }
        }

        init(observer: DeviceObserver, context: CastContext) {
            self.observer = observer
            self.currentContext = NIOLockedValueBox(context)
        }

        /// Stops recording the observer's changes as events.
        func stopRecordingStatus() {
            statusRecorder.withLockedValue { recorder in
                if let recorder { observer.removeUpdateHandler(recorder) }
                recorder = nil
            }
        }

        /// The context whose session commands use.
        var context: CastContext { currentContext.withLockedValue { $0 } }

        /// A context that launches `applicationID`: the current one when it launches that app the same way, else a
        /// new one made from `options`, after the current one's session is left (its app keeps running).
        func context(
            launching applicationID: String,
            relaunch: Bool,
            make: (CastOptions) -> CastContext
        ) async -> CastContext {
            let current = context
            var options = current.options
            if options.receiverApplicationID == applicationID, options.launchOptions.relaunchIfRunning == relaunch {
                return current
            }
            await current.sessionManager.endSession(stopCasting: false)
            options.receiverApplicationID = applicationID
            options.launchOptions.relaunchIfRunning = relaunch
            let made = make(options)
            currentContext.withLockedValue { $0 = made }
            return made
        }
    }

    /// What the hub does in the background. All of it runs as children of the hub's one task, which ``start()``
    /// starts and ``stop()`` cancels and waits for: nothing the hub started outlives it.
    enum BackgroundWork: Sendable {
        /// Follow a device (for event subscribers, who see every device).
        case follow(deviceID: String)
        /// Stop an observer of a device that went away.
        case stopObserver(DeviceObserver)
        /// Record a context's session events for a device until `until` finishes (the context was replaced).
        case forwardSessions(CastEventStream<SessionEvent>, deviceID: String, until: AsyncStream<Void>)
    }

    private struct State {
        var links: [String: Link] = [:]
        var task: Task<Void, Never>?
        var followsAll = false
        var isStopped = false
        /// Reconnects of the observers of links since removed, so the metric's counter never goes down.
        var retiredReconnects = 0
        /// Configured devices (static hosts) as last listed: one that stops answering stays known, unreachable,
        /// rather than becoming an unknown id (404) until it answers again.
        var configured: [String: CastDevice] = [:]

        /// Records a configured device as its probe found it: its answer may give it another id than the address
        /// it was configured by, which it replaces.
        mutating func configure(_ device: CastDevice) {
            configured = configured.filter {
                $0.key == device.id || $0.value.host != device.host || $0.value.port != device.port
            }
            configured[device.id] = device
        }
    }

    /// The options the hub was made with.
    public let options: Options
    /// Where devices come from.
    public let discovery: DiscoveryManager
    /// The one loop every device's connections run on, and the HTTP server too (``CastServiceServer``): a
    /// command then crosses no threads on its way from the request to the device and back.
    let eventLoop: any EventLoop
    private let logger: Logger
    private let state = NIOLockedValueBox(State())
    let log: EventLog
    let mediaFolders: MediaFolders
    let metrics = ServiceMetrics()
    private let work: AsyncStream<BackgroundWork>
    private let background: AsyncStream<BackgroundWork>.Continuation

    /// Creates a stopped hub; one loop of `eventLoopGroup` carries all its network I/O.
    public init(
        options: Options = Options(),
        discovery: DiscoveryManager,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = .castDisabled
    ) {
        self.options = options
        self.discovery = discovery
        self.eventLoop = eventLoopGroup.next()
        self.logger = logger
        self.log = EventLog(
            window: options.eventWindow,
            subscriberBuffer: options.subscriberBuffer,
            firstID: Self.firstEventID()
        )
        self.mediaFolders = MediaFolders(options.mediaFolders)
        (work, background) = AsyncStream.makeStream(of: BackgroundWork.self)
    }

    // MARK: - Lifecycle

    /// Starts discovery and turns its events into service events.
    ///
    /// - Throws: `CastDiscoveryError` when mDNS is on and avahi-daemon is unreachable.
    public func start() throws {
        guard state.withLockedValue({ $0.task == nil && !$0.isStopped }) else { return }
        // Configured devices are known from the start, reachable or not: one that is off when castd starts is
        // listed as unreachable (502 for commands), not unknown (404), and takes the name its answer gives later.
        state.withLockedValue { state in
            for device in discovery.configuration.staticDevices { state.configured[device.id] = device }
        }
        let events = discovery.events()
        try discovery.start()
        let work = self.work
        let task = Task { [weak self] in
            await withDiscardingTaskGroup { group in
                group.addTask { [weak self] in
                    for await event in events {
                        guard let self else { return }
                        self.handle(event)
                    }
                }
                for await item in work {
                    guard let self else { return }
                    group.addTask { await self.perform(item) }
                }
            }
        }
        state.withLockedValue { $0.task = task }
    }

    /// Hands work to the hub's task; it waits there until ``start()``, and is dropped after ``stop()``.
    func startInBackground(_ work: BackgroundWork) {
        background.yield(work)
    }

    private func perform(_ work: BackgroundWork) async {
        switch work {
        case .follow(let id):
            _ = try? await activity(of: id)
        case .stopObserver(let observer):
            await observer.stop()
        case .forwardSessions(let events, let id, let until):
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [log, metrics, discovery] in
                    for await event in events {
                        guard let change = SessionChange(event) else { continue }
                        if change.kind == .resumed { metrics.recordReconnect("session") }
                        guard let device = change.device ?? discovery.device(withID: id) else { continue }
                        log.append(.session(device, change))
                    }
                }
                group.addTask { for await _ in until {} }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Microseconds since 1970, below 2^53 (JavaScript's exact integers) until the year 2255.
    static func firstEventID() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now.tv_sec * 1_000_000 + now.tv_nsec / 1000
    }

    /// Stops following devices and discovery. Sessions are left running on the devices (media keeps playing).
    public func stop() async {
        let (links, task) = state.withLockedValue { state in
            state.isStopped = true
            defer { state.links = [:] }
            return (Array(state.links.values), state.task)
        }
        // Starts still connecting end now, and so do the children waiting for them.
        for link in links { link.started.withLockedValue { $0?.cancel() } }
        background.finish()
        task?.cancel()
        await task?.value
        for link in links {
            link.stopRecordingStatus()
            link.stopFollowingSessions()
            await link.observer.stop()
            await link.context.sessionManager.endSession(stopCasting: false)
            await link.fileServer.withLockedValue { $0 }?.stop()
        }
        await discovery.stop()
        log.finish()
    }

    /// Whether ``stop()`` was called: its event streams end for good.
    var isStopped: Bool { state.withLockedValue { $0.isStopped } }

    // MARK: - Reading

    /// Every known device, sorted by name, with its activity when it is followed.
    public var devices: [(device: CastDevice, activity: DeviceActivity?)] {
        let (links, configured) = state.withLockedValue { ($0.links, $0.configured) }
        let listed = discovery.devices
        let silent = configured.values.filter { device in !listed.contains { $0.id == device.id } }
        return (listed + silent).sorted { $0.friendlyName.lowercased() < $1.friendlyName.lowercased() }
            .map { ($0, links[$0.id]?.observer.activity) }
    }

    /// The device called `id` and what it does now; follows it first if it is not followed yet.
    ///
    /// - Throws: `CastServiceError`: `deviceNotFound` for an unknown id, or the session module's error when the
    ///   device cannot be reached.
    public func activity(of id: String) async throws(CastServiceError) -> DeviceActivity {
        let link = try link(for: id)
        let activity = try await follow(link)
        return link.observer.activity ?? activity
    }

    /// Events after `lastID` that are still in the window, then every new one. Subscribing follows every device.
    public func events(after lastID: Int? = nil) -> AsyncStream<ServiceEvent> {
        let (devices, first) = state.withLockedValue { state -> ([CastDevice], Bool) in
            defer { state.followsAll = true }
            return (discovery.devices, !state.followsAll)
        }
        if first {
            for device in devices { startInBackground(.follow(deviceID: device.id)) }
        }
        return log.subscribe(after: lastID)
    }

    // MARK: - Internals

    func device(_ id: String) throws(CastServiceError) -> CastDevice {
        guard let device = discovery.device(withID: id) ?? state.withLockedValue({ $0.configured[id] }) else {
            throw CastServiceError(.deviceNotFound, "no device has the id '\(id)'", httpStatus: 404)
        }
        return device
    }

    func link(for id: String) throws(CastServiceError) -> Link {
        let device = try device(id)
        return state.withLockedValue { state in
            if let link = state.links[id] { return link }
            var cast = options.cast
            cast.staticDevices = []
            let link = Link(
                observer: DeviceObserver(
                    device: device,
                    options: cast,
                    eventLoopGroup: eventLoop,
                    locator: discovery,
                    logger: logger
                ),
                context: makeContext(cast)
            )
            state.links[id] = link
            followSessions(of: link, id: id)
            return link
        }
    }

    /// Forwards the session events of the link's current context to the event log (once per context; call again
    /// after the context is replaced), counting resumes as reconnects.
    func followSessions(of link: Link, id: String) {
        let context = link.context
        let until = link.sessionFollower.withLockedValue { follower -> AsyncStream<Void>? in
            guard follower?.context != ObjectIdentifier(context) else { return nil }
            follower?.stop.finish()
            let (until, stop) = AsyncStream.makeStream(of: Void.self)
            follower = (ObjectIdentifier(context), stop)
            return until
        }
        guard let until else { return }
        // Subscribed now, so no event of the new context is missed while the work waits for the hub's task.
        startInBackground(.forwardSessions(context.sessionManager.events(), deviceID: id, until: until))
    }

    /// The metrics in Prometheus' text format, gauges read now.
    func metricsExposition() -> [UInt8] {
        let (links, retired) = state.withLockedValue { (Array($0.links.values), $0.retiredReconnects) }
        let sessions = links.filter { $0.context.sessionManager.currentSession?.connectionState == .connected }
        return metrics.exposition(
            .init(
                devices: discovery.devices.count,
                followedDevices: links.filter { $0.observer.activity != nil }.count,
                connectedSessions: sessions.count,
                eventSubscribers: log.subscriberCount,
                deviceReconnects: retired + links.reduce(0) { $0 + $1.observer.reconnectCount }
            )
        )
    }

    /// A context for one device's sessions, on the hub's event loops and logger; its sessions find a device
    /// that moved (a speaker group's new leader) through discovery.
    func makeContext(_ options: CastOptions) -> CastContext {
        let context = CastContext(options: options, eventLoopGroup: eventLoop, logger: logger)
        context.sessionManager.deviceLocator = discovery
        return context
    }

    /// Starts following once; later callers wait for the same start. A failed start is forgotten so the next
    /// request tries again.
    func follow(_ link: Link) async throws(CastServiceError) -> DeviceActivity {
        let task = link.started.withLockedValue { started in
            if let started { return started }
            let task = Task { try await link.observer.start() }
            started = task
            return task
        }
        do {
            let activity = try await task.value
            link.statusRecorder.withLockedValue { recorder in
                guard recorder == nil else { return }
                // Synchronously, in the observer's order: no task wakes up per status.
                recorder = link.observer.addUpdateHandler { [log] in log.append(.status($0)) }
                log.append(.status(activity))
            }
            return activity
        } catch {
            link.started.withLockedValue { if $0 == task { $0 = nil } }
            throw CastServiceError(error)
        }
    }

    /// The session for commands: the current one while it lives, else a join of the running app.
    func mediaSession(for link: Link, id: String) async throws -> CastSession {
        try await link.sessionGate.run {
            let manager = link.context.sessionManager
            if let session = manager.currentSession, session.connectionState != .disconnected {
                return session
            }
            return try await manager.joinSession(on: try device(id))
        }
    }

    /// What the device does once a command was answered: the session's view (which has the reply's status)
    /// over the observer's, which may not have seen the broadcast yet. A session the command ended holds the
    /// receiver's answer to its STOP.
    func settledActivity(of link: Link, endedSession: CastSession? = nil) async throws(CastServiceError)
        -> DeviceActivity
    {
        let observed = try await follow(link)
        var activity = link.observer.activity ?? observed
        if let session = link.context.sessionManager.currentSession, session.connectionState == .connected {
            await link.observer.share(session)  // one connection, not two, brings the device's statuses while it lasts
            if let status = session.deviceStatus { activity.deviceStatus = status }
            if let media = session.remoteMediaClient?.mediaStatus { activity.mediaStatus = media }
        } else {
            if let status = endedSession?.deviceStatus { activity.deviceStatus = status }
            if activity.application == nil { activity.mediaStatus = nil }
        }
        return activity
    }

    private func handle(_ event: DiscoveryEvent) {
        switch event {
        case .added(let device):
            if device.isStatic { state.withLockedValue { $0.configure(device) } }
            log.append(.deviceAdded(device))
            if state.withLockedValue({ $0.followsAll && !$0.isStopped }) {
                startInBackground(.follow(deviceID: device.id))
            }
        case .updated(let device):
            if device.isStatic { state.withLockedValue { $0.configure(device) } }
            log.append(.deviceUpdated(device))
        case .removed(let device) where state.withLockedValue({ $0.configured[device.id] != nil && !$0.isStopped }):
            // A configured device that stopped answering: still listed, its follower reconnecting and reporting
            // it unreachable, as an unreachable device is (502), not an unknown id (404).
            log.append(.deviceUpdated(device))
        case .removed(let device):
            log.append(.deviceRemoved(device))
            let link = state.withLockedValue { state in
                let link = state.links.removeValue(forKey: device.id)
                state.retiredReconnects += link?.observer.reconnectCount ?? 0
                return link
            }
            if let link {
                link.stopRecordingStatus()
                link.stopFollowingSessions()
                startInBackground(.stopObserver(link.observer))
            }
        default:
            break
        }
    }
}
