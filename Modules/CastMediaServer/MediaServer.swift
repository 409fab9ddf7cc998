import CastLogging
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// How a ``MediaServer`` listens. The defaults suit a device on the local network.
public struct MediaServerOptions: Sendable {
    /// The address to listen on and put in URLs. Defaults to `nil`: the local address the kernel uses to reach
    /// the device (never `0.0.0.0`, never just the first interface). Set it for Docker, VPNs or odd routes.
    /// `0.0.0.0` or `::` listens on every interface, and URLs still get the address routed towards the device.
    public var address: String?
    /// The ports to try, in order. Defaults to `nil`: any free port. A range suits a firewall with an open range.
    public var ports: ClosedRange<Int>?
    /// The most connections open at once. One more closes the connection idle longest (it is refused only when
    /// every connection is answering a request), so idle sockets cannot lock a device out. Defaults to 64 (a
    /// device opens a few).
    public var maximumConnections = 64
    /// How long a new connection may take to send a complete request head before it is closed. Defaults to
    /// 20 seconds: a device asks at once, and a socket that sends nothing must not hold its place for long (at
    /// the connection limit the idle one makes room anyway); 5 s closed clients of a machine under heavy load.
    public var requestHeadTimeout: Duration = .seconds(20)
    /// How long a kept-alive connection may wait for its next request before it is closed. Defaults to 30
    /// seconds; a player connects again for its next range.
    public var idleTimeout: Duration = .seconds(30)
    /// How often a file being sent is checked for having shrunk below the length promised (tests set it short).
    var fileCheckInterval = TimeAmount.milliseconds(500)
    /// Where the server logs; silent by default. The server tags it with the `media-server` category.
    public var logger = Logger.castDisabled

    /// Options with the defaults.
    public init(address: String? = nil, ports: ClosedRange<Int>? = nil) {
        self.address = address
        self.ports = ports
    }
}

/// An HTTP server that makes this computer's files, folders and streams fetchable by a Cast device: the part a
/// sender needs to cast anything that is not already on the web.
///
/// Each shared item gets an unguessable URL; nothing else is answered. Files are served with single byte ranges,
/// validators and CORS (players need CORS for subtitles and HLS), through sendfile. The server records every
/// connection and request, so when a device does not play, ``diagnose(_:deviceAddress:detailedErrorCode:)`` can say why.
///
/// ```swift
/// let server = try await MediaServer.start(reaching: device.host)
/// let movie = try server.share(file: "/home/me/movie.mp4")
/// try await client.load(LoadRequestData(media: MediaInformation(contentID: movie.url, contentType: movie.contentType)))
/// ```
public final class MediaServer: Sendable {
    /// The address in every URL.
    public let address: String
    /// The address listened on: ``address``, or every interface (`0.0.0.0`, `::`) when given so.
    public let listeningAddress: String
    /// The port listened on.
    public let port: Int
    /// Why ``address`` was chosen, for people: "the address that routes to 192.168.1.20", say.
    public let addressReason: String

    private let serverChannel: any Channel
    private let registry: ShareRegistry
    private let fetchLog: FetchLog
    private let connections: ConnectionSet
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger

    private init(
        address: String,
        listeningAddress: String,
        port: Int,
        addressReason: String,
        serverChannel: any Channel,
        registry: ShareRegistry,
        fetchLog: FetchLog,
        connections: ConnectionSet,
        eventLoopGroup: any EventLoopGroup,
        logger: Logger
    ) {
        self.address = address
        self.listeningAddress = listeningAddress
        self.port = port
        self.addressReason = addressReason
        self.serverChannel = serverChannel
        self.registry = registry
        self.fetchLog = fetchLog
        self.connections = connections
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// Starts a server that `deviceHost` can reach (when given and no address is set), listening until ``stop()``.
    ///
    /// - Throws: ``CastMediaServerError`` ``CastMediaServerError/Code/bindFailed`` when no route leads to the
    ///   device or no port in the range is free, saying which.
    public static func start(
        reaching deviceHost: String?,
        options: MediaServerOptions = MediaServerOptions(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        threadPool: NIOThreadPool = .singleton
    ) async throws -> MediaServer {
        let choice = try await ServingAddress.choose(
            given: options.address,
            deviceHost: deviceHost,
            eventLoopGroup: eventLoopGroup
        )
        let registry = ShareRegistry()
        let fetchLog = FetchLog()
        let connections = ConnectionSet(limit: options.maximumConnections)
        let timeouts = ConnectionTimeouts(
            requestHead: TimeAmount(options.requestHeadTimeout),
            idle: TimeAmount(options.idleTimeout)
        )
        let logger = options.logger.withCategory("media-server")
        let fileCheckInterval = options.fileCheckInterval
        let bootstrap = ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                guard connections.admit(channel) else { return channel.close() }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        ConnectionActivityHandler(connections: connections, timeouts: timeouts)
                    )
                    try channel.pipeline.syncOperations.addHandler(
                        MediaHTTPHandler(
                            registry: registry,
                            fetchLog: fetchLog,
                            threadPool: threadPool,
                            logger: logger,
                            fileCheckInterval: fileCheckInterval
                        )
                    )
                }
            }
        var lastError: (any Error)?
        for candidate in options.ports.map(Array.init) ?? [0] {
            do {
                let channel = try await bootstrap.bind(host: choice.listen, port: candidate).get()
                let port = channel.localAddress?.port ?? candidate
                logger.info("media server on \(ServingAddress.urlHost(choice.advertised)):\(port) (\(choice.reason))")
                return MediaServer(
                    address: choice.advertised,
                    listeningAddress: choice.listen,
                    port: port,
                    addressReason: choice.reason,
                    serverChannel: channel,
                    registry: registry,
                    fetchLog: fetchLog,
                    connections: connections,
                    eventLoopGroup: eventLoopGroup,
                    logger: logger
                )
            } catch {
                lastError = error
            }
        }
        let ports = options.ports.map {
            $0.count == 1 ? "port \($0.lowerBound)" : "ports \($0.lowerBound)-\($0.upperBound)"
        }
        throw CastMediaServerError(
            .bindFailed,
            "cannot listen on \(choice.listen) \(ports ?? "any port"): \(lastError.map { "\($0)" } ?? "no port to try")",
            cause: lastError
        )
    }

    /// The URL prefix every item's URL starts with.
    public var baseURL: String { "http://\(ServingAddress.urlHost(address)):\(port)" }

    // MARK: - Sharing

    /// Shares one regular file under its own name; its content type comes from its content, else its extension.
    ///
    /// - Throws: ``CastMediaServerError/Code/notShareable`` when it is missing, unreadable or not a regular file.
    public func share(file path: String, contentType: String? = nil) throws -> SharedMedia {
        guard let real = OpenedFile.realPath(path),
            let opened = OpenedFile.openForReading(path: real, inside: nil, contentType: contentType)
        else {
            throw CastMediaServerError(.notShareable, "\(path) is not a readable file")
        }
        try? opened.handle.close()
        let name = real.split(separator: "/").last.map(String.init) ?? "media"
        return add(name: name, contentType: opened.contentType, size: opened.size, path: real, .file(path: real))
    }

    /// Shares the files under a folder (never a listing of it), addressed by ``url(of:relativePath:)``.
    /// Paths leaving the folder, by `..` or by symbolic links, are refused.
    public func share(folder path: String) throws -> SharedMedia {
        guard let real = OpenedFile.realPath(path), FileKind.isDirectory(real) else {
            throw CastMediaServerError(.notShareable, "\(path) is not a readable folder")
        }
        let name = real.split(separator: "/").last.map(String.init) ?? "folder"
        return add(name: name, contentType: "inode/directory", size: nil, path: real, .folder(root: real))
    }

    /// Shares bytes held in memory (converted subtitles, a generated playlist) under `name`.
    public func share(bytes: [UInt8], name: String, contentType: String) -> SharedMedia {
        let tag = "\"\(String(bytes.fingerprint, radix: 16))\""
        let created = Int(Self.now())
        return add(
            name: name,
            contentType: contentType,
            size: UInt64(bytes.count),
            path: nil,
            .bytes(bytes, entityTag: tag, created: created)
        )
    }

    /// Shares content made on demand: `entry` is the URL's last segment (a playlist, say); the responder is asked
    /// for it and for every path below the item.
    public func share(responder: some MediaResponder, entry: String, contentType: String) -> SharedMedia {
        add(name: entry, contentType: contentType, size: nil, path: nil, .responder(responder))
    }

    /// Shares a byte stream read once, as a live stream (standard input piped from `yt-dlp -o -`, say). Reading
    /// starts when the first player connects and keeps pace with the slowest one.
    public func share<Source: AsyncSequence & Sendable>(
        stream source: Source,
        name: String,
        contentType: String
    ) -> SharedMedia where Source.Element == ByteBuffer {
        let stream = LiveStream()
        Task {
            var chunks = source.makeAsyncIterator()
            await stream.pump { try await chunks.next() }
        }
        return add(name: name, contentType: contentType, size: nil, path: nil, .stream(stream))
    }

    /// Shares what arrives on a pipe (standard input, say) as a live stream, taking ownership of `descriptor`.
    /// The first bytes are read before this returns, so the content type comes from them when not given.
    ///
    /// - Throws: ``CastMediaServerError/Code/notShareable`` when the descriptor cannot be read or ends at once.
    public func share(pipe descriptor: Int32, name: String, contentType: String? = nil) async throws -> SharedMedia {
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await NIOPipeBootstrap(group: eventLoopGroup).takingOwnershipOfDescriptor(input: descriptor) {
                channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        } catch {
            throw CastMediaServerError(.notShareable, "cannot read the pipe: \(error)", cause: error)
        }
        let stream = LiveStream()
        let (firstChunk, firstChunkArrived) = AsyncStream.makeStream(of: ByteBuffer?.self)
        Task {
            try? await channel.executeThenClose { inbound, _ in
                var chunks = inbound.makeAsyncIterator()
                let first = try? await chunks.next()
                firstChunkArrived.yield(first)
                firstChunkArrived.finish()
                guard first != nil else { return stream.cancel() }
                var pending = first
                await stream.pump {
                    if let chunk = pending {
                        pending = nil
                        return chunk
                    }
                    return try await chunks.next()
                }
            }
        }
        var arrivals = firstChunk.makeAsyncIterator()
        guard let first = await arrivals.next() ?? nil else {
            throw CastMediaServerError(.notShareable, "the pipe ended before any data arrived")
        }
        let type =
            contentType ?? MediaSniffer.sniff(Array(first.readableBytesView.prefix(MediaSniffer.prefixLength)))?
            .mimeType ?? "video/mp2t"
        return add(name: name, contentType: type, size: nil, path: nil, .stream(stream))
    }

    /// The URL of a file below a shared folder (each path segment percent-encoded).
    public func url(of folder: SharedMedia, relativePath: String) -> String {
        folder.url + relativePath.split(separator: "/").map { RequestPath.encode(String($0)) }.joined(separator: "/")
    }

    /// Stops serving an item: its URL answers 404 from now on, and a responder's work ends.
    public func withdraw(_ media: SharedMedia) async {
        await Self.end(registry.remove(media.id))
    }

    private static func end(_ content: ShareContent?) async {
        switch content {
        case .stream(let stream): stream.cancel()
        case .responder(let responder): await responder.stop()
        default: break
        }
    }

    private func add(name: String, contentType: String, size: UInt64?, path: String?, _ content: ShareContent)
        -> SharedMedia
    {
        let token = RequestPath.makeToken()
        var url = "\(baseURL)/\(token)/"
        if case .folder = content {} else { url += RequestPath.encode(name) }
        let media = SharedMedia(id: token, url: url, name: name, contentType: contentType, size: size, path: path)
        registry.add(media, content)
        return media
    }

    // MARK: - What the device did

    /// Every request answered for `media` (the most recent ones, bounded), oldest first.
    public func requests(for media: SharedMedia) -> [FetchRecord] {
        fetchLog.records(for: media.id)
    }

    /// Waits until `media` is requested (by `peer`, when given), at most `timeout`; `true` if it was.
    /// Returns at once when it already was.
    public func waitForRequest<C: Clock>(
        for media: SharedMedia,
        from peer: String? = nil,
        timeout: C.Duration,
        clock: C
    ) async -> Bool {
        await fetchLog.waitForRequest(itemID: media.id, from: peer, timeout: timeout, clock: clock)
    }

    /// Waits until `media` is requested, at most `timeout` on the continuous clock.
    public func waitForRequest(for media: SharedMedia, from peer: String? = nil, timeout: Duration) async -> Bool {
        await waitForRequest(for: media, from: peer, timeout: timeout, clock: ContinuousClock())
    }

    /// How long since the server last answered a request (or started): a player fetches as it plays, so a
    /// server unasked for long serves nobody.
    public var timeSinceLastRequest: Duration { ContinuousClock.now - fetchLog.lastActivity }

    /// What the server saw of `deviceAddress` fetching `media`, the likely cause of a failure and what to do.
    /// `detailedErrorCode` is the device's, when LOAD failed with one: a text track's error (600–699) is advice
    /// about the subtitles, not the media.
    public func diagnose(_ media: SharedMedia, deviceAddress: String?, detailedErrorCode: Int? = nil)
        -> ReachabilityDiagnosis
    {
        let records = fetchLog.records(for: media.id)
        let fromDevice = records.filter { FetchLog.matches(deviceAddress, $0.peer) }
        let connections = fetchLog.connectionCount
        let cause: ReachabilityDiagnosis.Cause
        if !fromDevice.isEmpty {
            cause =
                fromDevice.contains { $0.status >= 400 } && !fromDevice.contains { $0.status < 300 }
                ? .requestFailed : .fetchedButRejected
        } else if connections > 0 {
            cause = .otherPeersOnly
        } else {
            cause = .noConnection
        }
        var diagnosis = ReachabilityDiagnosis(
            address: address,
            port: port,
            addressReason: addressReason,
            deviceAddress: deviceAddress,
            connections: connections,
            deviceRequests: fromDevice.count,
            statuses: fromDevice.map(\.status),
            cause: cause,
            advice: [],
            detailedErrorCode: detailedErrorCode
        )
        diagnosis.advice = Self.advice(for: diagnosis)
        return diagnosis
    }

    /// What to try: for a text track's error, about the subtitles first (and never the media's format, which
    /// played its part); then, unless the media was fetched, about reaching this computer.
    static func advice(for diagnosis: ReachabilityDiagnosis) -> [String] {
        let (address, port, device) = (diagnosis.address, diagnosis.port, diagnosis.deviceAddress)
        guard let code = diagnosis.detailedErrorCode, diagnosis.isTextTrackFailure else {
            return advice(for: diagnosis.cause, address: address, port: port, deviceAddress: device)
        }
        let subtitles = [
            "\(device ?? "the device") failed on a subtitle (text) track, detailedErrorCode \(code): it could not fetch or read the subtitles; a subtitle URL must answer the device with CORS (Access-Control-Allow-Origin) and WebVTT — cast without --subtitles, or with a local .srt/.vtt file, to play the media"
        ]
        if diagnosis.cause == .fetchedButRejected { return subtitles }
        return subtitles + advice(for: diagnosis.cause, address: address, port: port, deviceAddress: device)
    }

    static func advice(for cause: ReachabilityDiagnosis.Cause, address: String, port: Int, deviceAddress: String?)
        -> [String]
    {
        let device = deviceAddress ?? "the device"
        switch cause {
        case .noConnection:
            return [
                "a firewall on this computer may drop port \(port): allow it (for example `sudo nft add rule inet filter input tcp dport \(port) accept` or `sudo ufw allow \(port)/tcp`), or pick an open port with --serve-port",
                "\(device) may not reach \(address) (another network, a VPN or a container): give an address it can reach with --serve-address",
            ]
        case .otherPeersOnly:
            return [
                "connections arrived, but not from \(device): it may reach this computer through another interface or a NAT; try --serve-address with the address on its network",
                "in Docker, run with --network host so the device can connect back",
            ]
        case .requestFailed:
            return ["\(device) asked but was refused (see the statuses): the file may have moved or become unreadable"]
        case .fetchedButRejected:
            return [
                "\(device) fetched the media and could not play it: its format or codecs may not suit the device; try --transcode always"
            ]
        }
    }

    // MARK: - Lifetime

    /// Stops listening, closes every connection and ends every live stream, responder (transcoding) and wait.
    public func stop() async {
        for content in registry.removeAll() { await Self.end(content) }
        fetchLog.cancelWaiters()
        try? await serverChannel.close()
        await connections.closeAll()
    }

    private static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec)
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` with a server that `deviceHost` can reach (see ``MediaServer/start(reaching:options:eventLoopGroup:threadPool:)``)
/// and stops it when `body` returns, throws or is cancelled: every connection, live stream and transcoder it
/// started ends with the scope.
///
/// - Parameters:
///   - deviceHost: The device that will fetch the media, to pick an address it can reach.
///   - options: Address, ports and limits.
///   - eventLoopGroup: Where the server's I/O runs.
///   - threadPool: Where file reads run.
///   - isolation: Where `body` runs: the caller's actor, by default.
///   - body: Shares media and casts it.
/// - Returns: What `body` returns.
/// - Throws: What ``MediaServer/start(reaching:options:eventLoopGroup:threadPool:)`` throws, or `body` does.
public func withMediaServer<Result>(
    reaching deviceHost: String?,
    options: MediaServerOptions = MediaServerOptions(),
    eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
    threadPool: NIOThreadPool = .singleton,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (MediaServer) async throws -> sending Result
) async throws -> sending Result {
    let server = try await MediaServer.start(
        reaching: deviceHost,
        options: options,
        eventLoopGroup: eventLoopGroup,
        threadPool: threadPool
    )
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}
