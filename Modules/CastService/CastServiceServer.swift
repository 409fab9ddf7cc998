import CastLogging
import CastTransport
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OpenAPIHummingbird
import OpenAPIRuntime
import ServiceLifecycle
import UnixSignals

/// Where the service listens: an address and a port (0 picks a free one).
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address: `127.0.0.1`, `::1`, `localhost`, or any local address (which then needs bearer tokens).
    public var host: String
    /// The port; 0 lets the system pick one.
    public var port: Int

    /// Creates an address.
    public init(host: String = "127.0.0.1", port: Int = 8765) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` (`[::1]:PORT` for IPv6).
    ///
    /// - Throws: ``CastServiceError`` — ``CastServiceError/Code/invalidConfiguration`` for a malformed address.
    public init(parsing text: String) throws(CastServiceError) {
        let host: Substring
        let port: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            port = text[close...].dropFirst().drop { $0 == ":" }
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        } else {
            throw CastServiceError(
                .invalidConfiguration,
                "'\(text)' is not HOST:PORT",
                httpStatus: 500,
                field: "listen"
            )
        }
        guard !host.isEmpty, let number = Int(port), (0...65535).contains(number) else {
            throw CastServiceError(
                .invalidConfiguration,
                "'\(text)' is not HOST:PORT with a port from 0 to 65535",
                httpStatus: 500,
                field: "listen"
            )
        }
        self.init(host: String(host), port: number)
    }

    /// Whether only this machine can connect: `localhost`, `::1` or an address in 127.0.0.0/8.
    public var isLoopback: Bool {
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return host == "localhost" || host == "::1" || (octets.count == 4 && octets[0] == "127")
    }

    /// `host:port`, with brackets around an IPv6 host, as `--listen` takes it.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// The HTTP face of a ``DeviceHub``: the OpenAPI operations of `openapi.yaml` on Hummingbird, run with the hub
/// in one service group that shuts down gracefully on SIGTERM and SIGINT (sessions are left playing).
///
/// Safe by default: it listens on loopback; any other address needs at least one bearer token, and once tokens
/// are set every request needs one. Cross-origin requests are refused unless their origin is listed; request
/// bodies and each client's request rate are limited.
public struct CastServiceServer: Sendable {
    /// How the server listens and whom it answers.
    public struct Options: Sendable {
        /// Where it listens. Defaults to 127.0.0.1:8765.
        public var address = ListenAddress()
        /// The hashes of the bearer tokens it accepts. Defaults to none: no token asked, loopback only.
        public var tokens: [BearerTokenHash] = []
        /// Web origins (`https://home.example`) allowed to call the API from a browser (CORS). Defaults to none:
        /// requests from other sites' pages are refused with 403.
        public var allowedOrigins: [String] = []
        /// The largest request body accepted, in bytes. Defaults to 64 KiB (commands are small JSON documents).
        public var maximumBodySize = 64 * 1024
        /// Each client address's request rate; `nil` for none. Defaults to 50 per second, bursts of 100.
        public var rateLimit: RateLimit? = RateLimit()

        /// The defaults.
        public init() {}

        /// Checks the combination: an address other machines can reach needs tokens.
        ///
        /// - Throws: ``CastServiceError/Code/invalidConfiguration`` naming the setting.
        public func validate() throws(CastServiceError) {
            guard address.isLoopback || !tokens.isEmpty else {
                throw CastServiceError(
                    .invalidConfiguration,
                    "listening on \(address.host) lets other machines in: set at least one bearer token "
                        + "(castd token makes one) or listen on 127.0.0.1",
                    httpStatus: 500,
                    field: "listen"
                )
            }
            guard maximumBodySize > 0 else {
                throw CastServiceError(
                    .invalidConfiguration,
                    "the body size limit must be above 0",
                    httpStatus: 500,
                    field: "maximumBodySize"
                )
            }
        }
    }

    /// The devices served.
    public let hub: DeviceHub
    /// How it listens.
    public let options: Options
    private let logger: Logger
    private let now: @Sendable () -> Duration

    /// Creates a server; nothing runs before ``run(signals:bridge:onListening:)``. The logger is silent by default.
    ///
    /// - Throws: ``CastServiceError/Code/invalidConfiguration`` when ``Options/validate()`` does.
    public init(hub: DeviceHub, options: Options = Options(), logger: Logger = .castDisabled) throws(CastServiceError) {
        try self.init(hub: hub, options: options, logger: logger, clock: ContinuousClock())
    }

    /// As above, with the clock the rate limit refills by (tests pass a manual one).
    public init<C: Clock>(hub: DeviceHub, options: Options, logger: Logger = .castDisabled, clock: C)
        throws(CastServiceError) where C.Duration == Duration
    {
        try options.validate()
        self.hub = hub
        self.options = options
        self.logger = logger
        let origin = clock.now
        self.now = { origin.duration(to: clock.now) }
    }

    /// Serves HTTP until the task is cancelled, without starting or stopping the hub and without handling signals
    /// (``run(signals:bridge:onListening:)`` does all three): for programs that run the hub themselves, and tests.
    public func serve(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: try httpService(onListening: onListening))],
                gracefulShutdownSignals: [],
                logger: logger
            )
        )
        try await group.run()
    }

    /// The HTTP server as a service: the API's routes on Hummingbird, bound to ``Options/address``, on the hub's
    /// event loop, where its requests are also handled.
    private func httpService(onListening: @escaping @Sendable (Int) async -> Void) throws -> some Service {
        HTTPService(
            application: try application(onListening: onListening),
            executor: EventLoopTaskExecutor(hub.eventLoop)
        )
    }

    private func application(
        onListening: @escaping @Sendable (Int) async -> Void
    ) throws -> some ApplicationProtocol {
        // HEAD wherever GET is served (RFC 9110 §9.3.2): the API's routes are registered for GET alone.
        let router = Router(context: ServiceRequestContext.self, options: .autoGenerateHeadEndpoints)
        let routes = RouteTable()
        router.add(middleware: UnmatchedRouteMiddleware(routes: routes, metrics: hub.metrics))
        router.add(
            middleware: CrossOriginMiddleware(allowedOrigins: Set(options.allowedOrigins), metrics: hub.metrics)
        )
        WebRemote.register(on: router)  // before the access checks: the page is public, the API it calls is not
        router.add(
            middleware: AccessMiddleware(
                tokens: options.tokens,
                rateLimiter: options.rateLimit.map { RateLimiter(limit: $0, now: now) },
                maximumBodySize: options.maximumBodySize,
                metrics: hub.metrics
            )
        )
        router.add(middleware: SingleWriteMiddleware())
        // Compact JSON (the generator's default pretty-prints): smaller answers, less encoding per command.
        try ServiceAPI(hub: hub).registerHandlers(
            on: router,
            configuration: OpenAPIRuntime.Configuration(jsonEncodingOptions: [.sortedKeys]),
            middlewares: [ProblemMiddleware(metrics: hub.metrics)]
        )
        router.get("/metrics") { [hub] _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(
                status: .ok,
                headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: hub.metricsExposition()))
            )
        }
        routes.fill(with: router.routes)
        return Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname(options.address.host, port: options.address.port),
                serverName: "castd"
            ),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            eventLoopGroupProvider: .shared(hub.eventLoop),
            logger: logger
        )
    }

    /// Starts the hub and serves until SIGTERM/SIGINT or cancellation; `onListening` gets the bound port. With a
    /// `bridge`, the devices are also on its MQTT broker; on shutdown it says `offline` there first.
    public func run(
        signals: [UnixSignal] = [.sigterm, .sigint],
        bridge: MQTTBridge? = nil,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let http = try httpService(onListening: onListening)
        try hub.start()
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: http), .init(service: HubService(hub: hub)),
        ]
        if let bridge { services.append(.init(service: BridgeService(bridge: bridge))) }
        // The signals are caught here rather than by the group, whose Dispatch sources start catching only later,
        // on another thread: a SIGTERM right after the service said it was listening could be lost.
        let numbers = Set(signals.map(\.rawValue))
        ProcessSignals.shared.catch(Array(numbers))
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [], logger: logger)
        )
        try await withThrowingDiscardingTaskGroup { tasks in
            if !numbers.isEmpty {
                tasks.addTask {
                    if await ProcessSignals.shared.next(among: numbers) != nil { await group.triggerGracefulShutdown() }
                }
            }
            try await group.run()
            tasks.cancelAll()
        }
    }
}

/// Runs Hummingbird with its connections' tasks on the hub's event loop, the loop their sockets and the devices'
/// connections are on: a request is read, handled, sent to the device, answered and written back without a
/// thread hop (each costs a wake-up, tens of microseconds). Handlers must not block; disk walks go to the thread
/// pool.
private struct HTTPService<Application: ApplicationProtocol>: Service {
    let application: Application
    let executor: EventLoopTaskExecutor

    func run() async throws {
        try await withTaskExecutorPreference(executor) { try await application.run() }
    }
}

/// Keeps the hub for the service group's lifetime and stops it on shutdown.
private struct HubService: Service {
    let hub: DeviceHub

    func run() async throws {
        try? await gracefulShutdown()
        await hub.stop()
    }
}

/// Runs the MQTT bridge until shutdown, when it publishes `offline` and disconnects.
private struct BridgeService: Service {
    let bridge: MQTTBridge

    func run() async throws {
        try await cancelWhenGracefulShutdown { try await bridge.run() }
    }
}
