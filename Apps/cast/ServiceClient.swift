import CastControllers
import CastTransport
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One request to a running `castd` and its answer: the thin HTTP/1.1 client of `cast --via`.
///
/// A command is one request on one loopback connection, so this is NIO's HTTP/1.1 codec and nothing more (the
/// apps already link NIO; a general HTTP client library would add minutes to a cold build for it).
struct ServiceClient: Sendable {
    /// castd's address.
    let host: String
    let port: Int
    /// The bearer token, when castd asks for one.
    let token: String?
    /// How long a request may take, castd's own wait for the device included.
    let timeout: TimeAmount

    /// A client for castd at `url` (`http://HOST:PORT`, a trailing slash allowed).
    init(url: String, token: String?, timeout: Double) throws {
        guard let parsed = URLComponents(string: url), parsed.scheme == "http", let host = parsed.host,
            !host.isEmpty, parsed.path.isEmpty || parsed.path == "/"
        else {
            throw CLIError(.usage, "--via takes castd's address as http://HOST:PORT, not '\(url)'")
        }
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        self.port = parsed.port ?? 8765
        self.token = token
        self.timeout = .milliseconds(Int64(timeout * 1000))
    }

    /// castd's answer: its status code and JSON body (a device state, a list, or an RFC 9457 problem).
    struct Reply: Sendable {
        var status: Int
        var body: JSONValue
    }

    /// Sends `method path` with `body` as JSON and returns the reply; a problem reply throws its ``CLIError``.
    func send(_ method: HTTPMethod, _ path: String, body: JSONValue? = nil) async throws -> Reply {
        let reply = try await exchange(method, path, body: body)
        guard (200..<300).contains(reply.status) else { throw Self.failure(reply) }
        return reply
    }

    /// Sends `method path` with `body` as JSON and returns what castd answered, problems included.
    func exchange(_ method: HTTPMethod, _ path: String, body: JSONValue? = nil) async throws -> Reply {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let promise = loop.makePromise(of: Reply.self)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: loop)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(ReplyCollector(promise: promise))
                    }
                }
                .connect(host: host, port: port).get()
        } catch {
            promise.fail(error)
            throw CLIError(
                .noDevice,
                "castd is not answering at http://\(hostAndPort) (\(error)); start it with castd serve"
            )
        }
        let deadline = channel.eventLoop.scheduleTask(in: timeout) {
            promise.fail(CLIError(.timedOut, "castd did not answer \(method) \(path) in time"))
            channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        let bytes = body.map { ByteBuffer(string: $0.jsonString) }
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        head.headers.add(name: "Host", value: hostAndPort)
        head.headers.add(name: "Accept", value: "application/json")
        head.headers.add(name: "Connection", value: "close")
        head.headers.add(name: "Content-Length", value: String(bytes?.readableBytes ?? 0))
        if bytes != nil { head.headers.add(name: "Content-Type", value: "application/json") }
        if let token { head.headers.add(name: "Authorization", value: "Bearer \(token)") }
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if let bytes { channel.write(HTTPClientRequestPart.body(.byteBuffer(bytes)), promise: nil) }
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil))
        defer { channel.close(promise: nil) }
        return try await promise.futureResult.get()
    }

    private var hostAndPort: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The CLI failure for a problem reply, with the exit code its status stands for.
    static func failure(_ reply: Reply) -> CLIError {
        let detail = reply.body["detail"]?.stringValue ?? "castd answered \(reply.status)"
        let message = reply.body["code"]?.stringValue.map { "\(detail) (\($0))" } ?? detail
        switch reply.status {
        case 400, 401, 403, 413: return CLIError(.usage, message)
        case 404, 502: return CLIError(.noDevice, message)
        // A command the receiver does not offer now (no next item, no ad to skip, a fixed volume) or refuses is a
        // refusal, as it is directly.
        case 409 where ["notSupported", "refused"].contains(reply.body["code"]?.stringValue ?? ""):
            return CLIError(.failed, message)
        case 409: return CLIError(.nothingToControl, message)
        case 504: return CLIError(.timedOut, message)
        default: return CLIError(.failed, message)
        }
    }
}

/// Collects one HTTP response and completes the promise with it (on the channel's event loop, like all its state).
private final class ReplyCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    private let promise: EventLoopPromise<ServiceClient.Reply>
    private var status = 0
    private var body: [UInt8] = []

    init(promise: EventLoopPromise<ServiceClient.Reply>) { self.promise = promise }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): status = Int(head.status.code)
        case .body(let buffer): body += buffer.readableBytesView
        case .end:
            let text = String(decoding: body, as: UTF8.self)
            promise.succeed(ServiceClient.Reply(status: status, body: (try? JSONValue(parsing: text)) ?? .string(text)))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(CLIError(.noDevice, "castd closed the connection before answering"))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }
}
