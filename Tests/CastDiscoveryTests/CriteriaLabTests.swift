import CastDiscovery
import CastReceiver
import CastTransport
import Foundation
import Testing

@Suite("Discovery criteria against emulated devices in the lab", .enabled(if: Lab.isUp, Lab.skipReason))
struct CriteriaLabTests {
    @Test("by app id: CC1AD845 lists only the device that has it; another id lists neither; answers are cached")
    func applicationAvailability() async throws {
        let tag = uniqueTag()
        let serviceType = privateServiceType()
        var withDMR = DeviceConfiguration(friendlyName: "\(tag) With DMR", port: 0)
        withDMR.apps = EmulatedApp.standardRegistry
        var withoutDMR = DeviceConfiguration(friendlyName: "\(tag) Echo Only", port: 0)
        withoutDMR.apps = [.echo()]
        try await withCastReceiverEmulator(devices: [withDMR, withoutDMR]) { emulator in
            let publisher = try DevicePublisher(serviceType: serviceType)
            defer { publisher.close() }
            for device in emulator.devices { try await publisher.publish(CastAdvertisement(device)) }
            let (yes, no) = (emulator.devices[0].configuration.id, emulator.devices[1].configuration.id)

            let capture = LogCapture()
            try await withDiscovery(
                logCapture: capture,
                configure: {
                    $0.criteria = .application("CC1AD845")
                    $0.serviceType = serviceType
                }
            ) { manager, log in
                let added = try await log.first("the device with the Default Media Receiver") {
                    $0.isAdded && $0.device?.id == yes
                }
                #expect(added.device?.friendlyName == "\(tag) With DMR")
                _ = try await capture.message(containing: "app CC1AD845 available on \(no): false")
                #expect(manager.device(withID: no) == nil)
                #expect(!log.events.contains { $0.device?.id == no })
                // Checked once per device and app, however many records and updates arrive.
                #expect(capture.messages.filter { $0.message.contains("app CC1AD845 available on \(yes)") }.count == 1)

                // A TXT change re-resolves the device but does not ask again.
                var renamed = CastAdvertisement(emulator.devices[0])
                renamed.friendlyName = "\(tag) Renamed"
                try await publisher.update(renamed)
                _ = try await log.first("the rename") { $0.isUpdated && $0.device?.friendlyName == "\(tag) Renamed" }
                #expect(capture.messages.filter { $0.message.contains("app CC1AD845 available on \(yes)") }.count == 1)
            }

            let other = LogCapture()
            try await withDiscovery(
                logCapture: other,
                configure: {
                    $0.criteria = .application("DEADBEEF")
                    $0.serviceType = serviceType
                }
            ) { manager, log in
                _ = try await other.message(containing: "app DEADBEEF available on \(yes): false")
                _ = try await other.message(containing: "app DEADBEEF available on \(no): false")
                #expect(manager.device(withID: yes) == nil)
                #expect(manager.device(withID: no) == nil)
            }
        }
    }

    @Test("checking does not block listing: a device slow to answer appears after a fast one, when it answers")
    func slowCheckDoesNotBlock() async throws {
        let tag = uniqueTag()
        let serviceType = privateServiceType()
        let clock = ManualCastClock()
        let fast = DeviceConfiguration(friendlyName: "\(tag) Fast", port: 0)
        var slow = DeviceConfiguration(friendlyName: "\(tag) Slow", port: 0)
        slow.faults.replyDelay = 3  // on the manual clock: the reply waits until the test advances it
        try await withCastReceiverEmulator(devices: [slow, fast], clock: clock) { emulator in
            let publisher = try DevicePublisher(serviceType: serviceType)
            defer { publisher.close() }
            for device in emulator.devices { try await publisher.publish(CastAdvertisement(device)) }
            let (slowID, fastID) = (emulator.devices[0].configuration.id, emulator.devices[1].configuration.id)
            try await withDiscovery(configure: {
                $0.criteria = .application("CC1AD845")
                $0.serviceType = serviceType
            }) { manager, log in
                _ = try await log.first("the fast device") { $0.isAdded && $0.device?.id == fastID }
                try await waitUntil("the slow device's question to arrive") { clock.pendingTimerCount > 0 }
                #expect(manager.device(withID: slowID) == nil, "not listed while its answer is outstanding")
                clock.advance(by: .seconds(3))
                _ = try await log.first("the slow device") { $0.isAdded && $0.device?.id == slowID }
                #expect(
                    manager.devices.filter { $0.friendlyName.hasPrefix(tag) }.map(\.friendlyName) == [
                        "\(tag) Fast", "\(tag) Slow",
                    ]
                )
            }
        }
    }

    @Test("by capability: requiring video out hides an audio-only speaker")
    func capabilities() async throws {
        let tag = uniqueTag()
        let serviceType = privateServiceType()
        let (tv, speaker) = {
            var tv = CastAdvertisement(id: Identifiers.deviceID(), friendlyName: "\(tag) TV", port: 8009)
            tv.capabilities = [.videoOut, .audioOut]
            var speaker = CastAdvertisement(id: Identifiers.deviceID(), friendlyName: "\(tag) Speaker", port: 8009)
            speaker.modelName = "Google Home Mini"
            speaker.capabilities = DeviceCapabilities(rawValue: 198_660)  // a real Home Mini: no video bit
            return (tv, speaker)
        }()
        let publisher = try DevicePublisher(serviceType: serviceType)
        defer { publisher.close() }
        try await publisher.publish(tv)
        try await publisher.publish(speaker)
        try await withDiscovery(configure: {
            $0.criteria = .capabilities(.videoOut)
            $0.serviceType = serviceType
        }) { manager, log in
            _ = try await withDiscovery(configure: { $0.serviceType = serviceType }) { unfiltered, everything in
                // The unfiltered manager sees both, which proves the speaker was on the network all along.
                _ = try await everything.first("the speaker, unfiltered") { $0.isAdded && $0.device?.id == speaker.id }
                _ = try await everything.first("the TV, unfiltered") { $0.isAdded && $0.device?.id == tv.id }
                #expect(unfiltered.devices.filter { $0.friendlyName.hasPrefix(tag) }.count == 2)
            }
            _ = try await log.first("the TV") { $0.isAdded && $0.device?.id == tv.id }
            #expect(manager.device(withID: speaker.id) == nil)
            #expect(!log.events.contains { $0.device?.id == speaker.id })
        }
    }

    @Test("static devices and mDNS devices share one sorted list")
    func staticAndMDNSTogether() async throws {
        let tag = uniqueTag()
        let serviceType = privateServiceType()
        try await withCastReceiverEmulator(devices: [DeviceConfiguration(friendlyName: "\(tag) B mDNS", port: 0)]) {
            emulator in
            let publisher = try DevicePublisher(serviceType: serviceType)
            defer { publisher.close() }
            try await publisher.publish(CastAdvertisement(emulator.devices[0]))
            let port = emulator.devices[0].port
            try await withDiscovery(configure: {
                $0.serviceType = serviceType
                $0.staticDevices = [.staticDevice(host: "127.0.0.1", port: port, name: "\(tag) A static")]
            }) { manager, log in
                _ = try await log.first("the static entry") {
                    $0.isAdded && $0.device?.isStatic == true && $0.device?.port == port
                }
                _ = try await log.first("the mDNS entry") {
                    $0.isAdded && $0.device?.id == emulator.devices[0].configuration.id
                }
                let mine = manager.devices.filter { $0.friendlyName.hasPrefix(tag) }
                #expect(mine.map(\.friendlyName) == ["\(tag) A static", "\(tag) B mDNS"])
                #expect(mine.map(\.isStatic) == [true, false])
            }
        }
    }
}
