import CastDiscovery
import CastReceiver
import CastTransport
import Foundation
import Logging
import Testing

extension CastAdvertisement {
    /// What `cast-receiver` advertises for an emulated device.
    init(_ device: EmulatedDevice) {
        self.init(id: device.configuration.id, friendlyName: device.configuration.friendlyName, port: device.port)
        modelName = device.configuration.model
        capabilities = DeviceCapabilities(rawValue: device.configuration.capabilities)
    }
}

/// Set CAST_TEST_TRACE=1 to see discovery's own log on stderr while debugging a test.
let traceLogger: Logger = {
    guard ProcessInfo.processInfo.environment["CAST_TEST_TRACE"] != nil else { return .castDisabled }
    var logger = Logger(label: "test") { label in StreamLogHandler.standardError(label: label) }
    logger.logLevel = .trace
    return logger
}()

/// Runs `body` with a started manager and its event log; stops the manager afterwards.
func withDiscovery<T: Sendable>(
    clock: any CastClock = SystemCastClock(),
    logCapture: LogCapture? = nil,
    configure: (inout DiscoveryManager.Configuration) -> Void = { _ in },
    _ body: (DiscoveryManager, EventLog) async throws -> T
) async throws -> T {
    var configuration = DiscoveryManager.Configuration()
    configure(&configuration)
    let manager = DiscoveryManager(
        configuration: configuration,
        clock: clock,
        logger: logCapture?.logger ?? traceLogger
    )
    let log = EventLog(manager.events())
    try manager.start()
    do {
        let result = try await body(manager, log)
        await manager.stop()
        return result
    } catch {
        await manager.stop()
        throw error
    }
}

@Suite("Browsing the lab's avahi-daemon", .enabled(if: Lab.isUp, Lab.skipReason))
struct BrowsingLabTests {
    @Test("cast-receiver-style publishing of 5 devices: all found, every field right, sorted as the Cast dialog")
    func findsPublishedDevices() async throws {
        let tag = uniqueTag()
        let names = ["\(tag) Zeta", "\(tag) alpha", "\(tag) Élan", "\(tag) 10", "\(tag) 2"]
        var configurations = names.map { DeviceConfiguration(friendlyName: $0, port: 0) }
        configurations[0].model = "Chromecast Ultra"
        configurations[1].capabilities = 5
        try await withCastReceiverEmulator(devices: configurations) { emulator in
            try await withDiscovery { manager, log in
                let publisher = try DevicePublisher()
                defer { publisher.close() }
                for device in emulator.devices {
                    let name = try await publisher.publish(CastAdvertisement(device))
                    let model = device.configuration.model.replacingOccurrences(of: " ", with: "-")
                    #expect(name == "\(model)-\(device.configuration.id)")
                }
                for device in emulator.devices {
                    _ = try await log.first("\(device.configuration.friendlyName) to be added") {
                        $0.isAdded && $0.device?.id == device.configuration.id
                    }
                }
                let listed = manager.devices.filter { $0.friendlyName.hasPrefix(tag) }
                #expect(
                    listed.map(\.friendlyName) == [
                        "\(tag) 2", "\(tag) 10", "\(tag) alpha", "\(tag) Élan", "\(tag) Zeta",
                    ]
                )
                #expect(manager.hasDiscoveredDevices)
                for device in emulator.devices {
                    let found = try #require(manager.device(withID: device.configuration.id))
                    #expect(found.friendlyName == device.configuration.friendlyName)
                    #expect(found.modelName == device.configuration.model)
                    #expect(found.capabilities.rawValue == device.configuration.capabilities)
                    #expect(found.iconPath == "/setup/icon.png")
                    #expect(found.statusText == "")
                    #expect(found.protocolVersion == 5)
                    #expect(found.hostName == "\(Lab.namespace).local")
                    #expect(found.addresses == [DeviceAddress("127.0.0.1")])
                    #expect(found.port == device.port)
                    #expect(found.host == "127.0.0.1")
                    #expect(!found.isStatic)
                }
                #expect(
                    manager.device(withID: emulator.devices[1].configuration.id)?.capabilities == [
                        .videoOut, .audioOut,
                    ]
                )
            }
        }
    }

    @Test("a device on port 8009 is a device, a 'Google Cast Group' on another port is a group")
    func groupsAreRecognised() async throws {
        let tag = uniqueTag()
        let device = CastAdvertisement(id: Identifiers.deviceID(), friendlyName: "\(tag) Speaker", port: 8009)
        let group = {
            var group = CastAdvertisement(id: Identifiers.deviceID(), friendlyName: "\(tag) Group", port: 42001)
            group.modelName = "Google Cast Group"
            group.capabilities = [.audioOut, .multizoneGroup]
            return group
        }()
        try await withDiscovery { manager, log in
            let publisher = try DevicePublisher()
            defer { publisher.close() }
            try await publisher.publish(device)
            try await publisher.publish(group)
            let foundDevice = try await log.first("the speaker") { $0.isAdded && $0.device?.id == device.id }.device
            let foundGroup = try await log.first("the group") { $0.isAdded && $0.device?.id == group.id }.device
            #expect(foundDevice?.isGroup == false)
            #expect(foundGroup?.isGroup == true)
            #expect(foundGroup?.capabilities.contains(.multizoneGroup) == true)
            #expect(foundGroup?.port == 42001)
        }
    }

    @Test("a device that goes away is removed only after the removal delay, on the injected clock")
    func removalIsDebounced() async throws {
        let clock = ManualCastClock()
        let serviceType = privateServiceType()
        let advertisement = CastAdvertisement(
            id: Identifiers.deviceID(),
            friendlyName: "\(uniqueTag()) Leaving",
            port: 8009
        )
        try await withDiscovery(
            clock: clock,
            configure: {
                $0.removalDelay = .seconds(2)
                $0.serviceType = serviceType
            }
        ) { manager, log in
            let publisher = try DevicePublisher(serviceType: serviceType)
            defer { publisher.close() }
            try await publisher.publish(advertisement)
            _ = try await log.first("the device to be added") { $0.isAdded && $0.device?.id == advertisement.id }

            publisher.withdraw(id: advertisement.id)
            await withDeadlineOrFail(.seconds(15), "the removal timer") { await clock.waitForTimers(count: 1) }
            #expect(clock.pendingDelays == [.seconds(2)])
            #expect(manager.device(withID: advertisement.id) != nil, "still listed while the delay runs")
            #expect(!log.events.contains { $0.isRemoved && $0.device?.id == advertisement.id })

            clock.advance(by: .seconds(2))
            let removed = try await log.first("the removal") { $0.isRemoved && $0.device?.id == advertisement.id }
            #expect(removed.device?.friendlyName == advertisement.friendlyName)
            #expect(manager.device(withID: advertisement.id) == nil)
        }
    }

    @Test("a flap shorter than the removal delay is invisible: withdrawn, re-published, never reported")
    func flapIsInvisible() async throws {
        let clock = ManualCastClock()
        let serviceType = privateServiceType()
        let advertisement = CastAdvertisement(
            id: Identifiers.deviceID(),
            friendlyName: "\(uniqueTag()) Flap",
            port: 8009
        )
        let id = advertisement.id
        try await withDiscovery(clock: clock, configure: { $0.serviceType = serviceType }) { manager, log in
            let publisher = try DevicePublisher(serviceType: serviceType)
            defer { publisher.close() }
            try await publisher.publish(advertisement)
            _ = try await log.first("the device to be added") { $0.isAdded && $0.device?.id == id }

            publisher.withdraw(id: id)
            await withDeadlineOrFail(.seconds(15), "the goodbye") { await clock.waitForTimers(count: 1) }
            try await publisher.publish(advertisement)
            await withDeadlineOrFail(.seconds(15), "the re-announcement to cancel the removal") {
                await clock.waitUntil { $0.pendingTimerCount == 0 }
            }
            clock.advance(by: .seconds(60))
            #expect(manager.device(withID: id) != nil)
            #expect(log.events.filter { $0.device?.id == id } == [.added(try #require(manager.device(withID: id)))])
        }
    }

    @Test("a group leader moving to a new port is one update, never a removal")
    func moveIsOneUpdate() async throws {
        let clock = ManualCastClock()
        let serviceType = privateServiceType()
        var advertisement = CastAdvertisement(
            id: Identifiers.deviceID(),
            friendlyName: "\(uniqueTag()) Group",
            port: 42002
        )
        advertisement.modelName = "Google Cast Group"
        let id = advertisement.id
        try await withDiscovery(clock: clock, configure: { $0.serviceType = serviceType }) { manager, log in
            let publisher = try DevicePublisher(serviceType: serviceType)
            defer { publisher.close() }
            try await publisher.publish(advertisement)
            _ = try await log.first("the group to be added") { $0.isAdded && $0.device?.id == id }

            // Re-registering on a new port: browsers see the new SRV record, sometimes after a goodbye for the old
            // one (which the re-announcement then cancels).
            advertisement.port = 42003
            try await publisher.update(advertisement)
            let updated = try await log.first("the move") { $0.isUpdated && $0.device?.id == id }
            #expect(updated.device?.port == 42003)
            #expect(updated.device?.isGroup == true)
            await withDeadlineOrFail(.seconds(15), "the move to settle") {
                await clock.waitUntil { $0.pendingTimerCount == 0 }
            }
            #expect(manager.device(withID: id)?.port == 42003)
            let mine = log.events.filter { $0.device?.id == id }
            #expect(mine.filter(\.isRemoved).isEmpty)
            #expect(mine.filter(\.isAdded).count == 1)
        }
    }

    @Test("a renamed device (new TXT fn, status text) produces one update with the new fields")
    func renameIsAnUpdate() async throws {
        let tag = uniqueTag()
        var advertisement = CastAdvertisement(id: Identifiers.deviceID(), friendlyName: "\(tag) Old Name", port: 8009)
        let id = advertisement.id
        try await withDiscovery { manager, log in
            let publisher = try DevicePublisher()
            defer { publisher.close() }
            try await publisher.publish(advertisement)
            _ = try await log.first("the device to be added") { $0.isAdded && $0.device?.id == id }

            advertisement.friendlyName = "\(tag) New Name"
            advertisement.statusText = "YouTube"
            advertisement.isBusy = true
            try await publisher.update(advertisement)
            let updated = try await log.first("the rename") { $0.isUpdated && $0.device?.id == id }
            #expect(updated.device?.friendlyName == "\(tag) New Name")
            #expect(updated.device?.statusText == "YouTube")
            #expect(manager.device(withID: advertisement.id)?.friendlyName == "\(tag) New Name")
            #expect(!log.events.contains { $0.device?.id == id && $0.isRemoved })
        }
    }

    @Test("a name collision renames the second advertisement the way Avahi does, and both are found")
    func collisionRenames() async throws {
        let tag = uniqueTag()
        let (first, second) = {
            var first = CastAdvertisement(id: Identifiers.deviceID(), friendlyName: "\(tag) First", port: 8009)
            first.instanceName = "Chromecast-\(tag)"
            var second = CastAdvertisement(id: Identifiers.deviceID(), friendlyName: "\(tag) Second", port: 8009)
            second.instanceName = "Chromecast-\(tag)"
            return (first, second)
        }()
        try await withDiscovery { manager, log in
            let publisher = try DevicePublisher()
            defer { publisher.close() }
            let events = publisher.events()
            #expect(try await publisher.publish(first) == "Chromecast-\(tag)")
            #expect(try await publisher.publish(second) == "Chromecast-\(tag) #2")
            #expect(publisher.publishedName(of: second.id) == "Chromecast-\(tag) #2")
            var iterator = events.makeAsyncIterator()
            var renamed: PublisherEvent?
            while let event = await iterator.next() {
                if case .renamed = event {
                    renamed = event
                    break
                }
            }
            #expect(renamed == .renamed(id: second.id, from: "Chromecast-\(tag)", to: "Chromecast-\(tag) #2"))
            _ = try await log.first("the first") { $0.isAdded && $0.device?.id == first.id }
            _ = try await log.first("the second") { $0.isAdded && $0.device?.id == second.id }
            #expect(manager.devices.filter { $0.friendlyName.hasPrefix(tag) }.count == 2)
        }
    }

    @Test("stop reports every listed device removed and empties the list")
    func stopEmptiesTheList() async throws {
        let advertisement = CastAdvertisement(
            id: Identifiers.deviceID(),
            friendlyName: "\(uniqueTag()) Stop",
            port: 8009
        )
        let publisher = try DevicePublisher()
        defer { publisher.close() }
        try await publisher.publish(advertisement)
        let manager = DiscoveryManager()
        let log = EventLog(manager.events())
        try manager.start()
        try manager.start()  // idempotent
        _ = try await log.first("the device to be added") { $0.isAdded && $0.device?.id == advertisement.id }
        await manager.stop()
        #expect(!manager.isRunning)
        #expect(manager.devices.isEmpty)
        #expect(!manager.hasDiscoveredDevices)
        _ = try await log.first("the removal on stop") { $0.isRemoved && $0.device?.id == advertisement.id }
    }
}

/// Waits for `body`, recording an issue instead of hanging when the daemon never delivers.
func withDeadlineOrFail(_ limit: Duration, _ what: String, _ body: @escaping @Sendable () async -> Void) async {
    do {
        try await withDeadline(limit, what) { await body() }
    } catch {
        Issue.record("\(error)")
    }
}
