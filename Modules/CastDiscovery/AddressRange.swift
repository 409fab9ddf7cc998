/// A bounded block of IPv4 addresses to scan for devices that mDNS cannot see (another subnet, a VLAN, a network
/// that drops multicast): `192.168.2.0/24`, or one address.
///
/// Ranges are bounded so that a typo (`/8` for `/28`) cannot flood a network: at most ``maximumAddressCount``
/// addresses. Only IPv4 is accepted, since IPv6 subnets are too large to sweep; scan an IPv6 device by giving it
/// as a static host instead.
public struct AddressRange: Sendable, Hashable, CustomStringConvertible {
    /// The most addresses one range may hold: a `/20`.
    public static let maximumAddressCount = 4096

    /// The first address of the block (host bits cleared), as a 32-bit number.
    public let network: UInt32
    /// The prefix length, 20…32.
    public let prefixLength: Int

    /// Parses `A.B.C.D/N` or a single `A.B.C.D` (a `/32`). Host bits set in the address are cleared
    /// (`10.0.0.7/29` is `10.0.0.0/29`).
    ///
    /// - Throws: ``CastDiscoveryError/Code/invalidRange`` for anything else: an IPv6 range, a malformed address
    ///   or prefix, or a block larger than ``maximumAddressCount`` addresses.
    public init(_ text: String) throws(CastDiscoveryError) {
        let trimmed = text.trimmingBlanks()
        let parts = trimmed.split(separator: "/", omittingEmptySubsequences: false)
        if trimmed.contains(":") {
            throw CastDiscoveryError(
                .invalidRange,
                "'\(text)' is an IPv6 range; only IPv4 ranges can be scanned (give an IPv6 device with --host)"
            )
        }
        guard parts.count <= 2, let address = Self.parse(String(parts[0])) else {
            throw CastDiscoveryError(.invalidRange, "'\(text)' is not an IPv4 address or range (A.B.C.D/N)")
        }
        var prefix = 32
        if parts.count == 2 {
            guard parts[1].count <= 2, parts[1].allSatisfy(\.isASCII), let value = Int(parts[1]),
                (0...32).contains(value)
            else {
                throw CastDiscoveryError(.invalidRange, "'\(text)': the prefix length must be 0…32")
            }
            prefix = value
        }
        guard 1 << (32 - prefix) <= Self.maximumAddressCount else {
            throw CastDiscoveryError(
                .invalidRange,
                "'\(text)' holds \(1 << (32 - prefix)) addresses; a scan covers at most \(Self.maximumAddressCount) "
                    + "(a /20): give a smaller range"
            )
        }
        prefixLength = prefix
        network = prefix == 0 ? 0 : address & ~(UInt32.max >> UInt32(prefix))
    }

    /// Every address that may hold a device, in order: all of them for a `/31` or `/32`, else all but the
    /// network and broadcast addresses.
    public var addresses: [String] {
        let size = UInt32(1) << UInt32(32 - prefixLength)
        let hosts = size <= 2 ? 0..<size : 1..<(size - 1)
        return hosts.map { Self.format(network + $0) }
    }

    /// Whether `address` (dotted IPv4) lies in the block.
    public func contains(_ address: String) -> Bool {
        guard let value = Self.parse(address) else { return false }
        let mask = prefixLength == 0 ? 0 : ~(UInt32.max >> UInt32(prefixLength))
        return value & mask == network
    }

    /// The range in CIDR notation, as `--scan` takes it.
    public var description: String { "\(Self.format(network))/\(prefixLength)" }

    /// Four decimal octets, 0…255, without leading signs; `nil` otherwise.
    static func parse(_ text: String) -> UInt32? {
        let octets = text.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return nil }
        var value: UInt32 = 0
        for octet in octets {
            guard (1...3).contains(octet.count), octet.allSatisfy({ $0.isASCII && $0.isNumber }),
                let number = UInt32(octet), number <= 255
            else { return nil }
            value = value << 8 | number
        }
        return value
    }

    static func format(_ value: UInt32) -> String {
        "\(value >> 24).\(value >> 16 & 255).\(value >> 8 & 255).\(value & 255)"
    }
}

extension String {
    fileprivate func trimmingBlanks() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
