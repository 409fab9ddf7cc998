@_spi(CastInternal) import CastTransport
import NIOConcurrencyHelpers

/// A custom namespace channel to the receiver app (GCKCastChannel). Subclass it and override the `did…`
/// methods, or use ``GenericChannel`` for closures and a stream.
///
/// Register it with ``CastSession/add(_:)`` at any time: it connects when the session is connected and the app
/// lists its namespace, disconnects on suspension and reconnects after a resume. Overrides run on an arbitrary
/// thread, one message at a time per channel.
open class CastChannel: @unchecked Sendable {
    // @unchecked: the only mutable state is `link`, which is behind a lock; subclasses must keep their own
    // state thread-safe, as the documentation says.

    /// Where messages go while connected.
    struct Link: Sendable {
        var send: @Sendable (CastMessage.Payload) async throws -> Void
        var post: @Sendable (CastMessage.Payload) throws -> Void
    }

    /// The namespace, `urn:x-cast:…`.
    public let namespace: String
    private let link = NIOLockedValueBox<Link?>(nil)

    /// Creates a channel for `namespace`.
    ///
    /// - Throws: ``CastSessionError`` with ``CastSessionError/Code/invalidNamespace`` unless the namespace has the
    ///   `urn:x-cast:` form.
    public init(namespace: String) throws {
        do {
            try CastNamespace.validate(namespace)
        } catch {
            throw CastSessionError(.invalidNamespace, "'\(namespace)' is not a custom channel namespace (urn:x-cast:…)")
        }
        self.namespace = namespace
    }

    /// Whether messages can be sent now.
    public final var isConnected: Bool { link.withLockedValue { $0 != nil } }

    /// Called with each text message from the receiver app.
    open func didReceiveTextMessage(_ message: String) {}

    /// Called with each binary message from the receiver app.
    open func didReceiveBinaryMessage(_ message: [UInt8]) {}

    /// Called when the channel becomes usable.
    open func didConnect() {}

    /// Called when the channel stops being usable (session ended or suspended).
    open func didDisconnect() {}

    /// Sends text to the receiver app. Returns once the message is queued, as GCK's does: it waits only while the
    /// connection is backed up (the receiver reads slower than we send). Messages go out in the order sent.
    ///
    /// - Throws: ``CastSessionError`` with ``CastSessionError/Code/channelNotConnected`` when not connected;
    ///   `CastTransport.CastTransportError` with code `messageTooLarge` when the message exceeds the 64 KiB frame
    ///   limit.
    public final func sendTextMessage(_ message: String) async throws {
        try await send(.string(message))
    }

    /// Sends bytes to the receiver app, like ``sendTextMessage(_:)``.
    public final func sendBinaryMessage(_ message: [UInt8]) async throws {
        try await send(.binary(message))
    }

    /// Queues text for the receiver app and returns at once, without waiting even while the connection is backed
    /// up: for code that cannot await, such as a ``didReceiveTextMessage(_:)`` override answering a message (GCK's
    /// synchronous `sendTextMessage:error:`). Messages go out in the order sent, with those of
    /// ``sendTextMessage(_:)``. Prefer that one where you can await: it slows a fast sender down instead of letting
    /// the queue grow.
    ///
    /// - Throws: ``CastSessionError`` with ``CastSessionError/Code/channelNotConnected`` when not connected;
    ///   `CastTransport.CastTransportError` with code `messageTooLarge` when the message exceeds the 64 KiB frame
    ///   limit.
    public final func postTextMessage(_ message: String) throws {
        try currentLink().post(.string(message))
    }

    /// Queues bytes for the receiver app, like ``postTextMessage(_:)``.
    public final func postBinaryMessage(_ message: [UInt8]) throws {
        try currentLink().post(.binary(message))
    }

    private func send(_ payload: CastMessage.Payload) async throws {
        try await currentLink().send(payload)
    }

    private func currentLink() throws -> Link {
        guard let link = link.withLockedValue({ $0 }) else {
            throw CastSessionError(.channelNotConnected, "the channel \(namespace) is not connected")
        }
        return link
    }

    final func connect(_ newLink: Link) {
        let wasConnected = link.withLockedValue { state -> Bool in
            defer { state = newLink }
            return state != nil
        }
        if !wasConnected { didConnect() }
    }

    final func disconnect() {
        let wasConnected = link.withLockedValue { state -> Bool in
            defer { state = nil }
            return state != nil
        }
        if wasConnected { didDisconnect() }
    }

    final func deliver(_ payload: CastMessage.Payload) {
        switch payload {
        case .string(let text): didReceiveTextMessage(text)
        case .binary(let bytes): didReceiveBinaryMessage(bytes)
        }
    }
}

/// A channel that hands messages to a stream and an optional closure (GCKGenericChannel).
public final class GenericChannel: CastChannel, @unchecked Sendable {
    // @unchecked: the broadcaster and the handler are immutable after init and thread-safe.
    private let broadcaster = EventBroadcaster<CastMessage.Payload>()
    private let connection = EventBroadcaster<Bool>()
    private let handler: (@Sendable (CastMessage.Payload) -> Void)?

    /// A channel for `namespace`; `onMessage` (optional) runs for each message.
    public init(namespace: String, onMessage: (@Sendable (CastMessage.Payload) -> Void)? = nil) throws {
        self.handler = onMessage
        try super.init(namespace: namespace)
    }

    /// A new, independent stream of messages from the receiver app.
    public func messages() -> CastEventStream<CastMessage.Payload> { broadcaster.makeStream() }

    /// A new stream of connection changes (`true` connected, `false` disconnected).
    public func connectionChanges() -> CastEventStream<Bool> { connection.makeStream() }

    /// Sends `message` and returns the app's first message after it: custom namespaces carry no request ids, so
    /// the next message is taken as the reply.
    ///
    /// - Throws: ``CastSessionError`` — ``CastSessionError/Code/channelNotConnected``, or
    ///   ``CastSessionError/Code/timedOut`` when nothing comes within `timeout`.
    public func sendTextMessage(_ message: String, awaitingReplyWithin timeout: Duration) async throws
        -> CastMessage.Payload
    {
        let replies = messages()
        try await sendTextMessage(message)
        let namespace = self.namespace
        return try await withTimeLimit(timeout) {
            CastSessionError(.timedOut, "\(namespace): no reply within \(timeout.inSeconds) s")
        } _: {
            for await payload in replies { return payload }
            return nil
        }
    }

    public override func didReceiveTextMessage(_ message: String) {
        handler?(.string(message))
        broadcaster.yield(.string(message))
    }

    public override func didReceiveBinaryMessage(_ message: [UInt8]) {
        handler?(.binary(message))
        broadcaster.yield(.binary(message))
    }

    public override func didConnect() { connection.yield(true) }

    public override func didDisconnect() { connection.yield(false) }
}
