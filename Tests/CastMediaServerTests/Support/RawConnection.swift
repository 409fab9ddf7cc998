import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A raw TCP connection to a server for tests of connection handling: it sends only what it is told (nothing, a
/// part of a request head, a kept-alive request) and keeps every byte that arrives.
final class RawConnection: Sendable {
    let channel: any Channel
    private let collector: Collector

    private init(channel: any Channel, collector: Collector) {
        self.channel = channel
        self.collector = collector
    }

    /// Connects; with `reading` false nothing is read (the server's writes stall) until ``startReading()``.
    /// `request`, when given, is written on the event loop as the connection opens (see `RawHTTPClient`).
    static func open(
        host: String = "127.0.0.1",
        port: Int,
        reading: Bool = true,
        sending request: String? = nil
    ) async throws -> RawConnection {
        let collector = Collector()
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if !reading {
            // A small window, so that the server stalls after a little.
            bootstrap = bootstrap.channelOption(.autoRead, value: false).channelOption(
                .socketOption(.so_rcvbuf),
                value: 65_536
            )
        }
        let channel =
            try await bootstrap
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
            }
            .connect(host: host, port: port)
            .flatMap { channel in
                guard let request else { return channel.eventLoop.makeSucceededFuture(channel) }
                return channel.writeAndFlush(channel.allocator.buffer(string: request)).map { channel }
            }
            .get()
        return RawConnection(channel: channel, collector: collector)
    }

    func send(_ text: String) async throws {
        try await channel.writeAndFlush(channel.allocator.buffer(string: text))
    }

    func startReading() async throws {
        try await channel.setOption(.autoRead, value: true)
    }

    /// Everything received so far.
    var received: [UInt8] { collector.bytes }

    var text: String { String(decoding: received, as: UTF8.self) }

    /// Waits until `count` bytes have arrived or the connection closed, whichever comes first.
    func waitForBytes(_ count: Int) async {
        await collector.waitForBytes(count)
    }

    /// Whether the server closes the connection within `bound` (a bound on failure only: a passing test waits
    /// for the close, never for the bound). The connection is closed either way when this returns.
    func isClosedByServer(within bound: Duration) async -> Bool {
        let channel = self.channel
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await channel.closeFuture.get()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: bound)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            channel.close(promise: nil)
            return first
        }
    }
}

private final class Collector: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private struct State {
        var bytes: [UInt8] = []
        var closed = false
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = NIOLockedValueBox(State())

    var bytes: [UInt8] { state.withLockedValue { $0.bytes } }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        let chunk = buffer.readBytes(length: buffer.readableBytes) ?? []
        resume { $0.bytes += chunk }
    }

    func channelInactive(context: ChannelHandlerContext) {
        resume { $0.closed = true }
        context.fireChannelInactive()
    }

    func waitForBytes(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLockedValue { state -> Bool in
                if state.closed || state.bytes.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func resume(after change: (inout State) -> Void) {
        let ready = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            change(&state)
            let (bytes, closed) = (state.bytes.count, state.closed)
            let ready = state.waiters.filter { closed || bytes >= $0.count }.map(\.continuation)
            state.waiters.removeAll { closed || bytes >= $0.count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }
}
