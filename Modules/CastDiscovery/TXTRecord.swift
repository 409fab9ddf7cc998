/// A DNS-SD TXT record (RFC 6763 §6) read defensively: whatever a device, or a hostile host, puts in it.
///
/// Keys are case-insensitive and stored lowercased. A key given twice keeps its first value, as §6.4 requires;
/// strings without a key, with a non-ASCII key, or empty are ignored. Every such oddity is noted in ``problems``.
struct TXTRecord: Sendable, Equatable {
    /// Values by lowercased key; `nil` for a boolean attribute (a key without `=`).
    private(set) var values: [String: [UInt8]?] = [:]
    /// What was wrong with the record, in words for a log message.
    private(set) var problems: [String] = []

    /// Reads the record's strings in wire order.
    init(_ strings: [[UInt8]]) {
        for string in strings where !string.isEmpty {
            let separator = string.firstIndex(of: UInt8(ascii: "="))
            let keyBytes = string[..<(separator ?? string.endIndex)]
            guard !keyBytes.isEmpty else {
                problems.append("a string without a key was ignored")
                continue
            }
            guard keyBytes.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                problems.append("a key with bytes outside printable ASCII was ignored")
                continue
            }
            let key = String(decoding: keyBytes, as: UTF8.self).lowercased()
            guard values[key] == nil else {
                problems.append("duplicate key '\(key)': the first value is used")
                continue
            }
            values[key] = separator.map { Array(string[string.index(after: $0)...]) } ?? .some(nil)
        }
    }

    /// The raw value of `key`, if present with a value.
    func bytes(_ key: String) -> [UInt8]? { values[key] ?? nil }
}

/// What the `_googlecast._tcp` TXT keys say about a device, with limits that keep hostile records harmless.
///
/// Missing or unusable `id`: the record is skipped (Chrome does the same). Everything else degrades: a missing `fn`
/// becomes the instance name, invalid UTF-8 is repaired with U+FFFD, values longer than
/// ``maximumValueLength`` bytes are cut, a non-numeric `ca` means no capabilities, a non-numeric `ve` no version.
enum CastTXT {
    /// Longest text value kept, in UTF-8 bytes; longer ones are cut at a character boundary.
    static let maximumValueLength = 128
    /// Longest device id accepted (real ones are 32 hex digits).
    static let maximumIDLength = 64

    /// The fields of one resolved service, or `nil` when it cannot be a Cast device.
    struct Parsed: Sendable {
        var device: CastDevice?
        var warnings: [String]
    }

    /// Builds a device (one address) from a resolved service; `warnings` lists everything that was off.
    static func parse(_ service: ResolvedService) -> Parsed {
        let record = TXTRecord(service.txt)
        var warnings = record.problems

        guard let idBytes = record.bytes("id"), !idBytes.isEmpty else {
            warnings.append("no 'id' key: skipped")
            return Parsed(device: nil, warnings: warnings)
        }
        guard let id = String(validating: idBytes, as: UTF8.self) else {
            warnings.append("'id' is not UTF-8: skipped")
            return Parsed(device: nil, warnings: warnings)
        }
        guard idBytes.count <= maximumIDLength, id.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            warnings.append("'id' is longer than \(maximumIDLength) bytes or not plain ASCII: skipped")
            return Parsed(device: nil, warnings: warnings)
        }

        func text(_ key: String) -> String? {
            guard let bytes = record.bytes(key) else { return nil }
            var kept = bytes
            if bytes.count > maximumValueLength {
                warnings.append("'\(key)' is \(bytes.count) bytes: cut to \(maximumValueLength)")
                kept = Array(bytes.prefix(maximumValueLength))
                // Do not leave half a character behind: find where the last character starts and drop it if the
                // cut took some of its bytes.
                var start = kept.count - 1
                while start > 0, kept.count - start < 4, kept[start] & 0xC0 == 0x80 { start -= 1 }
                let lead = kept[start]
                let length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
                if kept.count - start < length { kept.removeSubrange(start...) }
            }
            if let valid = String(validating: kept, as: UTF8.self) { return valid }
            warnings.append("'\(key)' is not valid UTF-8: repaired")
            return String(decoding: kept, as: UTF8.self)
        }

        var friendlyName = text("fn") ?? ""
        if friendlyName.isEmpty {
            warnings.append("no 'fn' value: the instance name is shown instead")
            friendlyName = service.key.name
        }

        var capabilities: DeviceCapabilities = []
        if let value = text("ca") {
            if let bits = Int(value), bits >= 0 {
                capabilities = DeviceCapabilities(rawValue: bits)
            } else {
                warnings.append("'ca' is not a decimal number: no capabilities assumed")
            }
        }

        var version: Int?
        if let value = text("ve") {
            version = Int(value)
            if version == nil { warnings.append("'ve' is not a number: ignored") }
        }

        let device = CastDevice(
            id: id,
            friendlyName: friendlyName,
            modelName: text("md"),
            capabilities: capabilities,
            iconPath: text("ic"),
            statusText: text("rs"),
            protocolVersion: version,
            hostName: service.hostName.isEmpty ? nil : service.hostName,
            addresses: service.address.map { [$0] } ?? [],
            port: service.port
        )
        return Parsed(device: device, warnings: warnings)
    }
}
