import NIOCore
import NIOPosix

/// A UDP socket on an event loop: datagrams in through a closure, out through ``send(_:to:)``. Both ends of Cast
/// Streaming use one for all their streams' RTP and RTCP.
final class DatagramSocket: Sendable {
    let channel: any Channel

    private init(channel: any Channel) {
        self.channel = channel
    }

    /// The bound address.
    var localAddress: SocketAddress? { channel.localAddress }

    /// The event loop every callback runs on.
    var eventLoop: any EventLoop { channel.eventLoop }

    /// Binds `host:port` (port 0 picks a free one); `receive` runs on the socket's event loop for each datagram.
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/socketFailed``.
    static func bind(
        host: String,
        port: Int,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        receive: @escaping @Sendable (SocketAddress, [UInt8]) -> Void
    ) async throws -> DatagramSocket {
        do {
            let channel = try await DatagramBootstrap(group: group)
                .channelOption(.socketOption(.so_reuseaddr), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(Handler(receive: receive))
                    }
                }
                .bind(host: host, port: port)
                .get()
            return DatagramSocket(channel: channel)
        } catch {
            throw CastStreamingError(
                .socketFailed,
                "cannot open a UDP socket on \(host):\(port): \(error)",
                cause: error
            )
        }
    }

    /// Sends datagrams to `remote`, flushed together.
    func send(_ datagrams: [[UInt8]], to remote: SocketAddress) {
        guard !datagrams.isEmpty else { return }
        let channel = self.channel
        let write = {
            for datagram in datagrams {
                let buffer = channel.allocator.buffer(bytes: datagram)
                channel.write(AddressedEnvelope(remoteAddress: remote, data: buffer), promise: nil)
            }
            channel.flush()
        }
        if channel.eventLoop.inEventLoop { write() } else { channel.eventLoop.execute(write) }
    }

    /// Closes the socket.
    func close() async {
        try? await channel.close()
    }

    private final class Handler: ChannelInboundHandler, Sendable {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        let receive: @Sendable (SocketAddress, [UInt8]) -> Void

        init(receive: @escaping @Sendable (SocketAddress, [UInt8]) -> Void) {
            self.receive = receive
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            receive(envelope.remoteAddress, Array(envelope.data.readableBytesView))
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // ICMP port unreachable surfaces here while the peer is not listening yet: not fatal for UDP.
        }
    }
}
