import NIOCore

/// Splits outgoing plaintext into pieces of at most ``chunkSize`` bytes, each of which the TLS handler seals
/// into its own record, so the peer receives frames split across reads.
final class ChunkingHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The largest piece; `nil` passes writes through unchanged.
    var chunkSize: Int?

    init(chunkSize: Int?) { self.chunkSize = chunkSize }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var buffer = unwrapOutboundIn(data)
        guard let chunkSize, chunkSize > 0, buffer.readableBytes > chunkSize else {
            context.write(data, promise: promise)
            return
        }
        while buffer.readableBytes > chunkSize {
            let piece = buffer.readSlice(length: chunkSize)!
            context.write(wrapOutboundOut(piece), promise: nil)
        }
        context.write(wrapOutboundOut(buffer), promise: promise)
    }
}
