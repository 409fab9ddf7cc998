import CastLogging
import Logging
import NIOCore
import NIOPosix
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request on the wire, waiting for its reply.
public struct PendingReply: Sendable {
    /// The request's `requestId`.
    public var requestID: Int { request.requestID }
    private var promise: EventLoopPromise<CastMessage> { request.promise }
    /// Its reply is filled in by the router as it is read, before the promise completes, so it is visible before any
    /// task resumes.
    private let request: RouterRequest

    fileprivate init(_ request: RouterRequest) {
        self.request = request
    }

    /// The reply if it has already arrived, without waiting. Replies on one connection are read in order, so
    /// once a later request's reply was received, an earlier request's reply — if the peer sent one — is here.
    public var arrivedReply: CastMessage? { request.arrived.withLock { $0 } }

    /// The reply, completed on the connection's event loop as it is read (or failed by the timeout or the
    /// connection's end): for a layer that finishes its own request there instead of in a task.
    package var futureResult: EventLoopFuture<CastMessage> { promise.futureResult }

    /// Ends the request with `message` as if it were its reply: for a receiver that reports a command only by
    /// broadcasting its effect. A reply that comes later changes nothing.
    package func answer(with message: CastMessage) {
        request.arrived.withLock { $0 = $0 ?? message }
        promise.succeed(message)
    }

    /// Waits for the reply, the timeout or the connection's end.
    ///
    /// - Throws: ``CastTransportError`` — ``CastTransportError/Code/requestTimedOut``,
    ///   ``CastTransportError/Code/connectionClosed``; `CancellationError` when the task is cancelled.
    public func response() async throws -> CastMessage {
        let promise = self.promise
        return try await withTaskCancellationHandler {
            try await promise.futureResult.get()
        } onCancel: {
            promise.fail(CancellationError())
        }
    }
}

/// What happens to a connection, as seen by the layers above it.
public enum CastConnectionEvent: Sendable, Hashable {
    /// TCP and TLS are up (after the first connect and after every ``CastConnection/reconnect()``).
    case connected
    /// The transport ended; `nil` when we closed it ourselves, otherwise the reason (peer closed, heartbeat
    /// timeout, malformed frame, …).
    case disconnected(CastTransportError.Code?)
    /// The peer closed the virtual connection from `endpoint` (its app stopped or was replaced).
    case virtualConnectionClosed(endpoint: String)
    /// Device authentication finished (after every connect that challenged the device).
    case deviceAuthenticated(DeviceAuthentication)
}

/// One TLS connection to a Cast device (or, on the server side, from a sender): framing, heartbeat, virtual
/// connections and request/response correlation.
///
/// A connection is event driven on a SwiftNIO event loop: it owns no thread, so one process can hold thousands.
/// Inbound messages are offered to any number of subscribers through ``messages()``; requests are `async` and
/// resume when the reply with their `requestId` arrives, when their timeout passes, or when the connection ends.
///
/// ```swift
/// let connection = try await CastConnection.connect(host: "192.168.1.20")
/// try await connection.openVirtualConnection(to: CastEndpoint.receiver)
/// let status = try await connection.request(namespace: CastNamespace.receiver, to: CastEndpoint.receiver,
///                                           payload: ["type": "GET_STATUS"])
/// ```
public final class CastConnection: Sendable {
    /// Settings for one connection. Every value has a documented default.
    public struct Configuration: Sendable {
        /// Our endpoint id, the source of what we send and a destination we accept. Defaults to `sender-0`.
        public var localID = CastEndpoint.sender
        /// The peer's platform endpoint, the target of heartbeat PINGs. Defaults to `receiver-0`.
        public var peerID = CastEndpoint.receiver
        /// Limit for TCP connect and, separately, for the TLS handshake. Defaults to 10 s.
        public var connectTimeout: Duration = .seconds(10)
        /// Default limit for a request's reply. Defaults to 10 s.
        public var requestTimeout: Duration = .seconds(10)
        /// Keep-alive: ping after 5 s of silence, dead after 15 s.
        public var heartbeat = HeartbeatConfiguration()
        /// The `userAgent` sent in CONNECT.
        public var userAgent = CastTransportVersion.userAgent
        /// Deliver only messages addressed to ``localID`` or `*` (replies are matched regardless). Servers turn
        /// this off because they host many endpoints. Defaults to `true`.
        public var filtersByDestination = true
        /// Whether and how the device must prove it is a genuine Cast device right after TLS. Defaults to
        /// ``DeviceAuthPolicy/warn`` without trust anchors: no challenge.
        public var deviceAuth = DeviceAuthOptions()
        /// The first request's `requestId`; the next ones count up from it. Defaults to `nil`: a random one below
        /// 2^30, as Chrome on Android and several other senders pick. Other senders count from 1, and a device
        /// that addresses every reply to `*` shows us theirs: with ids of our own far from theirs, another
        /// sender's reply is not taken for ours (and receivers that reject a `requestId` already used by
        /// another sender do not reject ours).
        public var firstRequestID: Int? = nil

        /// The defaults.
        public init() {}
    }

    private struct State {
        var channel: (any Channel)?
        var endpoints: [String] = []
        var nextRequestID: Int
        var isClosed = false
        var authentication = DeviceAuthentication.notAttempted(reason: "not connected yet")
        /// Where the answer to the outstanding device-auth challenge goes.
        var authReply: EventLoopPromise<CastMessage>?
        /// Counts challenges: the timer, close and result of an earlier one must not touch a later one's.
        var authChallenge = 0
        /// Where the peer is: set at connect, moved by ``reconnect(toHost:port:)``.
        var host: String
        var port: Int
        /// Why the transport last ended other than by our own close (``CastConnectionEvent/disconnected(_:)``'s
        /// code).
        var lastDropCode: CastTransportError.Code?
    }

    /// The peer's host name or address (a speaker group's moves with its leader: see ``reconnect(toHost:port:)``).
    public var host: String { state.withLock { $0.host } }
    /// The peer's TCP port.
    public var port: Int { state.withLock { $0.port } }
    /// The settings this connection was made with.
    public let configuration: Configuration

    private let state: Mutex<State>
    private let tlsContext: TLSContext
    /// The loop every transport of this connection runs on, reconnects included (picked once from the group).
    private let eventLoop: any EventLoop
    /// Runs the tasks that handle this connection's messages on its event loop.
    package let taskExecutor: EventLoopTaskExecutor
    private let logger: Logger
    private let inbound = EventBroadcaster<CastMessage>()
    private let lifecycle = EventBroadcaster<CastConnectionEvent>()
    private let isServerSide: Bool
    /// Posts queued and not yet written (``post(_:)``): the last one written flushes them all.
    private let pendingPosts = Atomic<Int>(0)
    /// Posts written since the last flush (touched on the event loop only).
    private let unflushedPosts = Atomic<Int>(0)
    /// How many posted messages a flush waits for at most.
    private static let postsPerFlush = 32
    /// Bytes ``enqueue(_:)`` queued that the event loop has not written yet.
    private let queuedBytes = Atomic<Int>(0)
    /// How much ``enqueue(_:)`` queues before it waits for writes: NIO's default high-water mark.
    private static let queuedBytesLimit = 64 * 1024

    private init(
        host: String,
        port: Int,
        configuration: Configuration,
        tlsContext: TLSContext,
        eventLoopGroup: any EventLoopGroup,
        isServerSide: Bool,
        logger: Logger
    ) {
        let first = configuration.firstRequestID.map { min(max($0, 1), Int(Int32.max)) } ?? .random(in: 1...(1 << 30))
        self.state = Mutex(State(nextRequestID: first, host: host, port: port))
        self.configuration = configuration
        self.tlsContext = tlsContext
        self.eventLoop = eventLoopGroup.next()
        self.taskExecutor = EventLoopTaskExecutor(eventLoop)
        self.isServerSide = isServerSide
        self.logger = logger.withCategory(CastLogCategory.transportChannel)
            .withMetadata([CastLogMetadataKey.peer: "\(host):\(port)"])
    }

    // MARK: - Connecting

    /// Connects to a Cast device over TLS.
    ///
    /// - Parameters:
    ///   - host: A host name or address.
    ///   - port: The Cast port; 8009 for devices, another port for speaker groups.
    ///   - configuration: Timeouts, heartbeat and identity.
    ///   - tlsContext: TLS settings; by default a shared client context (no certificate verification).
    ///   - eventLoopGroup: Where the connection's I/O runs.
    ///   - logger: Where the connection logs; silent by default.
    /// - Throws: ``CastTransportError`` — ``CastTransportError/Code/connectFailed``,
    ///   ``CastTransportError/Code/tlsHandshakeFailed`` or ``CastTransportError/Code/notTLS``.
    public static func connect(
        host: String,
        port: Int = 8009,
        configuration: Configuration = Configuration(),
        tlsContext: TLSContext? = nil,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = .castDisabled
    ) async throws -> CastConnection {
        let connection = CastConnection(
            host: host,
            port: port,
            configuration: configuration,
            tlsContext: try tlsContext ?? .sharedClient(),
            eventLoopGroup: eventLoopGroup,
            isServerSide: false,
            logger: logger
        )
        try await connection.establish()
        return connection
    }

    /// Closes the current transport, if any, and connects again; every virtual connection that was open is
    /// re-opened with a new CONNECT. The session layer calls this to recover from a lost connection.
    public func reconnect() async throws {
        guard !isServerSide else {
            throw CastTransportError(.notConnected, "a server-side connection cannot reconnect")
        }
        let old = try state.withLock { state -> (any Channel)? in
            guard !state.isClosed else {
                throw CastTransportError(.connectionClosed, "the connection was closed for good; connect again")
            }
            defer { state.channel = nil }
            return state.channel
        }
        if let old { try? await old.close() }
        try await establish()
    }

    /// Like ``reconnect()``, to a peer that moved: a speaker group's endpoint follows its elected leader to another
    /// member's address and port, and discovery's new record says where. The virtual connections come along.
    public func reconnect(toHost host: String, port: Int) async throws {
        state.withLock { state in
            guard !state.isClosed else { return }
            (state.host, state.port) = (host, port)
        }
        try await reconnect()
    }

    private func establish() async throws {
        let handshake = eventLoop.makePromise(of: Void.self)
        let pipeline = makePipeline()
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(TimeAmount(configuration.connectTimeout))
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { [weak self] channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let self else { throw CastTransportError(.connectionClosed, "the connection was released") }
                    try pipeline.install(
                        on: channel,
                        handshakePromise: handshake,
                        router: self.makeRouter(for: channel)
                    )
                }
            }
        let channel: any Channel
        let (host, port) = state.withLock { ($0.host, $0.port) }
        // An address needs no resolver (getaddrinfo on another thread) and no happy-eyeballs race.
        let connecting =
            if let address = try? SocketAddress(ipAddress: host, port: port) {
                bootstrap.connect(to: address)
            } else {
                bootstrap.connect(host: host, port: port)
            }
        do {
            channel = try await Self.cancellably(connecting, on: eventLoop)
        } catch {
            handshake.fail(error)
            if error is CancellationError { throw error }
            var failure = CastTransportError(
                .connectFailed,
                "cannot connect to \(host):\(port): \(error)",
                cause: error
            )
            failure.isRefusal = Self.isRefusal(error)
            throw failure
        }
        do {
            // Cancelling closes the channel, which fails the handshake at once.
            try await withTaskCancellationHandler {
                try await handshake.futureResult.get()
            } onCancel: {
                channel.close(promise: nil)
            }
        } catch {
            try? await channel.close()
            if Task.isCancelled { throw CancellationError() }
            throw error as? CastTransportError
                ?? CastTransportError(.tlsHandshakeFailed, "TLS failed", cause: error)
        }
        do {
            try await authenticate(on: channel)
        } catch {
            try? await channel.close()
            throw error
        }
        let endpoints = state.withLock { state in
            state.channel = channel
            return state.endpoints
        }
        logger.debug("connected")
        lifecycle.yield(.connected)
        for endpoint in endpoints {
            try await send(namespace: CastNamespace.connection, to: endpoint, payload: connectPayload)
        }
    }

    /// Waits for a TCP connect, or throws `CancellationError` as soon as the task is cancelled (a connect cannot
    /// be withdrawn; a channel that arrives after that is closed).
    private static func cancellably(
        _ connecting: EventLoopFuture<any Channel>,
        on eventLoop: any EventLoop
    ) async throws -> any Channel {
        let outcome = eventLoop.makePromise(of: (any Channel).self)
        connecting.whenComplete { result in
            switch result {
            case .success(let channel):
                outcome.succeed(channel)  // no effect once cancelled: then nobody takes the channel
                outcome.futureResult.whenFailure { _ in channel.close(promise: nil) }
            case .failure(let error):
                outcome.fail(error)
            }
        }
        return try await withTaskCancellationHandler {
            try await outcome.futureResult.get()
        } onCancel: {
            outcome.fail(CancellationError())
        }
    }

    // MARK: - Device authentication

    /// How the device proved itself on the current transport (every connect challenges again).
    public var deviceAuthentication: DeviceAuthentication { state.withLock { $0.authentication } }

    /// The common name of the certificate the peer presented in the TLS handshake (its subject when it has no
    /// common name); `nil` when not connected or no certificate came. Discovery reads it as one more way a device
    /// names itself, for devices that answer neither `GET_DEVICE_INFO` nor `eureka_info`.
    public func peerCertificateCommonName() async -> String? {
        guard let channel = try? currentChannel() else { return nil }
        let der = try? await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: TLSHandler.self).peerCertificate
        }.get()
        guard let der, !der.isEmpty, let certificate = try? X509Certificate(der: der, what: "the TLS certificate")
        else { return nil }
        let name = certificate.commonName
        return name.isEmpty ? nil : name
    }

    /// Challenges the device before anything else is sent. ``DeviceAuthPolicy/require`` waits for the answer and
    /// throws the failed step; ``DeviceAuthPolicy/warn`` goes on at once and reports the result when it comes.
    private func authenticate(on channel: any Channel) async throws {
        let options = configuration.deviceAuth
        guard options.challenges else {
            if options.policy == .require {
                throw CastTransportError(
                    .authNotConfigured,
                    "device authentication is required but no trust anchors are set"
                )
            }
            let reason = options.policy == .off ? "device authentication is off" : "no trust anchors are set"
            state.withLock { $0.authentication = .notAttempted(reason: reason) }
            return
        }
        let tlsCertificate = try await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: TLSHandler.self).peerCertificate
        }.get()
        let nonce = DeviceAuthVerifier.makeNonce()
        let reply = channel.eventLoop.makePromise(of: CastMessage.self)
        let (replaced, challenge) = state.withLock { state in
            defer {
                state.authReply = reply
                state.authentication = .pending
                state.authChallenge += 1
            }
            return (state.authReply, state.authChallenge + 1)
        }
        // Completed outside the lock: its callbacks may run at once, on this thread.
        replaced?.fail(CastTransportError(.connectionClosed, "a new connection replaced the challenged one"))
        let timeout = channel.eventLoop.scheduleTask(in: TimeAmount(options.timeout)) { [weak self] in
            self?.takeAuthReply(challenge)?.fail(
                CastTransportError(.authTimedOut, "the device did not answer the challenge within \(options.timeout)")
            )
        }
        reply.futureResult.whenComplete { _ in timeout.cancel() }
        channel.closeFuture.whenComplete { [weak self] _ in
            self?.takeAuthReply(challenge)?.fail(
                CastTransportError(.connectionClosed, "the connection closed during the challenge")
            )
        }
        let verifier = DeviceAuthVerifier(options: options)
        let result = reply.futureResult.map { answer -> DeviceAuthentication in
            do throws(CastTransportError) {
                let now = Int(Date().timeIntervalSince1970)
                return .verified(
                    try verifier.verify(reply: answer, nonce: nonce, tlsCertificate: tlsCertificate, now: now)
                )
            } catch {
                return DeviceAuthentication(error)
            }
        }.recover { error in
            DeviceAuthentication(error as? CastTransportError ?? CastTransportError(.authTimedOut, "\(error)"))
        }
        try await channel.writeAndFlush(
            RouterCommand.send(DeviceAuthVerifier.challenge(nonce: nonce, from: configuration.localID))
        ).get()
        guard options.policy == .require else {
            result.whenSuccess { [weak self] outcome in self?.record(outcome, of: challenge) }
            return
        }
        let outcome = try await result.get()
        record(outcome, of: challenge)
        if case .failed(let code, let message) = outcome { throw CastTransportError(code, message) }
    }

    /// The outstanding challenge's reply promise, taken so that only one completes it; with `challenge`, only
    /// when that challenge is still the outstanding one.
    private func takeAuthReply(_ challenge: Int? = nil) -> EventLoopPromise<CastMessage>? {
        state.withLock { state in
            guard challenge == nil || challenge == state.authChallenge else { return nil }
            defer { state.authReply = nil }
            return state.authReply
        }
    }

    /// Keeps and announces `outcome`, unless a later challenge has replaced `challenge`.
    private func record(_ outcome: DeviceAuthentication, of challenge: Int) {
        let isCurrent = state.withLock { state -> Bool in
            guard state.authChallenge == challenge else { return false }
            state.authentication = outcome
            return true
        }
        guard isCurrent else { return }
        if case .failed = outcome {
            logger.warning("device authentication failed", metadata: ["cast.deviceAuth": "\(outcome)"])
        } else {
            logger.debug("device authentication", metadata: ["cast.deviceAuth": "\(outcome)"])
        }
        lifecycle.yield(.deviceAuthenticated(outcome))
    }

    /// Whether a connect failed because the peer said no (a reset: nothing listens there), as opposed to no
    /// answer at all (no route, a dropped link, a timeout), which may pass.
    private static func isRefusal(_ error: any Error) -> Bool {
        if let error = error as? IOError { return error.errnoCode == ECONNREFUSED }
        if let error = error as? NIOConnectionError {
            return !error.connectionErrors.isEmpty && error.connectionErrors.allSatisfy { isRefusal($0.error) }
        }
        return false
    }

    private var connectPayload: JSONValue { .connectPayload(userAgent: configuration.userAgent) }

    private func makePipeline() -> CastPipeline {
        CastPipeline(
            tlsContext: tlsContext,
            handshakeTimeout: TimeAmount(configuration.connectTimeout),
            heartbeat: configuration.heartbeat,
            localID: configuration.localID,
            peerID: configuration.peerID,
            logger: logger
        )
    }

    private func makeRouter(for channel: any Channel) -> CastMessageRouter {
        // The channel by identity, not a weak reference: a weak reference gives the channel a side table, and every
        // retain SwiftNIO takes of it then goes the slow way. The router calls `closed` while its channel lives.
        let channelID = ObjectIdentifier(channel)
        return CastMessageRouter(
            acceptedDestinations: configuration.filtersByDestination ? [configuration.localID] : nil,
            logger: logger,
            deliver: { [weak self] message in self?.handleInbound(message) },
            closed: { [weak self] error in
                self?.handleClosed(channelID: channelID, error: error)
            }
        )
    }

    private func handleInbound(_ message: CastMessage) {
        if message.namespace == CastNamespace.deviceAuth, let reply = takeAuthReply() {
            reply.succeed(message)
            return
        }
        if message.namespace == CastNamespace.connection,
            (try? message.json())?["type"]?.stringValue == "CLOSE"
        {
            let removed = state.withLock { state -> Bool in
                guard let index = state.endpoints.firstIndex(of: message.sourceID) else { return false }
                state.endpoints.remove(at: index)
                return true
            }
            if removed || !configuration.filtersByDestination {
                lifecycle.yield(.virtualConnectionClosed(endpoint: message.sourceID))
            }
        }
        inbound.yield(message)
    }

    private func handleClosed(channelID: ObjectIdentifier, error: CastTransportError?) {
        let (wasCurrent, closedByUs) = state.withLock { state -> (Bool, Bool) in
            guard let current = state.channel, ObjectIdentifier(current) == channelID else {
                return (false, state.isClosed)
            }
            state.channel = nil
            if !state.isClosed { state.lastDropCode = error?.code ?? .connectionClosed }
            return (true, state.isClosed)
        }
        guard wasCurrent || closedByUs else { return }
        logger.debug("disconnected", metadata: ["cast.error": "\(error.map { "\($0)" } ?? "none")"])
        lifecycle.yield(.disconnected(closedByUs ? nil : (error?.code ?? .connectionClosed)))
        if closedByUs || isServerSide {
            inbound.finish()
            lifecycle.finish()
        }
    }

    // MARK: - Server side

    /// Wraps a channel a ``CastServer`` accepted. The pipeline is installed here; the caller subscribes before
    /// the first read happens.
    static func accepted(
        channel: any Channel,
        configuration: Configuration,
        tlsContext: TLSContext,
        logger: Logger
    ) throws -> CastConnection {
        let remote = channel.remoteAddress
        let connection = CastConnection(
            host: remote?.ipAddress ?? "unknown",
            port: remote?.port ?? 0,
            configuration: configuration,
            tlsContext: tlsContext,
            eventLoopGroup: channel.eventLoop,
            isServerSide: true,
            logger: logger
        )
        connection.state.withLock { $0.channel = channel }
        try connection.makePipeline().install(
            on: channel,
            handshakePromise: nil,
            router: connection.makeRouter(for: channel)
        )
        return connection
    }

    // MARK: - Subscriptions

    /// A new, independent stream of every inbound message addressed to us or to `*` (replies included; heartbeat
    /// traffic excluded). It ends when the connection is closed for good.
    public func messages() -> CastEventStream<CastMessage> { inbound.makeStream() }

    /// Calls `handler` with every message ``messages()`` delivers, synchronously on the connection's event loop as
    /// the message is read: no task wakes up per message. It must be quick and must not block. Answers the id
    /// ``removeMessageHandler(_:)`` takes; handlers are dropped when the connection is closed for good.
    package func addMessageHandler(_ handler: @escaping @Sendable (CastMessage) -> Void) -> Int {
        inbound.addHandler(handler)
    }

    /// Stops calling a handler of ``addMessageHandler(_:)``.
    package func removeMessageHandler(_ id: Int) { inbound.removeHandler(id) }

    /// A new, independent stream of connection events. It ends when the connection is closed for good.
    public func events() -> CastEventStream<CastConnectionEvent> { lifecycle.makeStream() }

    /// Calls `handler` with every event ``events()`` delivers, synchronously on the thread that reports it (the
    /// event loop, or the task that connects): no task waits for events. It must be quick and must not block.
    /// Answers the id ``removeEventHandler(_:)`` takes; handlers are dropped when the connection is closed for good.
    package func addEventHandler(_ handler: @escaping @Sendable (CastConnectionEvent) -> Void) -> Int {
        lifecycle.addHandler(handler)
    }

    /// Stops calling a handler of ``addEventHandler(_:)``.
    package func removeEventHandler(_ id: Int) { lifecycle.removeHandler(id) }

    // MARK: - Sending

    /// Whether the transport is currently up.
    public var isConnected: Bool { state.withLock { $0.channel?.isActive ?? false } }

    /// Why the transport last dropped (not by our own close), for a layer that subscribes to ``events()`` after
    /// the drop may already have happened: it then learns the reason it missed.
    package var lastDropCode: CastTransportError.Code? { state.withLock { $0.lastDropCode } }

    /// The endpoints we hold virtual connections to, in the order they were opened.
    public var virtualConnections: [String] { state.withLock { $0.endpoints } }

    private func currentChannel() throws -> any Channel {
        guard let channel = state.withLock({ $0.channel }) else {
            throw CastTransportError(.notConnected, "not connected to \(host):\(port)")
        }
        return channel
    }

    /// Sends one message as it is.
    ///
    /// - Throws: ``CastTransportError`` — ``CastTransportError/Code/notConnected``,
    ///   ``CastTransportError/Code/messageTooLarge`` or ``CastTransportError/Code/connectionClosed``.
    public func send(_ message: CastMessage) async throws {
        let channel = try currentChannel()
        try message.checkFrameSize()
        let written = channel.eventLoop.makePromise(of: Void.self)
        write(RouterCommand.send(message), on: channel, promise: written)
        try await Self.awaitWrite(written)
    }

    /// Waits for a write; a failure that is not already a transport error becomes ``CastTransportError/Code/connectionClosed``.
    private static func awaitWrite(_ written: EventLoopPromise<Void>) async throws {
        do {
            try await written.futureResult.get()
        } catch let error as CastTransportError {
            throw error
        } catch {
            throw CastTransportError(.connectionClosed, "sending failed: \(error)", cause: error)
        }
    }

    /// Sends a JSON message from our endpoint (or `source`) to `destination`.
    public func send(namespace: String, to destination: String, payload: JSONValue, from source: String? = nil)
        async throws
    {
        try await send(
            CastMessage(
                sourceID: source ?? configuration.localID,
                destinationID: destination,
                namespace: namespace,
                json: payload
            )
        )
    }

    /// Sends a JSON request and waits for the reply carrying the same `requestId`.
    ///
    /// A fresh `requestId` (unique on this connection, never 0) is added to `payload`.
    ///
    /// - Parameters:
    ///   - namespace: The namespace, e.g. ``CastNamespace/receiver``.
    ///   - destination: The endpoint, e.g. `receiver-0` or an app's transport id.
    ///   - payload: A JSON object with at least a `type`.
    ///   - source: The sending endpoint; `nil` for the connection's own (``Configuration/localID``).
    ///   - timeout: Overrides ``Configuration/requestTimeout``.
    /// - Returns: The reply message; its JSON carries the type (for example `RECEIVER_STATUS` or an error type).
    /// - Throws: ``CastTransportError`` — ``CastTransportError/Code/requestTimedOut``,
    ///   ``CastTransportError/Code/connectionClosed``, ``CastTransportError/Code/notConnected`` or
    ///   ``CastTransportError/Code/invalidPayload`` when `payload` is not an object; `CancellationError` when the
    ///   task is cancelled.
    public func request(
        namespace: String,
        to destination: String,
        payload: JSONValue,
        from source: String? = nil,
        timeout: Duration? = nil
    ) async throws -> CastMessage {
        try await startRequest(namespace: namespace, to: destination, payload: payload, from: source, timeout: timeout)
            .response()
    }

    /// Like ``request(namespace:to:payload:from:timeout:)``, also answered, on receivers that report a command
    /// only by broadcasting its effect, by the first broadcast (`requestId` 0 or none) on `namespace` after it was
    /// sent whose JSON `isAnswer` accepts: the command took effect, and a reply that never comes would only time
    /// out. Returns the reply's JSON, or the broadcast's.
    package func request(
        namespace: String,
        to destination: String,
        payload: JSONValue,
        timeout: Duration? = nil,
        orBroadcast isAnswer: @escaping @Sendable (JSONValue) -> Bool
    ) async throws -> JSONValue {
        // The broadcast may be read before the request is known here: it is kept until it is.
        let answer = Mutex<(pending: PendingReply?, early: CastMessage?)>((nil, nil))
        let handler = addMessageHandler { message in
            guard message.namespace == namespace, let json = try? message.json(),
                (json["requestId"]?.intValue ?? 0) == 0, isAnswer(json)
            else { return }
            let pending = answer.withLock { answer -> PendingReply? in
                if answer.pending == nil, answer.early == nil { answer.early = message }
                return answer.pending
            }
            pending?.answer(with: message)
        }
        defer { removeMessageHandler(handler) }
        let pending = try startRequest(namespace: namespace, to: destination, payload: payload, timeout: timeout)
        let early = answer.withLock { answer -> CastMessage? in
            answer.pending = pending
            return answer.early
        }
        if let early { pending.answer(with: early) }
        return try await pending.response().json()
    }

    /// Sends a JSON request now and returns a handle for its reply: requests started one after the other reach
    /// the peer in that order, whenever their replies arrive. ``request(namespace:to:payload:from:timeout:)`` is
    /// this plus waiting.
    ///
    /// - Throws: ``CastTransportError`` — ``CastTransportError/Code/notConnected`` or
    ///   ``CastTransportError/Code/invalidPayload`` when `payload` is not an object.
    public func startRequest(
        namespace: String,
        to destination: String,
        payload: JSONValue,
        from source: String? = nil,
        timeout: Duration? = nil
    ) throws -> PendingReply {
        guard case .object = payload else {
            throw CastTransportError(.invalidPayload, "a request payload must be a JSON object")
        }
        let channel = try currentChannel()
        let requestID = state.withLock { state in
            defer { state.nextRequestID = state.nextRequestID == Int(Int32.max) ? 1 : state.nextRequestID + 1 }
            return state.nextRequestID
        }
        // The payload's text with `requestId` added as it is written: its dictionary is not copied.
        let message = CastMessage(
            sourceID: source ?? configuration.localID,
            destinationID: destination,
            namespace: namespace,
            payload: .string(payload.jsonString(adding: ("requestId", .number(Double(requestID)))))
        )
        let promise = channel.eventLoop.makePromise(of: CastMessage.self)
        let request = RouterRequest(
            message: message,
            requestID: requestID,
            timeout: TimeAmount(timeout ?? configuration.requestTimeout),
            promise: promise
        )
        // Written now on the loop of an open channel, the request reaches the router, which ends it from then on:
        // a frame too large at once, otherwise its reply, its timeout or the channel's end (a failed write closes
        // the channel). A write that may never reach it (queued, or the channel closing in between) must still end
        // the request.
        var written: EventLoopPromise<Void>?
        if !channel.eventLoop.inEventLoop || !channel.isActive || pendingPosts.load(ordering: .acquiring) > 0 {
            written = channel.eventLoop.makePromise(of: Void.self)
            written?.futureResult.whenFailure { error in
                promise.fail(
                    error as? CastTransportError
                        ?? CastTransportError(.connectionClosed, "the request could not be sent", cause: error)
                )
            }
        }
        write(.request(request), on: channel, promise: written)
        return PendingReply(request)
    }

    /// Queues `message` and returns without waiting for its write, as GCK's `sendTextMessage` does, unless the
    /// transport is backed up (the peer reads slower than we write): then it waits for this write, so a fast
    /// sender slows down instead of queuing without bound. Messages queued together go out in one flush, in
    /// order with everything else sent on this connection.
    ///
    /// A message queued just before the transport drops is lost with it; the drop is reported as a connection
    /// event.
    ///
    /// - Throws: ``CastTransportError`` — ``CastTransportError/Code/notConnected``,
    ///   ``CastTransportError/Code/messageTooLarge``, or ``CastTransportError/Code/connectionClosed`` when a
    ///   backed-up write fails.
    public func enqueue(_ message: CastMessage) async throws {
        let (channel, length, isBackedUp) = try admit(message)
        guard isBackedUp else {
            post([message], on: channel, length: length)
            return
        }
        let written = channel.eventLoop.makePromise(of: Void.self)
        post([message], on: channel, length: length, promise: written)
        try await Self.awaitWrite(written)
    }

    /// Queues `message` and returns at once, never waiting, even while the transport is backed up: for callers that
    /// cannot wait (a synchronous callback answering a message, as GCK's `sendTextMessage:error:` does). Prefer
    /// ``enqueue(_:)`` where you can await: it slows a fast sender down instead of letting the queue grow.
    ///
    /// - Throws: ``CastTransportError`` — ``CastTransportError/Code/notConnected`` or
    ///   ``CastTransportError/Code/messageTooLarge``.
    public func enqueueWithoutWaiting(_ message: CastMessage) throws {
        let (channel, length, _) = try admit(message)
        post([message], on: channel, length: length)
    }

    /// Checks `message` for a queued send and counts its bytes in ``queuedBytes``: the channel to post it on, its
    /// length, and whether the transport is backed up — it holds more than its high-water mark, or senders off the
    /// event loop have queued that much that the loop has not written yet.
    private func admit(_ message: CastMessage) throws -> (channel: any Channel, length: Int, isBackedUp: Bool) {
        let channel = try currentChannel()
        let length = try message.checkFrameSize()
        let queued = queuedBytes.add(length, ordering: .relaxed).newValue
        return (channel, length, !channel.isWritable || queued > Self.queuedBytesLimit)
    }

    /// Writes and flushes `command` now when that keeps the order (off the event loop NIO queues it; on it, only
    /// while no post waits before it), else behind the queued posts.
    private func write(_ command: RouterCommand, on channel: any Channel, promise: EventLoopPromise<Void>?) {
        if channel.eventLoop.inEventLoop && pendingPosts.load(ordering: .acquiring) > 0 {
            channel.eventLoop.execute { channel.writeAndFlush(command, promise: promise) }
        } else {
            channel.writeAndFlush(command, promise: promise)
        }
    }

    // MARK: - Virtual connections

    /// Opens a virtual connection to `endpoint` with CONNECT (cast-protocol.md §3.1) and remembers it, so it is
    /// re-opened after ``reconnect()``. Opening one that is already open sends CONNECT again (harmless).
    public func openVirtualConnection(to endpoint: String) async throws {
        try await send(namespace: CastNamespace.connection, to: endpoint, payload: connectPayload)
        state.withLock { state in
            if !state.endpoints.contains(endpoint) { state.endpoints.append(endpoint) }
        }
    }

    /// Closes the virtual connection to `endpoint` with CLOSE and forgets it.
    public func closeVirtualConnection(to endpoint: String) async throws {
        state.withLock { $0.endpoints.removeAll { $0 == endpoint } }
        try await send(namespace: CastNamespace.connection, to: endpoint, payload: ["type": "CLOSE", "reasonCode": 5])
    }

    /// Closes every virtual connection, then the transport (TLS close_notify), and ends all subscriptions.
    public func close() async {
        let (channel, endpoints) = state.withLock { state in
            state.isClosed = true
            return (state.channel, state.endpoints)
        }
        guard let channel else {
            inbound.finish()
            lifecycle.finish()
            return
        }
        if !isServerSide {
            for endpoint in endpoints.reversed() {
                try? await send(
                    namespace: CastNamespace.connection,
                    to: endpoint,
                    payload: ["type": "CLOSE", "reasonCode": 5]
                )
            }
        }
        try? await channel.close()
        try? await channel.closeFuture.get()
    }

    /// Queues `messages` for sending and returns at once, without waiting for the write.
    ///
    /// Everything posted goes out in the order posted, from whichever thread: a post never writes inline, even on
    /// the connection's event loop, so it cannot overtake one queued earlier from another thread. Nothing happens
    /// when the transport is down; use ``send(_:)`` to learn about failures. This suits broadcasting status to
    /// many connections.
    public func post(_ messages: [CastMessage]) {
        guard !messages.isEmpty, let channel = state.withLock({ $0.channel }) else { return }
        post(messages, on: channel)
    }

    /// Queues `messages` on `channel`'s event loop; `promise` (optional) follows the last one's write. `length`
    /// is what ``enqueue(_:)`` counted in ``queuedBytes`` for them.
    private func post(
        _ messages: [CastMessage],
        on channel: any Channel,
        length: Int = 0,
        promise: EventLoopPromise<Void>? = nil
    ) {
        pendingPosts.add(1, ordering: .relaxed)
        channel.eventLoop.execute { [self] in
            if length > 0 { queuedBytes.subtract(length, ordering: .relaxed) }
            for message in messages.dropLast() { channel.write(RouterCommand.send(message), promise: nil) }
            channel.write(RouterCommand.send(messages[messages.count - 1]), promise: promise)
            // Replies to a batch of requests read together go out in one flush (one TLS write, one syscall), but
            // a long batch in chunks: the peer starts on the first while we write the rest, instead of both ends
            // taking turns with whole batches.
            let unflushed = unflushedPosts.add(messages.count, ordering: .relaxed).newValue
            if pendingPosts.subtract(1, ordering: .acquiringAndReleasing).newValue == 0
                || unflushed >= Self.postsPerFlush
            {
                unflushedPosts.store(0, ordering: .relaxed)
                channel.flush()
            }
        }
    }

    /// Queues one message; see ``post(_:)-([CastMessage])``.
    public func post(_ message: CastMessage) { post([message]) }

    /// Drops the transport without a TLS close_notify (the emulator's "close abruptly" fault), after what was
    /// posted before.
    package func abort() {
        guard let channel = state.withLock({ $0.channel }) else { return }
        channel.eventLoop.execute { channel.triggerUserOutboundEvent(AbortConnectionEvent(), promise: nil) }
    }

    /// Splits every outgoing frame into TLS records of at most `size` bytes (`nil` stops splitting): the
    /// emulator's "frames split across writes" fault.
    package func setOutboundChunkSize(_ size: Int?, interval: Duration? = nil) {
        guard let channel = state.withLock({ $0.channel }) else { return }
        let pace = interval.map { TimeAmount($0) }
        channel.eventLoop.execute {
            let operations = channel.pipeline.syncOperations
            if let existing = try? operations.handler(type: ChunkingHandler.self) {
                existing.chunkSize = size
                existing.interval = pace
            } else if let size, let tls = try? operations.handler(type: TLSHandler.self) {
                try? operations.addHandler(ChunkingHandler(chunkSize: size, interval: pace), position: .after(tls))
            }
        }
    }

    /// Writes raw bytes below the framing layer (for the emulator's malformed-frame fault).
    package func writeRawFrameBytes(_ bytes: [UInt8]) async throws {
        let channel = try currentChannel()
        try await channel.eventLoop.submit {
            let context = try channel.pipeline.syncOperations.context(handlerType: CastFrameHandler.self)
            context.writeAndFlush(NIOAny(channel.allocator.buffer(bytes: bytes)), promise: nil)
        }.get()
    }
}

extension TLSContext {
    private static let client: Result<TLSContext, CastTransportError> = {
        do { return .success(try TLSContext.makeClientContext()) } catch {
            return .failure(error as? CastTransportError ?? CastTransportError(.tlsFailure, "\(error)"))
        }
    }()

    /// One client context per process: creating contexts is comparatively expensive and they are shareable.
    static func sharedClient() throws -> TLSContext { try client.get() }
}
