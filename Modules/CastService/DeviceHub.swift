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
/// Devices come from a ``DiscoveryManager`` (mDNS and static hosts). A device is followed — a virtual
/// connection to its receiver, and to its media app while one runs, through a ``DeviceObserver`` — once
/// something needs it: a status read, a command, or an event subscriber (which follows every device). Commands
/// that need a session join the app that plays (or launch the receiver app to load), one ``CastContext`` per
/// device, so sessions on different devices never wait for each other. Every change becomes a
/// ``ServiceEvent`` with an increasing id, and the last ``Options/eventWindow`` are kept for subscribers that
/// reconnect.
public final class DeviceHub: Sendable {
    /// How the hub behaves.
    public struct Options: Sendable {
        /// Timeouts, heartbeat, reconnect policy and the receiver app loads launch; its state directory keeps the
        /// devices' saved sessions.
        public var cast = CastOptions()
        /// How many past events a reconnecting subscriber can catch up on.
        public var eventWindow = 1024
        /// Folders whose media files (and files below them) may be cast; symbolic links leading out are refused.
        /// Defaults to none: no local file is cast.
        public var mediaFolders: [String] = []
        /// How many events a subscriber may fall behind before it is dropped (it reconnects with its last id).
        public var subscriberBuffer = 256

        /// The defaults.
        public init() {}
    }

    private final class Link: Sendable {
        let observer: DeviceObserver
        let context: CastContext
        let started = NIOLockedValueBox<Task<DeviceActivity, any Error>?>(nil)
        /// Serves the local file the device plays; replaced (and the old one stopped) by the next file loaded.
        let fileServer = NIOLockedValueBox<MediaServer?>(nil)
        let follower = NIOLockedValueBox<Task<Void, Never>?>(nil)

        init(observer: DeviceObserver, context: CastContext) {
            self.observer = observer
            self.context = context
        }
    }

    private struct State {
        var links: [String: Link] = [:]
        var forwarder: Task<Void, Never>?
        var followsAll = false
        var isStopped = false
    }

    /// The options the hub was made with.
    public let options: Options
    /// Where devices come from.
    public let discovery: DiscoveryManager
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let state = NIOLockedValueBox(State())
    private let log: EventLog
    private let mediaFolders: MediaFolders

    /// Creates a stopped hub.
    public init(
        options: Options = Options(),
        discovery: DiscoveryManager,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = .castDisabled
    ) {
        self.options = options
        self.discovery = discovery
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.log = EventLog(window: options.eventWindow, subscriberBuffer: options.subscriberBuffer)
        self.mediaFolders = MediaFolders(options.mediaFolders)
    }

    // MARK: - Lifecycle

    /// Starts discovery and turns its events into service events.
    ///
    /// - Throws: ``CastDiscoveryError`` when mDNS is on and avahi-daemon is unreachable.
    public func start() throws {
        let events = discovery.events()
        try discovery.start()
        let forwarder = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                self.handle(event)
            }
        }
        state.withLockedValue { $0.forwarder = forwarder }
    }

    /// Stops following devices and discovery. Sessions are left running on the devices (media keeps playing).
    public func stop() async {
        let (links, forwarder) = state.withLockedValue { state in
            state.isStopped = true
            defer { state.links = [:] }
            return (Array(state.links.values), state.forwarder)
        }
        forwarder?.cancel()
        for link in links {
            link.follower.withLockedValue { $0?.cancel() }
            await link.observer.stop()
            await link.context.sessionManager.endSession(stopCasting: false)
            await link.fileServer.withLockedValue { $0 }?.stop()
        }
        await discovery.stop()
        log.finish()
    }

    // MARK: - Reading

    /// Every known device, sorted by name, with its activity when it is followed.
    public var devices: [(device: CastDevice, activity: DeviceActivity?)] {
        let links = state.withLockedValue { $0.links }
        return discovery.devices.map { ($0, links[$0.id]?.observer.activity) }
    }

    /// The device called `id` and what it does now; follows it first if it is not followed yet.
    ///
    /// - Throws: ``CastServiceError`` — ``CastServiceError/Code/deviceNotFound``, or the session module's error
    ///   when the device cannot be reached.
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
            for device in devices { Task { _ = try? await self.activity(of: device.id) } }
        }
        return log.subscribe(after: lastID)
    }

    // MARK: - Commands

    /// Sets the device's volume level, its mute state, or both (no session needed).
    public func setVolume(of id: String, level: Double?, muted: Bool?) async throws(CastServiceError) -> DeviceActivity
    {
        if let level, !(0...1).contains(level) {
            throw CastServiceError(.invalidRequest, "level must be between 0 and 1", httpStatus: 400, field: "level")
        }
        let link = try link(for: id)
        let observed = try await follow(link)
        do {
            if let level { try await link.observer.setVolume(level) }
            if let muted { try await link.observer.setMuted(muted) }
        } catch { throw CastServiceError(error) }
        return link.observer.activity ?? observed
    }

    /// Loads `media` in the receiver app of ``Options/cast`` (launched, or joined when it already runs), with
    /// `activeTrackIDs` enabled.
    public func load(
        _ media: MediaInformation,
        on id: String,
        autoplay: Bool = true,
        startTime: Double? = nil,
        activeTrackIDs: [Int]? = nil
    ) async throws(CastServiceError) -> DeviceActivity {
        let link = try link(for: id)
        do {
            let manager = link.context.sessionManager
            let wanted = options.cast.receiverApplicationID
            var session = manager.currentSession
            if session?.connectionState != .connected || session?.application.applicationID != wanted {
                if session != nil { await manager.endSession(stopCasting: false) }
                session = try await manager.startSession(with: try device(id))
            }
            guard let client = session?.remoteMediaClient else {
                throw CastServiceError(.conflict, "the receiver app does not play media", httpStatus: 409)
            }
            var request = LoadRequestData(media: media)
            request.autoplay = autoplay
            request.currentTime = startTime
            request.activeTrackIDs = activeTrackIDs
            _ = try await client.load(request).response()
        } catch { throw CastServiceError(error) }
        return try await settledActivity(of: link)
    }

    /// Casts the local file at `path` — absolute, or relative to a folder of ``Options/mediaFolders`` — served
    /// from this machine at an address the device reaches; transcoded when the device cannot play it as it is,
    /// with its subtitles as tracks (``MediaServer/castableFile(_:device:mode:contentType:title:extraSubtitles:)``).
    ///
    /// - Throws: ``CastServiceError/Code/forbiddenPath`` (403) when the path is not a regular file inside a media
    ///   folder (after resolving `..` and symbolic links), whether or not it exists elsewhere.
    public func load(
        file path: String,
        on id: String,
        title: String? = nil,
        autoplay: Bool = true,
        startTime: Double? = nil
    ) async throws(CastServiceError) -> DeviceActivity {
        guard let real = mediaFolders.file(path) else {
            throw CastServiceError(
                .forbiddenPath,
                mediaFolders.isEmpty
                    ? "castd casts no local files: no media folder is configured (--media-folder)"
                    : "'\(path)' is not a readable file inside the media folders",
                httpStatus: 403,
                field: "file"
            )
        }
        let device = try device(id)
        let link = try link(for: id)
        let file: CastableFile
        do {
            let server = try await MediaServer.start(reaching: device.host)
            await link.fileServer.withLockedValue { current in
                defer { current = server }
                return current
            }?.stop()
            file = try await server.castableFile(
                real,
                device: .forModel(device.modelName, playsVideo: device.mayPlayVideo),
                title: title
            )
        } catch { throw CastServiceError(error) }
        return try await load(
            file.media,
            on: id,
            autoplay: autoplay,
            startTime: startTime,
            activeTrackIDs: file.activeTrackIDs
        )
    }

    /// A transport command for what the device plays, through a session that joins the running app.
    public func control(_ command: MediaCommand, on id: String) async throws(CastServiceError) -> DeviceActivity {
        let link = try link(for: id)
        do {
            let session = try await mediaSession(for: link, id: id)
            guard let client = session.remoteMediaClient else {
                throw CastServiceError(
                    .conflict,
                    "\(session.application.displayName) does not play media",
                    httpStatus: 409
                )
            }
            _ = try await command.request(on: client).response()
        } catch { throw CastServiceError(error) }
        return try await settledActivity(of: link)
    }

    /// Stops the app the device runs.
    public func stopApplication(on id: String) async throws(CastServiceError) -> DeviceActivity {
        let link = try link(for: id)
        let session: CastSession
        do {
            session = try await mediaSession(for: link, id: id)
            await link.context.sessionManager.endSession(stopCasting: true)
        } catch { throw CastServiceError(error) }
        return try await settledActivity(of: link, endedSession: session)
    }

    // MARK: - Internals

    private func device(_ id: String) throws(CastServiceError) -> CastDevice {
        guard let device = discovery.device(withID: id) else {
            throw CastServiceError(.deviceNotFound, "no device has the id '\(id)'", httpStatus: 404)
        }
        return device
    }

    private func link(for id: String) throws(CastServiceError) -> Link {
        let device = try device(id)
        return state.withLockedValue { state in
            if let link = state.links[id] { return link }
            var cast = options.cast
            cast.staticDevices = []
            let link = Link(
                observer: DeviceObserver(
                    device: device,
                    options: cast,
                    eventLoopGroup: eventLoopGroup,
                    logger: logger
                ),
                context: CastContext(options: cast, eventLoopGroup: eventLoopGroup, logger: logger)
            )
            state.links[id] = link
            return link
        }
    }

    /// Starts following once; later callers wait for the same start. A failed start is forgotten so the next
    /// request tries again.
    private func follow(_ link: Link) async throws(CastServiceError) -> DeviceActivity {
        let task = link.started.withLockedValue { started in
            if let started { return started }
            let task = Task { try await link.observer.start() }
            started = task
            return task
        }
        do {
            let activity = try await task.value
            link.follower.withLockedValue { follower in
                guard follower == nil else { return }
                let updates = link.observer.updates()
                follower = Task { [log] in
                    for await activity in updates { log.append(.status(activity)) }
                }
                log.append(.status(activity))
            }
            return activity
        } catch {
            link.started.withLockedValue { if $0 == task { $0 = nil } }
            throw CastServiceError(error)
        }
    }

    /// The session for commands: the current one while it lives, else a join of the running app.
    private func mediaSession(for link: Link, id: String) async throws -> CastSession {
        let manager = link.context.sessionManager
        if let session = manager.currentSession, session.connectionState != .disconnected {
            return session
        }
        return try await manager.joinSession(on: try device(id))
    }

    /// What the device does once a command was answered: the session's view (which has the reply's status)
    /// over the observer's, which may not have seen the broadcast yet. A session the command ended holds the
    /// receiver's answer to its STOP.
    private func settledActivity(of link: Link, endedSession: CastSession? = nil) async throws(CastServiceError)
        -> DeviceActivity
    {
        let observed = try await follow(link)
        var activity = link.observer.activity ?? observed
        if let session = link.context.sessionManager.currentSession, session.connectionState == .connected {
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
            log.append(.deviceAdded(device))
            if state.withLockedValue({ $0.followsAll && !$0.isStopped }) {
                Task { _ = try? await self.activity(of: device.id) }
            }
        case .updated(let device):
            log.append(.deviceUpdated(device))
        case .removed(let device):
            log.append(.deviceRemoved(device))
            let link = state.withLockedValue { $0.links.removeValue(forKey: device.id) }
            if let link {
                link.follower.withLockedValue { $0?.cancel() }
                Task { await link.observer.stop() }
            }
        default:
            break
        }
    }
}
