import NIOCore

/// Splits outgoing plaintext into pieces of at most ``chunkSize`` bytes, each of which the TLS handler seals
/// into its own record, so the peer receives frames split across reads.
final class ChunkingHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The largest piece; `nil` passes writes through unchanged.
    var chunkSize: Int?
    /// The time between two pieces (a slow peer); `nil` writes them at once.
    var interval: TimeAmount?
    /// When the last scheduled piece goes out, so later writes stay behind earlier ones.
    private var lastSlot = NIODeadline.uptimeNanoseconds(0)

    init(chunkSize: Int?, interval: TimeAmount? = nil) {
        self.chunkSize = chunkSize
        self.interval = interval
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var buffer = unwrapOutboundIn(data)
        guard let chunkSize, chunkSize > 0, buffer.readableBytes > chunkSize || interval != nil else {
            context.write(data, promise: promise)
            return
        }
        var pieces: [ByteBuffer] = []
        while buffer.readableBytes > chunkSize { pieces.append(buffer.readSlice(length: chunkSize)!) }
        pieces.append(buffer)
        guard let interval else {
            for piece in pieces.dropLast() { context.write(wrapOutboundOut(piece), promise: nil) }
            context.write(wrapOutboundOut(pieces[pieces.count - 1]), promise: promise)
            return
        }
        // Paced: each piece on its own slot, flushed as it goes out.
        let loop = context.eventLoop.assumeIsolated()
        for (index, piece) in pieces.enumerated() {
            lastSlot = max(lastSlot, .now()) + interval
            let last = index == pieces.count - 1
            loop.scheduleTask(deadline: lastSlot) {
                context.writeAndFlush(self.wrapOutboundOut(piece), promise: last ? promise : nil)
            }
        }
    }
}
