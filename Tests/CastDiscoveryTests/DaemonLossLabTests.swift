import CastDiscovery
import Foundation
import Testing

/// avahi-daemon going away under a running manager. The daemon is one of a lab of its own (killing the shared
/// lab's daemon would break the tests running beside this one), used by a child process whose bus it is.
@Suite(
    "avahi-daemon going away",
    .enabled(if: Lab.isUp, Lab.skipReason),
    .enabled(if: Child.mode == nil, "not inside a child process")
)
struct DaemonLossLabTests {
    @Test("a running manager reports daemonDisconnected once, stops browsing, and keeps its static devices")
    func daemonGoesAway() async throws {
        let namespace = "castloss\(uniqueTag().prefix(6))"
        let directory = "/tmp/mdns-lab-\(namespace)"
        // The script's daemons inherit its output; send it to a file so no pipe of ours outlives the script.
        let script = "MDNS_NS=\(namespace) \(Build.packageRoot.path)/Tools/mdns-lab.sh"
        let lab = try await ChildProcess.run(["sh", "-c", "\(script) start > \(directory).log 2>&1"])
        do {
            try #require(lab.status == 0, "\((try? String(contentsOfFile: "\(directory).log", encoding: .utf8)) ?? "")")
            try await daemonGoesAway(directory: directory)
        } catch {
            _ = try? await ChildProcess.run(["sh", "-c", "\(script) stop; rm -f \(directory).log"])
            throw error
        }
        _ = try await ChildProcess.run(["sh", "-c", "\(script) stop; rm -f \(directory).log"])
    }

    private func daemonGoesAway(directory: String) async throws {
        let bus = "unix:path=\(directory)/main/bus"
        let child = try ChildProcess(
            Child.command(),
            environment: ["CAST_DISCOVERY_CHILD": "daemon-loss", "DBUS_SYSTEM_BUS_ADDRESS": bus]
        )
        defer { child.terminate() }
        // Kill the daemon once the child's manager is browsing through it.
        _ = try await child.waitForOutput("CHILD-RESULT browsing=")
        let pidText = try String(contentsOfFile: "\(directory)/main/avahi.pid", encoding: .utf8)
        let pid = try #require(Int32(pidText.trimmingCharacters(in: .whitespacesAndNewlines)))
        kill(pid, SIGTERM)

        let status = try await child.waitForExit()
        try await Task.sleep(for: .milliseconds(50))  // the pipe's last bytes
        let output = child.text
        let results = Child.results(in: output)
        #expect(status == 0, "\(output)")
        #expect(results["browsing"] == "true")
        #expect(results["failed.code"] == "daemonDisconnected")
        #expect(results["failed.message"]?.contains("restart it, or use static hosts") == true)
        #expect(results["browsing.after"] == "false")
        #expect(results["running.after"] == "true")
        #expect(results["listed.after"] == "Survivor")
    }
}
