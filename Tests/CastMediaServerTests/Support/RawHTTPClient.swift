import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A deliberately raw HTTP/1.1 client for tests: it sends exactly the bytes given (so malformed and hostile
/// paths reach the server unchanged) and parses the one response that comes back.
struct RawHTTPResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]
    /// How many body bytes arrived when the body was only counted, not kept.
    var bodyCount: Int

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

enum RawHTTPClient {
    /// Sends `GET`-style request text (`Connection: close` is added) and reads until the server closes.
    /// With `keepBody` false, the body is only counted (for multi-gigabyte transfers).
    static func exchange(
        host: String = "127.0.0.1",
        port: Int,
        method: String = "GET",
        path: String,
        headers: [(String, String)] = [],
        keepBody: Bool = true
    ) async throws -> RawHTTPResponse {
        let hostHeader = host.contains(":") ? "[\(host)]" : host
        var request = "\(method) \(path) HTTP/1.1\r\nHost: \(hostHeader):\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let collector = ResponseBytes(keepBody: keepBody, isHead: method == "HEAD")
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
            }
            // The request goes out on the event loop as the connection opens, as a device's does: on a machine
            // busy with the whole suite, the test's task resumed too late to write it before the server's
            // request-head timeout closed the connection ("I/O on closed channel").
            .connect(host: host, port: port)
            .flatMap { channel in channel.writeAndFlush(channel.allocator.buffer(string: request)).map { channel } }
            .get()
        try await channel.closeFuture.get()
        return try collector.response()
    }
}

private final class ResponseBytes: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private struct State {
        var head: [UInt8] = []
        var headDone = false
        var body: [UInt8] = []
        var bodyCount = 0
    }

    private let keepBody: Bool
    private let isHead: Bool
    private let state = NIOLockedValueBox(State())

    init(keepBody: Bool, isHead: Bool) {
        self.keepBody = keepBody
        self.isHead = isHead
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        let counted = state.withLockedValue { state -> Bool in
            guard state.headDone, !keepBody else { return false }
            state.bodyCount += buffer.readableBytes
            return true
        }
        if counted { return }
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
        state.withLockedValue { state in
            if state.headDone {
                state.bodyCount += bytes.count
                state.body += bytes
                return
            }
            state.head += bytes
            if let end = state.head.firstRange(of: [13, 10, 13, 10]) {
                let rest = Array(state.head[end.upperBound...])
                state.head = Array(state.head[..<end.lowerBound])
                state.headDone = true
                state.bodyCount = rest.count
                if keepBody { state.body = rest }
            }
        }
    }

    func response() throws -> RawHTTPResponse {
        try state.withLockedValue { state in
            let lines = String(decoding: state.head, as: UTF8.self).components(separatedBy: "\r\n")
            guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1."),
                let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "")
            else { throw RawHTTPError.malformed(String(decoding: state.head.prefix(200), as: UTF8.self)) }
            let headers = lines.dropFirst().compactMap { line -> (String, String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            var response = RawHTTPResponse(
                status: status,
                headers: headers,
                body: state.body,
                bodyCount: state.bodyCount
            )
            if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
                response.body = try Self.dechunk(state.body)
                response.bodyCount = response.body.count
            }
            return response
        }
    }
}

extension ResponseBytes {
    /// The body of a chunked response, strictly: a malformed chunk fails the test.
    fileprivate static func dechunk(_ bytes: [UInt8]) throws -> [UInt8] {
        var body: [UInt8] = []
        var index = 0
        while true {
            guard let lineEnd = bytes[index...].firstRange(of: [13, 10]),
                let size = Int(String(decoding: bytes[index..<lineEnd.lowerBound], as: UTF8.self), radix: 16)
            else { throw RawHTTPError.malformed("bad chunk size") }
            index = lineEnd.upperBound
            if size == 0 { return body }
            guard index + size + 2 <= bytes.count else { throw RawHTTPError.malformed("short chunk") }
            body += bytes[index..<(index + size)]
            index += size + 2
        }
    }
}

enum RawHTTPError: Error { case malformed(String) }
