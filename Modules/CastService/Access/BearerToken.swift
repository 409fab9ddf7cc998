import CastTransport

/// A bearer token as the service stores it: only its SHA-256, so a leaked profile does not leak the token.
///
/// Tokens are random (``generate()`` makes 32 bytes), so one fast hash suffices; a password would need a slow one.
/// Written `sha256:` and 64 hex digits in profiles and on the command line.
public struct BearerTokenHash: Sendable, Hashable, CustomStringConvertible {
    private let digest: [UInt8]

    /// The hash of `token`.
    public init(hashing token: String) {
        digest = SystemCrypto.sha256(Array(token.utf8))
    }

    /// Reads `sha256:` followed by 64 hex digits.
    ///
    /// - Throws: ``CastServiceError/Code/invalidConfiguration`` naming the expected form.
    public init(parsing text: String) throws(CastServiceError) {
        let hex = text.hasPrefix("sha256:") ? text.dropFirst(7) : ""
        var digest: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex),
            let byte = UInt8(hex[index..<next], radix: 16)
        {
            digest.append(byte)
            index = next
        }
        guard index == hex.endIndex, digest.count == 32 else {
            throw CastServiceError(
                .invalidConfiguration,
                "a token hash is sha256: and 64 hex digits (castd token makes one), not '\(text.prefix(80))'",
                httpStatus: 500,
                field: "tokens"
            )
        }
        self.digest = digest
    }

    /// Whether `token` is the token hashed, compared in constant time.
    public func matches(_ token: String) -> Bool {
        SystemCrypto.constantTimeEquals(digest, SystemCrypto.sha256(Array(token.utf8)))
    }

    /// `sha256:` and the digest in hex, as profiles store it.
    public var description: String {
        "sha256:" + Self.hex(digest)
    }

    /// A new random token (64 hex digits) and its hash: give the token to clients, keep the hash.
    public static func generate() -> (token: String, hash: BearerTokenHash) {
        let token = hex(SystemCrypto.randomBytes(count: 32))
        return (token, BearerTokenHash(hashing: token))
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
