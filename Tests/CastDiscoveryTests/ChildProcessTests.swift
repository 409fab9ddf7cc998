import CastDiscovery
import CastReceiver
import CastTransport
import Foundation
import Testing

// libdbus reads DBUS_SYSTEM_BUS_ADDRESS once per process, and a process cannot move its event-loop threads into
// another network namespace. Tests that need a different bus (a dead one) or another namespace (the far end of the
// veth pair) therefore re-run this test binary as a child, selecting one of the tests below with
// CAST_DISCOVERY_CHILD. The child prints `CHILD-RESULT key=value` lines; the parent asserts on them and on the exit
// status. Outside such a child these tests are skipped.

enum Child {
    static let mode = ProcessInfo.processInfo.environment["CAST_DISCOVERY_CHILD"]

    /// The command that runs this binary's child tests, optionally inside a namespace.
    static func command(namespace: (name: String, bus: String)? = nil) -> [String] {
        let command = [Build.testBinary, "--testing-library", "swift-testing", "--filter", #"\.ChildProcessTests/"#]
        return namespace.map { Lab.inside(command, namespace: $0.name, bus: $0.bus) } ?? command
    }

    /// Runs this binary's child test `mode` with `environment`, optionally inside a namespace.
    static func run(
        _ mode: String,
        environment: [String: String] = [:],
        namespace: (name: String, bus: String)? = nil,
        within limit: Duration = .seconds(60)
    ) async throws -> (status: Int32, results: [String: String], output: String) {
        var environment = environment
        environment["CAST_DISCOVERY_CHILD"] = mode
        let (status, output) = try await ChildProcess.run(
            command(namespace: namespace),
            environment: environment,
            within: limit
        )
        return (status, results(in: output), output)
    }

    /// The `CHILD-RESULT key=value` lines of a child's output.
    static func results(in output: String) -> [String: String] {
        var results: [String: String] = [:]
        for line in output.split(separator: "\n") {
            guard let range = line.range(of: "CHILD-RESULT ") else { continue }
            let pair = line[range.upperBound...]
            guard let equals = pair.firstIndex(of: "=") else { continue }
            results[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        }
        return results
    }

    static func report(_ key: String, _ value: String) {
        print("CHILD-RESULT \(key)=\(value)")
    }
}

@Suite("Child-process tests (run by other tests with CAST_DISCOVERY_CHILD)")
struct ChildProcessTests {
    @Test(.enabled(if: Child.mode == "unreachable", "run by DaemonUnreachableTests"))
    func unreachableDaemon() throws {
        let clock = ContinuousClock()
        let start = clock.now
        let manager = DiscoveryManager()
        do {
            try manager.start()
            Issue.record("start() succeeded without a daemon")
        } catch let error as CastDiscoveryError {
            Child.report("manager.code", "\(error.code)")
            Child.report("manager.message", error.message)
        }
        Child.report("manager.running", "\(manager.isRunning)")
        do {
            _ = try DevicePublisher()
            Issue.record("DevicePublisher() succeeded without a daemon")
        } catch let error as CastDiscoveryError {
            Child.report("publisher.code", "\(error.code)")
        }
        Child.report("elapsed.ms", "\(Int((clock.now - start) / .milliseconds(1)))")
    }

    @Test(.enabled(if: Child.mode == "veth-sender", "run by TwoHostLabTests"))
    func vethSender() async throws {
        let id = try #require(ProcessInfo.processInfo.environment["CAST_EXPECT_ID"])
        try await withDiscovery { manager, log in
            // The IPv4 and IPv6 records resolve separately; wait for the merged device with both addresses.
            let event = try await log.first(within: .seconds(20), "the receiver with both addresses") {
                ($0.isAdded || $0.isUpdated) && $0.device?.id == id && ($0.device?.addresses.count ?? 0) >= 2
            }
            let device = try #require(event.device)
            Child.report("listed", "\(manager.devices.filter { $0.id == id }.count)")
            Child.report("name", device.friendlyName)
            Child.report("addresses", device.addresses.map(\.connectableHost).joined(separator: ","))
            Child.report("host", device.host)
            for address in [device.host] + device.addresses.filter(\.isIPv6).map(\.connectableHost) {
                let connection = try await CastConnection.connect(host: address, port: device.port)
                try await connection.openVirtualConnection(to: CastEndpoint.receiver)
                let reply = try await connection.request(
                    namespace: CastNamespace.receiver,
                    to: CastEndpoint.receiver,
                    payload: ["type": "GET_STATUS"]
                )
                Child.report("status@\(address)", try reply.json()["type"]?.stringValue ?? "?")
                await connection.close()
            }
        }
    }

    @Test(.enabled(if: Child.mode == "daemon-loss", "run by DaemonLossLabTests"))
    func daemonLoss() async throws {
        let environment = ProcessInfo.processInfo.environment
        let id = try #require(environment["CAST_EXPECT_ID"])
        let restarted = try #require(environment["CAST_RESTARTED_FILE"])
        let clock = ManualCastClock()
        try await withCastReceiverEmulator { emulator in
            let port = emulator.devices[0].port
            try await withDiscovery(
                clock: clock,
                configure: {
                    $0.staticDevices = [.staticDevice(host: "127.0.0.1", port: port, name: "Survivor")]
                    $0.staticRetryInterval = nil  // the clock's only timers are then the reconnection's
                    $0.reconnectDelay = .seconds(1)
                    $0.maximumReconnectDelay = .seconds(30)
                }
            ) { manager, log in
                _ = try await log.first("the static device") { $0.isAdded && $0.device?.isStatic == true }
                _ = try await log.first(within: .seconds(30), "the published device") {
                    $0.isAdded && $0.device?.id == id
                }
                Child.report("browsing", "\(manager.isBrowsing)")
                let failed = try await log.first(within: .seconds(30), "the daemon's loss") {
                    if case .failed = $0 { true } else { false }
                }
                if case .failed(let error) = failed {
                    Child.report("failed.code", "\(error.code)")
                    Child.report("failed.message", error.message)
                }
                Child.report("browsing.after", "\(manager.isBrowsing)")
                Child.report("running.after", "\(manager.isRunning)")
                Child.report("listed.after", manager.devices.map(\.friendlyName).joined(separator: ","))
                Child.report("removed.onLoss", "\(log.events.contains { $0.isRemoved && $0.device?.id == id })")

                // While the daemon is away every attempt fails and arms the next one, waiting twice as long.
                var delays: [Duration] = []
                for attempt in 0..<3 {
                    await withDeadlineOrFail(.seconds(10), "reconnection attempt \(attempt)") {
                        await clock.waitForTimers(count: 1)
                    }
                    delays += clock.pendingDelays
                    if attempt < 2 { clock.advance(by: clock.pendingDelays.first ?? .zero) }
                }
                Child.report("reconnect.delays", delays.map { "\(Int($0 / .milliseconds(1)))" }.joined(separator: ","))
                Child.report("browsing.retrying", "\(manager.isBrowsing)")

                // The parent restarts the daemon and publishes the device again; the next attempt reconnects.
                Child.report("waiting", "restart")
                try await waitUntil("the daemon's restart", within: .seconds(60)) {
                    FileManager.default.fileExists(atPath: restarted)
                }
                clock.advance(by: clock.pendingDelays.first ?? .zero)
                try await waitUntil("the published device to be added again", within: .seconds(30)) {
                    log.events.filter { $0.isAdded && $0.device?.id == id }.count == 2
                }
                Child.report("browsing.final", "\(manager.isBrowsing)")
                let failures = log.events.filter { if case .failed = $0 { true } else { false } }
                Child.report("failed.count", "\(failures.count)")
                Child.report("listed.final", manager.devices.map(\.friendlyName).sorted().joined(separator: ","))
                Child.report(
                    "survivor.removed",
                    "\(log.events.contains { $0.isRemoved && $0.device?.isStatic == true })"
                )
            }
        }
    }
}
