import CastDiscovery
import CastTransport
import Foundation
import Testing

extension Build {
    /// The `cast` executable.
    static var cast: String { productsDirectory.appendingPathComponent("cast").path }
}

/// The last JSON object line of a child's output (logs go to the same pipe).
func lastJSONLine(_ output: String) throws -> JSONValue {
    let line = try #require(output.split(separator: "\n").last { $0.hasPrefix("{") }, "no JSON in: \(output)")
    return try JSONValue(parsing: String(line))
}

/// `cast devices --scan` between two hosts of the lab's veth pair: `cast-receiver` in the `-rx` namespace
/// (advertised by its own avahi-daemon), `cast` in the `-tx` namespace.
@Suite("Scans across the lab's veth pair", .enabled(if: Lab.isUp, Lab.skipReason))
struct ScanLabTests {
    @Test("a scan finds the receiver across the veth; with mDNS too, it is listed once, found both ways")
    func scanAcrossVeth() async throws {
        let name = "\(uniqueTag()) Scanned TV"
        let receiver = try ChildProcess(
            Lab.inside(
                [Build.castReceiver, "--host", "0.0.0.0", "--port", "8009", "--name", name],
                namespace: Lab.receiverNamespace,
                bus: Lab.receiverBus
            )
        )
        defer { receiver.terminate() }
        let banner = try await receiver.waitForOutput("cast-receiver: ready")
        #expect(banner.contains("eureka_info on 0.0.0.0:8008"))

        // No daemon reachable: the scan alone finds it (the range's other addresses hold nothing).
        let (scanStatus, scanOutput) = try await ChildProcess.run(
            Lab.inside(
                [Build.cast, "devices", "--scan", "10.77.0.0/29", "--json", "--timeout", "2"],
                namespace: Lab.senderNamespace,
                bus: "unix:path=/nonexistent/\(uniqueTag())"
            )
        )
        #expect(scanStatus == 0, "\(scanOutput)")
        let scanned = try lastJSONLine(scanOutput)["devices"]?.arrayValue ?? []
        let alone = scanned.filter { $0["name"]?.stringValue == name }
        #expect(alone.count == 1, "\(scanOutput)")
        #expect(alone.first?["host"] == .string(Lab.receiverAddress))
        #expect(alone.first?["sources"] == ["scan"])
        #expect(alone.first?["reachable"] == true)

        // With the sender's daemon: mDNS and the scan find the same device, listed once under its mDNS id.
        let (status, output) = try await ChildProcess.run(
            Lab.inside(
                [Build.cast, "devices", "--scan", "\(Lab.receiverAddress)/32", "--json", "--timeout", "3"],
                namespace: Lab.senderNamespace,
                bus: Lab.senderBus
            )
        )
        #expect(status == 0, "\(output)")
        let listed = (try lastJSONLine(output)["devices"]?.arrayValue ?? []).filter { $0["name"]?.stringValue == name }
        #expect(listed.count == 1, "\(output)")
        #expect(listed.first?["sources"] == ["mdns", "scan"], "\(output)")
        #expect(listed.first?["id"] == alone.first?["id"])
    }
}

/// `cast devices --diagnose` in a namespace of its own (no daemon, only loopback), then with an nftables rule
/// dropping mDNS: what it reports. Needs root (network namespaces, nft); no mDNS runs.
@Suite(
    "Discovery diagnosis in a namespace",
    .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/nft"), "needs root and nft")
)
struct DiagnosisNamespaceTests {
    @Test("no avahi-daemon, no multicast interface or route are reported; then a rule dropping UDP 5353")
    func diagnose() async throws {
        let namespace = "cdiag\(uniqueTag())"
        #expect(try await ChildProcess.run(["ip", "netns", "add", namespace]).status == 0)
        do {
            try await diagnose(in: namespace)
        } catch {
            _ = try? await ChildProcess.run(["ip", "netns", "del", namespace])
            throw error
        }
        #expect(try await ChildProcess.run(["ip", "netns", "del", namespace]).status == 0)
    }

    private func diagnose(in namespace: String) async throws {
        #expect(try await ChildProcess.run(["ip", "-n", namespace, "link", "set", "lo", "up"]).status == 0)
        let command = [
            "ip", "netns", "exec", namespace, "env", "DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent/\(namespace)",
            Build.cast, "devices", "--diagnose", "--json", "--timeout", "0.5",
        ]

        let (status, output) = try await ChildProcess.run(command)
        #expect(status == 3, "no device: the no-device exit code; \(output)")
        let checks = Self.checks(try lastJSONLine(output))
        #expect(checks["avahi-daemon"]?.outcome == "problem")
        #expect(checks["avahi-daemon"]?.detail.contains("not reachable") == true)
        #expect(checks["multicast interface"]?.outcome == "problem")
        #expect(checks["multicast route"]?.outcome == "problem")
        #expect(checks["firewall"]?.outcome == "ok", "\(output)")

        for rule in [
            ["add", "table", "inet", "cdiag"],
            ["add", "chain", "inet", "cdiag", "input", "{ type filter hook input priority 0; }"],
            ["add", "rule", "inet", "cdiag", "input", "udp", "dport", "5353", "drop"],
        ] {
            #expect(try await ChildProcess.run(["ip", "netns", "exec", namespace, "nft"] + rule).status == 0)
        }
        let (_, blocked) = try await ChildProcess.run(command)
        let firewall = Self.checks(try lastJSONLine(blocked))["firewall"]
        #expect(firewall?.outcome == "problem", "\(blocked)")
        #expect(firewall?.detail.contains("udp dport 5353 drop") == true)
    }

    private static func checks(_ json: JSONValue) -> [String: (outcome: String, detail: String)] {
        var result: [String: (outcome: String, detail: String)] = [:]
        for check in json["checks"]?.arrayValue ?? [] {
            guard let name = check["name"]?.stringValue else { continue }
            result[name] = (check["outcome"]?.stringValue ?? "", check["detail"]?.stringValue ?? "")
        }
        return result
    }
}
