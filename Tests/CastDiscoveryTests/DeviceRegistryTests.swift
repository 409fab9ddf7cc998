import Testing

@testable import CastDiscovery

@Suite("The device list: merging, debouncing, criteria, order")
struct DeviceRegistryTests {
    static func key(_ name: String, interface: Int32 = 2, ipv6: Bool = false) -> DeviceRegistry.RecordKey {
        .service(
            ServiceKey(interfaceIndex: interface, isIPv6: ipv6, name: name, type: "_googlecast._tcp", domain: "local")
        )
    }

    static func device(
        _ id: String,
        _ name: String,
        _ address: String = "192.0.2.1",
        port: Int = 8009,
        capabilities: DeviceCapabilities = [.videoOut, .audioOut],
        interface: String? = nil
    ) -> CastDevice {
        CastDevice(
            id: id,
            friendlyName: name,
            capabilities: capabilities,
            addresses: [DeviceAddress(address, interfaceName: interface)],
            port: port
        )
    }

    static func events(_ effects: [DeviceRegistry.Effect]) -> [DiscoveryEvent] {
        effects.compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    @Test("a device found by mDNS and by a scan is listed once, with both sources and the mDNS record's fields")
    func mergesScanWithMulticastDNS() throws {
        var registry = DeviceRegistry(criteria: .all)
        var advertised = Self.device("id1", "Living Room TV")
        advertised.statusText = "YouTube"
        _ = registry.upsert(Self.key("a"), advertised)
        var scanned = Self.device("id1", "Living Room TV (scan)")
        scanned.sources = .scan
        let events = Self.events(registry.upsert(.scanned("id1"), scanned))
        let listed = try #require(registry.devices.first)
        #expect(registry.devices.count == 1)
        #expect(listed.friendlyName == "Living Room TV", "the newer scan record does not override mDNS")
        #expect(listed.statusText == "YouTube")
        #expect(listed.sources == [.multicastDNS, .scan])
        #expect(events == [.updated(listed)])
        _ = registry.removeAll { $0 == .scanned("id1") }
        #expect(registry.devices.first?.sources == .multicastDNS)
    }

    @Test("one device on two interfaces and both IP protocols is listed once, with every address, IPv4 first")
    func mergesByID() throws {
        var registry = DeviceRegistry(criteria: .all)
        #expect(
            Self.events(
                registry.upsert(Self.key("a", ipv6: true), Self.device("id1", "TV", "fe80::1", interface: "eth0"))
            ).map(\.isAdded) == [true]
        )
        let second = Self.events(registry.upsert(Self.key("a"), Self.device("id1", "TV", "192.0.2.1")))
        let third = Self.events(registry.upsert(Self.key("a", interface: 3), Self.device("id1", "TV", "198.51.100.1")))
        #expect(second.map(\.isUpdated) == [true])
        #expect(third.map(\.isUpdated) == [true])
        let listed = try #require(registry.devices.first)
        #expect(registry.devices.count == 1)
        #expect(listed.addresses.map(\.connectableHost) == ["192.0.2.1", "198.51.100.1", "fe80::1%eth0"])
        #expect(listed.host == "192.0.2.1")
        // Resolving the same record again with nothing new says nothing.
        #expect(registry.upsert(Self.key("a"), Self.device("id1", "TV", "192.0.2.1")).isEmpty)
    }

    @Test("a departing record stays until it expires; coming back cancels the expiry")
    func debounce() {
        var registry = DeviceRegistry(criteria: .all)
        _ = registry.upsert(Self.key("a"), Self.device("id1", "TV"))
        #expect(registry.markDeparting(Self.key("a"), token: 7) == [.scheduleExpiry(Self.key("a"), token: 7)])
        #expect(registry.devices.count == 1)
        #expect(registry.upsert(Self.key("a"), Self.device("id1", "TV")) == [.cancelExpiry(token: 7)])
        #expect(registry.expire(Self.key("a"), token: 7).isEmpty, "a stale timer does nothing")
        _ = registry.markDeparting(Self.key("a"), token: 8)
        let removed = Self.events(registry.expire(Self.key("a"), token: 8))
        #expect(removed == [.removed(Self.device("id1", "TV"))])
        #expect(registry.devices.isEmpty)
    }

    @Test("while one record departs, the device shows the live ones; a group moving to a new instance is one update")
    func departingPrefersLive() {
        var registry = DeviceRegistry(criteria: .all)
        _ = registry.upsert(Self.key("group-old"), Self.device("g", "Group", "192.0.2.1", port: 32001))
        let moved = Self.events(
            registry.upsert(Self.key("group-new"), Self.device("g", "Group", "192.0.2.2", port: 32002))
        )
        #expect(
            moved == [
                .updated(
                    CastDevice(
                        id: "g",
                        friendlyName: "Group",
                        capabilities: [.videoOut, .audioOut],
                        addresses: [DeviceAddress("192.0.2.1"), DeviceAddress("192.0.2.2")],
                        port: 32002
                    )
                )
            ]
        )
        let departed = Self.events(registry.markDeparting(Self.key("group-old"), token: 1))
        #expect(departed == [.updated(Self.device("g", "Group", "192.0.2.2", port: 32002))])
        #expect(Self.events(registry.expire(Self.key("group-old"), token: 1)).isEmpty)
        #expect(registry.devices == [Self.device("g", "Group", "192.0.2.2", port: 32002)])
    }

    @Test("required capabilities hide audio-only devices")
    func capabilityCriteria() {
        var registry = DeviceRegistry(criteria: .capabilities(.videoOut))
        _ = registry.upsert(Self.key("tv"), Self.device("tv", "TV", capabilities: [.videoOut, .audioOut]))
        _ = registry.upsert(Self.key("speaker"), Self.device("sp", "Speaker", capabilities: [.audioOut]))
        #expect(registry.devices.map(\.id) == ["tv"])
        let relaxed = Self.events(registry.setCriteria(.all))
        #expect(relaxed == [.added(Self.device("sp", "Speaker", capabilities: [.audioOut]))])
    }

    @Test("app criteria: listed only once the device says the app is available; asked once and cached")
    func applicationCriteria() {
        var registry = DeviceRegistry(criteria: .application("CC1AD845"))
        let tv = Self.device("tv", "TV", "192.0.2.1")
        let first = registry.upsert(Self.key("tv"), tv)
        #expect(first == [.checkAvailability(tv, applicationID: "CC1AD845")])
        #expect(registry.devices.isEmpty, "not listed while the check is outstanding")
        #expect(
            registry.upsert(Self.key("tv", interface: 3), Self.device("tv", "TV", "192.0.2.1")).isEmpty,
            "asked once"
        )
        #expect(
            Self.events(registry.setAvailability(.available, deviceID: "tv", applicationID: "CC1AD845")).map(\.isAdded)
                == [true]
        )
        var renamed = tv
        renamed.friendlyName = "Den TV"
        #expect(
            Self.events(registry.upsert(Self.key("tv"), renamed)).map(\.isUpdated) == [true],
            "the answer is cached"
        )

        let speaker = Self.device("sp", "Speaker", "192.0.2.9")
        #expect(registry.upsert(Self.key("sp"), speaker) == [.checkAvailability(speaker, applicationID: "CC1AD845")])
        #expect(registry.setAvailability(.unavailable, deviceID: "sp", applicationID: "CC1AD845").isEmpty)
        #expect(registry.devices.map(\.id) == ["tv"])
        #expect(registry.upsert(Self.key("sp"), Self.device("sp", "Speaker 2", "192.0.2.9")).isEmpty)
    }

    @Test("an unreachable device is asked again only when its address or port changes")
    func unreachableRetriesOnMove() {
        var registry = DeviceRegistry(criteria: .application("CC1AD845"))
        let tv = Self.device("tv", "TV", "192.0.2.1")
        _ = registry.upsert(Self.key("tv"), tv)
        #expect(
            registry.setAvailability(
                .unreachable(endpoint: "192.0.2.1:8009"),
                deviceID: "tv",
                applicationID: "CC1AD845"
            ).isEmpty
        )
        #expect(registry.upsert(Self.key("tv"), Self.device("tv", "TV!", "192.0.2.1")).isEmpty)
        let moved = Self.device("tv", "TV!", "192.0.2.5")
        #expect(registry.upsert(Self.key("tv"), moved) == [.checkAvailability(moved, applicationID: "CC1AD845")])
    }

    @Test("static devices are not filtered by capabilities (they have no TXT record)")
    func staticDevicesIgnoreCapabilities() {
        var registry = DeviceRegistry(criteria: .capabilities(.videoOut))
        let configured = CastDevice.staticDevice(host: "192.0.2.50", port: 8009, name: "Lab TV")
        #expect(Self.events(registry.upsert(.configured(configured.id), configured)) == [.added(configured)])
    }

    @Test("sorted like the Cast dialog: case, diacritics and width ignored, numbers by value, ties by id")
    func dialogOrder() {
        var registry = DeviceRegistry(criteria: .all)
        let names = ["zebra", "Éclair", "eclair", "TV 10", "tv 2", "Alpha", "Ünter", "under", "ＴＶ 3"]
        for (index, name) in names.enumerated() {
            _ = registry.upsert(Self.key(name), Self.device("id\(index)", name))
        }
        #expect(
            registry.devices.map(\.friendlyName) == [
                "Alpha", "eclair", "Éclair", "tv 2", "ＴＶ 3", "TV 10", "under", "Ünter", "zebra",
            ]
        )
    }

    @Test("removing everything reports each listed device once")
    func removeAll() {
        var registry = DeviceRegistry(criteria: .all)
        _ = registry.upsert(Self.key("a"), Self.device("a", "A"))
        _ = registry.upsert(Self.key("a", ipv6: true), Self.device("a", "A", "fe80::1"))
        _ = registry.upsert(Self.key("b"), Self.device("b", "B"))
        _ = registry.markDeparting(Self.key("b"), token: 3)
        let configured = CastDevice.staticDevice(host: "192.0.2.50")
        _ = registry.upsert(.configured(configured.id), configured)
        let effects = registry.removeAll { if case .service = $0 { true } else { false } }
        #expect(effects.filter { if case .cancelExpiry = $0 { true } else { false } } == [.cancelExpiry(token: 3)])
        #expect(Self.events(effects).map { $0.device?.id } == ["a", "b"])
        #expect(registry.devices == [configured])
    }
}
