import CastDiscovery
import CastReceiver
import CastService
import CastSession
import CastTransport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A hub over `count` emulated devices (static hosts on 127.0.0.1, no mDNS), started and with every device
/// listed; stopped afterwards.
func withHub<Result: Sendable>(
    devices count: Int = 1,
    mediaFolders: [String] = [],
    configure: (inout DeviceHub.Options) -> Void = { _ in },
    _ body: (DeviceHub, CastReceiverEmulator) async throws -> Result
) async throws -> Result {
    let configurations = CastReceiverEmulator.configurations(count: count, basePort: 0, namePrefix: "Room")
    return try await withCastReceiverEmulator(devices: configurations) { emulator in
        let stateDirectory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
        let hub = try await startedHub(
            on: emulator,
            stateDirectory: stateDirectory,
            mediaFolders: mediaFolders,
            configure: configure
        )
        do {
            let result = try await body(hub, emulator)
            await hub.stop()
            return result
        } catch {
            await hub.stop()
            throw error
        }
    }
}

/// A started hub over the emulator's devices (static hosts on 127.0.0.1, no mDNS) that saves its sessions in
/// `stateDirectory`, returned once every device is listed; the caller stops it.
func startedHub(
    on emulator: CastReceiverEmulator,
    stateDirectory: String,
    mediaFolders: [String] = [],
    configure: (inout DeviceHub.Options) -> Void = { _ in }
) async throws -> DeviceHub {
    var discovery = DiscoveryManager.Configuration()
    discovery.browsesMulticastDNS = false
    discovery.staticDevices = emulator.devices.map { CastDevice.staticDevice(host: "127.0.0.1", port: $0.port) }
    var options = DeviceHub.Options()
    options.cast.stateDirectory = stateDirectory
    options.cast.heartbeat.pingInterval = nil
    options.cast.requestTimeout = .seconds(60)
    options.cast.launchTimeout = .seconds(60)  // a start riding through drops retries within connect + launch
    options.mediaFolders = mediaFolders
    configure(&options)
    let hub = DeviceHub(options: options, discovery: DiscoveryManager(configuration: discovery))
    try hub.start()
    _ = await hub.discovery.devices(atLeast: emulator.devices.count)
    return hub
}

/// A temporary directory for saved sessions, unique per test; ``withHub(devices:_:)`` removes it afterwards.
func temporaryStateDirectory() -> String {
    var template = Array("/tmp/castd-tests-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    return String(cString: path!)
}

/// Serves `hub` over HTTP on a free loopback port for the duration of `body`.
func withServer<Result: Sendable>(
    _ hub: DeviceHub,
    options: CastServiceServer.Options = CastServiceServer.Options(),
    clock: some Clock<Duration> = ContinuousClock(),
    _ body: (Int) async throws -> Result
) async throws -> Result {
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    var options = options
    options.address = ListenAddress(host: "127.0.0.1", port: 0)
    let server = try CastServiceServer(hub: hub, options: options, clock: clock)
    let running = Task { try await server.serve { port in continuation.yield(port) } }
    defer { running.cancel() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next() else { throw CancellationError() }
    return try await body(port)
}

/// One HTTP/1.1 exchange over a fresh connection.
struct HTTPReply: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: String

    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    var json: JSONValue? { try? JSONValue(parsing: body) }
}

enum TestHTTP {
    /// Sends the requests (method, path, JSON body) all at once; answers their statuses, in no particular order.
    static func statuses(port: Int, _ requests: [(String, String, String?)]) async throws -> [Int] {
        try await replies(port: port, requests).map(\.status)
    }

    /// The replies to `requests`, sent at once, in no particular order.
    static func replies(port: Int, _ requests: [(String, String, String?)]) async throws -> [HTTPReply] {
        try await withThrowingTaskGroup(of: HTTPReply.self) { group in
            for (method, path, json) in requests {
                group.addTask { try await send(port: port, method, path, json: json) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// Sends a request and reads the whole response (the server closes after `Connection: close`).
    static func send(
        port: Int,
        _ method: String,
        _ path: String,
        json: String? = nil,
        chunkedJSON: String? = nil,
        headers: [(String, String)] = [],
        host: String? = nil
    ) async throws -> HTTPReply {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if let json {
            request += "Content-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n\r\n\(json)"
        } else if let chunkedJSON {
            // No declared length: the body arrives in 64-byte chunks, as a streaming client sends it.
            request += "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            var rest = Substring(chunkedJSON)
            while !rest.isEmpty {
                let chunk = rest.prefix(64)
                rest = rest.dropFirst(64)
                request += String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n"
            }
            request += "0\r\n\r\n"
        } else {
            request += "Content-Length: 0\r\n\r\n"
        }
        let text = try await exchange(port: port, request: request) { _ in false }
        return try parse(text)
    }

    /// Opens the event stream and reads until `enough` says the text so far suffices, then closes.
    static func events(
        port: Int,
        lastEventID: Int? = nil,
        until enough: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        var request = "GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n"
        if let lastEventID { request += "Last-Event-ID: \(lastEventID)\r\n" }
        request += "\r\n"
        return try await exchange(port: port, request: request, until: enough)
    }

    /// What the first read of the answer to a bodiless request brings: the whole answer when the server wrote it
    /// in one piece (on loopback, one write arrives whole).
    static func firstRead(port: Int, _ method: String, _ path: String) async throws -> String {
        let request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: 0\r\n\r\n"
        return try await exchange(port: port, request: request) { _ in true }
    }

    private static func exchange(
        port: Int,
        request: String,
        until enough: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        let collector = Collector(enough: enough)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
            }
            .connect(host: "127.0.0.1", port: port).get()
        try await channel.writeAndFlush(channel.allocator.buffer(string: request))
        try await channel.closeFuture.get()
        return collector.text
    }

    private static func parse(_ text: String) throws -> HTTPReply {
        guard let split = text.range(of: "\r\n\r\n") else {
            throw CastServiceError(.invalidRequest, "no head", httpStatus: 0)
        }
        let head = text[..<split.lowerBound].split(separator: "\r\n").map(String.init)
        let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        let headers = head.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = String(text[split.upperBound...])
        if headers.contains(where: { $0.0.lowercased() == "transfer-encoding" && $0.1 == "chunked" }) {
            body = dechunk(body)
        }
        return HTTPReply(status: status, headers: headers, body: body)
    }

    private static func dechunk(_ text: String) -> String {
        var rest = Substring(text)
        var output = ""
        while let lineEnd = rest.range(of: "\r\n"), let size = Int(rest[..<lineEnd.lowerBound], radix: 16), size > 0 {
            let start = lineEnd.upperBound
            let bytes = Array(rest[start...].utf8)
            output += String(decoding: bytes.prefix(size), as: UTF8.self)
            rest = Substring(String(decoding: bytes.dropFirst(size + 2), as: UTF8.self))
        }
        return output
    }
}

private final class Collector: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    private let bytes = NIOLockedValueBox<[UInt8]>([])
    private let enough: @Sendable (String) -> Bool

    init(enough: @escaping @Sendable (String) -> Bool) { self.enough = enough }

    var text: String { String(decoding: bytes.withLockedValue { $0 }, as: UTF8.self) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        bytes.withLockedValue { $0 += buffer.readableBytesView }
        if enough(text) { context.close(promise: nil) }
    }
}
