import CastLogging
import Logging
import NIOCore
import Synchronization

/// What the connection asks the router to put on the wire. One word (SwiftNIO carries it between handlers without
/// boxing it).
enum RouterCommand {
    /// A message that expects no reply.
    case send(CastMessage)
    /// A request, kept in the router's table until its reply, its deadline or the connection's end.
    case request(RouterRequest)
}

/// A request with everything its reply needs: its promise gets the reply, a timeout or the connection's end, and
/// `arrived` the reply first (before any task resumes). One object from the connection's `startRequest` to the
/// router's table and the caller's ``PendingReply``.
final class RouterRequest: Sendable {
    let message: CastMessage
    let requestID: Int
    let timeout: TimeAmount
    let promise: EventLoopPromise<CastMessage>
    let arrived = Mutex<CastMessage?>(nil)

    init(message: CastMessage, requestID: Int, timeout: TimeAmount, promise: EventLoopPromise<CastMessage>) {
        self.message = message
        self.requestID = requestID
        self.timeout = timeout
        self.promise = promise
    }
}

/// The top of every Cast pipeline: correlates replies with requests by `requestId`, hands every accepted
/// inbound message to the connection, and turns the channel's end into one error for everything outstanding.
///
/// A reply matches its request by `requestId` and namespace, whatever its destination (devices address replies to
/// `*`); other messages are delivered only when addressed to an accepted destination or to `*`.
///
/// Timeouts are swept, not cancelled: a request keeps only its deadline, and one timer, armed for the earliest
/// deadline, fails what is overdue when it fires. Cancelling a SwiftNIO timer searches every timer of the event
/// loop (thousands with thousands of connections' heartbeats), which a timer per request paid on every reply. The
/// sweep itself is cancelled when the channel closes (it holds the router).
final class CastMessageRouter: ChannelDuplexHandler {
    typealias InboundIn = CastMessage
    typealias OutboundIn = RouterCommand
    typealias OutboundOut = CastMessage

    private struct Outstanding {
        var request: RouterRequest
        var deadline: NIODeadline
    }

    /// The requests awaiting their replies. The first is kept inline: a connection most often has one request at a
    /// time, which then costs no table (an idle connection keeps none either, for thousands of them).
    private struct OutstandingRequests {
        private var first: Outstanding?
        private var others: [Int: Outstanding] = [:]

        var isEmpty: Bool { first == nil && others.isEmpty }

        /// Adds `entry`; answers the entry of the same `requestId` it replaces, if any (a wrapped-around id still
        /// waiting), for the caller to end.
        mutating func insert(_ entry: Outstanding) -> Outstanding? {
            let requestID = entry.request.requestID
            if let current = first, current.request.requestID != requestID {
                return others.updateValue(entry, forKey: requestID)
            }
            let replaced = first ?? (others.isEmpty ? nil : others.removeValue(forKey: requestID))
            first = entry
            return replaced
        }

        /// Removes the request `requestID` when its message was on `namespace` (a reply comes on its request's
        /// namespace: a device that addresses replies to `*` shows us other senders' replies too, whose ids may be
        /// ours on another namespace).
        mutating func remove(_ requestID: Int, namespace: String) -> Outstanding? {
            if let entry = first, entry.request.requestID == requestID {
                return entry.request.message.namespace == namespace ? remove(requestID) : nil
            }
            guard let entry = others[requestID], entry.request.message.namespace == namespace else { return nil }
            return remove(requestID)
        }

        mutating func remove(_ requestID: Int) -> Outstanding? {
            if let entry = first, entry.request.requestID == requestID {
                first = nil
                return entry
            }
            guard !others.isEmpty, let entry = others.removeValue(forKey: requestID) else { return nil }
            if others.isEmpty { others = [:] }
            return entry
        }

        /// The earliest deadline of them all.
        var earliestDeadline: NIODeadline? {
            [first?.deadline, others.values.lazy.map(\.deadline).min()].compactMap { $0 }.min()
        }

        /// Every entry, in `requestId` order.
        var all: [Outstanding] {
            ((first.map { [$0] } ?? []) + others.values).sorted { $0.request.requestID < $1.request.requestID }
        }

        mutating func removeAll() -> [Outstanding] {
            defer {
                first = nil
                others = [:]
            }
            return all
        }
    }

    private let acceptedDestinations: Set<String>?
    private let deliver: (CastMessage) -> Void
    private let closed: (CastTransportError?) -> Void
    private let logger: Logger
    private var outstanding = OutstandingRequests()
    /// The armed sweep, one at a time: when it fires, and its timer (cancelled when the channel closes).
    private var armedSweep: (deadline: NIODeadline, task: Scheduled<Void>)?
    private var failure: CastTransportError?
    private var isClosed = false

    /// - Parameters:
    ///   - acceptedDestinations: The ids whose messages are delivered besides `*`; `nil` delivers all (servers).
    ///   - deliver: Called on the event loop for each accepted message, replies included.
    ///   - closed: Called once on the event loop when the channel ends, with the error that ended it, if any.
    init(
        acceptedDestinations: Set<String>?,
        logger: Logger,
        deliver: @escaping (CastMessage) -> Void,
        closed: @escaping (CastTransportError?) -> Void
    ) {
        self.acceptedDestinations = acceptedDestinations
        self.logger = logger
        self.deliver = deliver
        self.closed = closed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var message = unwrapInboundIn(data)
        var requestID: Int?
        // Only a reply needs its requestId read here (parsed once, kept for the message's consumers); with no
        // request outstanding, a custom namespace's text is never parsed as JSON.
        if !outstanding.isEmpty, let parsed = message.parsingJSON() {
            message = parsed.message
            requestID = parsed.json["requestId"]?.intValue
        }
        if let requestID, requestID != 0, let entry = outstanding.remove(requestID, namespace: message.namespace) {
            // Kept if the request was answered otherwise first (a broadcast showing its effect).
            entry.request.arrived.withLock { $0 = $0 ?? message }
            entry.request.promise.succeed(message)
        } else if let accepted = acceptedDestinations, message.destinationID != CastEndpoint.broadcast,
            !accepted.contains(message.destinationID)
        {
            logger.trace(
                "dropping a message for another endpoint",
                metadata: ["cast.destination": "\(message.destinationID)", "cast.namespace": "\(message.namespace)"]
            )
            return
        }
        deliver(message)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .send(let message):
            context.write(wrapOutboundOut(message), promise: promise)
        case .request(let request):
            guard !isClosed else {
                let error = closedError()
                request.promise.fail(error)
                promise?.fail(error)
                return
            }
            let requestID = request.requestID
            let deadline = context.eventLoop.now + request.timeout
            if promise == nil {
                // Nobody waits for the write: only a message the framing refuses fails it without ending the
                // channel (which ends the request), so that is checked here and the write needs no promise.
                do {
                    try request.message.checkFrameSize()
                } catch {
                    request.promise.fail(error)
                    return
                }
            }
            track(Outstanding(request: request, deadline: deadline))
            armSweep(at: deadline, on: context.eventLoop)
            guard let promise else { return context.write(wrapOutboundOut(request.message), promise: nil) }
            let writePromise = context.eventLoop.makePromise(of: Void.self)
            // Strong captures here and in the sweep: a write promise always completes and the sweep is cancelled
            // when the channel closes, and a weak capture would make every retain of the router a slow one.
            writePromise.futureResult.assumeIsolated().whenFailure { error in
                guard let entry = self.removeOutstanding(requestID) else { return }
                entry.request.promise.fail(error)
            }
            writePromise.futureResult.cascade(to: promise)
            context.write(wrapOutboundOut(request.message), promise: writePromise)
        }
    }

    /// Keeps `entry` until its reply; a request still waiting under the same `requestId` (the ids wrapped around
    /// while it waited) fails, as it can no longer be told apart.
    private func track(_ entry: Outstanding) {
        guard let replaced = outstanding.insert(entry) else { return }
        replaced.request.promise.fail(
            CastTransportError(
                .requestTimedOut,
                "request \(replaced.request.requestID) on \(replaced.request.message.namespace) got no reply before "
                    + "its id was used again"
            )
        )
    }

    /// Arms a sweep for `deadline` unless one comes before it (that one re-arms for what is left); a later one is
    /// cancelled, for the same reason.
    private func armSweep(at deadline: NIODeadline, on eventLoop: any EventLoop) {
        if let armedSweep, armedSweep.deadline <= deadline { return }
        armedSweep?.task.cancel()
        let task = eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.sweep(armedFor: deadline, on: eventLoop)
        }
        armedSweep = (deadline, task)
    }

    private func cancelSweep() {
        armedSweep.take()?.task.cancel()
    }

    /// Ends a request's entry, however it ends (its reply, a failed write, its deadline).
    @discardableResult
    private func removeOutstanding(_ requestID: Int) -> Outstanding? {
        outstanding.remove(requestID)
    }

    /// Fails every request whose deadline has passed and arms the next sweep for the rest.
    private func sweep(armedFor deadline: NIODeadline, on eventLoop: any EventLoop) {
        guard armedSweep?.deadline == deadline else { return }
        armedSweep = nil
        let now = eventLoop.now
        for entry in outstanding.all where entry.deadline <= now {
            guard removeOutstanding(entry.request.requestID) != nil else { continue }
            entry.request.promise.fail(
                CastTransportError(
                    .requestTimedOut,
                    "no reply to request \(entry.request.requestID) on \(entry.request.message.namespace)"
                )
            )
        }
        if let earliest = outstanding.earliestDeadline { armSweep(at: earliest, on: eventLoop) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let transportError =
            error as? CastTransportError
            ?? CastTransportError(.connectionClosed, "the connection failed: \(error)", cause: error)
        if failure == nil { failure = transportError }
        logger.debug("connection error, closing", metadata: ["cast.error": "\(transportError)"])
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        isClosed = true
        cancelSweep()
        let error = closedError()
        for entry in outstanding.removeAll() { entry.request.promise.fail(error) }
        closed(failure)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelSweep()
        for entry in outstanding.removeAll() { entry.request.promise.fail(closedError()) }
    }

    private func closedError() -> CastTransportError {
        if let failure {
            return CastTransportError(.connectionClosed, "the connection was lost: \(failure.message)", cause: failure)
        }
        return CastTransportError(.connectionClosed, "the connection is closed")
    }
}
