#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// This library's name and version, as peers see it in CONNECT's `userAgent`.
public enum CastTransportVersion {
    /// The library version.
    public static let current = "0.1.0"
    /// The default user agent: `swift-cast/<version> (Linux <machine>)`.
    public static let userAgent = "swift-cast/\(current) (\(systemVersion))"

    /// `Linux x86_64`-style text from uname(2).
    static let systemVersion: String = {
        var names = utsname()
        guard uname(&names) == 0 else { return "Linux" }
        func text<T>(_ field: T) -> String {
            withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return "\(text(names.sysname)) \(text(names.machine))"
    }()
}

extension JSONValue {
    /// The CONNECT payload for a virtual connection (cast-protocol.md §3.1): a strong connection from a
    /// Linux sender (`platform` 6) with this library's user agent.
    static func connectPayload(userAgent: String) -> JSONValue {
        [
            "type": "CONNECT",
            "connType": 0,
            "origin": [:],
            "userAgent": .string(userAgent),
            "senderInfo": [
                "sdkType": 2,
                "version": .string(CastTransportVersion.current),
                "browserVersion": .string(CastTransportVersion.current),
                "platform": 6,
                "connectionType": 1,
                "systemVersion": .string(CastTransportVersion.systemVersion),
            ],
        ]
    }
}
