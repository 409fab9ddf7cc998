import NIOCore
import NIOPosix

/// The connection's framing layer: TLS plaintext in, ``CastMessage``s up; messages down, frames out.
///
/// One concrete handler rather than SwiftNIO's `ByteToMessageHandler` and `MessageToByteHandler` around
/// ``CastMessageDecoder`` and ``CastMessageEncoder``: those are generic classes, which other modules run
/// unspecialized (generic metadata looked up at run time on every message), and the encoder's handler allocates a
/// buffer per message. Here a read's complete frames are decoded straight from its buffer, only an unfinished
/// frame's bytes are kept for the next read, and frames are written into one buffer per thread, which all of the
/// thread's connections reuse (TLS seals a write before the next one comes).
///
/// Errors are the decoder's: a malformed frame is reported once (`errorCaught`; the router then closes) and
/// nothing after it is read; a connection that ends inside a frame reports
/// ``CastTransportError/Code/truncatedFrame``.
final class CastFrameHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = CastMessage
    typealias OutboundIn = CastMessage
    typealias OutboundOut = ByteBuffer

    private let decoder = CastMessageDecoder()
    /// The bytes of a frame that has not arrived whole yet.
    private var unfinished: ByteBuffer?
    private var hasFailed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !hasFailed else { return }
        var buffer = unwrapInboundIn(data)
        if var held = unfinished.take() {
            held.writeBuffer(&buffer)
            buffer = held
        }
        do {
            while let message = try decoder.decodeFrame(from: &buffer) {
                context.fireChannelRead(wrapInboundOut(message))
            }
        } catch {
            hasFailed = true
            context.fireErrorCaught(error)
            return
        }
        if buffer.readableBytes > 0 {
            buffer.discardReadBytes()
            unfinished = buffer
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !hasFailed, let held = unfinished.take(), held.readableBytes > 0 {
            hasFailed = true
            context.fireErrorCaught(CastMessageDecoder.truncation(held.readableBytes))
        }
        context.fireChannelInactive()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let scratch = FrameScratch.current
        var buffer = scratch.buffer.take() ?? context.channel.allocator.buffer(capacity: FrameScratch.capacity)
        buffer.clear()
        do {
            // Refuses a message over the limit before writing anything.
            try CastMessageEncoder().encode(data: unwrapOutboundIn(data), out: &buffer)
        } catch {
            scratch.buffer = buffer
            promise?.fail(error)
            return
        }
        context.write(wrapOutboundOut(buffer), promise: promise)
        // Kept for the thread's next frame (if TLS still holds it, as during the handshake, `clear` copies); not
        // after a larger one.
        if buffer.capacity <= FrameScratch.capacity { scratch.buffer = buffer }
    }
}

/// The buffer the frames of one thread's connections are written into. Each connection kept one of its own
/// before, 0.5 KiB for each of thousands of idle sessions; taken out while a frame is written, so a write that
/// writes another finds none and makes its own.
// @unchecked: each is reached from its own thread only (thread-specific storage).
private final class FrameScratch: @unchecked Sendable {
    var buffer: ByteBuffer?

    /// The largest buffer kept: room for a heartbeat and the usual media command (a LOAD with metadata or a
    /// queue is larger and gets a buffer of its own size).
    static let capacity = 512

    private static let perThread = ThreadSpecificVariable<FrameScratch>()

    static var current: FrameScratch { perThread.current(orMake: FrameScratch.init) }
}
