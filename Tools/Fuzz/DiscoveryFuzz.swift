// swift-cast — Apache-2.0

#if DEBUG || CAST_FUZZING
@testable import CastDiscovery

/// The `_googlecast._tcp` TXT record reader.
enum DiscoveryFuzz {
    /// The input as TXT RDATA on the wire (RFC 1035 §3.3.14): strings, each a length byte and that many bytes; a
    /// last string cut short keeps what is there, as a lenient resolver would.
    static func txtRecord(_ bytes: [UInt8]) {
        var strings: [[UInt8]] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + 1 + Int(bytes[offset]))
            strings.append(Array(bytes[(offset + 1)..<end]))
            offset = end
        }
        let record = TXTRecord(strings)
        _ = record.bytes("id")
        let service = ResolvedService(
            key: ServiceKey(
                interfaceIndex: 1,
                isIPv6: false,
                name: "Chromecast-fuzz",
                type: "_googlecast._tcp",
                domain: "local"
            ),
            hostName: "fuzz.local",
            address: DeviceAddress("192.0.2.1"),
            port: 8009,
            txt: strings
        )
        let parsed = CastTXT.parse(service)
        guard let device = parsed.device else { return }
        _ = device.hashValue
        _ = device.capabilities.contains(.videoOut)
    }
}
#endif
