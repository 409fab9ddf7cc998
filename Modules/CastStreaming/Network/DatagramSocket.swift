import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A UDP socket on an event loop: datagrams in through a closure, out through ``send(_:to:)``. Both ends of Cast
/// Streaming use one for all their streams' RTP and RTCP.
///
/// SwiftNIO closes a datagram channel when a send fails with an error it does not expect — EPERM from a local
/// firewall that drops the packet, ECONNREFUSED after an ICMP port-unreachable, ENOBUFS. For Cast Streaming a lost
/// datagram is routine (retransmission repairs it), so the socket opens again at once on the same port: a receiver
/// keeps the sender endpoint it locked onto, and the sender keeps its own.
final class DatagramSocket: Sendable {
    private struct State: Sendable {
        var channel: any Channel
        var isClosing = false
        var reopenings = 0
    }

    private let state: NIOLockedValueBox<State>
    private let host: String
    private let port: Int
    private let group: any EventLoopGroup
    private let receive: @Sendable (SocketAddress, [UInt8]) -> Void

    private init(
        channel: any Channel,
        host: String,
        group: any EventLoopGroup,
        receive: @escaping @Sendable (SocketAddress, [UInt8]) -> Void
    ) {
        self.state = NIOLockedValueBox(State(channel: channel))
        self.host = host
        self.port = channel.localAddress?.port ?? 0
        self.group = group
        self.receive = receive
    }

    /// The bound address.
    var localAddress: SocketAddress? { state.withLockedValue { $0.channel.localAddress } }

    /// The event loop timers run on.
    var eventLoop: any EventLoop { state.withLockedValue { $0.channel.eventLoop } }

    /// How often the socket had to open again after a failed send.
    var reopenings: Int { state.withLockedValue { $0.reopenings } }

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
            let channel = try await open(host: host, port: port, group: group, receive: receive).get()
            let socket = DatagramSocket(channel: channel, host: host, group: group, receive: receive)
            socket.watch(channel)
            return socket
        } catch {
            throw CastStreamingError(
                .socketFailed,
                "cannot open a UDP socket on \(host):\(port): \(error)",
                cause: error
            )
        }
    }

    private static func open(
        host: String,
        port: Int,
        group: any EventLoopGroup,
        receive: @escaping @Sendable (SocketAddress, [UInt8]) -> Void
    ) -> EventLoopFuture<any Channel> {
        DatagramBootstrap(group: group)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(receive: receive))
                }
            }
            .bind(host: host, port: port)
    }

    /// Opens the socket again on the same port when it closes without ``close()``.
    private func watch(_ channel: any Channel) {
        channel.closeFuture.whenComplete { [weak self] _ in self?.reopen(attempt: 1) }
    }

    private func reopen(attempt: Int) {
        guard !state.withLockedValue({ $0.isClosing }) else { return }
        Self.open(host: host, port: port, group: group, receive: receive).whenComplete { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let channel):
                let keep = state.withLockedValue { state -> Bool in
                    guard !state.isClosing else { return false }
                    state.channel = channel
                    state.reopenings += 1
                    return true
                }
                if keep { watch(channel) } else { channel.close(promise: nil) }
            case .failure:
                // The port may be held a moment longer by the old socket: try again shortly, a few times.
                guard attempt < 50 else { return }
                group.next().scheduleTask(in: .milliseconds(20)) { [weak self] in self?.reopen(attempt: attempt + 1) }
            }
        }
    }

    /// Sends datagrams to `remote`, flushed together; while the socket reopens they are lost, as on a network.
    func send(_ datagrams: [[UInt8]], to remote: SocketAddress) {
        guard !datagrams.isEmpty else { return }
        let channel = state.withLockedValue { $0.channel }
        let write = {
            guard channel.isActive else { return }
            for datagram in datagrams {
                let buffer = channel.allocator.buffer(bytes: datagram)
                channel.write(AddressedEnvelope(remoteAddress: remote, data: buffer), promise: nil)
            }
            channel.flush()
        }
        if channel.eventLoop.inEventLoop { write() } else { channel.eventLoop.execute(write) }
    }

    /// Closes the socket for good.
    func close() async {
        let channel = state.withLockedValue { state -> any Channel in
            state.isClosing = true
            return state.channel
        }
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
            // Errors SwiftNIO reports without closing (ICMP port unreachable on a read) change nothing here.
        }
    }
}
