import CastDiscovery
import CastReceiver
import CastTransport
import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing

/// The hermetic mDNS lab that `Tools/mdns-lab.sh start` builds, as the tests see it through its exports.
enum Lab {
    static let environment = ProcessInfo.processInfo.environment

    /// Whether the lab is up (the script exported `CAST_MDNS_LAB`); the lab suites are skipped otherwise.
    static let isUp = environment["CAST_MDNS_LAB"] != nil && environment["DBUS_SYSTEM_BUS_ADDRESS"] != nil

    /// Why lab suites are skipped.
    static let skipReason: Comment =
        "needs the hermetic mDNS lab (root): Tools/test.sh starts it, or eval \"$(Tools/mdns-lab.sh start)\""

    /// The loopback-only namespace whose avahi-daemon this test process talks to.
    static var namespace: String { environment["CAST_MDNS_LAB"] ?? "castlab" }
    /// Its bus, which libdbus in this process already uses.
    static var bus: String { environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? "" }
    /// The receiver host of the veth pair, its bus and address.
    static var receiverNamespace: String { environment["CAST_MDNS_LAB_RX"] ?? "" }
    static var receiverBus: String { environment["CAST_MDNS_LAB_RX_BUS"] ?? "" }
    static var receiverAddress: String { environment["CAST_MDNS_LAB_RX_ADDRESS"] ?? "10.77.0.1" }
    /// The sender host of the veth pair and its bus.
    static var senderNamespace: String { environment["CAST_MDNS_LAB_TX"] ?? "" }
    static var senderBus: String { environment["CAST_MDNS_LAB_TX_BUS"] ?? "" }

    /// Runs `arguments` inside the lab namespace with the lab's bus, as `ip netns exec` does.
    static func inside(_ arguments: [String], namespace: String = Lab.namespace, bus: String = Lab.bus) -> [String] {
        ["ip", "netns", "exec", namespace, "env", "DBUS_SYSTEM_BUS_ADDRESS=\(bus)"] + arguments
    }
}

/// Paths of what `swift build --build-tests` produced next to this test binary.
enum Build {
    /// This test binary (the child-process tests re-run it).
    static var testBinary: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// The build products directory (`.build/debug` or the scratch path's equivalent).
    static var productsDirectory: URL {
        var url = URL(fileURLWithPath: testBinary).deletingLastPathComponent()
        if url.lastPathComponent == "MacOS" {
            url = url.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        }
        return url
    }

    /// The `cast-receiver` executable.
    static var castReceiver: String { productsDirectory.appendingPathComponent("cast-receiver").path }

    /// The `castd` executable.
    static var castd: String { productsDirectory.appendingPathComponent("castd").path }

    /// The package root (for `.build/discovery-venv`).
    static var packageRoot: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }
}

struct TimeoutError: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Runs `body`, failing with ``TimeoutError`` when it takes longer than `limit`. The bound is a safety net for a
/// daemon that never answers, not a way of letting time pass.
func withDeadline<T: Sendable>(
    _ limit: Duration,
    _ what: String,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw TimeoutError(what: what) }
        return value
    }
}

/// Records a manager's events from the moment it is made, so tests can wait for one and also check what did not
/// happen.
final class EventLog: Sendable {
    private struct State {
        var events: [DiscoveryEvent] = []
        var waiters:
            [(
                id: Int, predicate: @Sendable (DiscoveryEvent) -> Bool,
                continuation: CheckedContinuation<DiscoveryEvent?, Never>
            )] = []
        var nextID = 0
    }

    private let storage = NIOLockedValueBox(State())
    private let task: Task<Void, Never>

    init(_ stream: CastEventStream<DiscoveryEvent>) {
        let storage = self.storage
        task = Task {
            for await event in stream {
                let ready = storage.withLockedValue { state -> [CheckedContinuation<DiscoveryEvent?, Never>] in
                    state.events.append(event)
                    let matching = state.waiters.filter { $0.predicate(event) }
                    state.waiters.removeAll { waiter in matching.contains { $0.id == waiter.id } }
                    return matching.map(\.continuation)
                }
                for continuation in ready { continuation.resume(returning: event) }
            }
        }
    }

    deinit { task.cancel() }

    /// Every event so far.
    var events: [DiscoveryEvent] { storage.withLockedValue { $0.events } }

    /// The first event (already seen or still to come) matching `predicate`, within `limit`.
    func first(
        within limit: Duration = .seconds(60),
        _ what: String,
        where predicate: @escaping @Sendable (DiscoveryEvent) -> Bool
    ) async throws -> DiscoveryEvent {
        let id = storage.withLockedValue { state in
            state.nextID += 1
            return state.nextID
        }
        let result: DiscoveryEvent? = try await withDeadline(limit, what) {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let existing = self.storage.withLockedValue { state -> DiscoveryEvent? in
                        if let event = state.events.first(where: predicate) { return event }
                        state.waiters.append((id, predicate, continuation))
                        return nil
                    }
                    if let existing { continuation.resume(returning: existing) }
                }
            } onCancel: {
                let waiter = self.storage.withLockedValue { state -> CheckedContinuation<DiscoveryEvent?, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                waiter?.resume(returning: nil)
            }
        }
        guard let result else { throw TimeoutError(what: what) }
        return result
    }
}

extension DiscoveryEvent {
    /// The device an added/updated/removed event carries.
    var device: CastDevice? {
        switch self {
        case .added(let device), .updated(let device), .removed(let device): device
        case .failed: nil
        }
    }

    var isAdded: Bool { if case .added = self { true } else { false } }
    var isUpdated: Bool { if case .updated = self { true } else { false } }
    var isRemoved: Bool { if case .removed = self { true } else { false } }
}

/// Collects log messages in memory.
final class LogCapture: Sendable {
    private struct State {
        var messages: [(level: Logger.Level, message: String)] = []
        var waiters: [(id: UUID, needle: String, continuation: CheckedContinuation<String?, Never>)] = []
    }

    private let state = NIOLockedValueBox(State())

    var logger: Logger {
        var logger = Logger(label: "test") { _ in CaptureHandler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    var messages: [(level: Logger.Level, message: String)] { state.withLockedValue { $0.messages } }

    func record(_ level: Logger.Level, _ message: String) {
        let ready = state.withLockedValue { state -> [CheckedContinuation<String?, Never>] in
            state.messages.append((level, message))
            let matching = state.waiters.filter { message.contains($0.needle) }
            state.waiters.removeAll { message.contains($0.needle) }
            return matching.map(\.continuation)
        }
        for continuation in ready { continuation.resume(returning: message) }
    }

    /// The first message containing `needle`, within `limit`.
    func message(containing needle: String, within limit: Duration = .seconds(60)) async throws -> String {
        let found: String? = try await withDeadline(limit, "a log message containing '\(needle)'") {
            let id = UUID()
            return await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                    let existing = self.state.withLockedValue { state -> String? in
                        if let hit = state.messages.first(where: { $0.message.contains(needle) }) { return hit.message }
                        state.waiters.append((id, needle, continuation))
                        return nil
                    }
                    if let existing { continuation.resume(returning: existing) }
                }
            } onCancel: {
                let waiter = self.state.withLockedValue { state -> CheckedContinuation<String?, Never>? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index).continuation
                }
                waiter?.resume(returning: nil)
            }
        }
        guard let found else { throw TimeoutError(what: "a log message containing '\(needle)'") }
        return found
    }

    private struct CaptureHandler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            capture.record(event.level, "\(event.message)")
        }
    }
}

/// A child process whose output is collected; killed on ``terminate()`` or when the test ends.
final class ChildProcess: @unchecked Sendable {
    // @unchecked: `Process` is thread-safe for what is used here; output is collected behind a lock.
    private let process = Process()
    private let output = NIOLockedValueBox(Data())
    private let chunks = NIOLockedValueBox([(ContinuousClock.Instant, Data)]())
    private let pipe = Pipe()

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // Children inherit this process's blocked signals (the runtime blocks SIGTERM in its threads); reset them,
        // or avahi-publish and python would never see the SIGTERM that asks them to withdraw and exit.
        process.arguments = ["--default-signal"] + arguments
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        process.standardOutput = pipe
        process.standardError = pipe
        let output = self.output
        let chunks = self.chunks
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            let now = ContinuousClock.now
            output.withLockedValue { $0.append(data) }
            chunks.withLockedValue { $0.append((now, data)) }
        }
        try process.run()
    }

    deinit { terminate() }

    var text: String { output.withLockedValue { String(decoding: $0, as: UTF8.self) } }

    var isRunning: Bool { process.isRunning }

    /// Every complete output line with the time its newline arrived (for benchmarks).
    var lines: [(instant: ContinuousClock.Instant, line: String)] {
        var result: [(ContinuousClock.Instant, String)] = []
        var partial: [UInt8] = []
        for (instant, data) in chunks.withLockedValue({ $0 }) {
            for byte in data {
                if byte == UInt8(ascii: "\n") {
                    result.append((instant, String(decoding: partial, as: UTF8.self)))
                    partial = []
                } else {
                    partial.append(byte)
                }
            }
        }
        return result
    }

    /// When the first line starting with `prefix` arrived.
    func firstSeen(_ prefix: String) -> ContinuousClock.Instant? {
        lines.first { $0.line.hasPrefix(prefix) }?.instant
    }

    /// Waits until the output contains `needle`.
    func waitForOutput(_ needle: String, within limit: Duration = .seconds(30)) async throws -> String {
        try await withDeadline(limit, "'\(needle)' from \(process.arguments?.joined(separator: " ") ?? "")") {
            while !self.text.contains(needle) {
                if !self.process.isRunning, !self.text.contains(needle) {
                    try await Task.sleep(for: .milliseconds(50))
                    if self.text.contains(needle) { break }
                    throw TimeoutError(what: "'\(needle)' (the process exited: \(self.text))")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            return self.text
        }
    }

    /// Waits for the process to exit; returns its status.
    func waitForExit(within limit: Duration = .seconds(60)) async throws -> Int32 {
        try await withDeadline(limit, "the exit of \(process.arguments?.first ?? "a child")") {
            while self.process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
            return self.process.terminationStatus
        }
    }

    func signal(_ number: Int32) {
        if process.isRunning { kill(process.processIdentifier, number) }
    }

    func terminate() {
        if process.isRunning { process.terminate() }
    }

    /// Runs to completion and returns the status and output.
    static func run(_ arguments: [String], environment: [String: String] = [:], within limit: Duration = .seconds(60))
        async throws -> (status: Int32, output: String)
    {
        let child = try ChildProcess(arguments, environment: environment)
        let status = try await child.waitForExit(within: limit)
        try await Task.sleep(for: .milliseconds(50))  // let the pipe's last bytes arrive
        return (status, child.text)
    }
}

/// A service type of its own (`_c1a2b3c4d._tcp`), for tests whose assertions cover every device and timer a manager
/// has: other tests' devices (and their goodbyes) on the shared lab daemon stay out of its browse.
func privateServiceType() -> String { "_c\(uniqueTag())._tcp" }

/// A unique name fragment per test, so parallel tests sharing the lab's daemon never confuse their devices.
func uniqueTag() -> String { String(Identifiers.deviceID().prefix(8)) }
