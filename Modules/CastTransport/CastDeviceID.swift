/// The two spellings of a Cast device id: the mDNS `id` TXT form (32 lowercase hex digits), which discovery lists
/// devices by, and the UUID form (8-4-4-4-12) that the multizone namespace, `eureka_info` and `DEVICE_INFO` may
/// use. Senders and the emulator both convert between them, so the conversion lives here, below both.
public enum CastDeviceID {
    /// Without hyphens, lowercased: the form of the mDNS `id` record.
    public static func normalized(_ id: String) -> String { String(id.filter { $0 != "-" }).lowercased() }

    /// A 32-hex-digit id (either form) as 8-4-4-4-12, its letters as given; any other id as it is.
    public static func hyphenated(_ id: String) -> String {
        let digits = Array(id.filter { $0 != "-" })
        guard digits.count == 32 else { return id }
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(digits[$0]) }.joined(separator: "-")
    }
}
