import CastDiscovery
import CastReceiver
import CastService
import CastTransport
import Foundation
import Testing

/// A configured device (a static host) switched off stays known to castd, unreachable, rather than turning into
/// an unknown id: a client can tell a device that is off (502) from a typo (404).
@Suite struct ConfiguredDeviceTests {
    /// A hub whose only device is `device`, configured by its address (no mDNS), probed again every
    /// `retryInterval`.
    static func hub(
        configuring device: CastDevice,
        retryInterval: Duration?,
        stateDirectory: String,
        clock: ManualCastClock
    ) -> DeviceHub {
        var discovery = DiscoveryManager.Configuration()
        discovery.browsesMulticastDNS = false
        discovery.staticDevices = [device]
        discovery.staticRetryInterval = retryInterval
        var options = DeviceHub.Options()
        options.cast.stateDirectory = stateDirectory
        options.cast.heartbeat.pingInterval = nil
        options.cast.connectTimeout = .seconds(2)
        return DeviceHub(options: options, discovery: DiscoveryManager(configuration: discovery, clock: clock))
    }

    @Test(.timeLimit(.minutes(1))) func aConfiguredDeviceThatStopsAnsweringStaysListed() async throws {
        try await withCastReceiverEmulator(devices: [DeviceConfiguration(friendlyName: "Den", port: 0)]) {
            emulator in
            let clock = ManualCastClock()
            let stateDirectory = temporaryStateDirectory()
            defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
            let hub = Self.hub(
                configuring: CastDevice.staticDevice(host: "127.0.0.1", port: emulator.devices[0].port),
                retryInterval: .seconds(30),
                stateDirectory: stateDirectory,
                clock: clock
            )
            try hub.start()
            _ = await hub.discovery.devices(atLeast: 1)
            let id = hub.devices[0].device.id
            let events = hub.events()
            await emulator.devices[0].stop()
            // The next probe finds nobody: the device would be removed from discovery's list.
            await clock.waitForTimers()
            clock.advance(by: .seconds(30))
            for await event in events {
                if case .deviceUpdated = event.change, event.device.id == id { break }
                if case .deviceRemoved = event.change { Issue.record("a configured device was removed") }
            }
            #expect(hub.discovery.devices.isEmpty, "discovery no longer lists it")
            #expect(hub.devices.map(\.device.id) == [id], "castd still does")
            try await withServer(hub) { port in
                let read = try await TestHTTP.send(port: port, "GET", "/v1/devices/\(id)")
                #expect(read.status == 502, "\(read.body)")
                let listed = try await TestHTTP.send(port: port, "GET", "/v1/devices")
                #expect(listed.json?["devices"]?[0]?["id"]?.stringValue == id)
            }
            await hub.stop()
        }
    }

    /// One that is off when castd starts is listed too, unreachable (502), not unknown (404); once it answers, the
    /// entry its answer names replaces the one its address made.
    @Test(.timeLimit(.minutes(1))) func aConfiguredDeviceOffAtStartIsListedAsUnreachable() async throws {
        let stateDirectory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
        // Nothing listens on port 1.
        let hub = Self.hub(
            configuring: CastDevice.staticDevice(host: "127.0.0.1", port: 1, name: "Attic"),
            retryInterval: nil,
            stateDirectory: stateDirectory,
            clock: ManualCastClock()
        )
        try hub.start()
        #expect(hub.devices.map(\.device.friendlyName) == ["Attic"])
        let id = try #require(hub.devices.first?.device.id)
        try await withServer(hub) { port in
            let listed = try await TestHTTP.send(port: port, "GET", "/v1/devices")
            #expect(listed.json?["devices"]?[0]?["id"]?.stringValue == id)
            let read = try await TestHTTP.send(port: port, "GET", "/v1/devices/\(id)")
            #expect(read.status == 502, "\(read.body)")
            let pause = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media/pause")
            #expect(pause.status == 502, "\(pause.body)")
        }
        await hub.stop()
    }
}
