import CastDiscovery
import CastReceiver
import CastTransport
import Foundation
import Testing

@testable import CastDiscovery

/// Scans of real emulated devices on loopback addresses: each test takes its own `127.R.S.0/24` block (random R
/// and S, never 127.0.0.x, where a real cast-receiver may run), so devices on the standard ports 8009 and 8008 do
/// not clash between parallel tests. Loopback refuses at once, so a scan of empty addresses costs nothing.
@Suite("Address scans on loopback (no mDNS)")
struct AddressScanTests {
    @Test("a scan lists three devices with the names, ids and models they tell, and nothing outside its range")
    func scanFindsDevices() async throws {
        let block = LoopbackBlock()
        let names = ["Attic TV", "Basement TV", "Cellar speaker"]
        var configurations = names.enumerated().map { index, name in
            var configuration = DeviceConfiguration(friendlyName: name, port: 8009)
            configuration.host = block.address(2 + index)
            return configuration
        }
        configurations[2].model = "Google Home"
        configurations[2].capabilities = 4
        // The third does not answer GET_DEVICE_INFO: named by eureka_info.
        configurations[2].faults.ignoresDeviceInfo = true
        var outside = DeviceConfiguration(friendlyName: "Outside", port: 8009)
        outside.host = block.address(9)
        // Listeners that only count connections, where the scan must not knock: outside the range, and the
        // block's network and broadcast addresses.
        let fences = try [0, 7, 10].map { try CountingListener(host: block.address($0), port: 8009) }
        try await withCastReceiverEmulator(devices: configurations + [outside]) { emulator in
            let range = try AddressRange("\(block.address(0))/29")
            let found = await AddressScanner(options: .generous).scan([range])
            #expect(found.map(\.friendlyName) == names)
            #expect(found.map(\.id) == configurations.map(\.id))
            #expect(found.map(\.modelName) == ["Chromecast", "Chromecast", "Google Home"])
            #expect(found.map(\.host) == (2...4).map { block.address($0) })
            #expect(found.allSatisfy { $0.port == 8009 && $0.sources == .scan && !$0.isStatic })
            #expect(found[2].capabilities == [.audioOut], "from eureka_info's display_supported")
            #expect(found.map(\.statusText) == ["", "", ""])
            #expect(fences.map { $0.pendingConnections() } == [0, 0, 0])
            #expect(emulator.devices[3].connectionCount == 0)
        }
    }

    @Test("DiscoveryManager lists scanned devices and reported groups; a static host in the range is listed once")
    func managerScan() async throws {
        let block = LoopbackBlock()
        var first = DeviceConfiguration(friendlyName: "Hall speaker", port: 8009)
        first.host = block.address(2)
        var second = DeviceConfiguration(friendlyName: "Den speaker", port: 8009)
        second.host = block.address(3)
        let groupID = Identifiers.deviceID()
        let (leader, firstID) = (first.host, first.id)
        try await withCastReceiverEmulator(devices: [first, second]) { emulator in
            let group: JSONValue = [
                "name": "Both speakers", "uuid": .string(groupID), "elected_leader": "self", "cast_port": 42139,
            ]
            emulator.devices[0].setMultizoneGroups { [group] }
            emulator.devices[1].setMultizoneGroups {
                [
                    [
                        "name": "Both speakers", "uuid": .string(groupID), "elected_leader": .string("\(leader):10001"),
                        "cast_port": 42139,
                    ]
                ]
            }
            let clock = ManualCastClock()
            try await withDiscovery(
                clock: clock,
                configure: { configuration in
                    configuration.browsesMulticastDNS = false
                    configuration.scanRanges = [try! AddressRange("\(block.address(0))/29")]
                    configuration.scan = .generous
                    configuration.staticDevices = [.staticDevice(host: second.host, port: 8009)]
                    configuration.staticRetryInterval = nil
                }
            ) { manager, _ in
                await manager.scanCompleted()
                try await waitUntil("the static device") { manager.devices.count == 3 }
                let devices = manager.devices
                #expect(devices.map(\.friendlyName) == ["Both speakers", "Den speaker", "Hall speaker"])
                let groupDevice = try #require(devices.first)
                #expect(groupDevice.id == groupID)
                #expect(groupDevice.isGroup)
                #expect(groupDevice.host == first.host && groupDevice.port == 42139)
                let den = try #require(devices.first { $0.friendlyName == "Den speaker" })
                #expect(den.isStatic && den.sources == .configured, "the static entry, not a second scanned one")
                #expect(den.id == "static:\(second.host):8009")
                #expect(den.modelName == "Chromecast")
                #expect(devices.last?.id == first.id)
                #expect(devices.last?.sources == .scan)

                // The next scan, on the clock: a device that stopped answering is removed, and so is the
                // group no member reports any more.
                await emulator.devices[0].stop()
                emulator.devices[1].setMultizoneGroups { [] }
                await withDeadlineOrFail(.seconds(15), "the rescan timer") { await clock.waitForTimers(count: 1) }
                #expect(clock.pendingDelays == [.seconds(300)])
                clock.advance(by: .seconds(300))
                try await waitUntil("the silent device's removal") {
                    !manager.devices.contains { $0.id == firstID } && !manager.devices.contains { $0.isGroup }
                }
                #expect(manager.devices.map(\.friendlyName) == ["Den speaker"])
            }
        }
    }

    @Test("a static host that does not answer GET_DEVICE_INFO is named by its eureka_info")
    func staticHostNamedByEureka() async throws {
        let block = LoopbackBlock()
        var configuration = DeviceConfiguration(friendlyName: "Quiet TV", port: 8009)
        configuration.host = block.address(2)
        configuration.model = "Chromecast Ultra"
        configuration.faults.ignoresDeviceInfo = true
        try await withCastReceiverEmulator(devices: [configuration]) { emulator in
            let entry = CastDevice.staticDevice(
                host: configuration.host,
                port: 8009,
                name: "\(configuration.host):8009"
            )
            let named = try await AddressScanner(options: .generous).describe(entry)
            #expect(named.friendlyName == "Quiet TV")
            #expect(named.modelName == "Chromecast Ultra")
            #expect(named.id == entry.id, "a static entry keeps its identity")
            #expect(named.capabilities == [.videoOut, .audioOut])

            var withoutEureka = AddressScanner.Options.generous
            withoutEureka.readsEurekaInfo = false
            let unnamed = try await AddressScanner(options: withoutEureka).describe(entry)
            #expect(unnamed.friendlyName == "\(configuration.host):8009", "only eureka_info named it")

            // A name a person gave stays.
            let given = try await AddressScanner(options: .generous).describe(
                .staticDevice(host: configuration.host, name: "Mine")
            )
            #expect(given.friendlyName == "Mine")
            #expect(emulator.devices[0].eurekaPort == 8008)
        }
    }

    @Test("the emulator serves eureka_info in the devices' shape, honours params, and answers 404 elsewhere")
    func emulatorServesEureka() async throws {
        var configuration = DeviceConfiguration(friendlyName: "Eureka TV", port: 0)
        configuration.eurekaPort = 0
        try await withCastReceiverEmulator(devices: [configuration]) { emulator in
            let device = emulator.devices[0]
            let port = try #require(device.eurekaPort)
            let info = try await EurekaInfo.fetch(host: "127.0.0.1", port: port, timeout: .seconds(20))
            #expect(info.friendlyName == "Eureka TV")
            #expect(info.deviceID == configuration.id)
            #expect(info.modelName == "Chromecast")
            #expect(info.displaySupported == true)
            #expect(info.groups.isEmpty)

            let named = try await HTTPGet.fetch(
                host: "127.0.0.1",
                port: port,
                path: "/setup/eureka_info?params=name",
                timeout: .seconds(5),
                eventLoopGroup: .singletonMultiThreadedEventLoopGroup
            )
            #expect(named.status == 200)
            let json = try JSONValue(parsing: String(decoding: named.body, as: UTF8.self))
            #expect(json["name"] == "Eureka TV")
            #expect(json["device_info"] == nil && json["multizone"] == nil)
            let udn = try #require(json["ssdp_udn"]?.stringValue)
            #expect(udn.count == 36 && udn.filter { $0 != "-" } == configuration.id)

            let missing = try await HTTPGet.fetch(
                host: "127.0.0.1",
                port: port,
                path: "/setup/icon.png",
                timeout: .seconds(5),
                eventLoopGroup: .singletonMultiThreadedEventLoopGroup
            )
            #expect(missing.status == 404)

            device.setMultizoneGroups {
                [
                    [
                        "name": "Upstairs", "uuid": "12345678-9abc-def0-1234-56789abcdef0", "elected_leader": "self",
                        "cast_port": 40000,
                    ]
                ]
            }
            let grouped = try await EurekaInfo.fetch(host: "127.0.0.1", port: port, timeout: .seconds(20))
            #expect(
                grouped.groups == [.init(name: "Upstairs", id: "123456789abcdef0123456789abcdef0", castPort: 40000)]
            )

            await device.stop()
            #expect(device.eurekaPort == nil)
            await #expect(throws: CastDiscoveryError.self) { try await EurekaInfo.fetch(host: "127.0.0.1", port: port) }
        }
    }

    @Test("a device off the standard port serves no eureka_info unless asked")
    func noEurekaOffStandardPort() async throws {
        try await withCastReceiverEmulator { emulator in
            #expect(emulator.devices[0].eurekaPort == nil)
        }
    }
}

/// A random `127.R.S.0/24` block of this test's own (R is never 0: 127.0.0.x is the machine's own).
/// The emulator's speaker group found by a scan: its members' `eureka_info` lists it, at its leader's address on
/// its own port, and it answers there as a group.
@Suite("Scanning for speaker groups")
struct GroupScanTests {
    @Test("a scan of two members lists their group at the leader's address and port, with its id and name")
    func scanFindsTheGroup() async throws {
        let block = LoopbackBlock()
        let members = ["Kitchen", "Bedroom"].enumerated().map { index, name in
            var configuration = DeviceConfiguration(friendlyName: name, port: 8009)
            configuration.host = block.address(2 + index)
            return configuration
        }
        try await withCastReceiverEmulator(
            devices: members,
            group: DeviceConfiguration(friendlyName: "Downstairs", port: 0)
        ) { emulator in
            let group = try #require(emulator.group)
            let found = await AddressScanner(options: .generous).scan([try AddressRange("\(block.address(0))/29")])
            let listed = try #require(found.first { $0.isGroup })
            #expect(listed.friendlyName == "Downstairs")
            #expect(listed.id == group.id)
            #expect(listed.host == block.address(2), "the leader's address")
            #expect(listed.port == group.endpoint.port)
            #expect(found.filter { !$0.isGroup }.map(\.friendlyName) == ["Bedroom", "Kitchen"])
            // The group moves to the other member: a new scan finds it there.
            try await group.moveLeader()
            let again = await AddressScanner(options: .generous).scan([try AddressRange("\(block.address(0))/29")])
            let moved = try #require(again.first { $0.isGroup })
            #expect(moved.host == block.address(3))
            #expect(moved.port == group.endpoint.port)
        }
    }
}

extension AddressScanner.Options {
    /// Time enough for TLS on a machine busy with the whole suite: loopback refuses empty addresses at once, so
    /// long limits cost nothing.
    static var generous: Self {
        var options = Self()
        options.connectTimeout = .seconds(30)
        options.answerTimeout = .seconds(30)
        return options
    }
}

struct LoopbackBlock {
    let prefix = "127.\(Int.random(in: 1...254)).\(Int.random(in: 0...255))"

    func address(_ host: Int) -> String { "\(prefix).\(host)" }
}

/// A listening TCP socket that never accepts: connections made to it wait in its backlog, where
/// ``pendingConnections()`` counts them. Closed on deinit.
final class CountingListener: @unchecked Sendable {
    // @unchecked: the descriptor is only read after init.
    private let descriptor: Int32

    init(host: String, port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard descriptor >= 0, bound == 0, listen(descriptor, 16) == 0 else {
            throw POSIXError(.EADDRINUSE)
        }
    }

    deinit { close(descriptor) }

    /// Accepts (and closes) whatever connected so far; how many there were.
    func pendingConnections() -> Int {
        var count = 0
        while true {
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { return count }
            close(connection)
            count += 1
        }
    }
}
