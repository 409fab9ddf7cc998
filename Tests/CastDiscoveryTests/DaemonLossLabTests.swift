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
    @Test(
        "a running manager reports daemonDisconnected once, keeps its static devices, retries with a backoff, and browses again once the daemon is back"
    )
    func daemonGoesAway() async throws {
        let namespace = "castloss\(uniqueTag().prefix(6))"
        let directory = "/tmp/mdns-lab-\(namespace)"
        // The script's daemons inherit its output; send it to a file so no pipe of ours outlives the script.
        let script = "MDNS_NS=\(namespace) \(Build.packageRoot.path)/Tools/mdns-lab.sh"
        let lab = try await ChildProcess.run(["sh", "-c", "\(script) start > \(directory).log 2>&1"])
        do {
            try #require(lab.status == 0, "\((try? String(contentsOfFile: "\(directory).log", encoding: .utf8)) ?? "")")
            try await daemonGoesAway(namespace: namespace, directory: directory)
        } catch {
            _ = try? await ChildProcess.run(["sh", "-c", "\(script) stop; rm -f \(directory).log"])
            throw error
        }
        _ = try await ChildProcess.run(["sh", "-c", "\(script) stop; rm -f \(directory).log"])
    }

    private func daemonGoesAway(namespace: String, directory: String) async throws {
        let bus = "unix:path=\(directory)/main/bus"
        let tag = uniqueTag()
        let id = "loss\(tag)"
        let name = "Loss \(tag)"
        let restarted = "\(directory)/restarted"
        let publish = Lab.inside(
            [
                "avahi-publish", "-s", name, "_googlecast._tcp", "8009",
                "id=\(id)", "fn=\(name)", "md=Chromecast", "ca=4101",
            ],
            namespace: namespace,
            bus: bus
        )
        let publisher = try ChildProcess(publish)
        defer { publisher.terminate() }
        let child = try ChildProcess(
            Child.command(),
            environment: [
                "CAST_DISCOVERY_CHILD": "daemon-loss", "DBUS_SYSTEM_BUS_ADDRESS": bus, "CAST_EXPECT_ID": id,
                "CAST_RESTARTED_FILE": restarted,
            ]
        )
        defer { child.terminate() }
        // Kill the daemon once the child's manager is browsing through it and has found the published device.
        _ = try await child.waitForOutput("CHILD-RESULT browsing=")
        let pidText = try String(contentsOfFile: "\(directory)/main/avahi.pid", encoding: .utf8)
        let pid = try #require(Int32(pidText.trimmingCharacters(in: .whitespacesAndNewlines)))
        kill(pid, SIGTERM)
        publisher.terminate()  // it would republish by itself when the daemon is back; the test does that below

        // Once the child has seen its reconnection attempts fail, bring the daemon back as Tools/mdns-lab.sh starts
        // it (in the namespace, with a private /run), wait until it answers, and publish the device again.
        _ = try await child.waitForOutput("CHILD-RESULT waiting=restart")
        let main = "\(directory)/main"
        let restart = """
            (exec setsid ip netns exec \(namespace) env DBUS_SYSTEM_BUS_ADDRESS=\(bus) sh -c \
                'mount -t tmpfs -o size=1m,mode=755 lab-run /run && exec avahi-daemon -f "$1" --no-drop-root --no-chroot --no-rlimits' \
                avahi \(main)/avahi.conf) < /dev/null > \(main)/avahi.log 2>&1 &
            echo $! > \(main)/avahi.pid
            for i in $(seq 1 250); do
                DBUS_SYSTEM_BUS_ADDRESS=\(bus) dbus-send --system --print-reply --dest=org.freedesktop.Avahi / \
                    org.freedesktop.Avahi.Server.GetVersionString > /dev/null 2>&1 && exit 0
                sleep 0.02
            done
            exit 1
            """
        let restartResult = try await ChildProcess.run(["sh", "-c", restart])
        try #require(restartResult.status == 0, "the daemon did not come back: \(restartResult.output)")
        let republisher = try ChildProcess(publish)
        defer { republisher.terminate() }
        _ = try await republisher.waitForOutput("Established")
        _ = FileManager.default.createFile(atPath: restarted, contents: Data())

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
        #expect(results["removed.onLoss"] == "true")
        #expect(results["reconnect.delays"] == "1000,2000,4000")
        #expect(results["browsing.retrying"] == "false")
        #expect(results["browsing.final"] == "true")
        #expect(results["failed.count"] == "1")
        #expect(results["listed.final"] == [name, "Survivor"].sorted().joined(separator: ","))
        #expect(results["survivor.removed"] == "false")
    }
}
