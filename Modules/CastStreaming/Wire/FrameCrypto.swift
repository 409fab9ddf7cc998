import CastTransport

/// AES-128-CTR frame encryption: each stream has its own key and IV mask (from the OFFER), and each frame its own
/// counter block — the mask XOR the low 32 bits of the frame id written big-endian at bytes 8–11.
public struct FrameCrypto: Sendable, Hashable {
    /// The 16-byte AES key.
    public let key: [UInt8]
    /// The 16-byte IV mask.
    public let ivMask: [UInt8]

    /// A pair of 16-byte values.
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/invalidOffer`` unless both are 16 bytes.
    public init(key: [UInt8], ivMask: [UInt8]) throws {
        guard key.count == 16, ivMask.count == 16 else {
            throw CastStreamingError(.invalidOffer, "an AES key and IV mask have 16 bytes each")
        }
        self.key = key
        self.ivMask = ivMask
    }

    /// A fresh random key and mask from the system OpenSSL.
    public static func random() -> FrameCrypto {
        try! FrameCrypto(key: SystemCrypto.randomBytes(count: 16), ivMask: SystemCrypto.randomBytes(count: 16))
    }

    /// The counter block frame `frameID` starts with.
    public func nonce(forFrame frameID: Int64) -> [UInt8] {
        var nonce = ivMask
        let low = UInt32(truncatingIfNeeded: frameID)
        for index in 0..<4 { nonce[8 + index] ^= UInt8(truncatingIfNeeded: low >> (24 - 8 * index)) }
        return nonce
    }

    /// Encrypts (or decrypts) a whole frame.
    public func apply(toFrame frameID: Int64, _ bytes: [UInt8]) -> [UInt8] {
        SystemCrypto.aes128CTR(key: key, initialCounter: nonce(forFrame: frameID), bytes)
    }
}

extension FrameCrypto {
    /// Parses the OFFER's 32-hex-digit form (either case).
    init(hexKey: String, hexIVMask: String) throws {
        guard let key = Hex.decode(hexKey), let mask = Hex.decode(hexIVMask) else {
            throw CastStreamingError(.invalidOffer, "aesKey and aesIvMask must be 32 hexadecimal digits")
        }
        try self.init(key: key, ivMask: mask)
    }
}

/// Hexadecimal text for keys.
enum Hex {
    static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
