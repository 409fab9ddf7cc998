import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

// The HTTP clients of the castd benchmark (CastdBenchmark.swift), on NIO's HTTP/1.1 codec and nothing more: what a
// client adds to castd's own time should be as little as a client can add, so the figures are castd's.

/// A keep-alive HTTP/1.1 connection to castd on loopback, one request at a time (the next is sent once the
/// previous is answered), as a script or a home-automation bridge that reuses its connection sends them.
final class KeepAliveHTTPClient: Sendable {
    /// A response: its status code and whole body.
    struct Reply: Sendable {
        var status: Int
        var body: ByteBuffer

        var text: String { String(buffer: body) }
    }

    private let channel: any Channel
    private let port: Int

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    /// Opens the connection.
    static func connect(port: Int) async throws -> KeepAliveHTTPClient {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ExchangeHandler())
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return KeepAliveHTTPClient(channel: channel, port: port)
    }

    /// Sends `method path` without a body and waits for the whole response.
    func send(_ method: HTTPMethod, _ path: String) async throws -> Reply {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        head.headers.add(name: "Host", value: "127.0.0.1:\(port)")
        head.headers.add(name: "Content-Length", value: "0")
        let reply = channel.eventLoop.makePromise(of: Reply.self)
        channel.writeAndFlush(Exchange(head: head, reply: reply), promise: nil)
        return try await reply.futureResult.get()
    }

    func close() async {
        try? await channel.close()
    }
}

/// One request and where its response goes.
private struct Exchange: Sendable {
    var head: HTTPRequestHead
    var reply: EventLoopPromise<KeepAliveHTTPClient.Reply>
}

/// Writes requests and answers them in order with the responses read (HTTP/1.1 answers in request order).
private final class ExchangeHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = Exchange
    typealias OutboundOut = HTTPClientRequestPart

    private var waiting = CircularBuffer<EventLoopPromise<KeepAliveHTTPClient.Reply>>()
    private var status = 0
    private var body = ByteBuffer()

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let exchange = unwrapOutboundIn(data)
        waiting.append(exchange.reply)
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        context.write(wrapOutboundOut(.end(nil)), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
            body.clear()
        case .body(var chunk):
            body.writeBuffer(&chunk)
        case .end:
            guard !waiting.isEmpty else { return }
            waiting.removeFirst().succeed(KeepAliveHTTPClient.Reply(status: status, body: body))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failAll(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    private func failAll(_ error: any Error) {
        while let promise = waiting.popFirst() { promise.fail(error) }
    }
}

/// When each event id reached one client: the instant its `id:` line was read off the socket.
final class EventArrivals: Sendable {
    private let arrivals = NIOLockedValueBox<[Int: ContinuousClock.Instant]>([:])
    private let latest = NIOLockedValueBox(0)
    private let bodyBytes = NIOLockedValueBox(0)

    /// Bytes of the stream's body read so far.
    var bytes: Int { bodyBytes.withLockedValue { $0 } }

    func add(bytes count: Int) { bodyBytes.withLockedValue { $0 += count } }

    func record(_ id: Int, at instant: ContinuousClock.Instant) {
        arrivals.withLockedValue { $0[id] = instant }
        latest.withLockedValue { $0 = max($0, id) }
    }

    /// The arrival of `id`, if it came.
    func instant(of id: Int) -> ContinuousClock.Instant? { arrivals.withLockedValue { $0[id] } }

    /// The highest id seen so far (0 before any).
    var latestID: Int { latest.withLockedValue { $0 } }
}

/// A `GET /v1/events` client that reads as fast as events come and notes when each `id:` line arrives.
struct EventStreamClient: Sendable {
    /// The `id:` lines read so far.
    let arrivals: EventArrivals
    private let channel: any Channel

    /// Connects and sends the request; events are recorded from then on, until ``close()``.
    static func connect(port: Int) async throws -> EventStreamClient {
        let arrivals = EventArrivals()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(EventLineHandler(arrivals: arrivals))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/events")
        head.headers.add(name: "Host", value: "127.0.0.1:\(port)")
        head.headers.add(name: "Accept", value: "text/event-stream")
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil))
        return EventStreamClient(arrivals: arrivals, channel: channel)
    }

    func close() async {
        try? await channel.close()
    }
}

/// Splits the event stream's body into lines and records every `id: N` line with the instant its bytes were read.
private final class EventLineHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let arrivals: EventArrivals
    private var line: [UInt8] = []

    init(arrivals: EventArrivals) { self.arrivals = arrivals }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .body(let chunk) = unwrapInboundIn(data) else { return }
        let now = ContinuousClock.now
        arrivals.add(bytes: chunk.readableBytes)
        for byte in chunk.readableBytesView {
            guard byte == UInt8(ascii: "\n") else {
                line.append(byte)
                continue
            }
            if line.starts(with: Self.idPrefix), let id = Int(String(decoding: line.dropFirst(4), as: UTF8.self)) {
                arrivals.record(id, at: now)
            }
            line.removeAll(keepingCapacity: true)
        }
    }

    private static let idPrefix = Array("id: ".utf8)
}

/// An event-stream client that never reads: a tiny receive buffer and no reads, so castd's writes to it back up
/// at once, as they would to a client on a dead Wi-Fi link or a stopped process.
struct StalledEventStreamClient: Sendable {
    private let channel: any Channel

    /// The client's own port, to find its connection in /proc/net/tcp.
    var localPort: Int { channel.localAddress?.port ?? 0 }

    static func connect(port: Int) async throws -> StalledEventStreamClient {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.socketOption(.so_rcvbuf), value: 1024)
            .channelOption(ChannelOptions.autoRead, value: false)
            .connect(host: "127.0.0.1", port: port).get()
        let request = "GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n"
        try await channel.writeAndFlush(channel.allocator.buffer(string: request))
        return StalledEventStreamClient(channel: channel)
    }

    func close() async {
        try? await channel.close()
    }
}

/// The least a client can add: a blocking keep-alive socket on a thread of its own (as curl or a script's HTTP
/// library is), no event loop and no task between the bytes and the clock.
enum BlockingHTTPClient {
    /// `rounds` bodiless requests on one keep-alive connection, the `round`th being `request(round)`, sent from
    /// a thread of their own; each one's time in milliseconds and how many were not answered 200.
    static func roundTrips(
        port: Int,
        rounds: Int,
        _ request: @escaping @Sendable (Int) -> (method: String, path: String)
    ) async throws -> (samples: [Double], failures: Int) {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try run(port: port, rounds: rounds, request) })
            }
            thread.start()
        }
    }

    private static func run(
        port: Int,
        rounds: Int,
        _ request: (Int) -> (method: String, path: String)
    ) throws -> (samples: [Double], failures: Int) {
        let socket = try connect(port: port)
        defer { close(socket) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var samples: [Double] = []
        var failures = 0
        for round in -1..<rounds {  // round -1 warms up outside the figures
            let (method, path) = request(max(round, 1))
            let bytes = Array("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n".utf8)
            let start = ContinuousClock.now
            guard write(socket, bytes, bytes.count) == bytes.count else { throw BenchmarkFailure("write failed") }
            let status = try readResponse(socket, method: method, into: &buffer)
            if round >= 0 {
                samples.append(seconds(ContinuousClock.now - start) * 1000)
                if status != 200 { failures += 1 }
            }
        }
        return (samples, failures)
    }

    private static func connect(port: Int) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var noDelay: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard socket >= 0, connected == 0 else { throw BenchmarkFailure("cannot connect to 127.0.0.1:\(port)") }
        return socket
    }

    /// Reads one response (its head, then `Content-Length` bytes of body) and answers its status code.
    private static func readResponse(_ socket: Int32, method: String, into buffer: inout [UInt8]) throws -> Int {
        var received: [UInt8] = []
        let separator = Array("\r\n\r\n".utf8)
        while true {
            let count = read(socket, &buffer, buffer.count)
            guard count > 0 else { throw BenchmarkFailure("castd closed the connection") }
            received += buffer[0..<count]
            guard let end = received.firstRange(of: separator)?.upperBound else { continue }
            let head = String(decoding: received[..<end], as: UTF8.self).lowercased()
            let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
            let length =
                method == "HEAD"
                ? 0
                : head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
            while received.count - end < length {
                let count = read(socket, &buffer, buffer.count)
                guard count > 0 else { throw BenchmarkFailure("castd closed the connection") }
                received += buffer[0..<count]
            }
            return status
        }
    }
}
