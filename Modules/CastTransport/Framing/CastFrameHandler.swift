import NIOCore
import NIOPosix

/// The connection's framing layer: TLS plaintext in, ``CastMessage``s up; messages down, frames out.
///
/// One concrete handler rather than SwiftNIO's `ByteToMessageHandler` and `MessageToByteHandler` around
/// ``CastMessageDecoder`` and ``CastMessageEncoder``: those are generic classes, which other modules run
/// unspecialized (generic metadata looked up at run time on every message), and the encoder's handler allocates a
/// buffer per message. Here a read's complete frames are decoded straight from its buffer, only an unfinished
/// frame's bytes are kept for the next read, and frames are written into one buffer per thread, which all of the
/// thread's connections reuse (TLS seals a write before the next one comes; ``ScratchBuffers``).
///
/// Errors are the decoder's: a malformed frame is reported once (`errorCaught`; the router then closes) and
/// nothing after it is read; a connection that ends inside a frame reports
/// ``CastTransportError/Code/truncatedFrame``.
final class CastFrameHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = CastMessage
    typealias OutboundIn = CastMessage
    typealias OutboundOut = ByteBuffer

    private var decoder = CastMessageDecoder()
    /// The bytes of a frame that has not arrived whole yet.
    private var unfinished: ByteBuffer?
    private var hasFailed = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !hasFailed else { return }
        var buffer = unwrapInboundIn(data)
        let isOwn = unfinished != nil
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
            if isOwn {
                buffer.discardReadBytes()
                unfinished = buffer
            } else {
                // Only the unfinished frame's bytes, in a buffer of their own: the read's buffer is the TLS layer's,
                // reused for the thread's next read.
                var rest = context.channel.allocator.buffer(capacity: buffer.readableBytes)
                rest.writeBuffer(&buffer)
                unfinished = rest
            }
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
        var buffer = ScratchBuffers.take(
            .frame,
            capacity: ScratchBuffers.Use.frame.keptCapacity,
            allocator: context.channel.allocator
        )
        do {
            // Refuses a message over the limit before writing anything.
            try CastMessageEncoder().encode(data: unwrapOutboundIn(data), out: &buffer)
        } catch {
            ScratchBuffers.giveBack(buffer, for: .frame)
            promise?.fail(error)
            return
        }
        context.write(wrapOutboundOut(buffer), promise: promise)
        // For the thread's next frame (if TLS still holds it, as during the handshake, the next one copies).
        ScratchBuffers.giveBack(buffer, for: .frame)
    }
}
