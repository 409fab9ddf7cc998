import CastStreaming
import Testing

/// The reference's AES-128-CTR vectors (§8), including the counter carry across the low 32 bits.
@Suite struct FrameCryptoTests {
    let plaintext = Array("Cast Streaming test frame payload!".utf8)

    private func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map {
            let start = hex.index(hex.startIndex, offsetBy: $0)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    @Test(arguments: [
        (
            "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", Int64(0), "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
            "25c6b49c1401453af230b36e5d718dd9d7f2a320d1ec5dc0c18d03da17f0708bb650"
        ),
        (
            "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", 1, "f0f1f2f3f4f5f6f7f8f9fafafcfdfeff",
            "f6ddd19cb2634bb9b55c78f698df386f8f2856d2108bf3659c47ec537737b182c41e"
        ),
        (
            "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", 74565, "f0f1f2f3f4f5f6f7f8f8d9befcfdfeff",
            "899e1a31199079a4f279532ba2349a08b148bf90036671e59ea5033207e027dc6569"
        ),
        (
            "00112233445566778899aabbffffffff", 7, "00112233445566778899aabcffffffff",
            "660fba8e17fac6bd6bc363b1e33fda3b508201e72eddb3680fb28fd01ff9baefd028"
        ),
    ])
    func referenceVectors(mask: String, frame: Int64, nonce: String, ciphertext: String) throws {
        let crypto = try FrameCrypto(key: bytes("000102030405060708090a0b0c0d0e0f"), ivMask: bytes(mask))
        #expect(crypto.nonce(forFrame: frame) == bytes(nonce))
        #expect(crypto.apply(toFrame: frame, plaintext) == bytes(ciphertext))
        #expect(crypto.apply(toFrame: frame, bytes(ciphertext)) == plaintext)
    }

    @Test func refusesKeysOfTheWrongSize() {
        #expect { try FrameCrypto(key: [1, 2, 3], ivMask: Array(repeating: 0, count: 16)) } throws: {
            ($0 as? CastStreamingError)?.code == .invalidOffer
        }
    }

    @Test func randomKeysDiffer() {
        #expect(FrameCrypto.random() != FrameCrypto.random())
    }
}
