internal import COpenSSL
import NIOCore

/// The BIO a ``TLSHandler``'s OpenSSL connection reads ciphertext from and writes ciphertext to: the pipeline's
/// own buffers rather than two memory BIOs.
///
/// OpenSSL reads a socket read's bytes straight from its `ByteBuffer`, and what it seals is appended to one
/// outbound `ByteBuffer` that goes down the pipeline as it is: no copy into or out of a BIO's own buffer, and
/// nothing kept between reads. Memory BIOs keep the largest size they ever held (the handshake's certificate
/// flight) for the connection's life, a few KiB on every idle connection.
///
/// Used on the channel's event loop only. The BIO's data pointer is this object, unretained: the handler owns both
/// and frees the OpenSSL connection (and with it the BIO) first.
final class ByteBufferBIO {
    /// Ciphertext the socket brought that OpenSSL has not read yet; dropped once read.
    private var inbound: ByteBuffer?
    /// Ciphertext OpenSSL sealed since the last ``takeOutbound()``.
    private var outbound: ByteBuffer?
    private let allocator: ByteBufferAllocator
    /// The BIO; `SSL_set_bio` hands it to the OpenSSL connection, which frees it.
    let bio: OpaquePointer

    init?(allocator: ByteBufferAllocator) {
        guard let bio = BIO_new(Self.method) else { return nil }
        self.allocator = allocator
        self.bio = bio
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Hands `buffer` to OpenSSL's next reads, after whatever it has not read yet.
    func receive(_ buffer: ByteBuffer) {
        guard var unread = inbound.take(), unread.readableBytes > 0 else {
            inbound = buffer
            return
        }
        var buffer = buffer
        unread.writeBuffer(&buffer)
        inbound = unread
    }

    /// Lets the last read's buffer go once OpenSSL has read all of it (SwiftNIO reuses its read buffer only when
    /// nobody else holds it).
    func releaseReadBytes() {
        if inbound?.readableBytes == 0 { inbound = nil }
    }

    /// How many received bytes OpenSSL has not read yet.
    private var inboundBytes: Int { inbound?.readableBytes ?? 0 }

    /// How many sealed bytes wait for ``takeOutbound()``.
    var outboundBytes: Int { outbound?.readableBytes ?? 0 }

    /// The ciphertext sealed since the last call, if any.
    func takeOutbound() -> ByteBuffer? {
        guard let buffer = outbound.take(), buffer.readableBytes > 0 else { return nil }
        return buffer
    }

    // MARK: - OpenSSL's side

    private func read(into destination: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(inboundBytes, destination.count)
        guard count > 0 else { return 0 }
        inbound!.readWithUnsafeReadableBytes { source in
            destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: source.prefix(count)))
            return count
        }
        return count
    }

    private func write(_ source: UnsafeRawBufferPointer) {
        if outbound == nil {
            outbound = ScratchBuffers.take(.ciphertext, capacity: max(source.count, 512), allocator: allocator)
        }
        outbound!.writeBytes(source)
    }

    private static func from(_ bio: OpaquePointer?) -> ByteBufferBIO {
        Unmanaged<ByteBufferBIO>.fromOpaque(BIO_get_data(bio)!).takeUnretainedValue()
    }

    /// The BIO type, made once: its callbacks find their ``ByteBufferBIO`` through the BIO's data pointer.
    private nonisolated(unsafe) static let method: OpaquePointer = {
        // nonisolated(unsafe): a BIO_METHOD is read-only once set up here, and OpenSSL reads it from any thread.
        guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "swift-cast ByteBuffer") else {
            fatalError("BIO_meth_new failed: out of memory")
        }
        BIO_meth_set_create(method) { bio in
            BIO_set_init(bio, 1)
            return 1
        }
        BIO_meth_set_destroy(method) { _ in 1 }
        BIO_meth_set_read(method) { bio, destination, length in
            COpenSSL_BIO_clear_retry_flags(bio)
            guard let destination, length > 0 else { return 0 }
            let count = ByteBufferBIO.from(bio).read(
                into: UnsafeMutableRawBufferPointer(start: destination, count: Int(length))
            )
            guard count > 0 else {
                // No bytes yet, not the end: OpenSSL answers SSL_ERROR_WANT_READ.
                COpenSSL_BIO_set_retry_read(bio)
                return -1
            }
            return Int32(count)
        }
        BIO_meth_set_write(method) { bio, source, length in
            COpenSSL_BIO_clear_retry_flags(bio)
            guard let source, length > 0 else { return 0 }
            ByteBufferBIO.from(bio).write(UnsafeRawBufferPointer(start: source, count: Int(length)))
            return length
        }
        BIO_meth_set_ctrl(method) { bio, command, _, _ in
            switch command {
            case BIO_CTRL_FLUSH: return 1
            case BIO_CTRL_PENDING: return ByteBufferBIO.from(bio).inboundBytes
            case BIO_CTRL_WPENDING: return ByteBufferBIO.from(bio).outboundBytes
            default: return 0
            }
        }
        return method
    }()
}
