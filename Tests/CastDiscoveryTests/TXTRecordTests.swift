import Testing

@testable import CastDiscovery

@Suite("Reading _googlecast._tcp TXT records")
struct TXTRecordTests {
    static let key = ServiceKey(
        interfaceIndex: 1,
        isIPv6: false,
        name: "Chromecast-abc",
        type: "_googlecast._tcp",
        domain: "local"
    )

    static func service(_ strings: [[UInt8]], port: Int = 8009) -> ResolvedService {
        ResolvedService(key: key, hostName: "abc.local", address: DeviceAddress("192.0.2.7"), port: port, txt: strings)
    }

    static func service(_ strings: [String], port: Int = 8009) -> ResolvedService {
        service(strings.map { Array($0.utf8) }, port: port)
    }

    @Test("a real Chromecast's record gives every field")
    func realRecord() throws {
        let parsed = CastTXT.parse(
            Self.service([
                "id=99f3c58bf3471cc10cd87f79d33599cf", "cd=56AED3E8B6E5F7C1A1B2C3D4E5F60718", "rm=34432AD6C4E19CD9",
                "ve=05", "md=Chromecast", "ic=/setup/icon.png", "fn=Living Room TV", "ca=200709", "st=0",
                "bs=FA8FCA7B4DCD", "nf=1", "rs=YouTube",
            ])
        )
        #expect(parsed.warnings.isEmpty)
        let device = try #require(parsed.device)
        #expect(device.id == "99f3c58bf3471cc10cd87f79d33599cf")
        #expect(device.friendlyName == "Living Room TV")
        #expect(device.modelName == "Chromecast")
        #expect(
            device.capabilities == [
                .videoOut, .audioOut, .attenuationOrFixedVolume, .dynamicGroupingSupported,
                DeviceCapabilities(rawValue: 131_072),
            ]
        )
        #expect(device.iconPath == "/setup/icon.png")
        #expect(device.statusText == "YouTube")
        #expect(device.protocolVersion == 5)
        #expect(device.hostName == "abc.local")
        #expect(device.addresses == [DeviceAddress("192.0.2.7")])
        #expect(device.port == 8009)
        #expect(!device.isGroup)
    }

    @Test("missing id: skipped with a warning")
    func missingID() {
        let parsed = CastTXT.parse(Self.service(["fn=No Id", "md=Chromecast"]))
        #expect(parsed.device == nil)
        #expect(parsed.warnings == ["no 'id' key: skipped"])
    }

    @Test("an id that is not UTF-8, too long or has spaces: skipped with a warning")
    func unusableID() {
        #expect(CastTXT.parse(Self.service([Array("id=".utf8) + [0xFF, 0xFE], Array("fn=x".utf8)])).device == nil)
        #expect(CastTXT.parse(Self.service(["id=" + String(repeating: "a", count: 65), "fn=x"])).device == nil)
        #expect(CastTXT.parse(Self.service(["id=has space", "fn=x"])).device == nil)
        #expect(CastTXT.parse(Self.service(["id=", "fn=x"])).warnings == ["no 'id' key: skipped"])
    }

    @Test("non-numeric ca: no capabilities, a warning")
    func nonNumericCapabilities() throws {
        let parsed = CastTXT.parse(Self.service(["id=abc", "fn=Speaker", "ca=lots"]))
        #expect(try #require(parsed.device).capabilities == [])
        #expect(parsed.warnings == ["'ca' is not a decimal number: no capabilities assumed"])
        #expect(CastTXT.parse(Self.service(["id=abc", "fn=Speaker", "ca=-5"])).device?.capabilities == [])
    }

    @Test("duplicate keys: the first value wins (RFC 6763 §6.4), a warning; keys are case-insensitive")
    func duplicateKeys() throws {
        let parsed = CastTXT.parse(Self.service(["id=abc", "fn=First", "FN=Second", "fn=Third"]))
        #expect(try #require(parsed.device).friendlyName == "First")
        #expect(
            parsed.warnings == [
                "duplicate key 'fn': the first value is used", "duplicate key 'fn': the first value is used",
            ]
        )
    }

    @Test("non-UTF-8 name: repaired with U+FFFD, a warning")
    func invalidUTF8() throws {
        let parsed = CastTXT.parse(Self.service([Array("id=abc".utf8), Array("fn=Caf".utf8) + [0xE9, 0x21]]))
        #expect(try #require(parsed.device).friendlyName == "Caf\u{FFFD}!")
        #expect(parsed.warnings == ["'fn' is not valid UTF-8: repaired"])
    }

    @Test("oversized values are cut at a character boundary, with a warning")
    func oversizedValues() throws {
        let long = String(repeating: "é", count: 120)  // 240 bytes
        let parsed = CastTXT.parse(Self.service(["id=abc", "fn=\(long)", "rs=" + String(repeating: "x", count: 200)]))
        let device = try #require(parsed.device)
        #expect(device.friendlyName == String(repeating: "é", count: 64))
        #expect(device.statusText == String(repeating: "x", count: 128))
        #expect(parsed.warnings == ["'fn' is 240 bytes: cut to 128", "'rs' is 200 bytes: cut to 128"])
    }

    @Test("missing fn: the instance name is shown, a warning; odd strings are ignored")
    func missingNameAndJunk() throws {
        let parsed = CastTXT.parse(
            Self.service([Array("=value".utf8), [0xC3, 0x28, 0x3D, 0x31], Array("id=abc".utf8), Array("ve=x".utf8)])
        )
        let device = try #require(parsed.device)
        #expect(device.friendlyName == "Chromecast-abc")
        #expect(device.protocolVersion == nil)
        #expect(
            parsed.warnings == [
                "a string without a key was ignored",
                "a key with bytes outside printable ASCII was ignored",
                "no 'fn' value: the instance name is shown instead",
                "'ve' is not a number: ignored",
            ]
        )
    }

    @Test("the group capability bit or the group model makes a group; the port does not")
    func groups() {
        #expect(
            CastTXT.parse(Self.service(["id=g", "fn=G"], port: 32187)).device?.isGroup == false,
            "a port other than 8009 alone does not make a group (NAT, emulators, proxies)"
        )
        #expect(CastTXT.parse(Self.service(["id=g", "fn=G", "md=Google Cast Group"])).device?.isGroup == true)
        #expect(CastTXT.parse(Self.service(["id=g", "fn=G", "ca=36"])).device?.isGroup == true)
    }

    @Test("an advertisement's TXT record reads back as the device it describes")
    func advertisementRoundTrip() throws {
        var advertisement = CastAdvertisement(id: "0123456789abcdef0123456789abcdef", friendlyName: "Den", port: 8009)
        advertisement.statusText = "Netflix"
        advertisement.isBusy = true
        #expect(
            advertisement.txtRecord == [
                "id=0123456789abcdef0123456789abcdef", "cd=FEDCBA9876543210FEDCBA9876543210", "rm=", "ve=05",
                "md=Chromecast", "ic=/setup/icon.png", "fn=Den", "ca=4101", "st=1", "bs=FA8FCAABCDEF", "nf=1",
                "rs=Netflix",
            ]
        )
        #expect(advertisement.defaultInstanceName == "Chromecast-0123456789abcdef0123456789abcdef")
        let device = try #require(CastTXT.parse(Self.service(advertisement.txtRecord)).device)
        #expect(device.friendlyName == "Den")
        #expect(device.statusText == "Netflix")
        #expect(device.capabilities.rawValue == 4101)
    }

    @Test("invalid advertisements are refused before reaching the daemon")
    func invalidAdvertisements() {
        #expect(CastAdvertisement(id: "", friendlyName: "x").problem == "the id is empty")
        #expect(CastAdvertisement(id: "a", friendlyName: "x", port: 0).problem == "port 0 is out of range")
        let long = CastAdvertisement(id: "a", friendlyName: String(repeating: "n", count: 300))
        #expect(long.problem?.hasSuffix("is longer than 255 bytes") == true)
        var named = CastAdvertisement(id: "a", friendlyName: "x")
        named.modelName = String(repeating: "M", count: 80)
        #expect(named.defaultInstanceName.utf8.count == 63)
        #expect(named.problem == nil)
    }
}
