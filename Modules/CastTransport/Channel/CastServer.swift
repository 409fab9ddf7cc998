import CastLogging
import Logging
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

        /// The defaults.
        public init() {
            var connection = CastConnection.Configuration()
            connection.localID = CastEndpoint.receiver
            connection.peerID = CastEndpoint.sender
            connection.filtersByDestination = false
            connection.heartbeat = HeartbeatConfiguration(pingInterval: .seconds(5), deadAfter: nil)
            self.connection = connection
        }
    }

    private let channel: any Channel

    /// The address the server listens on.
    public let host: String
    /// The port the server listens on (the one picked when 0 was asked for).
    public let port: Int

    private init(channel: any Channel, host: String, port: Int) {
        self.channel = channel
        self.host = host
        self.port = port
    }

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
        let bootstrap = ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.backlog, value: Int32(configuration.backlog))
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
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
        return CastServer(channel: channel, host: host, port: boundPort)
    }

    /// Stops listening. Connections already accepted stay open until they or their owner close them.
    public func close() async {
        try? await channel.close()
    }
}
