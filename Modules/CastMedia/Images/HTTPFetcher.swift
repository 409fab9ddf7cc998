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
        let response = try await get(url, headers: [("Accept", "image/*")])
        guard response.status == 200 else {
            throw CastMediaError(.imageDownloadFailed, "\(url) answered HTTP \(response.status)")
        }
        return response.body
    }

    /// One answer to ``get(_:headers:truncating:)``.
    public struct Response: Sendable {
        /// The HTTP status.
        public var status: Int
        /// The response headers, names lowercased (the last value of a repeated header wins).
        public var headers: [String: String]
        /// The body, or its first ``HTTPFetcher/maximumBodyBytes`` when truncated.
        public var body: [UInt8]
        /// Whether the body was cut at the limit (only with `truncating`).
        public var isTruncated: Bool
        /// The URL that answered, after redirects.
        public var url: String
    }

    /// GETs `url` with extra `headers`, following redirects, and returns whatever status came back. With
    /// `truncating`, a body over the limit is cut there instead of failing: enough to sniff a 4 GiB file.
    ///
    /// - Throws: ``CastMediaError`` with ``CastMediaError/Code/imageDownloadFailed`` for a bad URL, a connection
    ///   or TLS failure, a body over the limit (without `truncating`), too many redirects, or the timeout.
    public func get(_ url: String, headers: [(String, String)] = [], truncating: Bool = false) async throws -> Response
    {
        var current = url
        for _ in 0...maximumRedirects {
            var response = try await fetchOnce(current, headers: headers, truncating: truncating)
            if (300..<400).contains(response.status), let location = response.headers["location"] {
                current = location.hasPrefix("/") ? Self.origin(of: current) + location : location
                continue
            }
            response.url = current
            return response
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

    private func fetchOnce(_ url: String, headers: [(String, String)], truncating: Bool) async throws -> Response {
        let target = try Self.parse(url)
        let eventLoop = eventLoopGroup.next()
        let handshake = eventLoop.makePromise(of: Void.self)
        let response = eventLoop.makePromise(of: Response.self)
        let limit = maximumBodyBytes
        let tlsContext = self.tlsContext
        let timeout = TimeAmount.nanoseconds(timeout.inNanoseconds)
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
                    try operations.addHandler(
                        ResponseCollector(promise: response, url: url, limit: limit, truncating: truncating)
                    )
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
            if !headers.contains(where: { $0.0.lowercased() == "user-agent" }) {
                head.headers.add(name: "User-Agent", value: CastTransportVersion.userAgent)
            }
            for (name, value) in headers { head.headers.add(name: name, value: value) }
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
    private let url: String
    private let limit: Int
    private let truncating: Bool
    private var response: HTTPFetcher.Response?

    init(promise: EventLoopPromise<HTTPFetcher.Response>, url: String, limit: Int, truncating: Bool) {
        self.promise = promise
        self.url = url
        self.limit = limit
        self.truncating = truncating
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            var headers: [String: String] = [:]
            for (name, value) in head.headers { headers[name.lowercased()] = value }
            response = HTTPFetcher.Response(
                status: Int(head.status.code),
                headers: headers,
                body: [],
                isTruncated: false,
                url: url
            )
        case .body(var buffer):
            guard var current = response else { return }
            guard current.body.count + buffer.readableBytes <= limit else {
                if truncating {
                    current.body += buffer.readBytes(length: limit - current.body.count) ?? []
                    current.isTruncated = true
                    response = nil
                    promise.succeed(current)
                } else {
                    promise.fail(CastMediaError(.imageDownloadFailed, "the body is larger than \(limit) bytes"))
                }
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
