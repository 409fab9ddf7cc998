// swift-cast — Apache-2.0

#if DEBUG || CAST_FUZZING
import NIOCore
import NIOEmbedded

@testable import CastTransport

/// The connection's own framing, `CastFrameHandler`, in an embedded channel.
enum StreamFuzz {
    /// The first byte sets the read size (1…256 bytes); the rest arrives in reads of that size, as TLS records
    /// would deliver it, then the connection ends (an unfinished frame is `truncatedFrame`). Reading stops at the
    /// first error, as the connection closes then. Every decoded message goes through the same checks as `frame`.
    static func frames(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let readSize = Int(first) + 1
        let stream = bytes.dropFirst()
        let channel = EmbeddedChannel(handler: CastFrameHandler())
        defer { _ = try? channel.finish() }
        var offset = stream.startIndex
        do {
            while offset < stream.endIndex {
                let end = min(stream.endIndex, offset + readSize)
                try channel.writeInbound(ByteBuffer(bytes: stream[offset..<end]))
                offset = end
                while let message = try channel.readInbound(as: CastMessage.self) { TransportFuzz.check(message) }
            }
            channel.pipeline.fireChannelInactive()
            while let message = try channel.readInbound(as: CastMessage.self) { TransportFuzz.check(message) }
        } catch {
            _ = error as? CastTransportError
        }
    }
}
#endif
