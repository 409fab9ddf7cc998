import CastDiscovery
import CastReceiver
import Foundation
import Testing

/// Figures for the README, not assertions: run by `Tools/bench-discovery.sh` (CAST_DISCOVERY_BENCH=1, in a lab of
/// its own). Each figure is measured against `avahi-browse` watching the same advertisements, the floor any
/// avahi-based browser can reach.
@Suite(
    "Discovery benchmark",
    .enabled(
        if: Lab.isUp && ProcessInfo.processInfo.environment["CAST_DISCOVERY_BENCH"] != nil,
        "Tools/bench-discovery.sh runs it"
    ),
    .serialized
)
struct DiscoveryBenchmark {
    static func milliseconds(_ duration: Duration) -> Int { Int(duration / .milliseconds(1)) }

    static func report(_ name: String, _ samples: [Duration]) {
        let sorted = samples.sorted()
        let median = sorted[sorted.count / 2]
        let (low, high) = (milliseconds(sorted[0]), milliseconds(sorted[sorted.count - 1]))
        print("bench: \(name): median \(milliseconds(median)) ms (min \(low), max \(high), n=\(sorted.count))")
    }

    @Test("advertisement to listed, one device at a time, against avahi-browse")
    func singleDeviceLatency() async throws {
        let browse = try ChildProcess(Lab.inside(["avahi-browse", "-r", "-p", "_googlecast._tcp"]))
        defer { browse.terminate() }
        let publisher = try DevicePublisher()
        defer { publisher.close() }
        var ours: [Duration] = []
        var avahi: [Duration] = []
        var established: [Duration] = []
        try await withDiscovery { _, log in
            for index in 0..<8 {
                let advertisement = CastAdvertisement(
                    id: Identifiers.deviceID(),
                    friendlyName: "Bench \(index)",
                    port: 8009
                )
                let id = advertisement.id
                let start = ContinuousClock.now
                try await publisher.publish(advertisement)
                let publishedAt = ContinuousClock.now
                _ = try await log.first("bench device \(index)") { $0.isAdded && $0.device?.id == id }
                let listedAt = ContinuousClock.now
                let prefix = "=;lo;IPv4;\(advertisement.defaultInstanceName);"
                try await waitUntil("avahi-browse to resolve it") { browse.firstSeen(prefix) != nil }
                let resolvedAt = try #require(browse.firstSeen(prefix))
                if index > 0 {  // the first one warms up both browsers
                    ours.append(listedAt - start)
                    avahi.append(resolvedAt - start)
                    established.append(publishedAt - start)
                }
            }
        }
        Self.report("advertisement -> entry group established (mDNS probing)", established)
        Self.report("advertisement -> listed by DiscoveryManager", ours)
        Self.report("advertisement -> resolved by avahi-browse -r -p", avahi)
    }

    @Test("100 devices: published at once, and listed by a browser started afterwards, against avahi-browse")
    func hundredDevices() async throws {
        let count = 100
        let publisher = try DevicePublisher()
        defer { publisher.close() }
        let browse = try ChildProcess(Lab.inside(["avahi-browse", "-r", "-p", "_googlecast._tcp"]))
        defer { browse.terminate() }
        let advertisements = (0..<count).map {
            CastAdvertisement(id: Identifiers.deviceID(), friendlyName: "Hundred \($0)", port: 8009)
        }
        let ids = Set(advertisements.map(\.id))
        try await withDiscovery { manager, log in
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for advertisement in advertisements { group.addTask { try await publisher.publish(advertisement) } }
                try await group.waitForAll()
            }
            let establishedAt = ContinuousClock.now
            try await waitUntil("all \(count) listed", within: .seconds(60)) {
                Set(log.events.filter(\.isAdded).compactMap(\.device?.id)).isSuperset(of: ids)
            }
            let listedAt = ContinuousClock.now
            let prefixes = Set(advertisements.map { "=;lo;IPv4;\($0.defaultInstanceName);" })
            @Sendable func resolved() -> [ContinuousClock.Instant] {
                browse.lines.filter { line in prefixes.contains { line.line.hasPrefix($0) } }.map(\.instant)
            }
            try await waitUntil("avahi-browse to resolve all \(count)", within: .seconds(60)) {
                resolved().count >= count
            }
            let resolvedAt = try #require(resolved().max())
            let prefix = "bench: \(count) advertisements published at once"
            print("\(prefix) -> all established: \(Self.milliseconds(establishedAt - start)) ms")
            print("\(prefix) -> all listed by DiscoveryManager: \(Self.milliseconds(listedAt - start)) ms")
            print("\(prefix) -> all resolved by avahi-browse -r -p: \(Self.milliseconds(resolvedAt - start)) ms")
            #expect(manager.devices.filter { ids.contains($0.id) }.count == count)
        }

        // A browser started while the 100 are already on the network (the Cast dialog opening).
        var cold: [Duration] = []
        for _ in 0..<3 {
            let start = ContinuousClock.now
            try await withDiscovery { _, log in
                try await waitUntil("all \(count) listed", within: .seconds(60)) {
                    Set(log.events.filter(\.isAdded).compactMap(\.device?.id)).isSuperset(of: ids)
                }
            }
            cold.append(ContinuousClock.now - start)
        }
        Self.report("\(count) devices already advertised -> all listed by a newly started DiscoveryManager", cold)
        var coldAvahi: [Duration] = []
        for _ in 0..<3 {
            let start = ContinuousClock.now
            let (_, output) = try await ChildProcess.run(
                Lab.inside(["avahi-browse", "-r", "-p", "-t", "_googlecast._tcp"])
            )
            coldAvahi.append(ContinuousClock.now - start)
            #expect(output.components(separatedBy: "\n=;").count - 1 >= count)
        }
        Self.report("\(count) devices already advertised -> avahi-browse -r -p -t exits with all resolved", coldAvahi)
    }
}
