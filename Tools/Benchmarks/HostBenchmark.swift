// The side-by-side benchmark's Swift parts (Tools/bench/run.sh runs them against a cast-receiver):
//
//   cast-benchmarks --host HOST:PORT [--sessions 5] [--rounds 200] [--echoes 100000] [--global-executor]
//       swift-cast as a library (SessionManager, RemoteMediaClient, GenericChannel), printing the lines floor.c and
//       pychromecast_bench.py print: `session US`, `load US`, `rtt US`, `echo MESSAGES_PER_SECOND` (the first of
//       several sessions is the warm-up: `first-session`, `first-load`).
//   cast-benchmarks --host HOST:PORT --echo-sessions 100 [--echoes 100000]
//       the echo spread over that many sessions (one device each, ports PORT, PORT+1, …): `echo-many MESSAGES/S`.
//   cast-benchmarks --host HOST:PORT --concurrent 1000 [--idle 10]
//       that many sessions at once, one per device on ports PORT, PORT+1, …, heartbeats running; prints
//       `concurrent N SECONDS_TO_START KIB_PER_SESSION IDLE_CPU_PERCENT RETRIED_STARTS`.
//   cast-benchmarks --table DIR
//       reads DIR/floor.txt, DIR/swift.txt, DIR/pychromecast.txt and DIR/scale.txt and prints one table with ratios;
//       percentiles from HdrHistogram.
import CastDiscovery
import CastMedia
import CastSession
import CastTransport
import Foundation
import Histogram
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

private let echoApplicationID = "E0C40001"
private let echoNamespace = "urn:x-cast:com.example.echo"

func microseconds(_ duration: Duration) -> Double { seconds(duration) * 1e6 }

private func line(_ text: String) {
    print(text)
    fflush(nil)
}

/// The options of every session, made once as an app would: a copy shares its storage.
private func sessionOptions(_ application: String) -> CastOptions {
    var options = CastOptions(receiverApplicationID: application)
    options.resumesSavedSessions = false
    return options
}

private let mediaSessionOptions = sessionOptions(CastOptions.defaultMediaReceiverApplicationID)
private let echoSessionOptions = sessionOptions(echoApplicationID)

private func startSession(host: String, port: Int, options: CastOptions = mediaSessionOptions)
    async throws -> (CastContext, CastSession)
{
    let context = CastContext(options: options)
    let session = try await context.sessionManager.startSession(with: .staticDevice(host: host, port: port))
    return (context, session)
}

/// Sessions, LOAD and PAUSE/PLAY round trips on one device, then the echo on one session.
func hostBenchmark(host: String, port: Int, sessions: Int, rounds: Int, echoes: Int, globalExecutor: Bool) async throws
{
    for index in 0..<sessions {
        // With more than one session, the first is the process's warm-up (as in floor.c).
        let prefix = index == 0 && sessions > 1 ? "first-" : ""
        let start = ContinuousClock.now
        let (context, session) = try await startSession(host: host, port: port)
        line(String(format: "\(prefix)session %.1f", microseconds(ContinuousClock.now - start)))
        let client = session.remoteMediaClient!
        // Requests are awaited on the session's event loop, as its documentation suggests (or, with
        // --global-executor, on the global executor, as a caller that does not ask for it).
        let executor = globalExecutor ? nil : session.executor
        let loadTime = try await withTaskExecutorPreference(executor) {
            let statuses = client.statusUpdates()
            let start = ContinuousClock.now
            var media = MediaInformation(contentID: "https://media.example.com/bench.mp4", contentType: "video/mp4")
            media.duration = 600
            if try await client.loadMedia(media).response()?.playerState != .playing {
                for await status in statuses where status?.playerState == .playing { break }
            }
            return ContinuousClock.now - start
        }
        line(String(format: "\(prefix)load %.1f", microseconds(loadTime)))
        // Printed after the rounds, like floor.c's buffered output: nothing but the commands runs between them.
        let samples = try await withTaskExecutorPreference(executor) {
            var samples: [Duration] = []
            samples.reserveCapacity(2 * rounds)
            for round in 0..<2 * (prefix.isEmpty ? rounds : 20) {
                let start = ContinuousClock.now
                try await (round % 2 == 0 ? client.pause() : client.play()).response()
                samples.append(ContinuousClock.now - start)
            }
            return samples
        }
        if prefix.isEmpty { line(samples.map { String(format: "rtt %.1f", microseconds($0)) }.joined(separator: "\n")) }
        await context.sessionManager.endSession(stopCasting: true)
    }
    if echoes > 0 {
        line(String(format: "echo %.0f", try await echoThroughput(host: host, ports: [port], messages: echoes)))
        let callbacks = try await callbackEchoThroughput(host: host, ports: [port], messages: echoes)
        line(String(format: "echo-callback %.0f", callbacks))
    }
}

/// A channel that answers each echo in `didReceiveTextMessage` with a queued send (`postTextMessage`), as a GCK
/// sender's channel subclass does: no task and no stream per message.
final class AnsweringEchoChannel: CastChannel, @unchecked Sendable {
    // @unchecked: `received` is behind its lock; the rest is immutable.
    let share: Int
    let received = NIOLockedValueBox(0)
    let (done, finished) = AsyncStream<Void>.makeStream()

    init(share: Int) throws {
        self.share = share
        try super.init(namespace: echoNamespace)
    }

    /// Sends the first 64, the window the replies then keep full.
    func start() throws {
        for _ in 0..<min(64, share) { try postTextMessage(#"{"n":1}"#) }
    }

    override func didReceiveTextMessage(_ message: String) {
        let count = received.withLockedValue { count in
            count += 1
            return count
        }
        if count + 64 <= share { try? postTextMessage(#"{"n":1}"#) }
        if count == share { finished.finish() }
    }
}

/// Messages per second echoed by the echo app over one session per port, 64 in flight on each, the way a GCK
/// sender writes it: a channel subclass answers each reply in its callback.
func callbackEchoThroughput(host: String, ports: [Int], messages: Int) async throws -> Double {
    let share = messages / ports.count
    var sessions: [(CastContext, AnsweringEchoChannel)] = []
    for port in ports {
        let (context, session) = try await startSession(host: host, port: port, options: echoSessionOptions)
        let channel = try AnsweringEchoChannel(share: share)
        session.add(channel)
        guard channel.isConnected else { throw CastSessionError(.channelNotConnected, "the echo app is not ready") }
        sessions.append((context, channel))
    }
    let start = ContinuousClock.now
    for (_, channel) in sessions { try channel.start() }
    for (_, channel) in sessions { for await _ in channel.done {} }
    let rate = Double(share * sessions.count) / seconds(ContinuousClock.now - start)
    for (context, _) in sessions { await context.sessionManager.endSession(stopCasting: true) }
    return rate
}

/// Messages per second echoed by the echo app over one session per port, 64 in flight on each: awaited sends and
/// a stream of replies.
func echoThroughput(host: String, ports: [Int], messages: Int) async throws -> Double {
    let share = messages / ports.count
    var sessions: [(CastContext, CastSession, GenericChannel)] = []
    for port in ports {
        let (context, session) = try await startSession(host: host, port: port, options: echoSessionOptions)
        let channel = try GenericChannel(namespace: echoNamespace)
        let connected = channel.connectionChanges()
        session.add(channel)
        if !channel.isConnected { for await isConnected in connected where isConnected { break } }
        sessions.append((context, session, channel))
    }
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for (_, session, channel) in sessions {
            // Each session's sends and replies on its own event loop.
            group.addTask(executorPreference: session.executor) {
                let replies = channel.messages()
                for _ in 0..<min(64, share) { try await channel.sendTextMessage(#"{"n":1}"#) }
                var sent = min(64, share)
                var received = 0
                for await _ in replies {
                    received += 1
                    if received == share { break }
                    if sent < share {
                        try await channel.sendTextMessage(#"{"n":1}"#)
                        sent += 1
                    }
                }
            }
        }
        try await group.waitForAll()
    }
    let rate = Double(share * sessions.count) / seconds(ContinuousClock.now - start)
    for (context, _, _) in sessions { await context.sessionManager.endSession(stopCasting: true) }
    return rate
}

/// `count` sessions at once (heartbeats on), one per device on consecutive ports: memory and idle CPU.
func concurrentBenchmark(host: String, port: Int, count: Int, idleSeconds: Int) async throws {
    // One session started and ended first, so that the process's one-time state (the event loops' threads, the TLS
    // context and OpenSSL's tables, the runtime's metadata) is not counted per session: the floor, too, sets up its
    // TLS context before it reads its RSS.
    let (warmUp, _) = try await startSession(host: host, port: port)
    await warmUp.sessionManager.endSession(stopCasting: false)
    let before = processFigures()
    let start = ContinuousClock.now
    var contexts: [CastContext] = []
    contexts.reserveCapacity(count)
    let retries = ManagedCounter()
    // At most `window` starts in flight, a new one as each ends: a thousand handshakes at once would wait behind each
    // other past the connect timeout, and their transient buffers (freed, but kept by malloc) would count in the
    // RSS per session. A session that fails to start is started again (counted) once more.
    let window = 64
    func started(_ index: Int) async throws -> CastContext {
        do {
            return try await startSession(host: host, port: port + index).0
        } catch {
            retries.add()
            let note = "bench: starting the session on port \(port + index) again after: \(error)\n"
            FileHandle.standardError.write(Data(note.utf8))
            return try await startSession(host: host, port: port + index).0
        }
    }
    try await withThrowingTaskGroup(of: CastContext.self) { group in
        var next = 0
        while next < min(window, count) {
            let index = next
            group.addTask { try await started(index) }
            next += 1
        }
        for try await context in group {
            contexts.append(context)
            if next < count {
                let index = next
                group.addTask { try await started(index) }
                next += 1
            }
        }
    }
    let startTime = seconds(ContinuousClock.now - start)
    let after = processFigures()
    // Idle is measured once the start's last request timers (swept at their deadline, the 10 s request timeout)
    // have fired and every heartbeat runs at its interval: the steady state, not the start's tail.
    try await Task.sleep(for: .seconds(12))  // Settling before the measured period, not a request path.
    line("idle-start")
    let cpuBefore = processCPUSeconds()
    let idleStart = ContinuousClock.now
    try await Task.sleep(for: .seconds(idleSeconds))  // The measured idle period, not a request path.
    let cpu = (processCPUSeconds() - cpuBefore) / seconds(ContinuousClock.now - idleStart) * 100
    let perSession = (after.rssMiB - before.rssMiB) * 1024 / Double(count)
    line(String(format: "concurrent %d %.2f %.1f %.2f %d", count, startTime, perSession, cpu, retries.value))
    await withTaskGroup(of: Void.self) { group in
        for context in contexts { group.addTask { await context.sessionManager.endSession(stopCasting: false) } }
    }
}

/// User plus system CPU seconds of this process, from /proc/self/stat.
func processCPUSeconds() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return 0 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    // After the name: state is field 3, utime 14 and stime 15 (1-based in proc(5)).
    let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
    return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
}

// MARK: - The table

/// Reads the `NAME VALUE` lines the three senders printed and prints one table with ratios to the floor.
func printTable(directory: String) throws {
    let senders = ["floor", "swift", "pychromecast", "swift-global"]
    var samples: [String: [String: [Double]]] = [:]
    for sender in senders {
        let text = (try? String(contentsOfFile: "\(directory)/\(sender).txt", encoding: .utf8)) ?? ""
        for row in text.split(separator: "\n") {
            let fields = row.split(separator: " ")
            guard fields.count >= 2, let value = Double(fields[1]) else { continue }
            samples[sender, default: [:]][String(fields[0]), default: []].append(value)
        }
    }
    func histogram(_ values: [Double]) -> Histogram<UInt64> {
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        // Microseconds to tenths of a microsecond, so sub-millisecond figures keep three digits.
        for value in values { _ = histogram.record(UInt64(max(1, value * 10))) }
        return histogram
    }
    func figure(_ sender: String, _ metric: String, _ percentile: Double) -> Double? {
        guard let values = samples[sender]?[metric], !values.isEmpty else { return nil }
        if metric.hasPrefix("echo") { return values.reduce(0, +) / Double(values.count) }
        return Double(histogram(values).valueAtPercentile(percentile)) / 10_000
    }
    let rows: [(title: String, metric: String, percentile: Double, unit: String)] = [
        ("session start p50 (connect, TLS, launch, app connect)", "session", 50, "ms"),
        ("LOAD until PLAYING p50", "load", 50, "ms"),
        ("first session of a new process p50", "first-session", 50, "ms"),
        ("first LOAD of a new process p50", "first-load", 50, "ms"),
        // p10 and p75 show the floor's two modes (about 50 µs when it and the emulator take turns on one core,
        // 100–170 µs otherwise); its p50 falls in whichever holds more than half of the samples.
        ("PAUSE/PLAY round trip p10", "rtt", 10, "ms"),
        ("PAUSE/PLAY round trip p50", "rtt", 50, "ms"),
        ("PAUSE/PLAY round trip p75", "rtt", 75, "ms"),
        ("PAUSE/PLAY round trip p99", "rtt", 99, "ms"),
        ("PAUSE/PLAY round trip p99.9", "rtt", 99.9, "ms"),
        ("custom-channel echo, one session", "echo", 0, "msg/s"),
        ("the same, answered in the channel's callback (swift-cast only)", "echo-callback", 0, "msg/s"),
    ]
    func cell(_ value: Double?, _ unit: String) -> String {
        guard let value else { return "–" }
        return unit == "ms" ? String(format: "%.3f ms", value) : String(format: "%.0f/s", value)
    }
    func ratio(_ value: Double?, _ floor: Double?, _ unit: String) -> String {
        guard let value, let floor, floor > 0 else { return "–" }
        return String(format: "%.2f×", unit == "ms" ? value / floor : floor / value)
    }
    let counts = senders.map { sender in
        "\(sender) \(samples[sender]?["session"]?.count ?? 0) sessions, \(samples[sender]?["rtt"]?.count ?? 0) commands"
    }
    print("samples: " + counts.joined(separator: "; "))
    if let retries = samples["pychromecast"]?["retry"]?.count, retries > 0 {
        print("pychromecast: \(retries) session(s) lost the connection under its own threads and were run again")
    }
    if samples["pychromecast"]?["echo-failed"] != nil {
        print("pychromecast: its echo run failed (its socket broke under the load), so it has no echo figure")
    }
    if let failures = samples["pychromecast"]?["quit-failed"]?.count, failures > 0 {
        print("pychromecast: \(failures) quit(s) failed after the measured part (its socket reconnecting)")
    }
    print("| | floor (C) | swift-cast | ×floor | pychromecast | ×floor | swift-cast vs pychromecast |")
    print("|---|---|---|---|---|---|---|")
    for row in rows {
        let floor = figure("floor", row.metric, row.percentile)
        let swift = figure("swift", row.metric, row.percentile)
        let python = figure("pychromecast", row.metric, row.percentile)
        var versus = "–"
        if let swift, let python, swift > 0 {
            versus = String(format: "%.2f× faster", row.unit == "ms" ? python / swift : swift / python)
        }
        print(
            "| \(row.title) | \(cell(floor, row.unit)) | \(cell(swift, row.unit)) | \(ratio(swift, floor, row.unit)) | "
                + "\(cell(python, row.unit)) | \(ratio(python, floor, row.unit)) | \(versus) |"
        )
    }
    if let values = samples["swift-global"]?["rtt"], !values.isEmpty, let floor = samples["floor"]?["rtt"] {
        let (own, base) = (histogram(values), histogram(floor))
        let figures = [50.0, 99, 99.9].map { percentile in
            let value = Double(own.valueAtPercentile(percentile)) / 10_000
            let ratio = value / (Double(base.valueAtPercentile(percentile)) / 10_000)
            return String(format: "p%g %.3f ms (%.2f× floor)", percentile, value, ratio)
        }
        print("swift-cast awaiting on the global executor instead: PAUSE/PLAY " + figures.joined(separator: ", "))
    }
    // Extra lines (scale, echo over many sessions, emulator figures) as run.sh collected them.
    if let extra = try? String(contentsOfFile: "\(directory)/scale.txt", encoding: .utf8), !extra.isEmpty {
        print(extra, terminator: extra.hasSuffix("\n") ? "" : "\n")
    }
}
