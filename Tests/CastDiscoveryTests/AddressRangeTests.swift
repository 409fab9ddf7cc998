import CastTransport
import Testing

@testable import CastDiscovery

/// Address ranges, `eureka_info` documents and the diagnosis's readings of system tables: pure parsing.
@Suite("Address ranges, eureka_info and diagnosis parsing")
struct AddressRangeTests {
    @Test("a CIDR block lists its host addresses; a /31 or /32 lists every address; host bits are cleared")
    func addresses() throws {
        let block = try AddressRange("192.168.2.8/29")
        #expect(block.description == "192.168.2.8/29")
        #expect(block.addresses == (9...14).map { "192.168.2.\($0)" })
        #expect(try AddressRange("10.0.0.7/30").description == "10.0.0.4/30")
        #expect(try AddressRange("10.0.0.7/30").addresses == ["10.0.0.5", "10.0.0.6"])
        #expect(try AddressRange("10.0.0.6/31").addresses == ["10.0.0.6", "10.0.0.7"])
        #expect(try AddressRange(" 10.1.2.3 ").addresses == ["10.1.2.3"])
        #expect(try AddressRange("172.16.0.0/20").addresses.count == 4094)
        #expect(block.contains("192.168.2.15"))
        #expect(!block.contains("192.168.2.16"))
        #expect(!block.contains("192.168.2.7"))
        #expect(!block.contains("not an address"))
    }

    @Test(
        "bad input is refused with invalidRange and a message saying what is wrong",
        arguments: [
            ("10.0.0.0/19", "holds 8192 addresses; a scan covers at most 4096"),
            ("0.0.0.0/0", "at most 4096 (a /20)"),
            ("10.0.0.0/33", "the prefix length must be 0…32"),
            ("10.0.0.0/", "the prefix length must be 0…32"),
            ("10.0.0.0/-1", "the prefix length must be 0…32"),
            ("10.0.0/24", "is not an IPv4 address or range"),
            ("10.0.0.256/32", "is not an IPv4 address or range"),
            ("10.0.0.+1", "is not an IPv4 address or range"),
            ("living-room.local", "is not an IPv4 address or range"),
            ("", "is not an IPv4 address or range"),
            ("10.0.0.0/24/8", "is not an IPv4 address or range"),
            ("fe80::/120", "only IPv4 ranges can be scanned"),
        ]
    )
    func invalid(text: String, message: String) {
        #expect {
            try AddressRange(text)
        } throws: { error in
            guard let error = error as? CastDiscoveryError else { return false }
            return error.code == .invalidRange && error.message.contains(message)
        }
    }

    /// The shape a Google Home Mini answers `params=name,device_info,multizone` with (identifiers changed).
    static let realisticEureka = #"""
        {"name": "Kitchen speaker", "ssdp_udn": "99F3C58B-F347-1CC1-0CD8-7F79D33599CF", "version": 12,
         "build_version": "1.56.281627",
         "device_info": {"4k_blocked": 0, "capabilities": {"audio_hdr_supported": false, "display_supported": false,
           "multizone_supported": true, "stats_supported": true}, "cloud_device_id": "56AED3E8", "factory_country_code":
           "US", "manufacturer": "Google Inc.", "model_name": "Google Home Mini", "product_name": "mushroom",
           "ssdp_udn": "99f3c58b-f347-1cc1-0cd8-7f79d33599cf", "uptime": 5083.4},
         "multizone": {"audio_output_delay": 0, "groups": [
           {"cast_port": 42139, "elected_leader": "self", "leader": "99f3c58b", "multichannel_status": 0,
            "name": "Downstairs", "stereo_pair_role": 0, "uuid": "e3e1a6f8-2b4d-4c2a-9d3e-0f1a2b3c4d5e"},
           {"cast_port": 32190, "elected_leader": "192.168.1.31:10001", "name": "Everywhere",
            "uuid": "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"},
           {"elected_leader": "192.168.1.40:10001", "name": "No port yet", "uuid": "11111111-2222-3333-4444-555555555555"},
           {"cast_port": 42139, "name": "no uuid"}],
          "dynamic_groups": [{"cast_port": 42200, "elected_leader": "[fe80::1]:10001", "name": "Dynamic",
            "uuid": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}], "multichannel_status": 0}}
        """#

    @Test("eureka_info: name, id in the mDNS form, model, capabilities, and the groups with their leaders")
    func eurekaInfo() throws {
        let info = EurekaInfo(json: try JSONValue(parsing: Self.realisticEureka))
        #expect(info.friendlyName == "Kitchen speaker")
        #expect(info.deviceID == "99f3c58bf3471cc10cd87f79d33599cf")
        #expect(info.modelName == "Google Home Mini")
        #expect(info.manufacturer == "Google Inc.")
        #expect(info.displaySupported == false)
        #expect(info.multizoneSupported == true)
        #expect(info.deviceInfo.capabilities == [.audioOut])
        #expect(
            info.groups == [
                .init(name: "Downstairs", id: "e3e1a6f82b4d4c2a9d3e0f1a2b3c4d5e", leaderHost: nil, castPort: 42139),
                .init(
                    name: "Everywhere",
                    id: "0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d",
                    leaderHost: "192.168.1.31",
                    castPort: 32190
                ),
                .init(name: "No port yet", id: "11111111222233334444555555555555", leaderHost: "192.168.1.40"),
                .init(name: "Dynamic", id: "aaaaaaaabbbbccccddddeeeeeeeeeeee", leaderHost: "fe80::1", castPort: 42200),
            ]
        )
        let groups = info.groupDevices(reportedBy: "192.168.1.20")
        #expect(groups.map(\.friendlyName) == ["Downstairs", "Everywhere", "Dynamic"])
        #expect(groups.map(\.host) == ["192.168.1.20", "192.168.1.31", "fe80::1"])
        #expect(groups.map(\.port) == [42139, 32190, 42200])
        #expect(groups.allSatisfy { $0.isGroup && $0.modelName == "Google Cast Group" && $0.sources == .scan })
    }

    @Test("eureka_info: missing or mistyped fields are left out, never guessed")
    func sparseEureka() throws {
        let info = EurekaInfo(json: try JSONValue(parsing: #"{"name": "", "device_info": {"model_name": 7}}"#))
        #expect(info == EurekaInfo())
        #expect(info.deviceInfo.capabilities == nil)
    }

    @Test("the route table: a default route or a 224.0.0.0/4 route carries mDNS; a unicast route does not")
    func routes() {
        let header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        let lan = "eth0\t0002A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
        #expect(DiscoveryDiagnosis.multicastRoute(inRouteTable: header + lan) == nil)
        let multicast = "wlan0\t000000E0\t00000000\t0001\t0\t0\t0\t000000F0\t0\t0\t0\n"
        #expect(
            DiscoveryDiagnosis.multicastRoute(inRouteTable: header + lan + multicast) == "multicast route via wlan0"
        )
        let standard = "eth0\t00000000\t0102A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
        #expect(DiscoveryDiagnosis.multicastRoute(inRouteTable: header + standard + lan) == "default route via eth0")
        let down = "eth0\t00000000\t0102A8C0\t0002\t0\t0\t0\t00000000\t0\t0\t0\n"
        #expect(DiscoveryDiagnosis.multicastRoute(inRouteTable: header + down) == nil, "a route that is not up")
    }

    @Test("firewall listings: rules that drop or reject UDP 5353 are found, others are not")
    func firewallRules() {
        let nft = """
            table inet filter {
            \tchain input {
            \t\ttype filter hook input priority 0; policy accept;
            \t\ttcp dport 5353 drop
            \t\tudp dport 53 drop
            \t\tudp dport 5353 drop
            \t\tudp dport mdns reject
            \t}
            }
            """
        #expect(
            DiscoveryDiagnosis.droppingRules(inNftRuleset: nft) == ["udp dport 5353 drop", "udp dport mdns reject"]
        )
        let iptables = """
            *filter
            :INPUT ACCEPT [0:0]
            -A INPUT -p udp -m udp --dport 5353 -j DROP
            -A INPUT -p tcp -m tcp --dport 5353 -j DROP
            -A INPUT -p udp -m udp --dport 5353 -j ACCEPT
            COMMIT
            """
        #expect(
            DiscoveryDiagnosis.droppingRules(inIptables: iptables) == ["-A INPUT -p udp -m udp --dport 5353 -j DROP"]
        )
    }
}
