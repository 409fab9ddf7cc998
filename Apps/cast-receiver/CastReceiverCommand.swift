import ArgumentParser
import CastDiscovery
import CastLogging
import CastReceiver
import CastStreaming
import CastTransport
import CastVersion
import Dispatch
import Logging
import NIOConcurrencyHelpers

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `cast-receiver`: emulated Cast devices on this machine, for testing senders without hardware.
struct CastReceiverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cast-receiver",
        abstract: "Emulate Google Cast devices (Default Media Receiver, Cast Connect, custom apps) over real TLS.",
        discussion: """
            Each device serves Cast v2 on its own port and is advertised as _googlecast._tcp through \
            avahi-daemon (realistic TXT records; renamed on a name collision, withdrawn on shutdown), so senders \
            find it by mDNS or connect by host and port. Without a reachable avahi-daemon, or with --no-mdns, \
            devices are not advertised (mDNS announces this machine's interface addresses: use --host 0.0.0.0 \
            or an interface address for senders elsewhere). Content URLs are not fetched: media plays for its \
            declared duration (or --default-duration); URLs containing 'fail=1' or on a '.invalid' host fail to load. \
            With --fetch-media, LOAD fetches the media as a device's player does (a device's headers, CORS \
            required for HLS and text tracks, HLS followed to its first segment), fails with the device's \
            detailedErrorCode when it cannot, and plays for the duration read from the media.

            Examples:
              cast-receiver                          one device on 127.0.0.1:8009
              cast-receiver --port 0 --devices 3     three devices on free ports
              cast-receiver --wire-log frames.jsonl --reply-delay 0.5
              cast-receiver --host 0.0.0.0 --no-mdns
              cast-receiver --port 0 --devices 2 --group Downstairs --group-leader-moves-after 30
            """,
        version: CastVersion.description
    )

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port of the first device; 0 picks a free port for each device.") var port = 8009
    @Option(
        help: """
            Port of the first device's HTTP API (GET /setup/eureka_info; the next devices get the next ports); 0 \
            picks free ports. Default: 8008 for a device on 8009, none otherwise.
            """
    )
    var eurekaPort: Int?
    @Option(help: "Number of devices to emulate.") var devices = 1
    @Option(help: "Friendly name (devices after the first get a number).") var name = "Emulated Chromecast"
    @Option(
        help: """
            Make the devices members of a speaker group with this name: its own endpoint (printed and advertised \
            like a device, model "Google Cast Group") at its leader's address, the multizone namespace, and the \
            leader and follower apps on the members while the group plays.
            """
    )
    var group: String?
    @Option(help: "With --group: the group endpoint's port (0: a free one).") var groupPort = 0
    @Option(
        help: """
            With --group: after this many seconds, elect the next member as the group's leader; the endpoint moves \
            to a new port (its senders are disconnected and must find it again) and its advertisement is updated. \
            SIGUSR1 moves the leader at once.
            """
    )
    var groupLeaderMovesAfter: Double?
    @Option(help: "Model name.") var model = "Chromecast"
    @Option(help: "PEM certificate file (default: a fresh 3-day self-signed certificate).") var cert: String?
    @Option(help: "PEM private key file for --cert.") var key: String?
    @Flag(
        help: """
            Answer device-authentication challenges with a test chain (root → intermediate → device) and a 2-day TLS \
            certificate; prints the trust anchor's file for senders (cast --trust-anchors).
            """
    )
    var deviceAuth = false
    @Option(
        help: """
            With --device-auth: load the chain from this folder (root.pem, intermediate.pem, device.pem, \
            device-key.pem, optional crl.bin), or write a new one there; default: a new one in a temporary folder.
            """
    )
    var deviceAuthDir: String?
    @Option(
        help: ArgumentHelp(
            "With --device-auth: fail one verification step.",
            discussion: EmulatedDeviceAuth.Fault.allCases.map(\.rawValue).joined(separator: ", ")
        )
    )
    var deviceAuthFault: String?
    @Option(help: "Write every frame in and out as JSON lines to this file.") var wireLog: String?
    @Option(help: "Duration in seconds of media that declares none.") var defaultDuration = 600.0
    @Option(help: "Seconds each LOAD spends loading.") var loadDuration = 0.0
    @Option(
        help: ArgumentHelp(
            "Play an ad break before each loaded media that has none: SECONDS[,SKIPPABLE_AFTER].",
            valueName: "ad"
        )
    )
    var prerollAd: String?
    @Flag(help: "Fetch media on LOAD as a device does, and fail LOAD as a device would.") var fetchMedia = false
    @Flag(help: "Live streams cannot pause or seek (by default they can, as on the Default Media Receiver).")
    var liveCannotPause = false
    @Option(help: "App id of the emulated Android TV (Cast Connect) app.") var androidTVAppID = "A1B2C3D4"
    @Option(help: "A custom echo app as APPID=urn:x-cast:namespace (repeatable).") var echoApp: [String] = []
    @Option(help: "Minimum log level (trace, debug, info, notice, warning, error, critical, off).")
    var logLevel: String?
    @Option(help: "Log filter: CATEGORY-GLOB=LEVEL or /REGEX/[i], comma separated.") var logFilter: String?
    @Flag(name: .customLong("no-mdns"), help: "Do not advertise the devices through avahi-daemon.") var noMDNS = false
    @Option(help: "Most sender connections per device; one more closes the one idle longest.")
    var maxConnections = 64
    @Option(help: "Seconds a sender may stay silent (not answering PINGs) before its connection is closed.")
    var idleTimeout = 30.0
    @Option(help: "Seconds a TLS handshake may take.") var handshakeTimeout = 10.0

    @Flag(help: "Fault: close every connection before TLS.") var refuseConnections = false
    @Flag(help: "Fault: leave GET_DEVICE_INFO unanswered (senders must read eureka_info).") var noDeviceInfo = false
    @Option(help: "Fault: drop a connection without close_notify after N inbound messages.") var closeAfter: Int?
    @Option(help: "Fault: stop answering PINGs after N.") var stopPongsAfter: Int?
    @Option(help: "Fault: delay every reply by this many seconds.") var replyDelay: Double?
    @Flag(help: "Fault: answer LAUNCH/STOP only with a requestId-0 broadcast.") var launchBroadcastOnly = false
    @Flag(help: "Fault: address replies to '*'.") var repliesToBroadcast = false
    @Flag(help: "Fault: answer every status request only with a requestId-0 broadcast, never a reply.")
    var statusOnlyByBroadcast = false
    @Option(help: "Fault: list a launched app without its transport id and namespaces for this many seconds.")
    var appListedLate: Double?
    @Flag(name: .customLong("web-transport-ids"), help: "Fault: use web-N transport ids that differ from session ids.")
    var webTransportIDs = false
    @Option(
        help: ArgumentHelp(
            "Fault: list this app before the running one in every status, with a session STOP does not know "
                + "(follower, leader or backdrop), as group members and idle screens are listed on devices.",
            valueName: "app"
        )
    )
    var appListedFirst: String?
    @Flag(help: "A fixed-volume device: its status says controlType fixed, and SET_VOLUME changes nothing.")
    var fixedVolume = false
    @Flag(help: "Fault: refuse SET_VOLUME with INVALID_REQUEST INVALID_COMMAND.") var refuseVolume = false
    @Option(help: "Fault: split outgoing frames into TLS records of N bytes.") var chunkSize: Int?
    @Option(help: "Fault: send a malformed frame after N inbound messages.") var malformedAfter: Int?
    @Option(help: "Fault: seconds between the pieces of --chunk-size (1 and 1: a byte per second).")
    var chunkInterval: Double?
    @Option(help: "Fault: while media is loaded, broadcast N MEDIA_STATUS messages per second.")
    var statusFlood: Int?
    @Option(help: "Fault: drop the connection when a message of TYPE (LAUNCH, LOAD, …) arrives, unhandled.")
    var dropOn: String?
    @Option(help: "Fault: act on the next message of TYPE, then drop the connection without replying.")
    var loseReplyTo: String?
    @Option(help: "Fault: end at most K connections with --close-after/--drop-on/--lose-reply-to, then behave.")
    var dropLimit: Int?
    @Option(
        help: "Cast Streaming: drop this share (0–1) of the RTP received and the RTCP sent, as a lossy network would."
    )
    var streamLoss = 0.0
    @Option(help: "Cast Streaming: delay each RTP packet by up to this many milliseconds (reorders them too).")
    var streamJitter = 0.0
    @Option(help: "Cast Streaming: the video codecs taken, in order of preference (comma separated).")
    var streamCodecs = "vp8,h264"
    @Option(help: "Cast Streaming: write the receivers' statistics as JSON to this file (every second and at exit).")
    var streamStats: String?
    @Option(help: "Cast Streaming: write the video received to this file (IVF; H.264 as Annex B; ffmpeg reads both).")
    var streamRecord: String?
    @Option(help: "Cast Streaming: write the sound received to this Ogg Opus file.")
    var streamRecordAudio: String?
    @Flag(
        help: "Cast Streaming: decode what each device receives with ffmpeg; the statistics say what decoded."
    )
    var decode = false

    func validate() throws {
        guard devices >= 1 else { throw ValidationError("--devices must be at least 1") }
        guard maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1") }
        // Seconds become whole milliseconds or nanoseconds, which NaN and infinity cannot: every one is finite.
        guard idleTimeout > 0, handshakeTimeout > 0, idleTimeout.isFinite, handshakeTimeout.isFinite else {
            throw ValidationError("--idle-timeout and --handshake-timeout must be positive numbers of seconds")
        }
        try Self.requireSeconds(defaultDuration, "--default-duration", positive: true)
        try Self.requireSeconds(loadDuration, "--load-duration")
        try replyDelay.map { try Self.requireSeconds($0, "--reply-delay") }
        try appListedLate.map { try Self.requireSeconds($0, "--app-listed-late") }
        try chunkInterval.map { try Self.requireSeconds($0, "--chunk-interval") }
        try groupLeaderMovesAfter.map { try Self.requireSeconds($0, "--group-leader-moves-after", positive: true) }
        try Self.requireCount(closeAfter, "--close-after", atLeast: 1)
        try Self.requireCount(chunkSize, "--chunk-size", atLeast: 1)
        try Self.requireCount(malformedAfter, "--malformed-after", atLeast: 1)
        try Self.requireCount(statusFlood, "--status-flood", atLeast: 0)
        try Self.requireCount(stopPongsAfter, "--stop-pongs-after", atLeast: 0)
        try Self.requireCount(dropLimit, "--drop-limit", atLeast: 0)
        do {
            _ = try LogFilter(level: logLevel, filterSpec: logFilter)
        } catch {
            throw ValidationError(error.message)
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535") }
        guard (0...1).contains(streamLoss), streamJitter >= 0, streamJitter.isFinite else {
            throw ValidationError("--stream-loss must be 0…1 and --stream-jitter not negative")
        }
        if let eurekaPort, !(0...65535).contains(eurekaPort) {
            throw ValidationError("--eureka-port must be 0…65535")
        }
        guard (cert == nil) == (key == nil) else { throw ValidationError("--cert and --key go together") }
        if let prerollAd { _ = try Self.parsePreroll(prerollAd) }
        if group == nil, groupLeaderMovesAfter != nil || groupPort != 0 {
            throw ValidationError("--group-port and --group-leader-moves-after need --group")
        }
        guard (0...65535).contains(groupPort), groupPort != 8009 else {
            throw ValidationError("--group-port must be 0…65535 and not 8009 (a group has a port of its own)")
        }
        for item in echoApp where !item.contains("=urn:x-cast:") {
            throw ValidationError("--echo-app takes APPID=urn:x-cast:namespace, not '\(item)'")
        }
    }

    /// Refuses seconds that are not a finite number, negative, or (with `positive`) zero.
    private static func requireSeconds(_ seconds: Double, _ option: String, positive: Bool = false) throws {
        guard seconds.isFinite, positive ? seconds > 0 : seconds >= 0 else {
            throw ValidationError("\(option) must be a \(positive ? "positive" : "non-negative") number of seconds")
        }
    }

    /// Refuses a count below `minimum`.
    private static func requireCount(_ count: Int?, _ option: String, atLeast minimum: Int) throws {
        if let count, count < minimum { throw ValidationError("\(option) must be at least \(minimum)") }
    }

    /// `SECONDS[,SKIPPABLE_AFTER]`, both positive, the second below the first.
    static func parsePreroll(_ text: String) throws -> PrerollAd {
        let numbers = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
        guard (1...2).contains(numbers.count), let duration = numbers[0], duration > 0, duration.isFinite,
            numbers.count == 1 || (numbers[1].map { $0 >= 0 && $0 < duration } ?? false)
        else {
            throw ValidationError("--preroll-ad takes SECONDS[,SKIPPABLE_AFTER] (positive, skippable before the end)")
        }
        return PrerollAd(duration: duration, skippableAfter: numbers.count == 2 ? numbers[1] : nil)
    }

    func run() async throws {
        let filter = try LogFilter(level: logLevel ?? "info", filterSpec: logFilter)
        CastLoggingSystem.bootstrap(filter: filter)
        let logger = Logger(label: CastLogCategory.receiver)

        var faults = FaultInjection()
        faults.refusesConnections = refuseConnections
        faults.ignoresDeviceInfo = noDeviceInfo
        faults.closesAfterMessages = closeAfter
        faults.stopsAnsweringPingsAfter = stopPongsAfter
        faults.replyDelay = replyDelay
        faults.launchRepliesOnlyByBroadcast = launchBroadcastOnly
        faults.addressesRepliesToBroadcast = repliesToBroadcast
        faults.statusOnlyByBroadcast = statusOnlyByBroadcast
        faults.listsLaunchedAppWholeAfter = appListedLate
        faults.transportIDDiffersFromSessionID = webTransportIDs
        faults.writesInChunksOf = chunkSize
        faults.sendsMalformedFrameAfterMessages = malformedAfter
        faults.chunkInterval = chunkInterval.map { .milliseconds(Int64($0 * 1000)) }
        faults.statusFloodPerSecond = statusFlood
        faults.dropsOn = dropOn
        faults.losesReplyTo = loseReplyTo
        faults.dropLimit = dropLimit
        faults.refusesVolumeChanges = refuseVolume
        if let appListedFirst {
            let known: [String: EmulatedApp] = [
                "follower": .multizoneFollower, "leader": .multizoneLeader, "backdrop": .backdrop,
            ]
            guard let app = known[appListedFirst] else {
                throw ValidationError("--app-listed-first takes follower, leader or backdrop, not '\(appListedFirst)'")
            }
            faults.listsAppBeforeRunningApp = app
        }

        var apps: [EmulatedApp] = [
            .defaultMediaReceiver, .androidTV(id: androidTVAppID), .echo(), .mirroring, .audioMirroring,
        ]
        for item in echoApp {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            apps.append(.echo(id: parts[0], namespaces: [parts[1]]))
        }
        var identity: TLSIdentity?
        if let cert, let key {
            identity = TLSIdentity(certificatePEM: try readFile(cert), privateKeyPEM: try readFile(key))
        }
        let auth = try deviceAuth ? makeDeviceAuth() : nil
        // A chain written to the default temporary folder lives as long as this process.
        defer {
            if deviceAuth, deviceAuthDir == nil { try? FileManager.default.removeItem(atPath: temporaryAuthFolder) }
        }
        let preroll = try prerollAd.map(Self.parsePreroll)
        var streaming = StreamingReceiverEndpoint.Options()
        streaming.lossRate = streamLoss
        streaming.videoCodecs = streamCodecs.split(separator: ",").map { String($0.trimmingWhitespace()) }
        streaming.jitter = .microseconds(Int64(streamJitter * 1000))
        let recorders = try [
            streamRecord.map { try StreamRecorder(path: $0, kind: .video) },
            streamRecordAudio.map { try StreamRecorder(path: $0, kind: .audio) },
        ].compactMap { $0 }
        if decode {
            do { _ = try StreamDecoder(kind: .video) } catch let error as CastReceiverError {
                throw ValidationError("--decode: \(error.message)")
            }
        }
        // Each device decodes its own streams.
        let decoders = NIOLockedValueBox<[String: [StreamDecoder]]>([:])

        // What every device (and the group's endpoint) shares.
        let behave = { (configuration: inout DeviceConfiguration) in
            configuration.apps = apps
            configuration.faults = faults
            configuration.hasFixedVolume = fixedVolume
            configuration.identity = identity
            configuration.deviceAuth = auth
            configuration.defaultMediaDuration = defaultDuration
            configuration.loadDuration = loadDuration
            configuration.prerollAd = preroll
            configuration.liveStreamsCannotPause = liveCannotPause
            configuration.fetchesMedia = fetchMedia
            configuration.maximumConnections = maxConnections
            configuration.idleTimeout = .milliseconds(Int64(idleTimeout * 1000))
            configuration.handshakeTimeout = .milliseconds(Int64(handshakeTimeout * 1000))
            configuration.streaming = streaming
            let deviceDecoders = decode ? [try? StreamDecoder(kind: .video), try? StreamDecoder(kind: .audio)] : []
            let sinks = (recorders.map { $0.record } + deviceDecoders.compactMap { $0?.decode })
            decoders.withLockedValue { $0[configuration.id] = deviceDecoders.compactMap { $0 } }
            if !sinks.isEmpty {
                configuration.streaming.frameHandler = { kind, frame in sinks.forEach { $0(kind, frame) } }
            }
        }
        let configurations = CastReceiverEmulator.configurations(
            count: devices,
            host: host,
            basePort: port,
            namePrefix: name
        ).enumerated().map { index, configuration -> DeviceConfiguration in
            var configuration = configuration
            configuration.eurekaPort = eurekaPort.map { $0 == 0 ? 0 : $0 + index }
            configuration.model = model
            behave(&configuration)
            return configuration
        }
        let clock = SystemCastClock()
        let log = try wireLog.map { try WireLog(path: $0, clock: clock) }
        let groupConfiguration = group.map { name in
            var configuration = DeviceConfiguration(friendlyName: name, port: groupPort)
            behave(&configuration)
            return configuration
        }
        let emulator = try CastReceiverEmulator(
            devices: configurations,
            group: groupConfiguration,
            clock: clock,
            wireLog: log,
            logger: logger
        )
        try await emulator.start()
        for device in emulator.devices {
            say(
                "cast-receiver: \"\(device.configuration.friendlyName)\" id=\(device.configuration.id) on \(device.host):\(device.port)"
            )
            if let eurekaPort = device.eurekaPort {
                say(
                    "cast-receiver: \"\(device.configuration.friendlyName)\" eureka_info on \(device.host):\(eurekaPort)"
                )
            }
        }
        if let group = emulator.group {
            let members = group.members.map { "\"\($0.configuration.friendlyName)\"" }.joined(separator: ", ")
            say(
                "cast-receiver: group \"\(group.name)\" id=\(group.id) on \(group.endpoint.host):\(group.endpoint.port) members \(members)"
            )
        }
        let advertised = emulator.devices + (emulator.group.map { [$0.endpoint] } ?? [])
        let publisher = noMDNS ? nil : await advertise(advertised, logger: logger)
        let leaderMove = emulator.group.flatMap { group in
            groupLeaderMovesAfter.map { seconds in
                Task {
                    try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                    await Self.moveLeader(of: group, publisher: publisher)
                }
            }
        }
        defer { leaderMove?.cancel() }
        let moveSignal = emulator.group.map { Self.movesLeaderOnSIGUSR1($0, publisher: publisher) }
        defer { moveSignal?.cancel() }
        let termination = TerminationSignal()
        // SIGHUP (a closed terminal) and SIGUSR1 (which moves a group's leader) would end the process by default:
        // only SIGINT and SIGTERM stop it.
        ProcessSignals.shared.catch([SIGHUP, SIGUSR1])
        let endpoints = emulator.devices + (emulator.group.map { [$0.endpoint] } ?? [])
        let statistics = streamStats.map { path in
            Task {
                while !Task.isCancelled {
                    Self.writeStreamingStatistics(of: endpoints, decoders: decoders.withLockedValue { $0 }, to: path)
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
        say("cast-receiver: ready (Ctrl-C to stop)")
        let signal = await termination.wait()
        statistics?.cancel()
        if let streamStats {
            // What ffmpeg still decodes counts too.
            for decoder in decoders.withLockedValue({ $0 }).values.joined() { _ = await decoder.finish() }
            Self.writeStreamingStatistics(of: endpoints, decoders: decoders.withLockedValue { $0 }, to: streamStats)
        }
        say("cast-receiver: \(signal == SIGINT ? "SIGINT" : "SIGTERM"), shutting down")
        if let publisher {
            let count = publisher.publishedIDs.count
            publisher.close()
            say("cast-receiver: withdrew \(count) mDNS advertisement\(count == 1 ? "" : "s")")
        }
        await emulator.stop()
    }

    /// What each device's mirroring receiver has received (and, with `--decode`, what ffmpeg decoded) so far, by
    /// device id (devices not mirroring are left out). The file is replaced whole, so a reader never sees half of it.
    private static func writeStreamingStatistics(
        of devices: [EmulatedDevice],
        decoders: [String: [StreamDecoder]],
        to path: String
    ) {
        var object: [String: JSONValue] = [:]
        for device in devices {
            guard let endpoint = device.streamingEndpoint else { continue }
            var streams: [String: JSONValue] = ["simulatedLoss": .number(Double(endpoint.dropped.simulated))]
            for (kind, statistics) in endpoint.statistics {
                streams[kind == .video ? "video" : "audio"] = statistics.json
            }
            var decoded: [String: JSONValue] = [:]
            for decoder in decoders[device.configuration.id] ?? [] where decoder.statistics.framesFed > 0 {
                decoded[decoder.kind == .video ? "video" : "audio"] = decoder.statistics.json
            }
            if !decoded.isEmpty { streams["decoded"] = .object(decoded) }
            object[device.configuration.id] = .object(streams)
        }
        LocalFiles.writeAtomically(Array((JSONValue.object(object).jsonString + "\n").utf8), to: path)
    }

    /// Advertises every device through avahi-daemon and waits until they are established (mDNS probing takes about
    /// a second). A missing daemon, or a device that cannot be advertised, only warns: the devices still serve.
    private func advertise(_ devices: [EmulatedDevice], logger: Logger) async -> DevicePublisher? {
        let publisher: DevicePublisher
        do {
            publisher = try DevicePublisher(logger: logger)
        } catch {
            let message = (error as? CastDiscoveryError)?.message ?? "\(error)"
            say("cast-receiver: warning: not advertising over mDNS: \(message)")
            return nil
        }
        await withTaskGroup(of: String.self) { group in
            for device in devices {
                let advertisement = Self.advertisement(of: device)
                group.addTask {
                    do {
                        let name = try await publisher.publish(advertisement)
                        return
                            "cast-receiver: advertised \"\(advertisement.friendlyName)\" as '\(name)._googlecast._tcp'"
                    } catch {
                        let message = (error as? CastDiscoveryError)?.message ?? "\(error)"
                        return "cast-receiver: warning: cannot advertise \"\(advertisement.friendlyName)\": \(message)"
                    }
                }
            }
            for await line in group { say(line) }
        }
        if host.hasPrefix("127.") || host == "::1" || host == "localhost" {
            say("cast-receiver: note: listening on \(host) only: senders on other hosts cannot connect (see --host)")
        }
        return publisher
    }

    /// What mDNS says of `device`: its id, name, model, capabilities and port.
    private static func advertisement(of device: EmulatedDevice) -> CastAdvertisement {
        var advertisement = CastAdvertisement(
            id: device.configuration.id,
            friendlyName: device.configuration.friendlyName,
            port: device.port
        )
        advertisement.modelName = device.configuration.model
        advertisement.capabilities = DeviceCapabilities(rawValue: device.configuration.capabilities)
        return advertisement
    }

    /// SIGUSR1 moves the group's leader (for scripts and tests that decide when), until the task is cancelled.
    private static func movesLeaderOnSIGUSR1(_ group: EmulatedGroup, publisher: DevicePublisher?) -> Task<Void, Never> {
        ProcessSignals.shared.catch([SIGUSR1])
        return Task {
            while await ProcessSignals.shared.next(among: [SIGUSR1]) != nil {
                await moveLeader(of: group, publisher: publisher)
            }
        }
    }

    /// `--group-leader-moves-after`: elects the next leader, says where the group went and re-advertises it there.
    private static func moveLeader(of group: EmulatedGroup, publisher: DevicePublisher?) async {
        do {
            let leader = try await group.moveLeader()
            say(
                "cast-receiver: group \"\(group.name)\" leader moved to \"\(leader.configuration.friendlyName)\": now on \(group.endpoint.host):\(group.endpoint.port)"
            )
            try await publisher?.update(advertisement(of: group.endpoint))
        } catch {
            say("cast-receiver: warning: the group's leader could not move: \(error)")
        }
    }

    /// Where --device-auth writes its chain without --device-auth-dir.
    private var temporaryAuthFolder: String {
        FileManager.default.temporaryDirectory.path + "/cast-receiver-auth-\(getpid())"
    }

    /// The `--device-auth` credentials: loaded from, or made and written to, `--device-auth-dir` (a fault in the
    /// chain itself gets a chain of its own, not saved); the trust anchor is written beside them and its path
    /// printed.
    private func makeDeviceAuth() throws -> EmulatedDeviceAuth {
        var fault: EmulatedDeviceAuth.Fault?
        if let deviceAuthFault {
            guard let known = EmulatedDeviceAuth.Fault(rawValue: deviceAuthFault) else {
                throw ValidationError(
                    "--device-auth-fault must be one of "
                        + EmulatedDeviceAuth.Fault.allCases.map(\.rawValue).joined(separator: ", ")
                )
            }
            fault = known
        }
        let folder = deviceAuthDir ?? temporaryAuthFolder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let auth: EmulatedDeviceAuth
        let ownChain = fault?.shapesChain == true
        if deviceAuthDir != nil, !ownChain, FileManager.default.fileExists(atPath: folder + "/device.pem") {
            let credentials = CastDeviceCredentials(
                rootCertificatePEM: try readFile(folder + "/root.pem"),
                intermediateCertificatePEMs: [try readFile(folder + "/intermediate.pem")],
                deviceCertificatePEM: try readFile(folder + "/device.pem"),
                deviceKeyPEM: try readFile(folder + "/device-key.pem"),
                crlBundle: LocalFiles.read(folder + "/crl.bin")
            )
            auth = try EmulatedDeviceAuth(credentials: credentials, fault: fault)
        } else {
            auth = try EmulatedDeviceAuth(fault: fault)
            if !ownChain {
                let credentials = auth.credentials
                try write(credentials.rootCertificatePEM, to: folder + "/root.pem")
                try write(credentials.intermediateCertificatePEMs.joined(), to: folder + "/intermediate.pem")
                try write(credentials.deviceCertificatePEM, to: folder + "/device.pem")
                try write(credentials.deviceKeyPEM, to: folder + "/device-key.pem")
                if let crl = credentials.crlBundle {
                    try Data(crl).write(to: URL(fileURLWithPath: folder + "/crl.bin"))
                }
            }
        }
        let anchor = folder + "/trust-anchor.pem"
        try write(auth.trustAnchorPEM, to: anchor)
        say("cast-receiver: device auth: trust anchor \(anchor)\(fault.map { " (fault: \($0.rawValue))" } ?? "")")
        return auth
    }

    private func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    private func readFile(_ path: String) throws -> String {
        guard let bytes = LocalFiles.read(path) else { throw ValidationError("cannot read \(path)") }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Writes a line to standard output at once (scripts wait for these lines, so they must not sit in a buffer).
func say(_ line: String) {
    LocalFiles.write(line + "\n", to: STDOUT_FILENO)
}
