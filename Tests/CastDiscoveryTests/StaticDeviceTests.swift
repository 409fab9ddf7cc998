import CastDiscovery
import CastReceiver
import CastTransport
import Foundation
import Testing

/// Static devices need no daemon: these run everywhere, with mDNS browsing off.
@Suite("Static devices and probes (no mDNS)")
struct StaticDeviceTests {
    @Test("a reachable static device is listed, marked static, after a TLS connect and GET_STATUS")
    func reachableStaticDevice() async throws {
        try await withCastReceiverEmulator { emulator in
            let device = emulator.devices[0]
            try await withDiscovery(configure: { configuration in
                configuration.browsesMulticastDNS = false
                configuration.staticDevices = [.staticDevice(host: "127.0.0.1", port: device.port, name: "Bench TV")]
            }) { manager, log in
                #expect(!manager.isBrowsing)
                // Subscribers are independent: each gets every event, and one leaving does not end the other.
                let second = EventLog(manager.events())
                let third = manager.events()
                _ = third  // subscribed, then dropped: its stream ends without affecting the others
                let added = try await log.first("the static device") { $0.isAdded }
                #expect(try await second.first("the same event for the second subscriber") { $0.isAdded } == added)
                let listed = try #require(added.device)
                #expect(listed.isStatic)
                #expect(listed.friendlyName == "Bench TV")
                #expect(listed.id == "static:127.0.0.1:\(device.port)")
                #expect(listed.host == "127.0.0.1")
                #expect(manager.devices == [listed])
                #expect(manager.hasDiscoveredDevices)
            }
            // The probe closed its connection (the emulator notices a moment later).
            try await waitUntil("the probe's connection to close") { device.connectionCount == 0 }
        }
    }

    @Test(
        "an address as typed: HOST, HOST:PORT, [V6], [V6]:PORT and a bare IPv6 address",
        arguments: [
            ("192.168.1.20", "192.168.1.20", 8009), ("192.168.1.20:42001", "192.168.1.20", 42001),
            ("tv.local:8010", "tv.local", 8010), ("[fe80::1]", "fe80::1", 8009), ("[fe80::1]:8010", "fe80::1", 8010),
            ("fe80::1", "fe80::1", 8009),
        ]
    )
    func staticDeviceFromAddress(address: String, host: String, port: Int) {
        let device = CastDevice.staticDevice(address: address)
        #expect(device == .staticDevice(host: host, port: port, name: address))
        #expect(device.isStatic)
        #expect(CastDevice.staticDevice(address: "10.0.0.2", defaultPort: 8010).port == 8010)
    }

    @Test("run() discovers until its task is cancelled, then stops: every device removed, no probe left")
    func runUntilCancelled() async throws {
        try await withCastReceiverEmulator { emulator in
            let device = emulator.devices[0]
            var configuration = DiscoveryManager.Configuration()
            configuration.browsesMulticastDNS = false
            configuration.staticDevices = [.staticDevice(host: "127.0.0.1", port: device.port, name: "Run TV")]
            let manager = DiscoveryManager(configuration: configuration)
            let log = EventLog(manager.events())
            let running = Task { try await manager.run() }
            let added = try await log.first("the static device") { $0.isAdded }
            #expect(manager.isRunning)
            running.cancel()
            try await running.value
            #expect(!manager.isRunning)
            #expect(manager.devices.isEmpty)
            #expect(try await log.first("its removal") { $0.isRemoved }.device == added.device)
        }
    }

    @Test("device(at:) takes an address as it is, without discovery")
    func deviceAtAddress() async throws {
        let device = try await DiscoveryManager.device(at: "127.0.0.1:1", within: .zero)
        #expect(device == .staticDevice(host: "127.0.0.1", port: 1, name: "127.0.0.1:1"))
    }

    @Test("an unreachable static device is not listed and is tried again on the clock until it answers")
    func unreachableStaticDeviceIsRetried() async throws {
        let clock = ManualCastClock()
        // The device listens from the start but refuses connections until the retry: its port stays ours, so no
        // other test running in parallel can take it.
        var configuration = DeviceConfiguration(friendlyName: "Late", port: 0)
        configuration.faults.refusesConnections = true
        try await withCastReceiverEmulator(devices: [configuration]) { emulator in
            let device = emulator.devices[0]
            let port = device.port
            try await withDiscovery(
                clock: clock,
                configure: { configuration in
                    configuration.browsesMulticastDNS = false
                    configuration.staticDevices = [.staticDevice(host: "127.0.0.1", port: port)]
                    configuration.staticRetryInterval = .seconds(30)
                    configuration.probeTimeout = .seconds(20)  // real time: a busy machine must not fail a live probe
                }
            ) { manager, log in
                await withDeadlineOrFail(.seconds(15), "the retry timer") { await clock.waitForTimers(count: 1) }
                #expect(clock.pendingDelays == [.seconds(30)])
                #expect(manager.devices.isEmpty)
                #expect(!manager.hasDiscoveredDevices)

                device.setFaults(FaultInjection())
                clock.advance(by: .seconds(30))
                let added = try await log.first("the static device after the retry") { $0.isAdded }
                #expect(added.device?.port == port)
                #expect(added.device?.isStatic == true)
                #expect(added.device?.friendlyName == "Late", "the device's own name replaces the bare address")
            }
        }
    }

    @Test("a listed static device is probed again on the clock: removed when it stops answering, back when it does")
    func listedStaticDeviceIsReprobed() async throws {
        let clock = ManualCastClock()
        // The device keeps its port throughout (no other test can take it); "gone" is refusing connections.
        let configuration = DeviceConfiguration(friendlyName: "Flaky", port: 0)
        try await withCastReceiverEmulator(devices: [configuration]) { emulator in
            let device = emulator.devices[0]
            let port = device.port
            try await withDiscovery(
                clock: clock,
                configure: { configuration in
                    configuration.browsesMulticastDNS = false
                    configuration.staticDevices = [.staticDevice(host: "127.0.0.1", port: port, name: "Flaky")]
                    configuration.staticRetryInterval = .seconds(30)
                    configuration.probeTimeout = .seconds(20)  // real time: a busy machine must not fail a live probe
                }
            ) { manager, log in
                let added = try await log.first("the static device") { $0.isAdded }
                let id = try #require(added.device?.id)
                // Listed, and a re-probe is armed.
                await withDeadlineOrFail(.seconds(15), "the re-probe timer") { await clock.waitForTimers(count: 1) }
                #expect(clock.pendingDelays == [.seconds(30)])

                // Still answering: nothing changes, and the next re-probe is armed.
                clock.advance(by: .seconds(30))
                await withDeadlineOrFail(.seconds(15), "the second re-probe timer") {
                    await clock.waitUntil { $0.scheduledTimerCount >= 2 && $0.pendingTimerCount == 1 }
                }
                #expect(log.events.count == 1)
                #expect(manager.devices.map(\.id) == [id])

                // Gone: the next re-probe fails and the device is removed at once; probing carries on.
                var refusing = FaultInjection()
                refusing.refusesConnections = true
                device.setFaults(refusing)
                clock.advance(by: .seconds(30))
                let removed = try await log.first("the removal of the silent device") { $0.isRemoved }
                #expect(removed.device?.id == id)
                #expect(manager.devices.isEmpty)
                #expect(!manager.hasDiscoveredDevices)
                await withDeadlineOrFail(.seconds(15), "the retry timer after the removal") {
                    await clock.waitUntil { $0.scheduledTimerCount >= 3 && $0.pendingTimerCount == 1 }
                }
                #expect(clock.pendingDelays == [.seconds(30)])

                // Back: the next probe lists it again.
                device.setFaults(FaultInjection())
                clock.advance(by: .seconds(30))
                try await waitUntil("the device to be added again") { log.events.filter(\.isAdded).count == 2 }
                #expect(log.events.map(\.isAdded) == [true, false, true])
                #expect(manager.devices.map(\.id) == [id])
                #expect(manager.devices.first?.isStatic == true)
            }
        }
    }

    @Test("app criteria apply to static devices: listed only where GET_APP_AVAILABILITY says APP_AVAILABLE")
    func staticDevicesAndApplicationCriteria() async throws {
        var withDMR = DeviceConfiguration(friendlyName: "Has DMR", port: 0)
        withDMR.apps = EmulatedApp.standardRegistry
        var withoutDMR = DeviceConfiguration(friendlyName: "No DMR", port: 0)
        withoutDMR.apps = [.echo()]
        try await withCastReceiverEmulator(devices: [withDMR, withoutDMR]) { emulator in
            let (good, bad) = (emulator.devices[0].port, emulator.devices[1].port)
            let capture = LogCapture()
            try await withDiscovery(
                logCapture: capture,
                configure: { configuration in
                    configuration.browsesMulticastDNS = false
                    configuration.criteria = .application(DiscoveryCriteria.defaultMediaReceiverID)
                    configuration.staticDevices = [
                        .staticDevice(host: "127.0.0.1", port: good, name: "Has DMR"),
                        .staticDevice(host: "127.0.0.1", port: bad, name: "No DMR"),
                    ]
                }
            ) { manager, log in
                let added = try await log.first("the device with the app") { $0.isAdded }
                #expect(added.device?.port == good)
                // The other one answered GET_STATUS, was asked about the app, said no, and stays unlisted.
                _ = try await capture.message(containing: "app CC1AD845 available on static:127.0.0.1:\(bad): false")
                _ = try await capture.message(containing: "app CC1AD845 available on static:127.0.0.1:\(good): true")
                #expect(manager.devices.map(\.friendlyName) == ["Has DMR"])
            }
        }
    }

    @Test("devices(atLeast:) answers once the static devices are probed, and what is listed when cancelled")
    func waitingForStaticDevices() async throws {
        try await withCastReceiverEmulator(
            devices: [
                DeviceConfiguration(friendlyName: "One", port: 0), DeviceConfiguration(friendlyName: "Two", port: 0),
            ]
        ) { emulator in
            try await withDiscovery(configure: { configuration in
                configuration.browsesMulticastDNS = false
                configuration.staticDevices = emulator.devices.map { .staticDevice(host: "127.0.0.1", port: $0.port) }
            }) { manager, _ in
                let listed = try await withDeadline(.seconds(60), "both probes") { await manager.devices(atLeast: 2) }
                #expect(listed.count == 2)
                #expect(listed.allSatisfy { $0.isStatic })
                // Already there: answered without waiting for another change.
                let again = try await withDeadline(.seconds(60), "the list") { await manager.devices(atLeast: 1) }
                #expect(again == listed)
                // More than will ever come: the wait ends with the task.
                let waiting = Task { await manager.devices(atLeast: 3) }
                waiting.cancel()
                #expect(await waiting.value == listed)
            }
        }
    }

    @Test("stop without start, and start with nothing to do, are harmless; an empty network lists nothing")
    func emptyConfigurations() async throws {
        let manager = DiscoveryManager()
        await manager.stop()
        var configuration = DiscoveryManager.Configuration()
        configuration.browsesMulticastDNS = false
        let idle = DiscoveryManager(configuration: configuration)
        try idle.start()
        #expect(idle.isRunning)
        #expect(idle.devices.isEmpty)
        #expect(!idle.hasDiscoveredDevices)
        await idle.stop()
        #expect(!idle.isRunning)
    }
}

/// Waits (bounded) until `condition` holds; for state that has no event of its own, such as a closed connection.
func waitUntil(_ what: String, within limit: Duration = .seconds(60), _ condition: @escaping @Sendable () -> Bool)
    async throws
{
    try await withDeadline(limit, what) {
        while !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }
}
