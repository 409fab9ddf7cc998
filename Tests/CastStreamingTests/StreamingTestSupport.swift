import CastStreaming

/// Bytes from hexadecimal text; spaces are ignored.
func hexBytes(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

/// A fixed key and mask for tests.
let testCrypto = try! FrameCrypto(
    key: hexBytes("000102030405060708090a0b0c0d0e0f"),
    ivMask: hexBytes("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
)

/// The error code of `body`'s failure, or `nil` when it does not fail with a ``CastStreamingError``.
func streamingErrorCode(_ body: () throws -> Void) -> CastStreamingError.Code? {
    do {
        try body()
        return nil
    } catch {
        return (error as? CastStreamingError)?.code
    }
}
