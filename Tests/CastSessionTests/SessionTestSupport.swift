import CastDiscovery
import CastMedia
import CastReceiver
import CastSession
import CastTransport
import Foundation
import NIOConcurrencyHelpers
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A temporary directory for session state, unique per test.
func temporaryStateDirectory() -> String {
    var template = Array("\(stateRoot)/XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    return String(cString: path!)
}

/// One folder per test process under `/tmp/cast-session-tests-UID` (one per user: the test command also runs the
/// suite as an unprivileged user); folders of finished processes are removed when the next run starts, so repeated
/// runs do not fill /tmp.
private let stateRoot: String = {
    let root = "/tmp/cast-session-tests-\(getuid())"
    mkdir(root, 0o700)
    if let directory = opendir(root) {
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let pid = Int32(name), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH {
                try? FileManager.default.removeItem(atPath: "\(root)/\(name)")
            }
        }
        closedir(directory)
    }
    let mine = "\(root)/\(getpid())"
    mkdir(mine, 0o700)
    return mine
}()

/// The request timeout of test sessions: generous, because the whole suite starts at once on a small, busy
/// machine. Tests of timeouts set their own.
let testRequestTimeout: Duration = .seconds(60)

/// Options for tests: state in a temporary directory, no real waiting between reconnect attempts. The launch
/// timeout is as generous as the request timeout: a session start that rides through dropped connections may
/// retry until the connect and launch timeouts together have passed in real time, and with the whole suite
/// started at once on a saturated machine a test's first steps alone can take 40 s.
func testOptions(_ configure: (inout CastOptions) -> Void = { _ in }) -> CastOptions {
    var options = CastOptions()
    options.stateDirectory = temporaryStateDirectory()
    options.heartbeat.pingInterval = nil
    options.requestTimeout = testRequestTimeout
    options.launchTimeout = testRequestTimeout
    configure(&options)
    return options
}

/// Records every backoff wait instead of sleeping.
final class RecordingSleeper: Sendable {
    private let waits = NIOLockedValueBox<[Duration]>([])
    var recorded: [Duration] { waits.withLockedValue { $0 } }
    var sleep: @Sendable (Duration) async throws -> Void {
        { [self] duration in
            self.waits.withLockedValue { $0.append(duration) }
            try Task.checkCancellation()
        }
    }
}

/// Runs `body` with two emulated devices called `first` and `second`, on a manual clock.
func withTwoDevices(
    _ first: String,
    _ second: String,
    _ body: (EmulatedDevice, EmulatedDevice) async throws -> Void
) async throws {
    try await withCastReceiverEmulator(
        devices: [
            DeviceConfiguration(friendlyName: first, port: 0), DeviceConfiguration(friendlyName: second, port: 0),
        ],
        clock: ManualCastClock()
    ) { emulator in
        try await body(emulator.devices[0], emulator.devices[1])
    }
}

/// Waits for the first event matching `predicate`, failing after `seconds` (a deadline, not a sleep).
func next<Stream: AsyncSequence & Sendable>(
    _ stream: Stream,
    within seconds: Double = 60,
    where predicate: @escaping @Sendable (Stream.Element) -> Bool
) async throws -> Stream.Element where Stream.Element: Sendable, Stream.Failure == Never {
    typealias Element = Stream.Element
    return try await withThrowingTaskGroup(of: Element?.self) { group in
        group.addTask {
            for await element in stream where predicate(element) { return element }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let element = first else {
            throw CastSessionError(.timedOut, "no matching event within \(seconds) s")
        }
        return element
    }
}

/// Media served by the tests.
func sampleMedia(title: String = "Big Buck Bunny", duration: Double = 596) -> MediaInformation {
    var media = MediaInformation(contentID: "https://example.com/bbb.mp4", contentType: "video/mp4")
    media.duration = duration
    media.metadata = .movie(
        title: title,
        studio: "Blender Foundation",
        images: [WebImage(url: "https://example.com/bbb.jpg", width: 480, height: 270)]
    )
    return media
}

// MARK: - Helpers shared by the session suites

/// A backoff sleeper that records every wait and holds it until the test opens the gate, so a suspended
/// session stays suspended exactly as long as the test needs (no real time passes).
///
/// Durations listed in `neverElapsing` (for example the request timeout the session uses while a request waits
/// for a resume) never elapse: they end only when their task is cancelled. Durations in `elapsingAtOnce` return
/// at once (a timeout that has passed). Neither kind is recorded as a backoff wait.
final class GatedSleeper: Sendable {
    private struct State {
        var waits: [Duration] = []
        var isOpen: Bool
        var waiters: [Int: (continuation: CheckedContinuation<Void, Never>, gated: Bool)] = [:]
        var cancelled: Set<Int> = []
        var nextID = 0
    }

    private let state: NIOLockedValueBox<State>
    private let neverElapsing: Set<Duration>
    private let elapsingAtOnce: Set<Duration>
    private let callContinuation: AsyncStream<Duration>.Continuation
    private let heldContinuation: AsyncStream<Duration>.Continuation
    /// Every backoff wait as it begins (a single consumer).
    let calls: AsyncStream<Duration>
    /// Every never-elapsing wait as it begins (a single consumer).
    let heldCalls: AsyncStream<Duration>

    init(open: Bool = false, neverElapsing: Set<Duration> = [], elapsingAtOnce: Set<Duration> = []) {
        state = NIOLockedValueBox(State(isOpen: open))
        self.neverElapsing = neverElapsing
        self.elapsingAtOnce = elapsingAtOnce
        (calls, callContinuation) = AsyncStream.makeStream(of: Duration.self)
        (heldCalls, heldContinuation) = AsyncStream.makeStream(of: Duration.self)
    }

    /// The backoff waits asked for so far (never-elapsing waits excluded).
    var recorded: [Duration] { state.withLockedValue { $0.waits } }

    /// Lets every current and future backoff wait finish at once.
    func open() {
        let released = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            let gated = state.waiters.filter { $0.value.gated }
            for key in gated.keys { state.waiters[key] = nil }
            return gated.values.map(\.continuation)
        }
        for continuation in released { continuation.resume() }
    }

    /// Holds future backoff waits again.
    func close() { state.withLockedValue { $0.isOpen = false } }

    /// How many waits are held now (neither opened nor cancelled).
    var heldCount: Int { state.withLockedValue { $0.waiters.count } }

    var sleep: @Sendable (Duration) async throws -> Void {
        { [self] duration in
            if elapsingAtOnce.contains(duration) { return try Task.checkCancellation() }
            let gated = !neverElapsing.contains(duration)
            if gated { state.withLockedValue { $0.waits.append(duration) } }
            let id = state.withLockedValue { state -> Int in
                defer { state.nextID += 1 }
                return state.nextID
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = state.withLockedValue { state -> Bool in
                        if state.cancelled.contains(id) || (gated && state.isOpen) { return true }
                        state.waiters[id] = (continuation, gated)
                        return false
                    }
                    // Announced once held, so a test that saw the announcement finds the wait in `heldCount`.
                    (gated ? callContinuation : heldContinuation).yield(duration)
                    if now { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
                    state.cancelled.insert(id)
                    return state.waiters.removeValue(forKey: id)?.continuation
                }
                waiter?.resume()
            }
            try Task.checkCancellation()
        }
    }
}

/// Collects values from callbacks (request delegates, channel overrides) for later checks.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = NIOLockedValueBox<[Value]>([])
    private let continuation: AsyncStream<Value>.Continuation
    /// Every value as it is recorded (a single consumer).
    let stream: AsyncStream<Value>

    init() { (stream, continuation) = AsyncStream.makeStream(of: Value.self) }

    func record(_ value: Value) {
        storage.withLockedValue { $0.append(value) }
        continuation.yield(value)
    }

    var values: [Value] { storage.withLockedValue { $0 } }
}

extension SessionEvent {
    /// The event's name, for matching and messages.
    var name: String {
        switch self {
        case .willStart: "willStart"
        case .didStart: "didStart"
        case .didFailToStart: "didFailToStart"
        case .willEnd: "willEnd"
        case .didEnd: "didEnd"
        case .didSuspend: "didSuspend"
        case .willResume: "willResume"
        case .didResume: "didResume"
        case .didFailToResume: "didFailToResume"
        case .didAuthenticateDevice: "didAuthenticateDevice"
        }
    }

    /// The error a didEnd, didFailToStart or didFailToResume carries.
    var error: CastSessionError? {
        switch self {
        case .didEnd(_, let error): error
        case .didFailToStart(_, let error), .didFailToResume(_, let error): error
        default: nil
        }
    }

    /// The reason of a didSuspend.
    var suspendReason: SuspendReason? {
        if case .didSuspend(_, let reason) = self { return reason }
        return nil
    }
}

/// Waits for the next session event called `name`.
@discardableResult
func nextEvent(_ events: CastEventStream<SessionEvent>, _ name: String, within seconds: Double = 60) async throws
    -> SessionEvent
{
    try await next(events, within: seconds) { $0.name == name }
}

/// The media error a request ended with, or `nil` when it did not fail with one.
func mediaError(of request: MediaRequest) async -> CastMediaError? {
    do {
        _ = try await request.response()
        return nil
    } catch {
        return error as? CastMediaError
    }
}

/// The code of the local failure a request already has (commands rejected without a round trip finish at once).
func localFailure(of request: MediaRequest) -> CastMediaError.Code? {
    guard case .failed(let error)? = request.outcome else { return nil }
    return error.code
}

/// One started emulator device with a session on it.
struct SessionFixture: Sendable {
    let clock: ManualCastClock
    let device: EmulatedDevice
    let context: CastContext
    let session: CastSession
    /// Session events of `context`, subscribed before the session started.
    let events: CastEventStream<SessionEvent>
    var client: RemoteMediaClient { session.remoteMediaClient! }
}

/// Starts one emulated device on a manual clock, a context and a session on it; ends the session afterwards.
func withStartedSession<Result: Sendable>(
    device configure: (inout DeviceConfiguration) -> Void = { _ in },
    options: (inout CastOptions) -> Void = { _ in },
    sleep: (@Sendable (Duration) async throws -> Void)? = nil,
    _ body: (SessionFixture) async throws -> Result
) async throws -> Result {
    let clock = ManualCastClock()
    var configuration = DeviceConfiguration(friendlyName: "Test Device", port: 0)
    configure(&configuration)
    let castOptions = testOptions(options)
    return try await withCastReceiverEmulator(devices: [configuration], clock: clock) { emulator in
        let device = emulator.devices[0]
        let context = sleep.map { CastContext(options: castOptions, sleep: $0) } ?? CastContext(options: castOptions)
        let events = context.sessionManager.events()
        let session = try await context.sessionManager.startSession(with: device.castDevice)
        let fixture = SessionFixture(clock: clock, device: device, context: context, session: session, events: events)
        do {
            let result = try await body(fixture)
            await context.sessionManager.endSession()
            return result
        } catch {
            await context.sessionManager.endSession()
            throw error
        }
    }
}

/// Drops the fixture's connection (the emulator closes it abruptly on the next message) and waits for the
/// suspension. The fault stays set; clear it with `device.setFaults(FaultInjection())`.
@discardableResult
func dropConnection(_ fixture: SessionFixture, refusingReconnects: Bool = false) async throws -> SuspendReason? {
    var faults = FaultInjection()
    faults.closesAfterMessages = 0
    faults.refusesConnections = refusingReconnects
    fixture.device.setFaults(faults)
    _ = try? await fixture.session.fetchDeviceStatus()
    return try await nextEvent(fixture.events, "didSuspend").suspendReason
}

/// Reads a whole file, `nil` when it cannot be opened.
func readTextFile(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Writes (replaces) a file.
func writeTextFile(_ path: String, _ text: String) {
    guard let file = fopen(path, "w") else { return }
    _ = Array(text.utf8).withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
}

/// A plain media item for queues.
func queueMedia(_ name: String, duration: Double) -> MediaInformation {
    var media = MediaInformation(contentID: "https://example.com/\(name).mp4", contentType: "video/mp4")
    media.duration = duration
    media.metadata = .generic(title: name)
    return media
}
