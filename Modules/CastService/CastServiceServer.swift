import CastLogging
import Hummingbird
import Logging
import NIOCore
import OpenAPIHummingbird
import ServiceLifecycle
import UnixSignals

/// Where the service listens: a loopback address and a port (0 picks a free one).
public struct ListenAddress: Sendable, Hashable {
    /// The address, `127.0.0.1`, `::1` or `localhost`.
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
    /// - Throws: ``CastServiceError`` — ``CastServiceError/Code/invalidRequest`` for a malformed address or a
    ///   host that is not loopback: other addresses need bearer tokens, which castd does not have yet.
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
            throw CastServiceError(.invalidRequest, "'\(text)' is not HOST:PORT", httpStatus: 400, field: "listen")
        }
        guard let number = Int(port), (0...65535).contains(number) else {
            throw CastServiceError(.invalidRequest, "'\(port)' is not a port number", httpStatus: 400, field: "listen")
        }
        guard ["127.0.0.1", "::1", "localhost"].contains(host) else {
            throw CastServiceError(
                .invalidRequest,
                "castd listens on loopback only (127.0.0.1, ::1): other addresses need bearer tokens, not built yet",
                httpStatus: 400,
                field: "listen"
            )
        }
        self.init(host: String(host), port: number)
    }
}

/// The HTTP face of a ``DeviceHub``: the OpenAPI operations of `openapi.yaml` on Hummingbird, run with the hub
/// in one service group that shuts down gracefully on SIGTERM and SIGINT (sessions are left playing).
public struct CastServiceServer: Sendable {
    /// The devices served.
    public let hub: DeviceHub
    /// Where it listens.
    public let address: ListenAddress
    private let logger: Logger

    /// Creates a server; nothing runs before ``run(signals:onListening:)``. The logger is silent by default.
    public init(hub: DeviceHub, address: ListenAddress = ListenAddress(), logger: Logger = .castDisabled) {
        self.hub = hub
        self.address = address
        self.logger = logger
    }

    /// The HTTP application: the API's routes on Hummingbird, bound to ``address``. It serves the hub but does
    /// not start or stop it (``run(signals:onListening:)`` does both).
    public func application(
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let router = Router()
        try ServiceAPI(hub: hub).registerHandlers(on: router, middlewares: [ProblemMiddleware()])
        return Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname(address.host, port: address.port),
                serverName: "castd"
            ),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    /// Starts the hub and serves until SIGTERM/SIGINT or cancellation; `onListening` gets the bound port.
    public func run(
        signals: [UnixSignal] = [.sigterm, .sigint],
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let application = try application(onListening: onListening)
        try hub.start()
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: application), .init(service: HubService(hub: hub))],
                gracefulShutdownSignals: signals,
                logger: logger
            )
        )
        try await group.run()
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
