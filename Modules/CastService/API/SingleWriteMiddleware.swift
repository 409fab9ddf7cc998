import HTTPTypes
import Hummingbird
import NIOCore

/// Sends each API answer of known length in one write.
///
/// The OpenAPI transport hands Hummingbird every body as a stream, even a 500-byte JSON document: the head, the
/// body and the end then go out as three writes, each a system call, a flush and, on loopback, a wake-up of a
/// client that reads the head alone and sleeps again. Collected here into one buffer, Hummingbird sends head,
/// body and end together, which roughly halves the HTTP share of a command's round trip. Bodies of unknown
/// length (the event stream) and large ones pass through as streams.
struct SingleWriteMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The largest body collected; larger ones stream.
    var limit = 256 * 1024

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        guard let length = response.body.contentLength, length <= limit else { return response }
        let collected = Box(ByteBufferAllocator().buffer(capacity: length))
        let body = response.body
        try await body.write(Collector(box: collected))
        response.body = ResponseBody(byteBuffer: collected.buffer)
        return response
    }

    /// Keeps what a body writes. A class: the body consumes the writer it is given.
    private final class Box {
        var buffer: ByteBuffer
        init(_ buffer: ByteBuffer) { self.buffer = buffer }
    }

    private struct Collector: ResponseBodyWriter {
        let box: Box

        mutating func write(_ buffer: ByteBuffer) async throws {
            var buffer = buffer
            box.buffer.writeBuffer(&buffer)
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
