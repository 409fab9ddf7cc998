import CastTransport
import NIOCore
import NIOHTTP1
import NIOPosix

/// A small HTTP/1.1 GET client for artwork: HTTPS through the system OpenSSL with certificate and host-name
/// verification, plain HTTP, redirects, a size limit and a timeout. It exists so image caching needs no
/// extra HTTP library.
public struct HTTPFetcher: Sendable {
    /// The largest body accepted. Defaults to 8 MiB.
    public var maximumBodyBytes = 8 << 20
    /// Limit for the whole fetch. Defaults to 15 s.
    public var timeout: Duration = .seconds(15)
    /// How many redirects to follow. Defaults to 3.
    public var maximumRedirects = 3
    private let tlsContext: TLSContext
    private let eventLoopGroup: any EventLoopGroup

    /// A fetcher verifying HTTPS servers against `trustRootsPEM`, or the system trust store when `nil`.
    public init(
        trustRootsPEM: String? = nil,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        self.tlsContext = try TLSContext.makeVerifyingClientContext(trustRootsPEM: trustRootsPEM)
        self.eventLoopGroup = eventLoopGroup
    }

    /// Fetches `url` and returns its body.
    ///
    /// - Throws: ``CastMediaError`` with ``CastMediaError/Code/imageDownloadFailed`` saying why (bad URL, TLS
    ///   verification, HTTP status, too large, timeout).
    public func fetch(_ url: String) async throws -> [UInt8] {
        var current = url
        for _ in 0...maximumRedirects {
            let response = try await fetchOnce(current)
            if (300..<400).contains(response.status), let location = response.location {
                current = location.hasPrefix("/") ? Self.origin(of: current) + location : location
                continue
            }
            guard response.status == 200 else {
                throw CastMediaError(.imageDownloadFailed, "\(url) answered HTTP \(response.status)")
            }
            return response.body
        }
        throw CastMediaError(.imageDownloadFailed, "\(url) redirected more than \(maximumRedirects) times")
    }

    struct ParsedURL {
        var isHTTPS: Bool
        var host: String
        var port: Int
        var path: String
    }

    static func parse(_ url: String) throws -> ParsedURL {
        let isHTTPS: Bool
        let rest: Substring
        if url.hasPrefix("https://") {
            isHTTPS = true
            rest = url.dropFirst(8)
        } else if url.hasPrefix("http://") {
            isHTTPS = false
            rest = url.dropFirst(7)
        } else {
            throw CastMediaError(.imageDownloadFailed, "\(url) is not an http(s) URL")
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var path = String(rest.dropFirst(authority.count).prefix { $0 != "#" })
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        var host = String(authority)
        var port = isHTTPS ? 443 : 80
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":"), let value = Int(after.dropFirst()) { port = value }
            host = String(host[host.index(after: host.startIndex)..<close])
        } else if let colon = host.lastIndex(of: ":"), let value = Int(host[host.index(after: colon)...]) {
            port = value
            host = String(host[..<colon])
        }
        guard !host.isEmpty, (1...65535).contains(port) else {
            throw CastMediaError(.imageDownloadFailed, "\(url) has no valid host")
        }
        return ParsedURL(isHTTPS: isHTTPS, host: host, port: port, path: path)
    }

    private static func origin(of url: String) -> String {
        guard let parsed = try? parse(url) else { return "" }
        return "\(parsed.isHTTPS ? "https" : "http")://\(parsed.host):\(parsed.port)"
    }

    struct Response {
        var status: Int
        var location: String?
        var body: [UInt8]
    }

    private func fetchOnce(_ url: String) async throws -> Response {
        let target = try Self.parse(url)
        let eventLoop = eventLoopGroup.next()
        let handshake = eventLoop.makePromise(of: Void.self)
        let response = eventLoop.makePromise(of: Response.self)
        let limit = maximumBodyBytes
        let tlsContext = self.tlsContext
        let timeout = TimeAmount.nanoseconds(
            Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        )
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    if target.isHTTPS {
                        try operations.addHandler(
                            makeTLSHandler(
                                context: tlsContext,
                                serverHostname: target.host,
                                handshakeTimeout: timeout,
                                handshakePromise: handshake
                            )
                        )
                    } else {
                        handshake.succeed()
                    }
                    try operations.addHTTPClientHandlers()
                    try operations.addHandler(ResponseCollector(promise: response, limit: limit))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: target.host, port: target.port).get()
        } catch {
            handshake.fail(error)
            response.fail(error)
            throw CastMediaError(
                .imageDownloadFailed,
                "cannot connect to \(target.host):\(target.port): \(error)",
                cause: error
            )
        }
        let timer = eventLoop.scheduleTask(in: timeout) {
            response.fail(CastMediaError(.imageDownloadFailed, "\(url) timed out"))
            channel.close(promise: nil)
        }
        defer {
            timer.cancel()
            channel.close(promise: nil)
        }
        do {
            try await handshake.futureResult.get()
            var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path)
            let defaultPort = target.isHTTPS ? 443 : 80
            head.headers.add(
                name: "Host",
                value: target.port == defaultPort ? target.host : "\(target.host):\(target.port)"
            )
            head.headers.add(name: "User-Agent", value: CastTransportVersion.userAgent)
            head.headers.add(name: "Accept", value: "image/*")
            head.headers.add(name: "Connection", value: "close")
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
            return try await response.futureResult.get()
        } catch let error as CastMediaError {
            throw error
        } catch {
            throw CastMediaError(.imageDownloadFailed, "fetching \(url) failed: \(error)", cause: error)
        }
    }
}

/// Collects one HTTP response, failing when the body exceeds the limit or the connection ends early.
private final class ResponseCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<HTTPFetcher.Response>
    private let limit: Int
    private var response: HTTPFetcher.Response?

    init(promise: EventLoopPromise<HTTPFetcher.Response>, limit: Int) {
        self.promise = promise
        self.limit = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            response = HTTPFetcher.Response(
                status: Int(head.status.code),
                location: head.headers.first(name: "Location"),
                body: []
            )
        case .body(var buffer):
            guard var current = response else { return }
            guard current.body.count + buffer.readableBytes <= limit else {
                promise.fail(CastMediaError(.imageDownloadFailed, "the image is larger than \(limit) bytes"))
                context.close(promise: nil)
                return
            }
            current.body += buffer.readBytes(length: buffer.readableBytes) ?? []
            response = current
        case .end:
            if let response { promise.succeed(response) }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(CastMediaError(.imageDownloadFailed, "the server closed the connection before the response ended"))
        context.fireChannelInactive()
    }
}
