import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import CastService

#if canImport(Glibc)
import Glibc
#endif

/// A real mosquitto broker on a Unix socket in its own temporary directory (no port to share), which a test can
/// stop and start again.
final class TestBroker: Sendable {
    let directory: String
    var socketPath: String { directory + "/broker.sock" }
    private let process = NIOLockedValueBox<Process?>(nil)

    init() throws {
        directory = temporaryStateDirectory()
        let configuration = """
            user root
            listener 0 \(directory)/broker.sock
            allow_anonymous true
            persistence false
            log_dest stderr
            log_type error
            log_type warning
            log_type notice
            log_type information
            """
        try configuration.write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
    }

    static var executable: String? {
        ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts mosquitto and returns once it listens (it says so on its log).
    func start() async throws {
        let executable = try #require(Self.executable, "mosquitto is not installed: Tools/setup.sh test installs it")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-c", directory + "/mosquitto.conf"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                continuation.finish()
                handle.readabilityHandler = nil
            } else {
                continuation.yield(String(decoding: data, as: UTF8.self))
            }
        }
        try process.run()
        self.process.withLockedValue { $0 = process }
        var log = ""
        for await chunk in lines {
            log += chunk
            if log.contains(" running") { return }
        }
        Issue.record("mosquitto did not start: \(log)")
    }

    /// Kills mosquitto and waits for it to exit. SIGKILL: a test process may ignore SIGTERM (service-lifecycle
    /// does, to handle it itself), and its children inherit that.
    func stop() {
        guard
            let process = process.withLockedValue({ current in
                defer { current = nil }; return current
            })
        else {
            return
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A test's own MQTT client, subscribed to everything, with the messages it received.
final class TestSubscriber: Sendable {
    private let client: MQTTClient
    private let received = NIOLockedValueBox<[(topic: String, payload: String)]>([])
    private let waiters = NIOLockedValueBox<[UUID: AsyncStream<Void>.Continuation]>([:])
    private let reader = NIOLockedValueBox<Task<Void, Never>?>(nil)

    init(broker: TestBroker, name: String = "subscriber") async throws {
        var options = MQTTBrokerOptions(
            host: broker.socketPath,
            port: 0,
            clientID: "test-\(name)-\(UUID().uuidString.prefix(8))"
        )
        options.reconnectDelay = .seconds(1)
        client = try MQTTClient(options: options, will: nil)
        let events = client.events
        let (connected, connection) = AsyncStream.makeStream(of: Void.self)
        reader.withLockedValue {
            $0 = Task { [received, waiters, client] in
                for await event in events {
                    switch event {
                    case .connected:
                        client.subscribe("#")
                        connection.yield()
                    case .message(let topic, let payload):
                        received.withLockedValue { $0.append((topic, String(decoding: payload, as: UTF8.self))) }
                        for waiter in waiters.withLockedValue({ Array($0.values) }) { waiter.yield() }
                    case .disconnected:
                        break
                    }
                }
            }
        }
        try client.start()
        for await _ in connected { break }
    }

    func publish(_ topic: String, _ payload: String) { client.publish(topic, payload, retain: false) }

    /// The latest payload on `topic` that satisfies `accept`, waiting for it up to `seconds` (a bound on a
    /// failure, not a pause: a passing test returns as soon as the message arrives).
    func message(
        on topic: String,
        within seconds: Int = 20,
        where accept: @escaping @Sendable (String) -> Bool = { _ in true }
    ) async throws -> String {
        try await wait(for: "a message on \(topic)", within: seconds) { received in
            received.last { $0.topic == topic && accept($0.payload) }?.payload
        }
    }

    /// Waits until the payloads received on `topic`, in order, end with `expected`.
    func payloads(on topic: String, endingWith expected: [String], within seconds: Int = 20) async throws {
        _ = try await wait(for: "\(expected) on \(topic)", within: seconds) { received in
            received.filter { $0.topic == topic }.map(\.payload).suffix(expected.count) == expected[...] ? "" : nil
        }
    }

    /// What `match` finds in everything received so far, waiting for new messages up to `seconds`.
    private func wait(
        for what: String,
        within seconds: Int,
        _ match: @escaping @Sendable ([(topic: String, payload: String)]) -> String?
    ) async throws -> String {
        let id = UUID()
        let (changes, continuation) = AsyncStream.makeStream(of: Void.self)
        waiters.withLockedValue { $0[id] = continuation }
        defer { waiters.withLockedValue { $0[id] = nil } }
        let received = self.received
        let found = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                if let found = received.withLockedValue({ match($0) }) { return found }
                for await _ in changes { if let found = received.withLockedValue({ match($0) }) { return found } }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let found else {
            let topics = Set(received.withLockedValue { $0.map(\.topic) }).sorted()
            throw CastServiceError(
                .invalidRequest,
                "nothing like \(what) within \(seconds) s; seen: \(topics)",
                httpStatus: 0
            )
        }
        return found
    }

    /// Forgets what was received (to wait for what comes next).
    func clear() { received.withLockedValue { $0 = [] } }

    func stop() {
        client.stop()
        reader.withLockedValue { $0?.cancel() }
    }
}

/// A bridge for `hub` on `broker`, running for the duration of `body`.
func withBridge<Result: Sendable>(
    _ hub: DeviceHub,
    broker: TestBroker,
    site: String = "test",
    _ body: (MQTTBridge) async throws -> Result
) async throws -> Result {
    var options = MQTTBridge.Options(
        broker: MQTTBrokerOptions(host: broker.socketPath, port: 0, clientID: "castd-\(site)"),
        site: site
    )
    options.broker.reconnectDelay = .seconds(1)
    options.broker.maximumReconnectDelay = .seconds(1)
    let bridge = try MQTTBridge(hub: hub, options: options)
    let running = Task { try await bridge.run() }
    defer { running.cancel() }
    return try await body(bridge)
}
