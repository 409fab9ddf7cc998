import CastDiscovery
import CastLogging
import CastStreaming
import CastTransport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One emulated Cast device: a TLS server on its own port with the platform endpoint `receiver-0`, an app
/// registry, and the Default Media Receiver's player.
///
/// The device is event driven: no thread or task of its own, each request answered on the event loop of the
/// connection that brought it, and what it sends reaches each sender in the order it decided it.
/// Its state (volume, running app, media) belongs to the device, not to a connection, so a sender that
/// reconnects rejoins the running app.
public final class EmulatedDevice: Sendable {
    /// Identifies a sender for replies: the connection and the sender id on it.
    struct Requester: Hashable, Sendable {
        var connectionID: Int
        var senderID: String
    }

    /// A virtual connection: a sender id on a connection talking to an endpoint.
    struct VirtualConnection: Hashable, Sendable {
        var senderID: String
        var endpoint: String
    }

    struct Peer: Sendable {
        var connection: CastConnection
        var virtualConnections: Set<VirtualConnection> = []
        /// The virtual connections opened invisible (connType 2): they may not LAUNCH (cast-protocol.md §3.1).
        var invisibleConnections: Set<VirtualConnection> = []
        var inboundCount = 0
        /// The media request ids its senders used lately, to refuse one used again.
        var recentMediaRequests = RecentRequestIDs()
    }

    /// The request ids a connection's senders used lately on the media namespace. CAF refuses a request whose id
    /// its sender used before with INVALID_REQUEST / DUPLICATE_REQUEST_ID (cast-protocol.md §10): a sender reusing
    /// ids would otherwise match replies to the wrong request. Ids are unique per sender connection (senders
    /// count from 1 again when they reconnect), and only the last ``capacity`` are kept, so memory stays bounded
    /// however long the connection lives.
    struct RecentRequestIDs: Sendable {
        struct Key: Hashable, Sendable {
            var senderID: String
            var requestID: JSONValue
        }

        static var capacity: Int { 256 }
        private var ring: [Key] = []
        private var oldest = 0
        private var known: Set<Key> = []

        /// Records `requestID` from `senderID`; `false` when it is among the ids recorded lately.
        mutating func insert(_ requestID: JSONValue, from senderID: String) -> Bool {
            let key = Key(senderID: senderID, requestID: requestID)
            guard known.insert(key).inserted else { return false }
            if ring.count < Self.capacity {
                ring.append(key)
            } else {
                known.remove(ring[oldest])
                ring[oldest] = key
                oldest = (oldest + 1) % Self.capacity
            }
            return true
        }
    }

    struct RunningApp: Sendable {
        var app: EmulatedApp
        var sessionID: String
        var transportID: String
        var launch: LaunchRecord?
        var player: MediaPlayer<Requester>?
        /// The Cast Streaming receiver of a mirroring app, once an OFFER was answered.
        var streaming: StreamingReceiverEndpoint?
        /// `false` while its status leaves out its transport id and namespaces (a fault).
        var isListedWhole = true
    }

    struct State: Sendable {
        var volumeLevel: Double
        var isMuted = false
        var running: RunningApp
        var peers: [Int: Peer] = [:]
        var nextConnectionID = 1
        var launchCount = 0
        var launches: [LaunchRecord] = []
        /// The session id of ``FaultInjection/listsAppBeforeRunningApp``'s app.
        var listedFirstSessionID = Identifiers.uuid()
        var faults: FaultInjection
        /// Connections the drop faults ended so far (against ``FaultInjection/dropLimit``).
        var drops = 0
        var mediaTimer: CastTimer?
        /// When ``mediaTimer`` fires (emulator seconds); `nil` when none is armed.
        var mediaTimerDeadline: Double?
        /// The last media fetch started (``DeviceConfiguration/fetchesMedia``): each waits for the one before,
        /// so requests reach the player in the order they arrived.
        var lastFetch: Task<Void, Never>?
        var server: CastServer?
        /// Where the device listens: the configuration's until a speaker group's endpoint moves with its leader.
        var host: String
        var port: Int
        /// The speaker group this device is a member of, or whose endpoint it is.
        weak var group: EmulatedGroup?
        /// The TLS certificate the device presents (DER), which its device-auth answers sign.
        var tlsCertificate: [UInt8] = []
        var deviceAuthChallenges = 0
        /// The HTTP API (`eureka_info`) while listening.
        var eureka: EurekaServer?
        /// The most recent mirroring receiver, kept after its app stops so its statistics stay readable.
        var lastStreaming: StreamingReceiverEndpoint?
    }

    /// One message to put on the wire.
    struct Outgoing: Sendable {
        var connection: CastConnection
        var message: CastMessage
    }

    /// The configuration the device was created with (faults can change later with ``setFaults(_:)``).
    public let configuration: DeviceConfiguration
    let clock: any CastClock
    let logger: Logger
    let wireLog: WireLog?
    private let eventLoopGroup: any EventLoopGroup
    let state: NIOLockedValueBox<State>
    /// Held from deciding what to send until it is queued (``emit(_:)``), so that sends keep the order decided.
    private let outputOrder = NIOLock()
    /// How LOAD fetches media with ``DeviceConfiguration/fetchesMedia`` (one TLS context for the device's life);
    /// `nil` when the option is off, or the system trust store cannot be read (media is then not fetched).
    private let mediaFetcher: MediaFetcher?
    /// What `eureka_info` lists as the device's speaker groups (``setMultizoneGroups(_:)``).
    private let multizoneGroups = NIOLockedValueBox<@Sendable () -> [JSONValue]>({ [] })

    /// Creates a device; call ``start()`` to listen.
    public init(
        configuration: DeviceConfiguration,
        clock: any CastClock = SystemCastClock(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        wireLog: WireLog? = nil,
        logger: Logger = .castDisabled
    ) {
        self.configuration = configuration
        self.mediaFetcher = configuration.fetchesMedia ? try? MediaFetcher() : nil
        self.clock = clock
        self.eventLoopGroup = eventLoopGroup
        self.wireLog = wireLog
        var logger = logger.withCategory(CastLogCategory.receiver)
        logger[metadataKey: CastLogMetadataKey.deviceID] = "\(configuration.id)"
        self.logger = logger
        let backdrop = RunningApp(
            app: .backdrop,
            sessionID: configuration.sessionIDGenerator(),
            transportID: "",
            launch: nil,
            player: nil
        )
        var idle = backdrop
        idle.transportID = idle.sessionID
        self.state = NIOLockedValueBox(
            State(
                volumeLevel: configuration.volumeLevel,
                running: idle,
                faults: configuration.faults,
                host: configuration.host,
                port: configuration.port
            )
        )
    }

    // MARK: - Lifecycle

    /// Starts listening; afterwards ``port`` is the bound port.
    ///
    /// - Throws: ``CastReceiverError`` with ``CastReceiverError/Code/listenFailed`` or
    ///   ``CastReceiverError/Code/invalidConfiguration`` (an unusable certificate).
    public func start() async throws {
        let tlsContext: TLSContext
        do {
            let identity =
                try configuration.identity ?? configuration.deviceAuth?.tlsIdentity ?? EmulatorIdentity.current()
            tlsContext = try TLSContext.makeServerContext(identity: identity)
            let certificate = try identity.certificateDER()
            state.withLockedValue { $0.tlsCertificate = certificate }
        } catch {
            throw CastReceiverError(.invalidConfiguration, "the TLS identity is unusable: \(error)", cause: error)
        }
        var serverConfiguration = CastServer.Configuration()
        serverConfiguration.connection.heartbeat.pingInterval = configuration.heartbeatInterval
        serverConfiguration.connection.heartbeat.deadAfter = configuration.idleTimeout
        serverConfiguration.connection.connectTimeout = configuration.handshakeTimeout
        serverConfiguration.maximumConnections = configuration.maximumConnections
        let (faults, host, port) = state.withLockedValue { ($0.faults, $0.host, $0.port) }
        serverConfiguration.connection.heartbeat.pongLimit = faults.stopsAnsweringPingsAfter
        do {
            let server = try await CastServer.bind(
                host: host,
                port: port,
                tlsContext: tlsContext,
                configuration: serverConfiguration,
                eventLoopGroup: eventLoopGroup,
                logger: logger
            ) { [weak self] connection in
                self?.accept(connection)
            }
            state.withLockedValue { state in
                state.server = server
                state.port = server.port
            }
            logger.debug("listening", metadata: ["cast.port": "\(server.port)"])
            startStatusFlood()
        } catch {
            // Once, in the system's words: the transport's description repeats its message with the cause, and
            // NIO's description of a failed bind has an unbalanced parenthesis.
            let cause = (error as? CastTransportError)?.cause ?? error
            let reason = (cause as? IOError).map { String(cString: strerror($0.errnoCode)) } ?? "\(cause)"
            throw CastReceiverError(.listenFailed, "cannot listen on \(host):\(port): \(reason)", cause: error)
        }
        try await startEureka(castPort: port)
    }

    /// Serves `eureka_info` on ``DeviceConfiguration/eurekaPort`` (or 8008 beside 8009).
    private func startEureka(castPort: Int) async throws {
        guard let eurekaPort = configuration.eurekaPort ?? (castPort == 8009 ? 8008 : nil) else { return }
        do {
            let server = try await EurekaServer.bind(
                host: configuration.host,
                port: eurekaPort,
                eventLoopGroup: eventLoopGroup
            ) { [weak self] params in
                self?.eurekaInfo(params: params) ?? [:]
            }
            state.withLockedValue { $0.eureka = server }
            logger.debug("serving eureka_info", metadata: ["cast.port": "\(server.port)"])
        } catch {
            guard configuration.eurekaPort != nil else {
                logger.warning("not serving eureka_info on \(configuration.host):\(eurekaPort): \(error)")
                return
            }
            await stop()
            throw CastReceiverError(
                .listenFailed,
                "cannot serve eureka_info on \(configuration.host):\(eurekaPort): \(error)",
                cause: error
            )
        }
    }

    /// The port `eureka_info` is served on while the device runs; `nil` when it is not served.
    public var eurekaPort: Int? { state.withLockedValue { $0.eureka?.port } }

    /// Sets what `eureka_info` lists in `multizone.groups`: objects of the shape real devices use (`name`,
    /// `uuid`, `elected_leader` `"self"` or `"ip:port"`, `cast_port`), read at each request. Empty by default.
    public func setMultizoneGroups(_ provider: @escaping @Sendable () -> [JSONValue]) {
        multizoneGroups.withLockedValue { $0 = provider }
    }

    /// The `eureka_info` document in the shape devices use: `name` and `ssdp_udn` always, `device_info` and
    /// `multizone` when `params` asks for them or names nothing.
    public func eurekaInfo(params: Set<String>? = nil) -> JSONValue {
        let udn = CastDeviceID.hyphenated(configuration.id.lowercased())
        var document: JSONValue = [
            "name": .string(configuration.friendlyName), "ssdp_udn": .string(udn),
            "version": 12, "build_version": "swift-cast emulator",
        ]
        if params?.contains("device_info") ?? true {
            document["device_info"] = [
                "manufacturer": "swift-cast", "model_name": .string(configuration.model), "ssdp_udn": .string(udn),
                "capabilities": [
                    "display_supported": .bool(configuration.capabilities & 1 != 0), "multizone_supported": true,
                ],
            ]
        }
        if params?.contains("multizone") ?? true {
            let groups = multizoneGroups.withLockedValue { $0 }()
            document["multizone"] = ["groups": .array(groups), "dynamic_groups": []]
        }
        return document
    }

    /// Stops listening and closes every connection. The device can be started again.
    public func stop() async {
        let (server, peers, eureka) = state.withLockedValue { state -> (CastServer?, [Peer], EurekaServer?) in
            defer {
                state.server = nil
                state.eureka = nil
                state.peers = [:]
                state.mediaTimer?.cancel()
                state.mediaTimer = nil
                state.mediaTimerDeadline = nil
            }
            return (state.server, Array(state.peers.values), state.eureka)
        }
        await eureka?.close()
        await server?.close()
        for peer in peers { await peer.connection.close() }
    }

    /// Closes every sender connection at once while the device keeps listening and its app keeps running, as a
    /// Wi-Fi drop does: senders must reconnect and re-join.
    public func dropConnections() async {
        let peers = state.withLockedValue { state -> [Peer] in
            defer { state.peers = [:] }
            return Array(state.peers.values)
        }
        for peer in peers { await peer.connection.close() }
    }

    /// The port the device listens on (the configured one until ``start()`` binds).
    public var port: Int { state.withLockedValue { $0.port } }

    /// The address the device listens on.
    public var host: String { state.withLockedValue { $0.host } }

    /// Moves the device to another address and port (0: a free one) while its app and media go on, as a speaker
    /// group's endpoint moves when another member becomes its leader: every sender connection ends abruptly (the
    /// old leader is gone), and senders find the device again at its new place.
    ///
    /// - Throws: ``CastReceiverError/Code/listenFailed`` when the new place cannot be bound.
    public func relocate(toHost host: String, port: Int) async throws {
        let (server, peers) = state.withLockedValue { state -> (CastServer?, [Peer]) in
            defer {
                state.server = nil
                state.peers = [:]
                (state.host, state.port) = (host, port)
            }
            return (state.server, Array(state.peers.values))
        }
        await server?.close()
        for peer in peers { peer.connection.abort() }
        try await start()
    }

    /// Changes the device's misbehaviour; applies to existing connections where it can.
    public func setFaults(_ faults: FaultInjection) {
        let connections = state.withLockedValue { state in
            state.faults = faults
            return state.peers.values.map(\.connection)
        }
        for connection in connections {
            connection.setOutboundChunkSize(faults.writesInChunksOf, interval: faults.chunkInterval)
        }
    }

    /// The current faults.
    public var faults: FaultInjection { state.withLockedValue { $0.faults } }

    /// What runs now (Backdrop when idle).
    public var runningApp: RunningAppSnapshot {
        state.withLockedValue { state in
            RunningAppSnapshot(
                appID: state.running.app.id,
                sessionID: state.running.sessionID,
                transportID: state.running.transportID,
                isIdleScreen: state.running.app.kind == .idleScreen,
                launch: state.running.launch
            )
        }
    }

    /// Every LAUNCH received, in order.
    public var launches: [LaunchRecord] { state.withLockedValue { $0.launches } }

    /// The number of open sender connections.
    public var connectionCount: Int { state.withLockedValue { $0.peers.count } }

    /// How many device-authentication messages senders sent.
    public var deviceAuthChallenges: Int { state.withLockedValue { $0.deviceAuthChallenges } }

    /// The number of sender connections with a virtual connection to the running app: each gets its broadcasts.
    public var appListenerCount: Int {
        state.withLockedValue { state in
            let transportID = state.running.transportID
            return state.peers.values.filter { $0.virtualConnections.contains { $0.endpoint == transportID } }.count
        }
    }

    /// The device volume and mute state.
    public var volume: (level: Double, muted: Bool) { state.withLockedValue { ($0.volumeLevel, $0.isMuted) } }

    /// The current MEDIA_STATUS entry of the running media app, if a media session exists.
    public var mediaStatus: JSONValue? {
        let now = clock.now.inSeconds
        return state.withLockedValue { state in
            guard let player = state.running.player, let session = player.session else { return nil }
            return player.statusEntry(of: session, at: now)
        }
    }

    /// The LOAD credentials the running app last received (Cast Connect).
    public var mediaCredentials: JSONValue? {
        state.withLockedValue { state in
            guard let credentials = state.running.player?.credentials, !credentials.isEmpty else { return nil }
            return .object(credentials)
        }
    }

    // MARK: - Connections

    private func accept(_ connection: CastConnection) {
        let (id, faults) = state.withLockedValue { state -> (Int, FaultInjection) in
            defer { state.nextConnectionID += 1 }
            state.peers[state.nextConnectionID] = Peer(connection: connection)
            return (state.nextConnectionID, state.faults)
        }
        // On the connection's event loop as each message is read: a request is answered in the turn of the loop
        // that read it, and no task waits per connection (thousands of idle connections park nothing).
        _ = connection.addMessageHandler { [weak self] message in self?.receive(message, on: id) }
        _ = connection.addEventHandler { [weak self] event in
            if case .disconnected = event { self?.disconnected(id) }
        }
        if faults.refusesConnections {
            logger.debug("refusing a connection (fault)")
            connection.abort()
        }
        if let size = faults.writesInChunksOf { connection.setOutboundChunkSize(size, interval: faults.chunkInterval) }
    }

    private func disconnected(_ id: Int) {
        state.withLockedValue { _ = $0.peers.removeValue(forKey: id) }
        logger.debug("sender disconnected", metadata: ["cast.connection": "\(id)"])
    }

    /// Handles one inbound message: fault counters, virtual connections, then the namespace's handler.
    func receive(_ message: CastMessage, on id: Int) {
        wireLog?.record(message, direction: "recv", device: configuration.id)
        let now = clock.now.inSeconds
        var abort: CastConnection?
        var malformed: CastConnection?
        var groupChange: GroupChange?
        emit { state in
            guard var peer = state.peers[id] else { return [] }
            let before = (state.running.app.kind == .idleScreen, state.volumeLevel, state.isMuted)
            defer {
                let after = (state.running.app.kind == .idleScreen, state.volumeLevel, state.isMuted)
                if let group = state.group, before != after {
                    groupChange = GroupChange(group: group, playbackChanged: before.0 != after.0)
                }
            }
            peer.inboundCount += 1
            let mayDrop = state.faults.dropLimit.map { state.drops < $0 } ?? true
            let type =
                state.faults.dropsOn == nil && state.faults.losesReplyTo == nil
                ? nil : (try? message.json())?["type"]?.stringValue
            let dropsNow =
                state.faults.closesAfterMessages.map { peer.inboundCount > $0 } ?? false
                || (type != nil && type == state.faults.dropsOn)
            if dropsNow, mayDrop {
                state.drops += 1
                abort = peer.connection
                state.peers[id] = peer
                return []
            }
            if let after = state.faults.sendsMalformedFrameAfterMessages, peer.inboundCount == after {
                malformed = peer.connection
            }
            state.peers[id] = peer
            var outgoing = handle(message, from: id, state: &state, now: now)
            if type != nil, type == state.faults.losesReplyTo, mayDrop {
                // Acted on; the answer to this sender is lost with the connection.
                state.drops += 1
                abort = peer.connection
                outgoing.removeAll { $0.connection === peer.connection }
            }
            return outgoing
        }
        if message.namespace == CastNamespace.multizone, message.destinationID == CastEndpoint.receiver {
            receiveMultizone(message, on: id)
        }
        if let groupChange { groupChange.notify(from: self) }
        if let abort {
            logger.debug("closing abruptly (fault)")
            abort.abort()
            return
        }
        if let malformed {
            // A length prefix promising 5 bytes followed by bytes that are no CastMessage.
            Task { try? await malformed.writeRawFrameBytes([0, 0, 0, 5, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) }
        }
    }

    /// Decides what to send under the state lock and queues it before another decision can queue its own: each
    /// sender gets messages in the order the device decided them, as from a real device's one thread (a status
    /// decided before a LOAD never arrives after the LOAD's answer).
    func emit(_ decide: (inout State) -> [Outgoing]) {
        outputOrder.withLock {
            let (outgoing, delay) = state.withLockedValue { state in (decide(&state), state.faults.replyDelay) }
            deliver(outgoing, delay: delay)
        }
    }

    /// Queues `outgoing` on its connections in order, now or after the reply-delay fault; call it through
    /// ``emit(_:)`` where what is sent depends on the state.
    func deliver(_ outgoing: [Outgoing]) {
        guard !outgoing.isEmpty else { return }
        deliver(outgoing, delay: state.withLockedValue { $0.faults.replyDelay })
    }

    private func deliver(_ outgoing: [Outgoing], delay: Double?) {
        guard !outgoing.isEmpty else { return }
        if let delay, delay > 0 {
            clock.schedule(after: .emulatorSeconds(delay)) { [wireLog, logger, id = configuration.id] in
                Self.post(outgoing, wireLog: wireLog, deviceID: id, logger: logger)
            }
        } else {
            Self.post(outgoing, wireLog: wireLog, deviceID: configuration.id, logger: logger)
        }
    }

    /// One queued write per connection, its messages in order.
    ///
    /// A message over the frame limit would fail its write where nobody hears of it (a post reports nothing):
    /// it is left out with a warning instead, so a sender left without its reply can be explained from the log.
    private static func post(_ outgoing: [Outgoing], wireLog: WireLog?, deviceID: String, logger: Logger) {
        var outgoing = outgoing
        outgoing.removeAll { item in
            do {
                try item.message.checkFrameSize()
                return false
            } catch {
                logger.warning(
                    "not sending a message: \(error)",
                    metadata: ["cast.destination": "\(item.message.destinationID)"]
                )
                return true
            }
        }
        guard !outgoing.isEmpty else { return }
        if let wireLog {
            for item in outgoing { wireLog.record(item.message, direction: "send", device: deviceID) }
        }
        if outgoing.count == 1 {
            outgoing[0].connection.post(outgoing[0].message)
            return
        }
        var batches: [(connection: CastConnection, messages: [CastMessage])] = []
        for item in outgoing {
            if let index = batches.lastIndex(where: { $0.connection === item.connection }) {
                batches[index].messages.append(item.message)
            } else {
                batches.append((item.connection, [item.message]))
            }
        }
        for batch in batches { batch.connection.post(batch.messages) }
    }

    // MARK: - Dispatch

    private func handle(_ message: CastMessage, from id: Int, state: inout State, now: Double) -> [Outgoing] {
        guard let peer = state.peers[id] else { return [] }
        let vc = VirtualConnection(senderID: message.sourceID, endpoint: message.destinationID)
        switch message.namespace {
        case CastNamespace.connection:
            return handleConnection(message, vc: vc, peerID: id, state: &state)
        case CastNamespace.heartbeat:
            return []  // answered by the transport's heartbeat handler
        case CastNamespace.deviceAuth:
            // The namespace is binary (cast-protocol.md §5): a STRING payload is no challenge, and is ignored
            // rather than answered with an error the sender did not ask for.
            guard case .binary = message.payload else { return [] }
            state.deviceAuthChallenges += 1
            // Without credentials, a device answers as one that has none.
            let answer =
                configuration.deviceAuth.map { $0.answer(to: message, tlsCertificate: state.tlsCertificate) }
                ?? EmulatedDeviceAuth.errorAnswer(.internalError, to: message)
            return answer.map { [Outgoing(connection: peer.connection, message: $0)] } ?? []
        default:
            break
        }
        guard peer.virtualConnections.contains(vc) else {
            logger.debug(
                "dropping a message without a virtual connection",
                metadata: ["cast.source": "\(message.sourceID)", "cast.destination": "\(message.destinationID)"]
            )
            return []
        }
        if message.destinationID == CastEndpoint.receiver, message.namespace == CastNamespace.receiver {
            guard let json = try? message.json(), json.objectValue != nil else { return [] }
            return handleReceiver(
                json,
                from: Requester(connectionID: id, senderID: message.sourceID),
                state: &state,
                now: now
            )
        }
        if message.destinationID == CastEndpoint.receiver, message.namespace == CastNamespace.receiverDiscovery {
            guard let json = try? message.json(), json["type"]?.stringValue == "GET_DEVICE_INFO",
                !state.faults.ignoresDeviceInfo
            else { return [] }
            return [
                Outgoing(
                    connection: peer.connection,
                    message: CastMessage(
                        sourceID: CastEndpoint.receiver,
                        destinationID: message.sourceID,
                        namespace: CastNamespace.receiverDiscovery,
                        json: deviceInfo(requestID: echoedRequestID(json["requestId"]))
                    )
                )
            ]
        }
        guard message.destinationID == state.running.transportID,
            state.running.app.namespaces.contains(message.namespace)
        else { return [] }
        let requester = Requester(connectionID: id, senderID: message.sourceID)
        if message.namespace == CastNamespace.media, state.running.player != nil {
            guard let request = (try? message.json())?.objectValue else { return [] }
            // 0 (or none) asks for no reply to match, so it may repeat.
            if let requestID = request["requestId"]?.present, requestID != 0,
                state.peers[id]?.recentMediaRequests.insert(requestID, from: message.sourceID) == false
            {
                let refusal: JSONValue = [
                    "type": "INVALID_REQUEST", "reason": "DUPLICATE_REQUEST_ID", "requestId": requestID,
                ]
                return resolve([MediaDelivery(recipient: .requester(requester), payload: refusal)], state: state)
            }
            if let mediaFetcher, MediaFetcher.needsFetch(request) {
                let logger = self.logger
                fetchThenHandle(request, from: requester, state: &state) {
                    await MediaFetcher.fetchAll(request, fetcher: mediaFetcher, logger: logger)
                }
                return []
            }
            if let mediaFetcher,
                let target = MediaFetcher.hlsSeekTarget(request, player: state.running.player!, at: now)
            {
                let logger = self.logger
                fetchThenHandle(request, from: requester, state: &state) {
                    if let failure = await mediaFetcher.fetchSegment(playlistURL: target.playlist, at: target.seconds) {
                        logger.notice("SEEK to \(target.seconds) s: \(failure.reason)")
                    }
                    return request
                }
                return []
            }
            let deliveries = state.running.player!.handle(request, from: requester, at: now)
            rescheduleMedia(state: &state, now: now)
            return resolve(deliveries, state: state)
        }
        if state.running.app.kind == .mirroring, message.namespace == MirroringSession.namespace {
            return handleStreaming(message, from: requester, connection: peer.connection, state: &state)
        }
        if state.running.app.kind == .echo {
            return [
                Outgoing(
                    connection: peer.connection,
                    message: CastMessage(
                        sourceID: message.destinationID,
                        destinationID: message.sourceID,
                        namespace: message.namespace,
                        payload: message.payload
                    )
                )
            ]
        }
        return []
    }

    private func handleConnection(_ message: CastMessage, vc: VirtualConnection, peerID: Int, state: inout State)
        -> [Outgoing]
    {
        guard let json = try? message.json(), let type = json["type"]?.stringValue, var peer = state.peers[peerID]
        else { return [] }
        switch type {
        case "CONNECT":
            let known =
                vc.endpoint == CastEndpoint.receiver || vc.endpoint == state.running.transportID
                || (state.faults.listsAppBeforeRunningApp != nil && vc.endpoint == state.listedFirstSessionID)
            // connType 0 (strong), 1 (weak) or 2 (invisible); absent or null is strong.
            let connectionType = json["connType"]?.present
            let validType = connectionType.map { (0...2).contains($0.intValue ?? -1) } ?? true
            guard known, validType else {
                // No such endpoint, or no such kind of connection: refuse it the way receivers do, with CLOSE
                // (reason 3, invalid message).
                return [
                    Outgoing(
                        connection: peer.connection,
                        message: CastMessage(
                            sourceID: vc.endpoint,
                            destinationID: vc.senderID,
                            namespace: CastNamespace.connection,
                            json: ["type": "CLOSE", "reasonCode": 3]
                        )
                    )
                ]
            }
            peer.virtualConnections.insert(vc)
            if connectionType?.intValue == 2 {
                peer.invisibleConnections.insert(vc)
            } else {
                peer.invisibleConnections.remove(vc)
            }
        case "CLOSE":
            peer.virtualConnections.remove(vc)
            peer.invisibleConnections.remove(vc)
        default:
            break
        }
        state.peers[peerID] = peer
        return []
    }

    // MARK: - Media plumbing

    /// Turns the player's deliveries into messages for connections with a virtual connection to the app.
    func resolve(_ deliveries: [MediaDelivery<Requester>], state: State) -> [Outgoing] {
        let transportID = state.running.transportID
        let faults = state.faults
        var out: [Outgoing] = []
        for delivery in deliveries {
            switch delivery.recipient {
            case .requester(let requester):
                guard let peer = state.peers[requester.connectionID] else { continue }
                var payload = delivery.payload
                let asBroadcast = faults.statusOnlyByBroadcast && payload["type"]?.stringValue == "MEDIA_STATUS"
                if asBroadcast { payload["requestId"] = 0 }
                let message = CastMessage(
                    sourceID: transportID,
                    destinationID: faults.addressesRepliesToBroadcast || asBroadcast
                        ? CastEndpoint.broadcast : requester.senderID,
                    namespace: CastNamespace.media,
                    json: payload
                )
                // One that cannot be made to fit is left out with a warning when posted.
                let fitted = MediaStatusFitting.fitted(message, payload: payload) ?? message
                out.append(Outgoing(connection: peer.connection, message: fitted))
            case .everyone(let excluded):
                let message = CastMessage(
                    sourceID: transportID,
                    destinationID: CastEndpoint.broadcast,
                    namespace: CastNamespace.media,
                    json: delivery.payload
                )
                let fitted = MediaStatusFitting.fitted(message, payload: delivery.payload) ?? message
                for (id, peer) in state.peers.sorted(by: { $0.key < $1.key }) {
                    let listeners = peer.virtualConnections.filter { $0.endpoint == transportID }
                    guard !listeners.isEmpty else { continue }
                    if let excluded, excluded.connectionID == id, listeners.count == 1 { continue }
                    out.append(Outgoing(connection: peer.connection, message: fitted))
                }
            }
        }
        return out
    }

    /// Arms the clock for the player's next spontaneous transition (end of item, ad clip, preload, load).
    ///
    /// A timer already armed for that time or earlier is kept: it fires, advances the player (which finds
    /// nothing due if a command moved the transition) and arms the next. Cancelling instead would search every
    /// timer of the event loop on each PAUSE and PLAY.
    func rescheduleMedia(state: inout State, now: Double) {
        // A deadline past the clock's horizon (media of 1e10 s, a break at 1e12 s) never comes: no timer.
        guard let deadline = state.running.player?.nextDeadline(after: now), deadline.isFinite,
            deadline - now < Duration.emulatorHorizon
        else { return }
        if let armed = state.mediaTimerDeadline, armed <= deadline { return }
        state.mediaTimerDeadline = deadline
        state.mediaTimer = clock.schedule(after: .emulatorSeconds(deadline - now)) { [weak self] in
            self?.mediaTimerFired(armedFor: deadline)
        }
    }

    /// The status-flood fault: every 10 ms, a hundredth of the rate's statuses to every sender.
    func startStatusFlood() {
        guard let rate = state.withLockedValue({ $0.faults.statusFloodPerSecond }), rate > 0 else { return }
        floodTick(batch: max(1, rate / 100))
    }

    private func floodTick(batch: Int) {
        let now = clock.now.inSeconds
        var goOn = false
        emit { state in
            guard state.faults.statusFloodPerSecond != nil, state.server != nil else { return [] }
            goOn = true
            guard state.running.player != nil else { return [] }
            var out: [Outgoing] = []
            for _ in 0..<batch { out += resolve([state.running.player!.broadcastStatus(at: now)], state: state) }
            return out
        }
        guard goOn else { return }
        _ = clock.schedule(after: .milliseconds(10)) { [weak self] in self?.floodTick(batch: batch) }
    }

    private func mediaTimerFired(armedFor deadline: Double) {
        let now = clock.now.inSeconds
        emit { state in
            if state.mediaTimerDeadline == deadline {
                state.mediaTimerDeadline = nil
                state.mediaTimer = nil
            }
            guard state.running.player != nil else { return [] }
            let deliveries = state.running.player!.advance(to: now)
            rescheduleMedia(state: &state, now: now)
            return resolve(deliveries, state: state)
        }
    }

    // MARK: - Fetching media like a device

    /// Fetches what `request` needs (`fetch`: a LOAD's media, a SEEK's segment), then hands the player what it
    /// returns (the request, with the duration or the failure a device would report). Runs after earlier fetches,
    /// so requests keep their order.
    private func fetchThenHandle(
        _ request: [String: JSONValue],
        from requester: Requester,
        state: inout State,
        fetch: @escaping @Sendable () async -> [String: JSONValue]
    ) {
        let previous = state.lastFetch
        let transportID = state.running.transportID
        state.lastFetch = Task { [weak self] in
            await previous?.value
            let fetched = await fetch()
            self?.handleFetched(fetched, from: requester, transportID: transportID)
        }
    }

    private func handleFetched(_ request: [String: JSONValue], from requester: Requester, transportID: String) {
        let now = clock.now.inSeconds
        emit { state in
            // The app may have stopped (or another launched) while fetching: the request has no player left.
            guard state.running.transportID == transportID, state.running.player != nil else { return [] }
            let deliveries = state.running.player!.handle(request, from: requester, at: now)
            rescheduleMedia(state: &state, now: now)
            return resolve(deliveries, state: state)
        }
    }
}

extension EmulatedDevice {
    /// This device as a sender would list it given only its address: a static entry with the device's id, name
    /// and capabilities.
    public var castDevice: CastDevice {
        var device = CastDevice.staticDevice(host: host, port: port, name: configuration.friendlyName)
        device.id = configuration.id
        device.capabilities = DeviceCapabilities(rawValue: configuration.capabilities)
        return device
    }
}

extension Duration {
    /// `seconds`, as the emulator's players and faults count, rounded to whole nanoseconds, so a deadline worked
    /// out in seconds falls exactly where a test's sum of durations (`.seconds(3)`, `.milliseconds(300)`) does.
    ///
    /// Total: a negative or NaN delay is none, and one beyond ``emulatorHorizon`` (or infinite) is the horizon, where
    /// a conversion to whole nanoseconds would trap on overflow.
    static func emulatorSeconds(_ seconds: Double) -> Duration {
        guard seconds > 0 else { return .zero }
        return .nanoseconds(Int64((min(seconds, emulatorHorizon) * 1e9).rounded()))
    }

    /// The longest delay the emulator arms a timer for (about 31 years); a later deadline counts as never.
    /// Far below `Int64.max` nanoseconds (292 years), so a clock adding it to its time cannot overflow either.
    static var emulatorHorizon: Double { 1e9 }
}
