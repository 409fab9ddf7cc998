// cast-benchmarks: prints the figures the README reports. Not a test: nothing here asserts a time.
//
//   swift run -c release cast-benchmarks [--devices 1000] [--only codec|status|round-trip|session-start|scale|attack|transcode]
//   swift run -c release cast-benchmarks --castd [--devices 1000] [--only devices|commands|events|cli]
//       (castd's figures only; needs the cast and cast-receiver products of the same configuration built:
//       swift build -c release --product cast, and --product cast-receiver)
//   swift run -c release cast-benchmarks --host HOST:PORT … | --table DIR
//       (the side-by-side benchmark against a running receiver: HostBenchmark.swift; Tools/bench/run.sh runs it)
//
// 1. Frame codec throughput (encode + decode of a typical MEDIA_STATUS frame); a reply's status from text: the
//    JSON parse and the MediaStatus decode of the emulator's PAUSE reply, apart.
// 2. Request round trip over TLS on loopback (GET_STATUS to an emulated device), p50/p99.
// 3. Session start against a local emulator (connect, TLS, launch, app connect), p50/p99.
// 4. Scale: N emulated devices in one process, then N concurrent sessions (one per device) from this same
//    process; wall time, resident memory and OS thread count.
// 5. Under attack: a sender's GET_STATUS round trips while others open thousands of half-open sockets and flood
//    requests at the same device (64 connections at most; the idlest is closed first).
// 6. Local files (TranscodeBenchmark.swift): time until a device can start a 2-hour MKV that needs audio
//    transcoding, a remux-only one and an MP4 served as is; seeks to far points of the 2-hour file.
import CastDiscovery
import CastMedia
import CastReceiver
import CastSession
import CastTransport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

/// VmRSS and Threads from /proc/self/status.
func processFigures() -> (rssMiB: Double, threads: Int) {
    guard let file = fopen("/proc/self/status", "r") else { return (0, 0) }
    defer { fclose(file) }
    var rss = 0.0
    var threads = 0
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
        let number = fields.count > 1 ? Double(fields[1]) ?? 0 : 0
        if text.hasPrefix("VmRSS:") { rss = number / 1024 }
        if text.hasPrefix("Threads:") { threads = Int(number) }
    }
    return (rss, threads)
}

func raiseDescriptorLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

func codecBenchmark() throws {
    let status: JSONValue = [
        "type": "MEDIA_STATUS", "requestId": 12,
        "status": [
            [
                "mediaSessionId": 1, "playerState": "PLAYING", "currentTime": 42.7, "playbackRate": 1,
                "supportedMediaCommands": 12303, "volume": ["level": 1, "muted": false],
                "media": [
                    "contentId": "https://media.example.com/movie.m3u8", "contentType": "application/x-mpegURL",
                    "streamType": "BUFFERED", "duration": 5400.5, "metadata": ["metadataType": 1, "title": "Example"],
                ],
            ]
        ],
    ]
    let message = CastMessage(
        sourceID: "web-1",
        destinationID: "sender-0",
        namespace: CastNamespace.media,
        json: status
    )
    let iterations = 100_000
    let start = ContinuousClock.now
    var bytes = 0
    for _ in 0..<iterations {
        let frame = try message.encodedFrame()
        bytes += frame.count
        _ = try CastMessage(frame: frame)
    }
    let elapsed = seconds(ContinuousClock.now - start)
    print(
        "codec: \(iterations) MEDIA_STATUS frames (\(bytes / iterations) bytes) encoded+decoded in \(String(format: "%.2f", elapsed)) s → \(Int(Double(iterations) / elapsed)) frames/s"
    )
}

/// The sender's work on a media reply, without I/O: parsing the emulator's MEDIA_STATUS for a PAUSE (the side-by-side
/// benchmark's reply) and decoding its status.
func statusBenchmark() throws {
    let text = """
        {"requestId":6,"status":[{"activeTrackIds":[],"currentItemId":1,"currentTime":0.0019352930000000046,\
        "items":[{"autoplay":true,"itemId":1,"media":{"contentId":"https://media.example.com/bench.mp4",\
        "contentType":"video/mp4","duration":600,"streamType":"BUFFERED"}}],"media":{"contentId":\
        "https://media.example.com/bench.mp4","contentType":"video/mp4","duration":600,"streamType":"BUFFERED"},\
        "mediaSessionId":1,"playbackRate":1,"playerState":"PAUSED","repeatMode":"REPEAT_OFF",\
        "supportedMediaCommands":274447,"videoInfo":{"hdrType":"sdr","height":1080,"width":1920},\
        "volume":{"level":1,"muted":false}}],"type":"MEDIA_STATUS"}
        """
    let iterations = 100_000
    var start = ContinuousClock.now
    var parsed: JSONValue = .null
    for _ in 0..<iterations { parsed = try JSONValue(parsing: text) }
    let parse = seconds(ContinuousClock.now - start) / Double(iterations) * 1e6
    let entry = parsed["status"]?.arrayValue?.first ?? .null
    start = ContinuousClock.now
    var sessions = 0
    for _ in 0..<iterations { sessions &+= try MediaStatus(json: entry).mediaSessionID }
    let decode = seconds(ContinuousClock.now - start) / Double(iterations) * 1e6
    // The emulator's side: the same status written as text.
    start = ContinuousClock.now
    var written = 0
    for _ in 0..<iterations { written &+= parsed.jsonString.utf8.count }
    let write = seconds(ContinuousClock.now - start) / Double(iterations) * 1e6
    print(
        String(
            format:
                "status: a %d-byte MEDIA_STATUS parsed in %.2f µs, its status decoded in %.2f µs (%d), written in %.2f µs (%d bytes)",
            text.utf8.count,
            parse,
            decode,
            sessions / iterations,
            write,
            written / iterations
        )
    )
}

func roundTripBenchmark() async throws {
    try await withCastReceiverEmulator(devices: [DeviceConfiguration(friendlyName: "Bench", port: 0)]) { emulator in
        let device = emulator.devices[0]
        var configuration = CastConnection.Configuration()
        configuration.heartbeat.pingInterval = nil
        let connection = try await CastConnection.connect(
            host: device.host,
            port: device.port,
            configuration: configuration
        )
        try await connection.openVirtualConnection(to: CastEndpoint.receiver)
        var samples: [Double] = []
        for _ in 0..<5_000 {
            let start = ContinuousClock.now
            _ = try await connection.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "GET_STATUS"]
            )
            samples.append(seconds(ContinuousClock.now - start) * 1000)
        }
        await connection.close()
        print(
            "request round trip (GET_STATUS over TLS, loopback, 5000 sequential): p50 \(String(format: "%.3f", percentile(samples, 0.5))) ms, p99 \(String(format: "%.3f", percentile(samples, 0.99))) ms"
        )
    }
}

func sessionStartBenchmark() async throws {
    try await withCastReceiverEmulator(devices: [DeviceConfiguration(friendlyName: "Bench", port: 0)]) { emulator in
        let device = emulator.devices[0]
        var options = CastOptions()
        options.resumesSavedSessions = false
        options.heartbeat.pingInterval = nil
        var samples: [Double] = []
        for _ in 0..<200 {
            let context = CastContext(options: options)
            var target = CastDevice.staticDevice(host: device.host, port: device.port)
            target.friendlyName = "Bench"
            let start = ContinuousClock.now
            _ = try await context.sessionManager.startSession(with: target)
            samples.append(seconds(ContinuousClock.now - start) * 1000)
            await context.sessionManager.endSession(stopCasting: true)
        }
        print(
            "session start (connect + TLS + GET_STATUS + LAUNCH + app CONNECT, 200 runs): p50 \(String(format: "%.2f", percentile(samples, 0.5))) ms, p99 \(String(format: "%.2f", percentile(samples, 0.99))) ms"
        )
    }
}

func scaleBenchmark(devices count: Int) async throws {
    let before = processFigures()
    let start = ContinuousClock.now
    let emulator = try CastReceiverEmulator(devices: CastReceiverEmulator.configurations(count: count, basePort: 0))
    try await emulator.start()
    let started = seconds(ContinuousClock.now - start)
    let afterDevices = processFigures()
    print(
        "scale: \(count) emulated devices listening in \(String(format: "%.2f", started)) s; RSS \(Int(afterDevices.rssMiB)) MiB (+\(Int(afterDevices.rssMiB - before.rssMiB))), \(afterDevices.threads) threads"
    )

    var settings = CastOptions()
    settings.resumesSavedSessions = false
    settings.heartbeat.pingInterval = nil
    let options = settings
    let sessionStart = ContinuousClock.now
    let sessions = try await withThrowingTaskGroup(of: (CastContext, CastSession).self) { group in
        for device in emulator.devices {
            group.addTask {
                let context = CastContext(options: options)
                var target = CastDevice.staticDevice(host: device.host, port: device.port)
                target.friendlyName = device.configuration.friendlyName
                return (context, try await context.sessionManager.startSession(with: target))
            }
        }
        var all: [(CastContext, CastSession)] = []
        for try await pair in group { all.append(pair) }
        return all
    }
    let sessionsTime = seconds(ContinuousClock.now - sessionStart)
    let afterSessions = processFigures()
    print(
        "scale: \(sessions.count) concurrent sessions (one per device, same process) started in \(String(format: "%.2f", sessionsTime)) s; RSS \(Int(afterSessions.rssMiB)) MiB, \(afterSessions.threads) threads"
    )

    let loadStart = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for (_, session) in sessions {
            group.addTask {
                var media = MediaInformation(contentID: "https://media.example.com/a.mp4", contentType: "video/mp4")
                media.duration = 60
                try await session.remoteMediaClient!.loadMedia(media).response()
            }
        }
        try await group.waitForAll()
    }
    print(
        "scale: LOAD on all \(sessions.count) sessions in \(String(format: "%.2f", seconds(ContinuousClock.now - loadStart))) s"
    )
    for (context, _) in sessions { await context.sessionManager.endSession(stopCasting: false) }
    await emulator.stop()
}

func underAttackBenchmark() async throws {
    try await withCastReceiverEmulator(devices: [DeviceConfiguration(friendlyName: "Target", port: 0)]) { emulator in
        let device = emulator.devices[0]
        var configuration = CastConnection.Configuration()
        configuration.heartbeat.pingInterval = nil
        func connect() async throws -> CastConnection {
            let connection = try await CastConnection.connect(
                host: device.host,
                port: device.port,
                configuration: configuration
            )
            try await connection.openVirtualConnection(to: CastEndpoint.receiver)
            return connection
        }
        func measure(_ connection: CastConnection, count: Int) async -> (samples: [Double], failures: Int) {
            var samples: [Double] = []
            var failures = 0
            for _ in 0..<count {
                let start = ContinuousClock.now
                do {
                    _ = try await connection.request(
                        namespace: CastNamespace.receiver,
                        to: CastEndpoint.receiver,
                        payload: ["type": "GET_STATUS"]
                    )
                    samples.append(seconds(ContinuousClock.now - start) * 1000)
                } catch {
                    failures += 1
                }
            }
            return (samples, failures)
        }
        let sender = try await connect()
        let baseline = await measure(sender, count: 2_000)

        // The attack: half-open sockets opened as fast as they go, and four senders flooding requests.
        let attacking = ManagedAtomicFlag()
        let opened = ManagedCounter()
        let halfOpen = Task {
            var sockets: [any Channel] = []
            while !attacking.isLowered {
                if let socket = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connect(host: device.host, port: device.port).get()
                {
                    sockets.append(socket)
                    opened.add()
                }
                if sockets.count >= 500 {
                    for socket in sockets.prefix(250) { socket.close(promise: nil) }; sockets.removeFirst(250)
                }
            }
            for socket in sockets { socket.close(promise: nil) }
        }
        var flooders: [Task<Void, Never>] = []
        for _ in 0..<4 {
            let flooder = try await connect()
            flooders.append(
                Task {
                    while !attacking.isLowered {
                        try? await flooder.send(
                            namespace: CastNamespace.receiver,
                            to: CastEndpoint.receiver,
                            payload: ["type": "GET_STATUS", "requestId": 1]
                        )
                    }
                    await flooder.close()
                }
            )
        }
        let attacked = await measure(sender, count: 2_000)
        attacking.lower()
        await halfOpen.value
        for flooder in flooders { await flooder.value }
        await sender.close()
        func figure(_ run: (samples: [Double], failures: Int)) -> String {
            "p50 \(String(format: "%.3f", percentile(run.samples, 0.5))) ms, p99 \(String(format: "%.3f", percentile(run.samples, 0.99))) ms, \(run.failures) failed"
        }
        print(
            "under attack (\(opened.value) half-open sockets opened, 4 request flooders, 64-connection limit): a sender's GET_STATUS \(figure(attacked)); quiet baseline \(figure(baseline))"
        )
    }
}

/// A flag one task lowers and others read.
final class ManagedAtomicFlag: Sendable {
    private let raised = NIOLockedValueBox(true)
    var isLowered: Bool { !raised.withLockedValue { $0 } }
    func lower() { raised.withLockedValue { $0 = false } }
}

/// A counter shared between tasks.
final class ManagedCounter: Sendable {
    private let count = NIOLockedValueBox(0)
    var value: Int { count.withLockedValue { $0 } }
    func add() { count.withLockedValue { $0 += 1 } }
}

raiseDescriptorLimit()
var deviceCount = 1000
if let index = CommandLine.arguments.firstIndex(of: "--devices"), index + 1 < CommandLine.arguments.count,
    let value = Int(CommandLine.arguments[index + 1])
{
    deviceCount = value
}
let only = CommandLine.arguments.firstIndex(of: "--only").flatMap {
    $0 + 1 < CommandLine.arguments.count ? CommandLine.arguments[$0 + 1] : nil
}
func runs(_ name: String) -> Bool { only == nil || only == name }
func option(_ name: String) -> String? {
    CommandLine.arguments.firstIndex(of: name).flatMap {
        $0 + 1 < CommandLine.arguments.count ? CommandLine.arguments[$0 + 1] : nil
    }
}
if let directory = option("--table") {
    try printTable(directory: directory)
    exit(0)
}
if let address = option("--host"), let colon = address.lastIndex(of: ":"),
    let port = Int(address[address.index(after: colon)...])
{
    let host = String(address[..<colon])
    let echoes = option("--echoes").flatMap { Int($0) } ?? 100_000
    if let count = option("--concurrent").flatMap({ Int($0) }) {
        try await concurrentBenchmark(
            host: host,
            port: port,
            count: count,
            idleSeconds: option("--idle").flatMap { Int($0) } ?? 10
        )
    } else if let count = option("--echo-sessions").flatMap({ Int($0) }) {
        let ports = Array(port..<port + count)
        let rate = try await echoThroughput(host: host, ports: ports, messages: echoes)
        print(String(format: "echo-many %.0f", rate))
        let callbacks = try await callbackEchoThroughput(host: host, ports: ports, messages: echoes)
        print(String(format: "echo-many-callback %.0f", callbacks))
    } else {
        try await hostBenchmark(
            host: host,
            port: port,
            sessions: option("--sessions").flatMap { Int($0) } ?? 5,
            rounds: option("--rounds").flatMap { Int($0) } ?? 200,
            echoes: echoes,
            globalExecutor: CommandLine.arguments.contains("--global-executor")
        )
    }
    exit(0)
}
if CommandLine.arguments.contains("--castd") {
    if CommandLine.arguments.contains("--nio-executor") {
        print(
            "global executor on NIO:",
            NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        )
    }
    try await castdBenchmark(devices: deviceCount, runs: runs)
    exit(0)
}
if runs("codec") { try codecBenchmark() }
if runs("status") { try statusBenchmark() }
if runs("round-trip") { try await roundTripBenchmark() }
if runs("session-start") { try await sessionStartBenchmark() }
if runs("scale") { try await scaleBenchmark(devices: deviceCount) }
if runs("attack") { try await underAttackBenchmark() }
if runs("transcode") { try await transcodeBenchmark() }
