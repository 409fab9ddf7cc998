internal import COpenSSL
import NIOCore

/// A user inbound event the TLS handler fires once the handshake completes.
public struct TLSHandshakeCompleted: Sendable, Hashable {
    /// The negotiated protocol, for example `TLSv1.3`.
    public var protocolVersion: String
}

/// An outbound user event that drops the connection without a TLS close_notify, as a crashing or unplugged
/// device would (the emulator's "close abruptly" fault).
package struct AbortConnectionEvent: Sendable {
    package init() {}
}

/// TLS over OpenSSL, as a SwiftNIO channel handler: ciphertext below, plaintext above.
///
/// The handler never blocks and never owns a thread: OpenSSL reads the socket's bytes from the pipeline's buffers
/// and seals into a buffer that goes down the pipeline (``ByteBufferBIO``). Writes issued before the
/// handshake completes are held and sent once it does. Each write is sealed as its own record, as devices send
/// one message per record (a reader that waits on its socket, like pychromecast's select loop, does not notice a
/// second message in a record it has already read: it waited five seconds for it). The records written between
/// two flushes go down the pipeline as one buffer, and the records one socket read brings go up as one, instead
/// of a buffer and a trip through the pipeline per message. Closing sends `close_notify`; a peer's
/// `close_notify` is answered and closes the channel cleanly. Every failure is fired as a ``CastTransportError``
/// carrying OpenSSL's error queue, and the channel is closed. The queue is per thread and shared by every
/// connection on the event loop: an error left in it is discarded before each handshake step, read and write, as
/// `SSL_get_error` requires, so an error another connection or library call left behind does not fail this one.
final class TLSHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        case idle, handshaking, active, closed
    }

    private let context: TLSContext
    private let handshakeTimeout: TimeAmount
    private let handshakePromise: EventLoopPromise<Void>?
    private let serverHostname: String?
    private var ssl: OpaquePointer?
    private var buffers: ByteBufferBIO?
    private var state = State.idle
    private var sawFirstByte = false
    private var pendingWrites: [(ByteBuffer, EventLoopPromise<Void>?)] = []
    /// The promise of the records sealed since the last flush, not yet down the pipeline (later writes' promises
    /// cascade from it).
    private var sealedPromise: EventLoopPromise<Void>?
    private var handshakeTimer: Scheduled<Void>?
    /// The certificate the peer presented (DER), once the handshake is done; empty when it presented none or the
    /// connection is gone. Encoded when asked (device authentication, discovery), not kept beside OpenSSL's copy.
    var peerCertificate: [UInt8] {
        guard state == .active, let ssl, let certificate = SSL_get1_peer_certificate(ssl) else { return [] }
        return X509Certificate(adopting: certificate).der
    }
    /// The largest TLS record's plaintext: what one read buffer holds (the thread's, ``ScratchBuffers``).
    static let recordSize = 16 * 1024
    /// How much sealed ciphertext waits for the flush before it goes down anyway, so the channel's writability
    /// counts it.
    private static let heldCiphertextLimit = 64 * 1024

    /// - Parameters:
    ///   - context: The shared settings; its role decides who starts the handshake.
    ///   - handshakeTimeout: How long a handshake may take before the connection is failed.
    ///   - handshakePromise: Completed when the handshake succeeds, failed when it does not.
    ///   - serverHostname: For verifying contexts: sent as SNI and checked against the certificate.
    init(
        context: TLSContext,
        handshakeTimeout: TimeAmount = .seconds(10),
        handshakePromise: EventLoopPromise<Void>?,
        serverHostname: String? = nil
    ) {
        self.context = context
        self.serverHostname = serverHostname
        self.handshakeTimeout = handshakeTimeout
        self.handshakePromise = handshakePromise
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard let ssl = SSL_new(self.context.handle) else {
            fail(context: context, OpenSSLErrorQueue.error(.tlsFailure, "cannot create a TLS connection"))
            return
        }
        guard let buffers = ByteBufferBIO(allocator: context.channel.allocator) else {
            SSL_free(ssl)
            fail(context: context, OpenSSLErrorQueue.error(.tlsFailure, "cannot create a TLS connection"))
            return
        }
        SSL_set_bio(ssl, buffers.bio, buffers.bio)  // one BIO both ways: one reference, freed with the connection
        if self.context.isClient { SSL_set_connect_state(ssl) } else { SSL_set_accept_state(ssl) }
        if let serverHostname, self.context.verifiesPeer {
            let parameters = SSL_get0_param(ssl)
            if serverHostname.contains(":") || serverHostname.allSatisfy({ $0.isNumber || $0 == "." }) {
                X509_VERIFY_PARAM_set1_ip_asc(parameters, serverHostname)
            } else {
                _ = COpenSSL_SSL_set_tlsext_host_name(ssl, serverHostname)
                SSL_set1_host(ssl, serverHostname)
            }
        }
        self.ssl = ssl
        self.buffers = buffers
        if context.channel.isActive { startHandshake(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        handshakeTimer?.cancel()
        if state == .idle || state == .handshaking {
            state = .closed
            handshakePromise?.fail(CastTransportError(.connectionClosed, "the connection closed before TLS started"))
        }
        if let ssl { SSL_free(ssl) }  // frees the BIO too, before `buffers` goes
        ssl = nil
        buffers = nil
        // Closed, so that a read loop this removal interrupted (a handler above removed this one while a record's
        // plaintext went up) stops instead of reading from the freed connection.
        state = .closed
        failPendingWrites(CastTransportError(.connectionClosed, "the TLS handler was removed"))
    }

    func channelActive(context: ChannelHandlerContext) {
        startHandshake(context: context)
        context.fireChannelActive()
    }

    private func startHandshake(context: ChannelHandlerContext) {
        guard state == .idle, ssl != nil else { return }
        state = .handshaking
        let timeout = handshakeTimeout
        // Strong, like every timer a handler of this package schedules: it is cancelled when the handshake ends or
        // fails and when the channel closes (a weak capture would make each retain of the handler a slow one).
        handshakeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            guard self.state == .handshaking else { return }
            self.fail(
                context: context,
                CastTransportError(.tlsHandshakeFailed, "the TLS handshake did not complete within \(timeout)")
            )
        }
        if self.context.isClient { advanceHandshake(context: context) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        guard state == .handshaking || state == .active, let buffers else { return }
        if !sawFirstByte, let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) {
            sawFirstByte = true
            // Every TLS record starts with a content type of 20…23 (alert, handshake, …).
            guard (20...23).contains(first) else {
                fail(context: context, CastTransportError(.notTLS, "the peer did not speak TLS (first byte \(first))"))
                return
            }
        }
        buffers.receive(buffer)
        if state == .handshaking { advanceHandshake(context: context) }
        if state == .active { readPlaintext(context: context) }
        buffers.releaseReadBytes()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.fireChannelReadComplete()
    }

    private func advanceHandshake(context: ChannelHandlerContext) {
        guard let ssl else { return }
        OpenSSLErrorQueue.discardStale()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            state = .active
            handshakeTimer?.cancel()
            flushCiphertext(context: context, promise: nil)
            context.flush()
            let version = String(cString: SSL_get_version(ssl))
            handshakePromise?.succeed()
            context.fireUserInboundEventTriggered(TLSHandshakeCompleted(protocolVersion: version))
            let writes = pendingWrites
            pendingWrites = []
            for (buffer, promise) in writes { seal(context: context, buffer, promise: promise) }
            if !writes.isEmpty { flush(context: context) }
            return
        }
        let error = SSL_get_error(ssl, result)
        if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE {
            flushCiphertext(context: context, promise: nil)
            context.flush()
        } else {
            // Send any alert OpenSSL produced before giving up, so the peer learns why.
            flushCiphertext(context: context, promise: nil)
            context.flush()
            fail(context: context, OpenSSLErrorQueue.error(.tlsHandshakeFailed, "the TLS handshake failed"))
        }
    }

    private func readPlaintext(context: ChannelHandlerContext) {
        var plaintext: ByteBuffer?
        // Records fill one buffer; it goes up the pipeline when full and when OpenSSL has no more.
        // The thread's scratch buffer (``ScratchBuffers``): a handler above that keeps bytes copies them.
        func deliver() {
            guard let buffer = plaintext.take() else { return }
            if buffer.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(buffer)) }
            ScratchBuffers.giveBack(buffer, for: .plaintext)
        }
        while state == .active, let ssl {
            if plaintext?.writableBytes ?? 0 == 0 {
                deliver()
                guard state == .active else { return }
                plaintext = ScratchBuffers.take(
                    .plaintext,
                    capacity: Self.recordSize,
                    allocator: context.channel.allocator
                )
            }
            var count: Int32 = 0
            OpenSSLErrorQueue.discardStale()
            plaintext!.writeWithUnsafeMutableBytes(minimumWritableBytes: 0) { bytes in
                count = SSL_read(ssl, bytes.baseAddress, Int32(bytes.count))
                return max(0, Int(count))
            }
            if count > 0 { continue }
            // Asked before delivering: a handler above may write, and a write changes what OpenSSL would say.
            let error = SSL_get_error(ssl, count)
            deliver()
            guard state == .active else { return }
            if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE {
                break
            } else if error == SSL_ERROR_ZERO_RETURN {
                // The peer sent close_notify: answer it and close.
                SSL_shutdown(ssl)
                flushCiphertext(context: context, promise: nil)
                context.flush()
                state = .closed
                context.close(promise: nil)
                return
            } else {
                fail(context: context, OpenSSLErrorQueue.error(.tlsFailure, "TLS read failed"))
                return
            }
        }
        // Post-handshake messages (session tickets, key updates) may be waiting to go out.
        if state == .active, let buffers, buffers.outboundBytes > 0 {
            flushCiphertext(context: context, promise: nil)
            context.flush()
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let buffer = unwrapOutboundIn(data)
        switch state {
        case .idle, .handshaking:
            pendingWrites.append((buffer, promise))
        case .active:
            seal(context: context, buffer, promise: promise)
        case .closed:
            promise?.fail(CastTransportError(.connectionClosed, "the TLS connection is closed"))
        }
    }

    /// Seals one write; its records wait for the flush.
    private func seal(context: ChannelHandlerContext, _ buffer: ByteBuffer, promise: EventLoopPromise<Void>?) {
        guard let ssl, let buffers else {
            promise?.fail(CastTransportError(.connectionClosed, "the TLS connection is closed"))
            return
        }
        var plaintext = buffer
        while plaintext.readableBytes > 0 {
            OpenSSLErrorQueue.discardStale()
            let written = plaintext.withUnsafeReadableBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
            guard written > 0 else {
                let error = OpenSSLErrorQueue.error(.tlsFailure, "TLS write failed")
                promise?.fail(error)
                fail(context: context, error)
                return
            }
            plaintext.moveReaderIndex(forwardBy: Int(written))
        }
        hold(promise)
        if buffers.outboundBytes >= Self.heldCiphertextLimit { flushCiphertext(context: context, promise: nil) }
    }

    func flush(context: ChannelHandlerContext) {
        guard state == .active else { return }
        flushCiphertext(context: context, promise: nil)
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if state == .active, mode == .all, let ssl {
            // What was written goes first (it is sealed ahead of it), then close_notify; the close does not wait for
            // the peer's reply (a unidirectional shutdown).
            SSL_shutdown(ssl)
            flushCiphertext(context: context, promise: nil)
            context.flush()
        }
        if state == .idle || state == .handshaking {
            handshakeTimer?.cancel()
            handshakePromise?.fail(
                CastTransportError(.tlsHandshakeFailed, "the connection was closed during the TLS handshake")
            )
        }
        state = .closed
        failPendingWrites(CastTransportError(.connectionClosed, "the connection was closed"))
        context.close(mode: mode, promise: promise)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is AbortConnectionEvent else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        state = .closed
        failPendingWrites(CastTransportError(.connectionClosed, "the connection was aborted"))
        context.close(promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        handshakeTimer?.cancel()
        if state == .handshaking || state == .idle {
            let error = CastTransportError(
                .tlsHandshakeFailed,
                "the peer closed the connection during the TLS handshake"
            )
            handshakePromise?.fail(error)
            context.fireErrorCaught(error)
        }
        state = .closed
        failPendingWrites(CastTransportError(.connectionClosed, "the connection was closed"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if state == .handshaking || state == .idle {
            let wrapped = CastTransportError(
                .tlsHandshakeFailed,
                "the connection failed during the TLS handshake",
                cause: error
            )
            fail(context: context, wrapped)
        } else {
            context.fireErrorCaught(error)
        }
    }

    /// Moves whatever OpenSSL produced into the pipeline as one buffer, with the promises of the writes sealed in it.
    private func flushCiphertext(context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        hold(promise)
        let promise = sealedPromise.take()
        guard let out = buffers?.takeOutbound() else {
            promise?.succeed()
            return
        }
        context.write(wrapOutboundOut(out), promise: promise)
        // For the thread's next seal; if the socket has not taken it by then, that one copies.
        ScratchBuffers.giveBack(out, for: .ciphertext)
    }

    /// Adds `promise` to the promise of the sealed ciphertext waiting for the flush.
    private func hold(_ promise: EventLoopPromise<Void>?) {
        guard let promise else { return }
        if let first = sealedPromise {
            first.futureResult.cascade(to: promise)
        } else {
            sealedPromise = promise
        }
    }

    private func failPendingWrites(_ error: CastTransportError) {
        let writes = pendingWrites
        pendingWrites = []
        sealedPromise.take()?.fail(error)
        for (_, promise) in writes { promise?.fail(error) }
    }

    private func fail(context: ChannelHandlerContext, _ error: CastTransportError) {
        let wasHandshaking = state == .handshaking || state == .idle
        guard state != .closed else { return }
        state = .closed
        handshakeTimer?.cancel()
        if wasHandshaking { handshakePromise?.fail(error) }
        failPendingWrites(error)
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }
}

/// A TLS channel handler over `context`, for other modules of this package (the image downloader) that build
/// their own pipelines. It completes `handshakePromise` when the handshake finishes.
package func makeTLSHandler(
    context: TLSContext,
    serverHostname: String?,
    handshakeTimeout: TimeAmount,
    handshakePromise: EventLoopPromise<Void>?
) -> any ChannelHandler {
    TLSHandler(
        context: context,
        handshakeTimeout: handshakeTimeout,
        handshakePromise: handshakePromise,
        serverHostname: serverHostname
    )
}
