import ArgumentParser
import CastDiscovery
import CastTransport

/// `cast devices --scan`: the ranges, and naming static hosts the way scanned devices are named.
enum DeviceScanOptions {
    /// The `--scan` values as ranges; a bad one is a usage error naming it.
    static func ranges(_ values: [String]) throws -> [AddressRange] {
        do {
            return try values.map { value throws(CastDiscoveryError) in try AddressRange(value) }
        } catch {
            throw ValidationError("--scan: \(error.message)")
        }
    }

    /// Static hosts still named by their address (`--host`, which skips discovery) asked what they are:
    /// `GET_DEVICE_INFO`, else `eureka_info`, as a scan names what it finds.
    static func named(_ devices: [CastDevice], _ runtime: CLIRuntime) async -> [CastDevice] {
        let unnamed = devices.filter { $0.isStatic && $0.isNamedByAddress }
        guard !unnamed.isEmpty else { return devices }
        var options = AddressScanner.Options()
        options.answerTimeout = .milliseconds(Int64(runtime.discoveryWait * 1000))
        let described = await AddressScanner(options: options, logger: runtime.logger).describe(unnamed)
        let byID = Dictionary(described.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return devices.map { byID[$0.id] ?? $0 }
    }
}

/// `cast devices --diagnose`: each check and its result, then a browse (with the scans and static hosts).
enum DeviceDiagnosis {
    static func run(_ runtime: CLIRuntime, scanning ranges: [AddressRange]) async throws {
        let checks = DiscoveryDiagnosis.run()
        let allRanges = runtime.profile.discoveryScanRanges + ranges
        let statics = runtime.global.host.isEmpty ? runtime.options.staticDevices : runtime.global.staticDevices
        let started = ContinuousClock.now
        let (found, problem) = await runtime.discoverDevices(scanning: ranges)
        let devices = await DeviceScanOptions.named(found, runtime)
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let mdns = devices.filter { $0.sources.contains(.multicastDNS) }
        let scanned = devices.filter { $0.sources.contains(.scan) }

        var lines = checks.map { check in
            let mark = check.outcome == .ok ? "ok" : check.outcome == .problem ? "PROBLEM" : "not checked"
            return "\(check.name): \(mark) — \(check.detail)"
        }
        if runtime.global.host.isEmpty {
            lines.append(
                problem.map { "mDNS browse: not run — \($0)" }
                    ?? "mDNS browse: \(mdns.count) device\(mdns.count == 1 ? "" : "s") in \(Self.format(seconds)) s"
            )
        }
        for range in allRanges {
            let inRange = scanned.filter { device in device.addresses.contains { range.contains($0.ip) } }
            lines.append(
                "scan \(range) (\(range.addresses.count) addresses, port 8009): \(inRange.count) found"
                    + (inRange.isEmpty ? "" : ": " + inRange.map(\.friendlyName).joined(separator: ", "))
            )
        }
        var staticJSON: [JSONValue] = []
        for entry in statics {
            let answered = devices.first { $0.id == entry.id && $0.isStatic }
            lines.append(
                "static host \(entry.host):\(entry.port): "
                    + (answered.map { "answered as \"\($0.friendlyName)\"" } ?? "did not answer")
            )
            staticJSON.append([
                "host": .string(entry.host), "port": .number(Double(entry.port)),
                "name": answered.map { .string($0.friendlyName) } ?? .null,
            ])
        }
        lines.append("\(devices.count) device\(devices.count == 1 ? "" : "s") found")
        let json: JSONValue = [
            "checks": .array(
                checks.map {
                    ["name": .string($0.name), "outcome": .string($0.outcome.rawValue), "detail": .string($0.detail)]
                }
            ),
            "browse": [
                "run": .bool(problem == nil && runtime.global.host.isEmpty),
                "problem": problem.map { .string($0) } ?? .null,
                "found": .number(Double(mdns.count)),
            ],
            "scanRanges": .array(allRanges.map { .string($0.description) }),
            "staticHosts": .array(staticJSON),
            "devices": .array(
                devices.map { device in
                    [
                        "id": .string(device.id), "name": .string(device.friendlyName), "host": .string(device.host),
                        "port": .number(Double(device.port)),
                        "sources": .array(device.sources.names.map { .string($0) }),
                    ]
                }
            ),
        ]
        runtime.emit(json: json, text: lines.joined(separator: "\n"))
        if devices.isEmpty { throw CastExit.noDevice }
    }

    private static func format(_ seconds: Double) -> String { String(Double(Int(seconds * 10)) / 10) }
}
