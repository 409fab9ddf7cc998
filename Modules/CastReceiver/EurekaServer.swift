import CastTransport
import NIOCore
import NIOHTTP1
import NIOPosix

/// The device HTTP API's one page senders read (cast-protocol.md §11.4): `GET /setup/eureka_info` answers what
/// ``EmulatedDevice/eurekaInfo(params:)`` says, as JSON; every other path is 404. One answer per connection.
final class EurekaServer: Sendable {
    private let channel: any Channel
    /// The bound port.
    let port: Int

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    /// Listens on `host:port` (0: a free port).
    static func bind(
        host: String,
        port: Int,
        eventLoopGroup: any EventLoopGroup,
        document: @escaping @Sendable (_ params: Set<String>?) -> JSONValue
    ) async throws -> EurekaServer {
        let channel = try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(Responder(document: document))
                }
            }
            .bind(host: host, port: port).get()
        return EurekaServer(channel: channel, port: channel.localAddress?.port ?? port)
    }

    /// Stops listening (answers under way finish).
    func close() async {
        try? await channel.close()
    }

    /// The `params` of a request target (`name,device_info`), or `nil` when it names none (everything).
    static func params(of uri: String) -> Set<String>? {
        guard let query = uri.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        for pair in query.split(separator: "&") where pair.hasPrefix("params=") {
            let value = String(pair.dropFirst("params=".count)).replacing("%2C", with: ",").replacing("%2c", with: ",")
            return Set(value.split(separator: ",").map(String.init))
        }
        return nil
    }

    private final class Responder: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let document: @Sendable (Set<String>?) -> JSONValue
        var head: HTTPRequestHead?

        init(document: @escaping @Sendable (Set<String>?) -> JSONValue) { self.document = document }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): self.head = head
            case .body: break
            case .end:
                guard let head else { return }
                self.head = nil
                let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
                if path == "/setup/eureka_info", head.method == .GET || head.method == .HEAD {
                    let body = document(EurekaServer.params(of: head.uri)).jsonString
                    respond(context, .ok, body: head.method == .HEAD ? "" : body, length: body.utf8.count)
                } else {
                    let body = "{\"error\":\"not found\"}"
                    respond(context, .notFound, body: body, length: body.utf8.count)
                }
            }
        }

        private func respond(_ context: ChannelHandlerContext, _ status: HTTPResponseStatus, body: String, length: Int)
        {
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: "\(length)")
            headers.add(name: "Connection", value: "close")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
                promise: nil
            )
            if !body.isEmpty {
                var buffer = context.channel.allocator.buffer(capacity: body.utf8.count)
                buffer.writeString(body)
                context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            }
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
