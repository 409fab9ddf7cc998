import CastTransport
import Testing

@testable import CastReceiver

@Suite("CastReceiverEmulator: many devices")
struct ManyDevicesTests {
    @Test func configurationsNameNumberAndPlaceDevices() {
        let free = CastReceiverEmulator.configurations(count: 200, basePort: 0)
        #expect(free.count == 200)
        #expect(free.allSatisfy { $0.port == 0 && $0.host == "127.0.0.1" })
        #expect(free.first?.friendlyName == "Emulated Chromecast 1")
        #expect(free.last?.friendlyName == "Emulated Chromecast 200")
        #expect(Set(free.map(\.id)).count == 200)
        #expect(free.allSatisfy { $0.id.count == 32 && $0.id.allSatisfy(\.isHexDigit) })

        let consecutive = CastReceiverEmulator.configurations(count: 3, basePort: 9100, namePrefix: "Lab")
        #expect(consecutive.map(\.port) == [9100, 9101, 9102])
        #expect(consecutive.map(\.friendlyName) == ["Lab 1", "Lab 2", "Lab 3"])
        #expect(CastReceiverEmulator.configurations(count: 1, namePrefix: "Solo").map(\.friendlyName) == ["Solo"])
    }

    @Test func twoHundredDevicesStartAnswerAndStop() async throws {
        let emulator = try CastReceiverEmulator(
            devices: CastReceiverEmulator.configurations(count: 200, basePort: 0),
            clock: ManualCastClock()
        )
        try await emulator.start()
        let devices = emulator.devices
        #expect(devices.count == 200)
        #expect(devices.allSatisfy { $0.port > 0 })
        #expect(Set(devices.map(\.port)).count == 200, "every device has its own port")
        #expect(Set(devices.map(\.configuration.id)).count == 200, "every device has its own id")

        var senders: [TestSender] = []
        for index in [0, 57, 199] {
            let sender = try await TestSender.connect(to: devices[index])
            let status = try await sender.receiver(["type": "GET_STATUS"])
            #expect(status.type == "RECEIVER_STATUS")
            #expect(status.firstApplication?["appId"] == "E8C28D3C")
            #expect(devices[index].connectionCount == 1)
            senders.append(sender)
        }

        // Devices are independent: an app launched on one does not show on another.
        _ = try await senders[0].launch("CC1AD845")
        #expect(devices[0].runningApp.appID == "CC1AD845")
        #expect(try await senders[1].receiver(["type": "GET_STATUS"]).firstApplication?["appId"] == "E8C28D3C")
        #expect(devices[57].runningApp.isIdleScreen)

        await emulator.stop()
        for sender in senders {
            let event = try await sender.events.first { if case .disconnected = $0 { true } else { false } }
            if case .disconnected = event {} else { Issue.record("expected a disconnect, got \(event)") }
        }
        #expect(devices.allSatisfy { $0.connectionCount == 0 })
        for device in [devices[0], devices[199]] { try await expectNotListening(device) }
        for sender in senders { await sender.close() }
    }

    @Test func startFailsWithListenFailedAndStopsTheDevicesAlreadyStarted() async throws {
        try await withDevice { taken, _ in
            var first = testDevice("First")
            first.port = 0
            let conflicting = testDevice("Conflicting") { $0.port = taken.port }
            let emulator = try CastReceiverEmulator(devices: [first, conflicting], clock: ManualCastClock())
            let error = await #expect(throws: CastReceiverError.self) { try await emulator.start() }
            #expect(error?.code == .listenFailed)
            #expect(emulator.devices[0].port > 0)
            try await expectNotListening(emulator.devices[0])
        }
    }
}

/// Asserts that `device` no longer accepts connections: connecting to its port is refused. (When tests run in
/// parallel another listener may already have been given the freed port; then that listener is not `device`.)
func expectNotListening(_ device: EmulatedDevice, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    do {
        let stranger = try await CastConnection.connect(
            host: device.host,
            port: device.port,
            configuration: quietClientConfiguration()
        )
        #expect(device.connectionCount == 0, "the stopped device accepted a connection", sourceLocation: sourceLocation)
        await stranger.close()
    } catch let error as CastTransportError {
        #expect(error.code == .connectFailed, "got \(error)", sourceLocation: sourceLocation)
    }
}
