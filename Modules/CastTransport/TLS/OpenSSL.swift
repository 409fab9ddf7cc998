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
