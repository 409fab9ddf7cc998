// castd: every Cast device at hand from one service — the HTTP API of Modules/CastService/openapi.yaml with
// live events (Server-Sent Events), over the devices found by mDNS and the static hosts given.

import ArgumentParser
import CastDiscovery
import CastLogging
import CastService
import CastSession
import CastStyleConfig
import CastTransport
import CastVersion
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

struct Castd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "castd",
        abstract: "Serve the Cast devices on this network over HTTP (API at /v1, events at /v1/events).",
        version: CastVersion.description,
        subcommands: [Serve.self, Token.self],
        defaultSubcommand: Serve.self
    )
}

/// `castd [serve]`: runs the service until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the service (the default).",
        discussion: """
            Settings come from the profile's <daemon> section (--profile, else $CAST_PROFILE, else \
            ~/.config/cast/profile.xml; Tools/profiles/castd.xml is an example) and the flags below, which win. \
            Listens on 127.0.0.1 unless told otherwise; any other address needs at least one bearer token \
            (made by 'castd token'), and once tokens are set every request needs one. Devices come from mDNS \
            (avahi-daemon), the profile's static devices and --host entries. Local files are cast only from the \
            media folders. With a broker, every device's state is also retained on MQTT under \
            cast/SITE/DEVICE/state, with commands on …/command (Home Assistant discovery included). Examples: \
            castd; castd --listen 127.0.0.1:9000 --no-mdns --host 192.168.1.20 --host 192.168.1.21:8009; \
            castd --listen 0.0.0.0:8765 --token-hash sha256:…; castd --broker mqtt://broker.lan --site house
            """
    )

    @Option(help: "A profile document (XML) with a <daemon> section.") var profile: String?
    @Option(help: "Address and port to listen on (default 127.0.0.1:8765); not loopback needs a token.")
    var listen: String?
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
    @Option(help: "An MQTT broker: mqtt://host[:port], mqtts://host[:port] or unix:///path (default: none).")
    var broker: String?
    @Option(help: "This castd's site, the MQTT topic level after the prefix (default: the host name).")
    var site: String?
    @Option(help: "Log level: trace, debug, info, notice, warning (default), error, critical or off.")
    var logLevel: String?
    @Option(help: "Per-category levels and message patterns, e.g. 'CastSession*=debug'.") var logFilter: String?

    func run() async throws {
        // Flags are the top layer of the profile resolution (flags > CAST_* environment > profile > defaults).
        var overrides = ProfileResolver.overrides(flags: [
            "--listen": listen, "--state-directory": stateDirectory, "--log-level": logLevel, "--broker": broker,
            "--site": site,
        ])
        if !hosts.isEmpty { overrides["staticDevices"] = hosts.joined(separator: ",") }
        let profile = try ProfileResolver.standard(
            cliOverrides: overrides,
            explicitProfilePath: self.profile,
            environment: ProcessInfo.processInfo.environment
        ).resolve()
        var daemon = profile.daemon
        if !tokenHashes.isEmpty { daemon.tokenHashes = tokenHashes }
        if !allowedOrigins.isEmpty { daemon.allowedOrigins = allowedOrigins }
        if !mediaFolders.isEmpty { daemon.mediaFolders = mediaFolders }
        let serverOptions = try CastServiceServer.Options(daemon)

        let filter = try profile.commandLineLogFilter(adding: logFilter)
        let logger = Logger(label: "castd") { label in
            CastLogHandler(label: label, filter: filter, sink: StandardErrorLogSink.write)
        }
        var configuration = DiscoveryManager.Configuration()
        configuration.browsesMulticastDNS = !noMdns
        configuration.staticDevices = profile.options.staticDevices
        configuration.scanRanges = profile.discoveryScanRanges
        var options = DeviceHub.Options()
        options.cast = profile.options
        // A command rides through a dropped connection within its timeout, as the CLI's do.
        options.cast.requestsWaitWhileSuspended = true
        options.cast.stateDirectory = profile.options.stateDirectory ?? CastOptions.defaultStateDirectory(for: "castd")
        options.mediaFolders = daemon.mediaFolders
        let hub = DeviceHub(
            options: options,
            discovery: DiscoveryManager(configuration: configuration, logger: logger),
            logger: logger
        )
        let bridge = try MQTTBridge.Options(daemon, hostName: ProcessInfo.processInfo.hostName).map {
            options throws(CastServiceError) in try MQTTBridge(hub: hub, options: options, logger: logger)
        }
        let host = serverOptions.address.host
        try await CastServiceServer(hub: hub, options: serverOptions, logger: logger).run(bridge: bridge) { port in
            announce("castd: listening on http://\(ListenAddress(host: host, port: port)) (API /v1, events /v1/events)")
            if let bridge {
                announce(
                    "castd: on MQTT as \(bridge.options.topicPrefix)/\(bridge.options.site)/… (commands: …/DEVICE/command)"
                )
            }
        }
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

/// Writes a line to standard output at once (unbuffered), so a supervisor or a pipe sees it when it happens.
func announce(_ line: String) {
    LocalFiles.write(line + "\n", to: STDOUT_FILENO)
}
