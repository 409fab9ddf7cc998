// cast-soak: N sessions from one process to N emulated devices (same process), each sending random media and
// device commands for M minutes while random faults hit the devices: dropped connections (as Wi-Fi does), replies
// lost with the connection, slow replies. Every command must be acknowledged or fail with its typed error; a
// watchdog counts any that neither finishes nor fails within its timeout plus a grace ("hung"). Prints commands
// by outcome, hung requests, resident memory and open descriptors at the start (after warm-up) and the end.
//
//   swift run -c release cast-soak [--minutes 1] [--devices 1000] [--seed 1]
//
// Exit status 0 when nothing hung; the last line is `soak: … H hung` (Tools/soak.sh checks the rest).
import CastDiscovery
import CastMedia
import CastReceiver
import CastSession
import CastTransport
import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Settings

func argument(_ name: String, default value: Int) -> Int {
    guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count,
        let parsed = Int(CommandLine.arguments[index + 1])
    else { return value }
    return parsed
}

let minutes = argument("--minutes", default: 1)
let deviceCount = argument("--devices", default: 1000)
let seed = UInt64(argument("--seed", default: 1))
let requestTimeout: Duration = .seconds(5)
/// How long past its own timeout a command may take before it counts as hung (reconnection included).
let hangGrace: Duration = .seconds(20)

// MARK: - Measuring

/// VmRSS in MiB and the number of open descriptors.
func processFigures() -> (rssMiB: Double, descriptors: Int) {
    var rss = 0.0
    if let file = fopen("/proc/self/status", "r") {
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("VmRSS:") {
                rss = (Double(text.split(whereSeparator: { $0 == " " || $0 == "\t" })[1]) ?? 0) / 1024
            }
        }
        fclose(file)
    }
    var descriptors = 0
    if let directory = opendir("/proc/self/fd") {
        while readdir(directory) != nil { descriptors += 1 }
        closedir(directory)
        descriptors -= 3  // ".", ".." and the directory itself
    }
    return (rss, descriptors)
}

func raiseDescriptorLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// Outcomes by name, shared by every session.
final class Tally: Sendable {
    private let counts = NIOLockedValueBox<[String: Int]>([:])
    func add(_ outcome: String) { counts.withLockedValue { $0[outcome, default: 0] += 1 } }
    var all: [String: Int] { counts.withLockedValue { $0 } }
    var total: Int { all.values.reduce(0, +) }
}

/// A small deterministic generator (splitmix64), one per session, so runs repeat for a seed.
struct Dice {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}

// MARK: - One session's life

/// Runs `body`, and reports "hung" when it neither finishes nor fails within `limit`; a hung body is left
/// behind (a watchdog must not wait for what it watches).
func watched(_ limit: Duration, _ body: @escaping @Sendable () async -> String) async -> String {
    let first = FirstAnswer()
    return await withCheckedContinuation { continuation in
        first.set(continuation)
        Task { first.answer(await body()) }
        Task {
            try? await Task.sleep(for: limit)
            first.answer("hung")
        }
    }
}

/// Resumes a continuation with the first answer only.
final class FirstAnswer: Sendable {
    private let continuation = NIOLockedValueBox<CheckedContinuation<String, Never>?>(nil)
    func set(_ continuation: CheckedContinuation<String, Never>) {
        self.continuation.withLockedValue { $0 = continuation }
    }
    func answer(_ value: String) {
        let waiting = continuation.withLockedValue { state -> CheckedContinuation<String, Never>? in
            defer { state = nil }
            return state
        }
        waiting?.resume(returning: value)
    }
}

func outcome(of request: MediaRequest) async -> String {
    do {
        _ = try await request.response()
        return "ok"
    } catch let error as CastMediaError {
        return "media.\(error.code)"
    } catch {
        return "other.\(type(of: error))"
    }
}

func media(_ index: Int) -> MediaInformation {
    var media = MediaInformation(contentID: "https://media.example.com/soak-\(index).mp4", contentType: "video/mp4")
    media.duration = 3600
    media.metadata = .generic(title: "Soak \(index)")
    return media
}

/// The sessions' state directories, one per session, removed at the end.
let stateRoot = NSTemporaryDirectory() + "cast-soak-\(getpid())"

func runSession(device: EmulatedDevice, index: Int, until end: ContinuousClock.Instant, tally: Tally) async {
    var options = CastOptions()
    options.stateDirectory = stateRoot + "/\(index)"
    options.requestTimeout = requestTimeout
    options.requestsWaitWhileSuspended = true
    options.reconnectPolicy.initialDelay = .milliseconds(200)
    options.reconnectPolicy.maximumDelay = .seconds(1)
    options.heartbeat.pingInterval = .seconds(5)
    let context = CastContext(options: options)
    var dice = Dice(state: seed &* 1_000_003 &+ UInt64(index))
    let castDevice = CastDevice.staticDevice(
        host: device.host,
        port: device.port,
        name: device.configuration.friendlyName
    )
    while ContinuousClock.now < end {
        let session: CastSession
        do {
            session = try await context.sessionManager.startSession(with: castDevice)
        } catch let error as CastSessionError {
            tally.add("start.\(error.code)")
            continue
        } catch {
            tally.add("start.other")
            continue
        }
        tally.add("start.ok")
        while ContinuousClock.now < end, session.connectionState != .disconnected {
            guard let client = session.remoteMediaClient else { break }
            let roll = dice.next(100)
            let result = await watched(requestTimeout + hangGrace) {
                switch roll {
                case 0..<10: return await outcome(of: client.loadMedia(media(roll)))
                case 10..<30: return await outcome(of: client.pause())
                case 30..<50: return await outcome(of: client.play())
                case 50..<65: return await outcome(of: client.seek(.to(Double(roll * 10))))
                case 65..<75: return await outcome(of: client.queueInsert([QueueItem(media: media(roll))]))
                case 75..<85: return await outcome(of: client.requestStatus())
                case 85..<95:
                    do {
                        try await session.setDeviceVolume(Double(roll % 10) / 10)
                        return "ok"
                    } catch let error as CastSessionError {
                        return "device.\(error.code)"
                    } catch {
                        return "other.device"
                    }
                default: return await outcome(of: client.setPlaybackRate(roll % 2 == 0 ? 1 : 1.5))
                }
            }
            tally.add(result)
        }
        await context.sessionManager.endSession(stopCasting: dice.next(10) == 0)
    }
    await context.sessionManager.endSession(stopCasting: true)
}

// MARK: - Faults

/// Every second, a few devices misbehave: the connection drops, a reply is lost with it, or replies slow down.
func injectFaults(_ devices: [EmulatedDevice], until end: ContinuousClock.Instant, tally: Tally) async {
    var dice = Dice(state: seed &* 7919)
    while ContinuousClock.now < end {
        try? await Task.sleep(for: .seconds(1))
        for _ in 0..<max(1, devices.count / 50) {
            let device = devices[dice.next(devices.count)]
            var faults = FaultInjection()
            switch dice.next(4) {
            case 0:
                await device.dropConnections()
                tally.add("fault.drop")
                continue
            case 1:
                faults.losesReplyTo = ["LOAD", "PAUSE", "QUEUE_INSERT", "SEEK"][dice.next(4)]
                faults.dropLimit = 1
                tally.add("fault.lostReply")
            case 2:
                faults.dropsOn = ["PLAY", "SET_VOLUME", "GET_STATUS"][dice.next(3)]
                faults.dropLimit = 1
                tally.add("fault.dropOn")
            default:
                faults.replyDelay = 0.5
                tally.add("fault.slow")
            }
            device.setFaults(faults)
            // Faults are brief: the device behaves again after a few seconds.
            Task {
                try? await Task.sleep(for: .seconds(3))
                device.setFaults(FaultInjection())
            }
        }
    }
}

// MARK: - Main

raiseDescriptorLimit()
let configurations = CastReceiverEmulator.configurations(count: deviceCount, basePort: 0).map {
    var configuration = $0
    configuration.port = 0
    configuration.maximumConnections = 8
    return configuration
}
let emulator = try CastReceiverEmulator(devices: configurations)
try await emulator.start()
let tally = Tally()
let started = ContinuousClock.now
let end = started + .seconds(Int64(minutes) * 60)
let baseline = processFigures()
print(
    "soak: \(deviceCount) devices and sessions for \(minutes) min (seed \(seed)); at start \(String(format: "%.0f", baseline.rssMiB)) MiB, \(baseline.descriptors) descriptors"
)
let warmUp = Task { () -> (rssMiB: Double, descriptors: Int) in
    try? await Task.sleep(for: .seconds(Int64(max(10, minutes * 6))))  // 10 % of the run, at least 10 s
    return processFigures()
}
// Resident memory every tenth of the run, so a trend after warm-up shows (growth vs a plateau).
let samples = Task { () -> [Double] in
    var series: [Double] = []
    let step = Duration.seconds(Int64(max(6, minutes * 6)))
    while ContinuousClock.now + step <= end {
        try? await Task.sleep(for: step)
        let figures = processFigures()
        series.append(figures.rssMiB)
        let elapsed = Double((ContinuousClock.now - started).components.seconds) / 60
        print(
            "soak: \(String(format: "%.1f", elapsed)) min: RSS \(String(format: "%.1f", figures.rssMiB)) MiB, \(figures.descriptors) descriptors"
        )
    }
    return series
}
await withTaskGroup(of: Void.self) { group in
    for (index, device) in emulator.devices.enumerated() {
        group.addTask { await runSession(device: device, index: index, until: end, tally: tally) }
    }
    group.addTask { await injectFaults(emulator.devices, until: end, tally: tally) }
}
let warm = await warmUp.value
let series = await samples.value
// Give closed connections a moment to be reaped before counting descriptors.
await emulator.stop()
try? await Task.sleep(for: .seconds(2))
let final = processFigures()
let outcomes = tally.all
let hung = outcomes["hung", default: 0]
let commands = outcomes.filter { !$0.key.hasPrefix("fault.") && !$0.key.hasPrefix("start.") }.values.reduce(0, +)
print("soak: outcomes \(outcomes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
print(
    "soak: RSS after warm-up \(String(format: "%.1f", warm.rssMiB)) MiB, at the end \(String(format: "%.1f", final.rssMiB)) MiB (\(String(format: "%+.1f", (final.rssMiB - warm.rssMiB) / max(warm.rssMiB, 1) * 100)) %, \(String(format: "%.1f", warm.rssMiB * 1024 / Double(deviceCount))) KiB per session); descriptors after warm-up \(warm.descriptors), at the end \(final.descriptors) (devices stopped)"
)
if let last = series.last {
    // The last sample is taken while sessions still run; the figure at the end is after the devices stopped.
    print(
        "soak: RSS while running: after warm-up \(String(format: "%.1f", warm.rssMiB)) MiB, last sample \(String(format: "%.1f", last)) MiB (\(String(format: "%+.1f", (last - warm.rssMiB) / max(warm.rssMiB, 1) * 100)) %), highest \(String(format: "%.1f", series.max() ?? last)) MiB"
    )
}
print("soak: \(minutes) min, \(deviceCount) sessions, \(commands) commands, \(hung) hung")
try? FileManager.default.removeItem(atPath: stateRoot)
exit(hung == 0 ? 0 : 1)
