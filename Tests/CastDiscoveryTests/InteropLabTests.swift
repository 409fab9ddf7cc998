import CastDiscovery
import CastReceiver
import Foundation
import Testing

/// A python-zeroconf publisher (an independent mDNS stack): registers one `_googlecast._tcp` service on the lab's
/// loopback, waits for SIGTERM, then unregisters (goodbye packets).
private let zeroconfPublisher = """
    import signal, socket, sys, threading
    from zeroconf import IPVersion, ServiceInfo, Zeroconf
    name, port, device_id, friendly = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    zc = Zeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
    info = ServiceInfo(
        "_googlecast._tcp.local.", name + "._googlecast._tcp.local.",
        addresses=[socket.inet_aton("127.0.0.1")], port=port, server="zc-" + device_id[:8] + ".local.",
        properties={"id": device_id, "cd": device_id.upper(), "ve": "05", "md": "Zeroconf Speaker",
                    "ic": "/setup/icon.png", "fn": friendly, "ca": "2052", "st": "0", "rs": "Spotify"},
    )
    zc.register_service(info)
    print("registered", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    done.wait()
    zc.unregister_service(info)
    zc.close()
    print("unregistered", flush=True)
    """

/// The venv `Tools/test.sh` prepares (python-zeroconf from PyPI); made here when missing.
private func zeroconfPython() async throws -> String {
    let venv = Build.packageRoot.appendingPathComponent(".build/discovery-venv")
    let python = venv.appendingPathComponent("bin/python").path
    if try await ChildProcess.run([python, "-c", "import zeroconf"]).status == 0 { return python }
    let created = try await ChildProcess.run(["python3", "-m", "venv", venv.path])
    try #require(created.status == 0, "python3 -m venv failed: \(created.output)")
    let installed = try await ChildProcess.run(
        [
            venv.appendingPathComponent("bin/pip").path, "install", "-q", "--disable-pip-version-check",
            "zeroconf==0.154.0",
        ],
        within: .seconds(300)
    )
    try #require(installed.status == 0, "pip install zeroconf failed: \(installed.output)")
    return python
}

/// Runs `avahi-publish` inside the lab namespace through `sh`, so TXT strings can carry raw bytes (`printf '\377'`).
private func avahiPublish(_ name: String, port: Int = 8009, txt shellWords: String) throws -> ChildProcess {
    try ChildProcess(
        Lab.inside(["sh", "-c", "exec avahi-publish -s '\(name)' _googlecast._tcp \(port) \(shellWords)"])
    )
}

@Suite("Independent publishers and hostile TXT records in the lab", .enabled(if: Lab.isUp, Lab.skipReason))
struct InteropLabTests {
    @Test("a device published by python-zeroconf inside the namespace is found with its TXT fields")
    func zeroconfDevice() async throws {
        let python = try await zeroconfPython()
        let id = Identifiers.deviceID()
        let name = "\(uniqueTag()) Zeroconf Kitchen"
        try await withDiscovery { manager, log in
            let publisher = try ChildProcess(
                Lab.inside([python, "-c", zeroconfPublisher, "Zeroconf-\(id)", "8123", id, name])
            )
            defer { publisher.terminate() }
            _ = try await publisher.waitForOutput("registered")
            let added = try await log.first(within: .seconds(20), "the zeroconf device") {
                $0.isAdded && $0.device?.id == id
            }
            let device = try #require(added.device)
            #expect(device.friendlyName == name)
            #expect(device.modelName == "Zeroconf Speaker")
            #expect(device.capabilities == [.audioOut, .masterOrFixedVolume])
            #expect(device.statusText == "Spotify")
            #expect(device.iconPath == "/setup/icon.png")
            #expect(device.protocolVersion == 5)
            #expect(device.hostName == "zc-\(id.prefix(8)).local")
            #expect(device.addresses == [DeviceAddress("127.0.0.1")])
            #expect(device.port == 8123)
            #expect(!device.isGroup, "another port alone is not a group: no group bit, no group model")

            // Its goodbye packets remove it (after the removal delay).
            publisher.signal(SIGTERM)
            _ = try await publisher.waitForOutput("unregistered")
            _ = try await log.first(within: .seconds(20), "the zeroconf device's removal") {
                $0.isRemoved && $0.device?.id == id
            }
            #expect(manager.device(withID: id) == nil)
        }
    }

    @Test("malformed TXT records from avahi-publish: each gives its specific result, and browsing carries on")
    func malformedRecords() async throws {
        let tag = uniqueTag()
        let capture = LogCapture()
        let ids = (0..<6).map { _ in Identifiers.deviceID() }
        let long = String(repeating: "L", count: 252)  // "fn=" + 252 = 255 bytes, the most one TXT string holds
        try await withDiscovery(logCapture: capture) { manager, log in
            let publishers = try [
                avahiPublish("\(tag)-noid", txt: "'fn=\(tag) No Id' md=Chromecast"),
                avahiPublish("\(tag)-badca", txt: "id=\(ids[0]) 'fn=\(tag) Bad Ca' ca=lots"),
                avahiPublish("\(tag)-dup", txt: "id=\(ids[1]) 'fn=\(tag) First' 'fn=\(tag) Second' ca=4101 ca=5"),
                avahiPublish("\(tag)-utf8", txt: "id=\(ids[2]) \"$(printf 'fn=\(tag) Caf\\351 \\377')\""),
                avahiPublish("\(tag)-long", txt: "id=\(ids[3]) 'fn=\(long)' rs=\(String(repeating: "r", count: 200))"),
                avahiPublish("\(tag)-badid", txt: "\"$(printf 'id=\\377\\376')\" 'fn=\(tag) Bad Id'"),
                avahiPublish("\(tag)-good", txt: "id=\(ids[4]) 'fn=\(tag) Good' ca=4101 ve=05"),
            ]
            defer { for publisher in publishers { publisher.terminate() } }

            // Missing id: skipped, with a warning naming the service.
            let noID = try await capture.message(containing: "'\(tag)-noid'")
            #expect(noID.contains("no 'id' key: skipped"))

            // Non-numeric ca: listed, no capabilities, a warning.
            let badCa = try await log.first("the bad-ca device") { $0.isAdded && $0.device?.id == ids[0] }
            #expect(badCa.device?.capabilities == [])
            #expect(badCa.device?.friendlyName == "\(tag) Bad Ca")
            #expect(try await capture.message(containing: "'\(tag)-badca'").contains("'ca' is not a decimal number"))

            // Duplicate keys: the first of each wins, a warning per duplicate.
            let duplicate = try await log.first("the duplicate-key device") { $0.isAdded && $0.device?.id == ids[1] }
            #expect(duplicate.device?.friendlyName == "\(tag) First")
            #expect(duplicate.device?.capabilities.rawValue == 4101)
            let duplicateWarning = try await capture.message(containing: "'\(tag)-dup'")
            #expect(duplicateWarning.contains("duplicate key 'fn': the first value is used"))
            #expect(duplicateWarning.contains("duplicate key 'ca': the first value is used"))

            // Latin-1 bytes in fn: repaired, a warning.
            let latin1 = try await log.first("the non-UTF-8 device") { $0.isAdded && $0.device?.id == ids[2] }
            #expect(latin1.device?.friendlyName == "\(tag) Caf\u{FFFD} \u{FFFD}")
            #expect(
                try await capture.message(containing: "'\(tag)-utf8'").contains("'fn' is not valid UTF-8: repaired")
            )

            // Oversized values: cut to 128 bytes, a warning.
            let oversized = try await log.first("the oversized device") { $0.isAdded && $0.device?.id == ids[3] }
            #expect(oversized.device?.friendlyName == String(repeating: "L", count: 128))
            #expect(oversized.device?.statusText == String(repeating: "r", count: 128))
            #expect(try await capture.message(containing: "'\(tag)-long'").contains("'fn' is 252 bytes: cut to 128"))

            // An id that is not UTF-8: skipped.
            #expect(try await capture.message(containing: "'\(tag)-badid'").contains("'id' is not UTF-8: skipped"))

            // And the well-formed neighbour is found as usual, with nothing to warn about.
            let good = try await log.first("the good device") { $0.isAdded && $0.device?.id == ids[4] }
            #expect(good.device?.capabilities.rawValue == 4101)
            #expect(!capture.messages.contains { $0.message.contains("'\(tag)-good'") })
            #expect(manager.isBrowsing)
            #expect(
                !manager.devices.contains { $0.friendlyName.contains("No Id") || $0.friendlyName.contains("Bad Id") }
            )
        }
    }
}
