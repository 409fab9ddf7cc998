import NIOCore
import NIOPosix

/// Buffers that one event-loop thread's connections take turns with, instead of one each (kept on thousands of
/// idle sessions) or a new one for every message (two allocations each, on every PING and PONG).
///
/// A user takes a buffer out while it fills it, so that a user it calls in between finds none and makes its own,
/// and gives it back once it has handed it on. If the layer it went to still holds it at the next ``take(_:capacity:allocator:)``
/// (a frame not yet whole, a write the socket did not take), clearing it copies: the holder keeps its bytes.
// @unchecked: each instance is reached from its own thread only (thread-specific storage).
final class ScratchBuffers: @unchecked Sendable {
    /// What a buffer is for: each use has its own, and its own size limit.
    enum Use {
        /// Frames ``CastFrameHandler`` encodes.
        case frame
        /// Plaintext ``TLSHandler`` reads from its records.
        case plaintext
        /// Ciphertext ``ByteBufferBIO`` seals.
        case ciphertext

        /// The largest buffer kept: room for a heartbeat and the usual media command (a LOAD with metadata or a
        /// queue gets a buffer of its own size), and for a whole TLS record of plaintext.
        var keptCapacity: Int {
            switch self {
            case .frame: 512
            case .plaintext: TLSHandler.recordSize
            case .ciphertext: 4 * 1024
            }
        }
    }

    private var frame: ByteBuffer?
    private var plaintext: ByteBuffer?
    private var ciphertext: ByteBuffer?

    private static let perThread = ThreadSpecificVariable<ScratchBuffers>()

    private static var current: ScratchBuffers { perThread.current(orMake: ScratchBuffers.init) }

    /// This thread's empty buffer for `use`, or a new one of `capacity` bytes if another user has it.
    static func take(_ use: Use, capacity: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        // Bound straight from the call, not through another variable: a second reference would make `clear` copy.
        guard var buffer = current.takeKept(use) else { return allocator.buffer(capacity: capacity) }
        buffer.clear()
        return buffer
    }

    private func takeKept(_ use: Use) -> ByteBuffer? {
        switch use {
        case .frame: frame.take()
        case .plaintext: plaintext.take()
        case .ciphertext: ciphertext.take()
        }
    }

    /// Keeps `buffer` for this thread's next ``take(_:capacity:allocator:)`` of `use`, unless it grew past the
    /// use's limit.
    static func giveBack(_ buffer: ByteBuffer, for use: Use) {
        guard buffer.capacity <= use.keptCapacity else { return }
        let scratch = current
        switch use {
        case .frame: scratch.frame = buffer
        case .plaintext: scratch.plaintext = buffer
        case .ciphertext: scratch.ciphertext = buffer
        }
    }
}
