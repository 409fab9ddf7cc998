// castd: every Cast device at hand from one service — the HTTP API of Modules/CastService/openapi.yaml with
// live events (Server-Sent Events), over the devices found by mDNS and the static hosts given.
import ArgumentParser
import CastDiscovery
import CastLogging
import CastService
import CastSession
import Logging

@main
struct Castd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "castd",
        abstract: "Serve the Cast devices on this network over HTTP (API at /v1, events at /v1/events).",
        subcommands: [Serve.self, Token.self],
        defaultSubcommand: Serve.self
    )
}

/// `castd [serve]`: runs the service until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the service (the default).",
        discussion: """
            Listens on 127.0.0.1 unless told otherwise; any other address needs at least one bearer token \
            (--token-hash, made by 'castd token'), and once tokens are set every request needs one. Devices come \
            from mDNS (avahi-daemon) and from --host entries. Local files are cast only from --media-folder \
            folders. Examples: castd; castd --listen 127.0.0.1:9000 --no-mdns --host 192.168.1.20 \
            --host 192.168.1.21:8009; castd --listen 0.0.0.0:8765 --token-hash sha256:…
            """
    )

    @Option(help: "Address and port to listen on; not loopback needs --token-hash.") var listen = "127.0.0.1:8765"
    @Option(name: .customLong("token-hash"), help: "Accept the bearer token with this hash (repeatable).")
    var tokenHashes: [String] = []
    @Option(name: .customLong("allow-origin"), help: "A web origin allowed to call the API (CORS; repeatable).")
    var allowedOrigins: [String] = []
    @Option(name: .customLong("media-folder"), help: "A folder whose media files may be cast (repeatable).")
    var mediaFolders: [String] = []
    @Option(name: .customLong("host"), help: "A device that mDNS cannot see: HOST or HOST:PORT (repeatable).")
    var hosts: [String] = []
    @Flag(help: "Do not browse mDNS (static hosts only).") var noMdns = false
    @Option(help: "Where saved sessions are kept (default: $XDG_STATE_HOME/castd).") var stateDirectory: String?
    @Option(help: "Log level: trace, debug, info, notice, warning (default), error, critical or off.")
    var logLevel: String?
    @Option(help: "Per-category levels and message patterns, e.g. 'CastSession*=debug'.") var logFilter: String?

    func run() async throws {
        var serverOptions = CastServiceServer.Options()
        serverOptions.address = try ListenAddress(parsing: listen)
        serverOptions.tokens = try tokenHashes.map { text throws(CastServiceError) in try BearerTokenHash(parsing: text)
        }
        serverOptions.allowedOrigins = allowedOrigins
        var configuration = DiscoveryManager.Configuration()
        configuration.browsesMulticastDNS = !noMdns
        configuration.staticDevices = try hosts.map(Self.device(from:))
        var filter = try LogFilter(level: logLevel ?? "warning", filterSpec: logFilter)
        if logLevel == nil, logFilter == nil { filter.minimumLevel = .warning }
        let logger = Logger(label: "castd") { label in
            CastLogHandler(label: label, filter: filter, sink: StandardErrorLogSink.write)
        }
        var options = DeviceHub.Options()
        options.cast.stateDirectory = stateDirectory ?? CastOptions.defaultStateDirectory(for: "castd")
        options.mediaFolders = mediaFolders
        let hub = DeviceHub(
            options: options,
            discovery: DiscoveryManager(configuration: configuration, logger: logger),
            logger: logger
        )
        let address = serverOptions.address
        try await CastServiceServer(hub: hub, options: serverOptions, logger: logger).run { port in
            let host = address.host.contains(":") ? "[\(address.host)]" : address.host
            print("castd: listening on http://\(host):\(port) (API /v1, events /v1/events)")
        }
    }

    static func device(from entry: String) throws -> CastDevice {
        let parts = entry.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let host = parts.first, !host.isEmpty else {
            throw ValidationError("--host takes HOST or HOST:PORT, not '\(entry)'")
        }
        guard parts.count == 2 else { return CastDevice.staticDevice(host: String(host)) }
        guard let port = Int(parts[1]), (1...65535).contains(port) else {
            throw ValidationError("--host \(entry): the port must be a number from 1 to 65535")
        }
        return CastDevice.staticDevice(host: String(host), port: port)
    }
}

/// `castd token`: a new bearer token for clients and the hash castd keeps.
struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a bearer token: give the token to clients, give castd its hash (--token-hash)."
    )

    func run() {
        let (token, hash) = BearerTokenHash.generate()
        print("token: \(token)")
        print("hash:  \(hash)")
    }
}
