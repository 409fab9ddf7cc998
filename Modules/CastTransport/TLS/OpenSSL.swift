// The thin wrapper around the system OpenSSL: everything here is internal and C types stay in this module.
internal import COpenSSL

/// OpenSSL's thread-local error queue, turned into text once, where the failure is noticed.
enum OpenSSLErrorQueue {
    /// Removes every queued error and returns them as OpenSSL's own one-line strings, oldest first.
    static func drain() -> [String] {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages
    }

    /// A ``CastTransportError`` for a failed OpenSSL call, carrying the drained error queue in its message.
    static func error(_ code: CastTransportError.Code, _ what: String) -> CastTransportError {
        let stack = drain()
        let detail = stack.isEmpty ? "" : ": " + stack.joined(separator: "; ")
        return CastTransportError(code, what + detail)
    }

    /// Empties the calling thread's queue before a call whose failure is read from it (`SSL_get_error` looks at
    /// it): the queue is per thread, shared by every connection on an event loop, and an error another call left
    /// there would fail this one. Peeks first: clearing costs about 320 ns even when empty, a peek about 40.
    static func discardStale() {
        if ERR_peek_error() != 0 { ERR_clear_error() }
    }
}

/// Owns a memory BIO holding PEM text, for reading certificates and keys out of Swift strings.
///
/// `BIO_new_mem_buf` does not copy: the bytes must stay alive while the BIO is used, so everything happens inside
/// the buffer's scope.
func withMemoryBIO<Result>(_ text: String, _ body: (OpaquePointer) throws -> Result) throws -> Result {
    let bytes = Array(text.utf8)
    return try bytes.withUnsafeBytes { buffer in
        guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else {
            throw OpenSSLErrorQueue.error(.tlsFailure, "BIO_new_mem_buf failed")
        }
        defer { BIO_free(bio) }
        return try body(bio)
    }
}

/// Reads everything written into a memory BIO.
func readAll(fromMemoryBIO bio: OpaquePointer) -> [UInt8] {
    var data: UnsafeMutablePointer<CChar>?
    let length = COpenSSL_BIO_get_mem_data(bio, &data)
    guard length > 0, let data else { return [] }
    return data.withMemoryRebound(to: UInt8.self, capacity: length) {
        Array(UnsafeBufferPointer(start: $0, count: length))
    }
}

/// The system OpenSSL's digest and random bytes, for callers outside this module (token hashes, nonces).
public enum SystemCrypto {
    /// The SHA-256 digest of `bytes` (32 bytes).
    public static func sha256(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let succeeded = Array(bytes).withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil) == 1
        }
        precondition(succeeded && length == 32, "EVP_Digest(SHA-256) failed: \(OpenSSLErrorQueue.drain())")
        return digest
    }

    /// `count` bytes from OpenSSL's cryptographically secure generator.
    public static func randomBytes(count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        precondition(RAND_bytes(&bytes, Int32(count)) == 1, "RAND_bytes failed: \(OpenSSLErrorQueue.drain())")
        return bytes
    }

    /// `bytes` encrypted (or decrypted: it is the same operation) with AES-128 in counter mode.
    ///
    /// `initialCounter` is the first 16-byte counter block; each following block adds one to it as a big-endian
    /// 128-bit integer (OpenSSL's `EVP_aes_128_ctr`), which is what Cast Streaming's frame encryption needs.
    public static func aes128CTR(key: [UInt8], initialCounter: [UInt8], _ bytes: [UInt8]) -> [UInt8] {
        precondition(key.count == 16 && initialCounter.count == 16, "AES-128-CTR needs a 16-byte key and counter")
        guard !bytes.isEmpty else { return [] }
        guard let context = EVP_CIPHER_CTX_new() else { preconditionFailure("EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: bytes.count + 16)
        var written: Int32 = 0
        var finished: Int32 = 0
        let succeeded =
            EVP_EncryptInit_ex(context, EVP_aes_128_ctr(), nil, key, initialCounter) == 1
            && EVP_EncryptUpdate(context, &output, &written, bytes, Int32(bytes.count)) == 1
            && output.withUnsafeMutableBufferPointer {
                EVP_EncryptFinal_ex(context, $0.baseAddress! + Int(written), &finished) == 1
            }
        precondition(succeeded, "AES-128-CTR failed: \(OpenSSLErrorQueue.drain())")
        output.removeLast(output.count - Int(written + finished))
        return output
    }

    /// Whether `a` and `b` are equal, in time that depends only on their lengths (for comparing secrets).
    public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { left in
            b.withUnsafeBytes { right in CRYPTO_memcmp(left.baseAddress, right.baseAddress, a.count) == 0 }
        }
    }
}
