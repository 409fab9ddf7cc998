import CastLogging
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TLS listener that speaks Cast v2: the receiver side of ``CastConnection``, used by the receiver emulator.
///
/// Each accepted socket becomes a ``CastConnection`` handed to `onConnection` before its first byte is read, so
/// the handler can subscribe to ``CastConnection/messages()`` without missing anything.
public final class CastServer: Sendable {
    /// Settings for accepted connections.
    public struct Configuration: Sendable {
        /// The connection settings each accepted connection gets. By default: local id `receiver-0`, peer
        /// `sender-0`, every destination delivered, PING after 5 s of silence, never declared dead (senders
        /// differ in how often they ping; pychromecast waits 10 s).
        public var connection: CastConnection.Configuration
        /// The listen backlog. Defaults to 256.
        public var backlog = 256
        /// The most connections open at once. When one more arrives, the connection idle longest (no bytes from
        /// its peer for the longest time: a half-open handshake, a silent socket) is closed first, so a flood of
        /// idle sockets never locks out senders that talk. `nil`: no limit. Defaults to `nil`.
        public var maximumConnections: Int?

        /// The defaults: connections answer and send PINGs (every 5 s of silence) and are closed after 30 s
        /// without a byte from the peer — every sender answers PINGs, so only a silent or stuck one is closed.
        public init() {
            var connection = CastConnection.Configuration()
            connection.localID = CastEndpoint.receiver
            connection.peerID = CastEndpoint.sender
            connection.filtersByDestination = false
            connection.heartbeat = HeartbeatConfiguration(pingInterval: .seconds(5), deadAfter: .seconds(30))
            // Half a slack off the senders' timers: the first end to PING is heard by the other before its own
            // timer fires, so the two ends do not both PING (and PONG) in every interval.
            connection.heartbeat.slackPhase = 0.5
            self.connection = connection
        }
    }

    private let channel: any Channel
    private let registry: ConnectionRegistry

    /// The address the server listens on.
    public let host: String
    /// The port the server listens on (the one picked when 0 was asked for).
    public let port: Int

    private init(channel: any Channel, registry: ConnectionRegistry, host: String, port: Int) {
        self.channel = channel
        self.registry = registry
        self.host = host
        self.port = port
    }

    /// The connections open now.
    public var connectionCount: Int { registry.count }

    /// Starts listening.
    ///
    /// - Parameters:
    ///   - host: The address to bind; loopback by default.
    ///   - port: The port; 0 picks a free one (read it back from ``port``).
    ///   - tlsContext: A server context presenting the device certificate.
    ///   - configuration: Settings for accepted connections.
    ///   - eventLoopGroup: Where the I/O runs.
    ///   - logger: Where the server logs; silent by default.
    ///   - onConnection: Called on the connection's event loop for each accepted socket. Subscribe to the
    ///     connection's streams before returning; do not block.
    /// - Throws: ``CastTransportError`` with ``CastTransportError/Code/connectFailed`` when the address cannot be
    ///   bound.
    public static func bind(
        host: String = "127.0.0.1",
        port: Int = 0,
        tlsContext: TLSContext,
        configuration: Configuration = Configuration(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = .castDisabled,
        onConnection: @escaping @Sendable (CastConnection) -> Void
    ) async throws -> CastServer {
        let logger = logger.withCategory(CastLogCategory.transport)
        let registry = ConnectionRegistry(limit: configuration.maximumConnections, logger: logger)
        let bootstrap = ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.backlog, value: Int32(configuration.backlog))
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(registry.admit(channel))
                    let connection = try CastConnection.accepted(
                        channel: channel,
                        configuration: configuration.connection,
                        tlsContext: tlsContext,
                        logger: logger
                    )
                    onConnection(connection)
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: host, port: port).get()
        } catch {
            throw CastTransportError(
                .connectFailed,
                "cannot listen on \(host):\(port): \(error)",
                cause: error
            )
        }
        let boundPort = channel.localAddress?.port ?? port
        logger.debug("listening", metadata: ["cast.address": "\(host):\(boundPort)"])
        return CastServer(channel: channel, registry: registry, host: host, port: boundPort)
    }

    /// Stops listening. Connections already accepted stay open until they or their owner close them.
    public func close() async {
        try? await channel.close()
    }
}

/// The connections a server holds, with when each peer last sent a byte: admits new ones and, at the limit,
/// closes the one idle longest.
final class ConnectionRegistry: Sendable {
    private struct Entry {
        var channel: any Channel
        var lastHeard: NIODeadline
    }

    private let limit: Int?
    private let logger: Logger
    private let entries = NIOLockedValueBox<[ObjectIdentifier: Entry]>([:])

    init(limit: Int?, logger: Logger) {
        self.limit = limit
        self.logger = logger
    }

    var count: Int { entries.withLockedValue { $0.count } }

    /// Registers `channel` (closing the longest-idle connection first when the server is full) and returns the
    /// handler that keeps its entry current.
    func admit(_ channel: any Channel) -> ActivityHandler {
        let evicted = entries.withLockedValue { entries -> (any Channel)? in
            var evicted: (any Channel)?
            if let limit, entries.count >= limit,
                let idlest = entries.min(by: { $0.value.lastHeard < $1.value.lastHeard })
            {
                entries[idlest.key] = nil
                evicted = idlest.value.channel
            }
            entries[ObjectIdentifier(channel)] = Entry(channel: channel, lastHeard: .now())
            return evicted
        }
        if let evicted {
            logger.notice(
                "connection limit reached: closing the connection idle longest",
                metadata: [
                    "cast.limit": "\(limit ?? 0)", "cast.peer": "\(evicted.remoteAddress.map { "\($0)" } ?? "?")",
                ]
            )
            evicted.close(promise: nil)
        }
        return ActivityHandler(registry: self)
    }

    fileprivate func heard(_ channel: any Channel) {
        entries.withLockedValue { $0[ObjectIdentifier(channel)]?.lastHeard = .now() }
    }

    fileprivate func remove(_ channel: any Channel) {
        _ = entries.withLockedValue { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }
}

/// Notes every byte a peer sends (for the registry's idle order) and removes the connection when it closes.
final class ActivityHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny
    private let registry: ConnectionRegistry

    fileprivate init(registry: ConnectionRegistry) { self.registry = registry }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        registry.heard(context.channel)
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        registry.remove(context.channel)
        context.fireChannelInactive()
    }
}
