import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// The connections a server has open: bounded, and all closed when it stops.
///
/// A connection is busy from a request's head until its response is written, and idle otherwise. At the limit
/// the connection idle longest is closed to admit the newcomer (as ``CastTransport``'s server does), so sockets
/// that send nothing cannot lock the device out; failing that, the busy connection whose reader has stopped
/// reading longest (its writes back up), so clients that ask and never read cannot either. Only when every
/// connection is busy and read is the newcomer refused.
final class ConnectionSet: Sendable {
    private struct Entry {
        var channel: any Channel
        /// When the connection last had nothing to do; `nil` while it answers a request.
        var idleSince: NIODeadline?
        /// Since when its peer has left what it was sent unread (the channel is not writable); `nil` while it reads.
        var stalledSince: NIODeadline?
    }

    private let entries = NIOLockedValueBox<[ObjectIdentifier: Entry]>([:])
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Registers `channel`, closing the connection idle longest first when the set is full; `false` when every
    /// connection is busy (the caller closes `channel`).
    func admit(_ channel: any Channel) -> Bool {
        let (admitted, evicted) = entries.withLockedValue { entries -> (Bool, (any Channel)?) in
            var evicted: (any Channel)?
            if entries.count >= limit {
                let idle = entries.compactMap { key, entry in entry.idleSince.map { (key, $0) } }
                let stalled = entries.compactMap { key, entry in entry.stalledSince.map { (key, $0) } }
                guard let oldest = idle.min(by: { $0.1 < $1.1 }) ?? stalled.min(by: { $0.1 < $1.1 }) else {
                    return (false, nil)
                }
                evicted = entries.removeValue(forKey: oldest.0)?.channel
            }
            entries[ObjectIdentifier(channel)] = Entry(channel: channel, idleSince: .now())
            return (true, evicted)
        }
        evicted?.close(promise: nil)
        if admitted {
            channel.closeFuture.whenComplete { _ in
                _ = self.entries.withLockedValue { $0.removeValue(forKey: ObjectIdentifier(channel)) }
            }
        }
        return admitted
    }

    /// `channel` is answering a request: it is not closed for a newcomer.
    func busy(_ channel: any Channel) {
        entries.withLockedValue { $0[ObjectIdentifier(channel)]?.idleSince = nil }
    }

    /// `channel` has written its last response and waits for the next request.
    func idle(_ channel: any Channel) {
        entries.withLockedValue { $0[ObjectIdentifier(channel)]?.idleSince = .now() }
    }

    /// Whether `channel`'s peer has stopped reading what it is sent (its writes back up) or reads again.
    func stalled(_ channel: any Channel, _ isStalled: Bool) {
        entries.withLockedValue { entries in
            let key = ObjectIdentifier(channel)
            guard entries[key] != nil else { return }
            if !isStalled {
                entries[key]?.stalledSince = nil
            } else if entries[key]?.stalledSince == nil {
                entries[key]?.stalledSince = .now()
            }
        }
    }

    var count: Int { entries.withLockedValue { $0.count } }

    func closeAll() async {
        let open = entries.withLockedValue { $0.values.map(\.channel) }
        for channel in open { try? await channel.close() }
    }
}

/// How long a connection may wait for a request before the server closes it.
struct ConnectionTimeouts: Sendable {
    /// From the connection's opening to its first complete request head: a device sends its request at once,
    /// so only a stuck or hostile peer takes longer.
    var requestHead: TimeAmount
    /// From a response's last byte to the next complete request head on a kept-alive connection.
    var idle: TimeAmount
}

/// Tells the ``ConnectionSet`` when its connection is busy, and closes a connection that sends no complete
/// request head in time (first ``ConnectionTimeouts/requestHead``, then ``ConnectionTimeouts/idle`` between
/// requests). Sits between NIO's HTTP server handlers and ``MediaHTTPHandler``.
final class ConnectionActivityHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let connections: ConnectionSet
    private let timeouts: ConnectionTimeouts
    private var timer: Scheduled<Void>?
    /// A request head arrived and its response's end has not been written yet.
    private var answering = false
    /// Responses whose end is written but not yet sent (a file body can take minutes).
    private var unsentEnds = 0

    init(connections: ConnectionSet, timeouts: ConnectionTimeouts) {
        self.connections = connections
        self.timeouts = timeouts
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startTimer(timeouts.requestHead, context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if timer == nil { startTimer(timeouts.requestHead, context: context) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            timer?.cancel()
            timer = nil
            answering = true
            connections.busy(context.channel)
        }
        context.fireChannelRead(data)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        connections.stalled(context.channel, !context.channel.isWritable)
        context.fireChannelWritabilityChanged()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        // Idle only once the end is sent: a pipelined request may arrive before then, and a body before it may
        // still be on its way.
        answering = false
        unsentEnds += 1
        let sent = promise ?? context.eventLoop.makePromise()
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        sent.futureResult.whenComplete { _ in
            let (handler, context) = bound.value
            handler.unsentEnds -= 1
            guard !handler.answering, handler.unsentEnds == 0, context.channel.isActive else { return }
            handler.connections.idle(context.channel)
            handler.startTimer(handler.timeouts.idle, context: context)
        }
        context.write(data, promise: sent)
    }

    private func startTimer(_ timeout: TimeAmount, context: ChannelHandlerContext) {
        timer?.cancel()
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }
}
