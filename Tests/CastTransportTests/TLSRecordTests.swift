import COpenSSL
import NIOCore
import NIOEmbedded
import Testing

@testable import CastTransport

/// ``TLSHandler``'s records: a record per write, the records written between flushes passed down as one buffer,
/// records of one socket read delivered as one buffer, unflushed writes sent before close_notify, OpenSSL's per-thread error queue cleared before each call. Real OpenSSL on both ends, bytes carried by hand between
/// two embedded channels.
@Suite("TLS records: a record per write, one buffer per flush and per socket read")
struct TLSRecordTests {
    /// A client and a server `TLSHandler`, connected and (unless asked not to) handshaken.
    private struct Pair {
        let client = EmbeddedChannel()
        let server = EmbeddedChannel()
        let clientTLS: TLSHandler

        init(handshake: Bool = true) throws {
            clientTLS = TLSHandler(context: try TLSContext.makeClientContext(), handshakePromise: nil)
            try server.pipeline.syncOperations.addHandler(
                TLSHandler(context: try TransportTestKit.serverContext(), handshakePromise: nil)
            )
            try client.pipeline.syncOperations.addHandler(clientTLS)
            let address = try SocketAddress(ipAddress: "127.0.0.1", port: 8009)
            try server.connect(to: address).wait()
            try client.connect(to: address).wait()
            guard handshake else { return }
            for _ in 0..<10 { _ = try carry(from: client, to: server) + carry(from: server, to: client) }
        }

        /// Moves what `source` flushed to `destination` as one inbound buffer; answers the ciphertext moved.
        @discardableResult
        func carry(from source: EmbeddedChannel, to destination: EmbeddedChannel) throws -> [UInt8] {
            let bytes = Array(try TLSRecordTests.outbound(of: source).joined())
            guard !bytes.isEmpty else { return [] }
            try destination.writeInbound(ByteBuffer(bytes: bytes))
            return bytes
        }

        /// Moves what `source` flushed to `destination` a byte per inbound buffer; answers how many bytes moved.
        func trickle(from source: EmbeddedChannel, to destination: EmbeddedChannel) throws -> Int {
            let bytes = Array(try TLSRecordTests.outbound(of: source).joined())
            for byte in bytes { try destination.writeInbound(ByteBuffer(bytes: [byte])) }
            return bytes.count
        }

        /// Ends both channels (an embedded channel left open keeps its pipeline, and its handlers, alive).
        func finish() {
            _ = try? server.finish(acceptAlreadyClosed: true)
            _ = try? client.finish(acceptAlreadyClosed: true)
        }

        /// The plaintext buffers `channel` delivered upwards, in order.
        func delivered(to channel: EmbeddedChannel) throws -> [[UInt8]] {
            var buffers: [[UInt8]] = []
            while let buffer = try channel.readInbound(as: ByteBuffer.self) {
                buffers.append(Array(buffer.readableBytesView))
            }
            return buffers
        }
    }

    /// The outer content types of the TLS records in `bytes` (23: application data).
    private static func recordTypes(_ bytes: [UInt8]) -> [UInt8] {
        var types: [UInt8] = []
        var index = 0
        while index + 5 <= bytes.count {
            types.append(bytes[index])
            index += 5 + Int(bytes[index + 3]) << 8 + Int(bytes[index + 4])
        }
        #expect(index == bytes.count, "the ciphertext ends inside a record")
        return types
    }

    private static func message(_ index: Int, size: Int = 100) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: index &+ $0) }
    }

    /// The ciphertext buffers `channel` passed to the socket, each as bytes.
    private static func outbound(of channel: EmbeddedChannel) throws -> [[UInt8]] {
        var buffers: [[UInt8]] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            buffers.append(Array(buffer.readableBytesView))
        }
        return buffers
    }

    @Test func writesBetweenTwoFlushesGoDownAsOneBufferOfOneRecordEachAndEveryPromiseCompletes() throws {
        let pair = try Pair()
        defer { pair.finish() }
        var futures: [EventLoopFuture<Void>] = []
        for index in 0..<32 {
            let promise = pair.client.eventLoop.makePromise(of: Void.self)
            pair.client.write(ByteBuffer(bytes: Self.message(index)), promise: promise)
            futures.append(promise.futureResult)
        }
        #expect(try Self.outbound(of: pair.client).isEmpty, "nothing goes out before the flush")
        pair.client.flush()
        let buffers = try Self.outbound(of: pair.client)
        #expect(buffers.count == 1)
        // One message per record, as devices send them: a reader that selects on its socket sees each.
        #expect(Self.recordTypes(buffers.joined().map { $0 }) == Array(repeating: 23, count: 32))
        for future in futures { try future.wait() }
        try pair.server.writeInbound(ByteBuffer(bytes: buffers.joined()))
        #expect(try pair.delivered(to: pair.server) == [(0..<32).flatMap { Self.message($0) }])
    }

    @Test func sealedCiphertextPastItsLimitGoesDownBeforeTheFlush() throws {
        let pair = try Pair()
        defer { pair.finish() }
        for index in 0..<100 { pair.client.write(ByteBuffer(bytes: Self.message(index, size: 1024)), promise: nil) }
        pair.client.flush()
        let buffers = try Self.outbound(of: pair.client)
        #expect(buffers.count == 2, "64 KiB went down unflushed, the rest with the flush")
        #expect(Self.recordTypes(buffers.joined().map { $0 }).count == 100)
        try pair.server.writeInbound(ByteBuffer(bytes: buffers.joined()))
        #expect(
            try pair.delivered(to: pair.server).joined().elementsEqual(
                (0..<100).flatMap { Self.message($0, size: 1024) }
            )
        )
    }

    @Test func theRecordsOfOneSocketReadGoUpAsOneBuffer() throws {
        let pair = try Pair()
        defer { pair.finish() }
        var ciphertext = ByteBuffer()
        for index in 0..<5 {
            try pair.client.writeAndFlush(ByteBuffer(bytes: Self.message(index))).wait()
            while var chunk = try pair.client.readOutbound(as: ByteBuffer.self) { ciphertext.writeBuffer(&chunk) }
        }
        #expect(Self.recordTypes(Array(ciphertext.readableBytesView)) == [23, 23, 23, 23, 23])
        try pair.server.writeInbound(ciphertext)
        #expect(try pair.delivered(to: pair.server) == [(0..<5).flatMap { Self.message($0) }])
    }

    /// OpenSSL reads the pipeline's buffers themselves (``ByteBufferBIO``): a handshake and records that come a byte
    /// per socket read, so every record is split, still come through whole, and the bytes left unread wait for the
    /// next read.
    @Test func ciphertextArrivingAByteAtATimeIsReadWhole() throws {
        let pair = try Pair(handshake: false)
        defer { pair.finish() }
        #expect(pair.clientTLS.peerCertificate.isEmpty, "no certificate before the handshake")
        var moved = 1
        while moved > 0 {
            moved =
                try pair.trickle(from: pair.client, to: pair.server) + pair.trickle(from: pair.server, to: pair.client)
        }
        let certificate = try X509Certificate(der: pair.clientTLS.peerCertificate, what: "the server's certificate")
        #expect(certificate.commonName == "transport-test-kit")

        let messages = (0..<3).map { Self.message($0, size: 300) }
        for message in messages { pair.client.write(ByteBuffer(bytes: message), promise: nil) }
        pair.client.flush()
        #expect(try pair.trickle(from: pair.client, to: pair.server) > 900)
        #expect(try pair.delivered(to: pair.server).joined().elementsEqual(messages.joined()))
        // Half a record, then the rest with the next record in one read.
        pair.server.write(ByteBuffer(bytes: Self.message(7)), promise: nil)
        pair.server.write(ByteBuffer(bytes: Self.message(8)), promise: nil)
        pair.server.flush()
        let ciphertext = Array(try Self.outbound(of: pair.server).joined())
        try pair.client.writeInbound(ByteBuffer(bytes: ciphertext.prefix(60)))
        #expect(try pair.delivered(to: pair.client).isEmpty, "half a record is not delivered")
        try pair.client.writeInbound(ByteBuffer(bytes: ciphertext.dropFirst(60)))
        #expect(try pair.delivered(to: pair.client).joined().elementsEqual(Self.message(7) + Self.message(8)))
    }

    @Test func aCloseSendsUnflushedWritesBeforeCloseNotify() throws {
        let pair = try Pair()
        defer { pair.finish() }
        for index in 0..<3 { pair.client.write(ByteBuffer(bytes: Self.message(index)), promise: nil) }
        try pair.client.close().wait()
        let ciphertext = try pair.carry(from: pair.client, to: pair.server)
        // TLS 1.3 encrypts the alert too: the three writes, then close_notify, all application data outside.
        #expect(Self.recordTypes(ciphertext) == [23, 23, 23, 23])
        #expect(try pair.delivered(to: pair.server) == [(0..<3).flatMap { Self.message($0) }])
        #expect(!pair.server.isActive, "the server saw close_notify after the data and closed")
    }

    @Test func anAbortFailsTheUnsealedWrites() throws {
        let pair = try Pair()
        defer { pair.finish() }
        let promise = pair.client.eventLoop.makePromise(of: Void.self)
        pair.client.write(ByteBuffer(bytes: Self.message(0)), promise: promise)
        pair.client.pipeline.triggerUserOutboundEvent(AbortConnectionEvent(), promise: nil)
        // Read without waiting: an embedded loop's future that never completes would block the test.
        var outcome: Result<Void, any Error>?
        promise.futureResult.whenComplete { outcome = $0 }
        pair.client.embeddedEventLoop.run()
        guard case .failure(let error as CastTransportError) = outcome else {
            Issue.record("the write did not fail with a transport error: \(String(describing: outcome))")
            return
        }
        #expect(error.code == .connectionClosed)
    }

    /// Leaves an error in this thread's OpenSSL queue, as a failed certificate parse elsewhere on the event loop
    /// does when nobody drains it.
    private static func leaveAnOpenSSLError() {
        let garbage: [UInt8] = [0x30, 0x03, 0x02]
        garbage.withUnsafeBufferPointer { bytes in
            var cursor = bytes.baseAddress
            _ = d2i_X509(nil, &cursor, bytes.count)
        }
    }

    @Test func anErrorAnotherCallLeftQueuedDoesNotFailTheConnection() throws {
        let pair = try Pair()
        defer { pair.finish() }
        Self.leaveAnOpenSSLError()
        #expect(ERR_peek_error() != 0)
        try pair.client.writeAndFlush(ByteBuffer(bytes: Self.message(1))).wait()
        Self.leaveAnOpenSSLError()
        try pair.carry(from: pair.client, to: pair.server)
        #expect(try pair.delivered(to: pair.server) == [Self.message(1)])
        #expect(pair.server.isActive, "the server read the record and kept the connection")
        ERR_clear_error()
    }

    /// Removes the TLS handler from its pipeline when the first plaintext arrives, as a handler switching
    /// protocols would.
    private final class RemovesTLSOnRead: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let tls: TLSHandler
        var reads = 0
        init(_ tls: TLSHandler) { self.tls = tls }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            reads += 1
            if reads == 1 { context.pipeline.syncOperations.removeHandler(tls, promise: nil) }
        }
    }

    /// A handler above that removes TLS while a read's records are still being opened: the rest of the read stops
    /// there (the OpenSSL connection is freed) instead of reading on.
    @Test func removingTheHandlerDuringARecordsDeliveryStopsTheRead() throws {
        let pair = try Pair()
        defer { pair.finish() }
        let serverTLS = try pair.server.pipeline.syncOperations.handler(type: TLSHandler.self)
        let remover = RemovesTLSOnRead(serverTLS)
        try pair.server.pipeline.syncOperations.addHandler(remover)
        // Two full records and more in one socket read: the first 16 KiB goes up, and the handler is removed.
        for index in 0..<3 { pair.client.write(ByteBuffer(bytes: Self.message(index, size: 16 * 1024)), promise: nil) }
        pair.client.flush()
        try pair.carry(from: pair.client, to: pair.server)
        #expect(remover.reads == 1)
    }
}
