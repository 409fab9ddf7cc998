import CastDiscovery
import Foundation
import Testing

/// Two hosts joined by a veth pair (the lab's `-rx` and `-tx` namespaces, 10.77.0.1 and 10.77.0.2 plus IPv6
/// link-local, each with its own avahi-daemon): `cast-receiver` runs in one, a sender (this test binary, as a child)
/// in the other. Real multicast between two daemons, never on the machine's own interfaces.
@Suite(
    "Two hosts on a veth pair",
    .enabled(if: Lab.isUp, Lab.skipReason),
    .enabled(if: Child.mode == nil, "not inside a child process")
)
struct TwoHostLabTests {
    @Test("the sender discovers cast-receiver on the other host over IPv4 and IPv6 and connects over TLS to both")
    func senderFindsReceiver() async throws {
        let name = "\(uniqueTag()) Veth TV"
        let receiver = try ChildProcess(
            Lab.inside(
                [Build.castReceiver, "--host", "::", "--port", "0", "--name", name],
                namespace: Lab.receiverNamespace,
                bus: Lab.receiverBus
            )
        )
        defer { receiver.terminate() }
        let output = try await receiver.waitForOutput("ready")
        #expect(output.contains("cast-receiver: advertised \"\(name)\" as 'Chromecast-"))
        let line = try #require(output.split(separator: "\n").first { $0.contains("\"\(name)\" id=") })
        let id = try #require(line.split(separator: " ").first { $0.hasPrefix("id=") }?.dropFirst(3))

        let (status, results, childOutput) = try await Child.run(
            "veth-sender",
            environment: ["CAST_EXPECT_ID": String(id)],
            namespace: (Lab.senderNamespace, Lab.senderBus)
        )
        #expect(status == 0, "\(childOutput)")
        #expect(results["listed"] == "1", "one device although it was seen over IPv4 and IPv6")
        #expect(results["name"] == name)
        #expect(results["addresses"] == "\(Lab.receiverAddress),fe80::77:1%cast0")
        #expect(results["host"] == Lab.receiverAddress)
        #expect(results["status@\(Lab.receiverAddress)"] == "RECEIVER_STATUS")
        #expect(results["status@fe80::77:1%cast0"] == "RECEIVER_STATUS")

        receiver.signal(SIGTERM)
        #expect(try await receiver.waitForExit() == 0)
        #expect(receiver.text.contains("cast-receiver: withdrew 1 mDNS advertisement"))
    }
}
