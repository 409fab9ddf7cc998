import CastLogging
import Logging
import NIOCore

/// Keep-alive settings for one connection (cast-protocol.md §4).
public struct HeartbeatConfiguration: Sendable, Hashable {
    /// Send a PING after this long without inbound traffic, and again each time it passes. Defaults to 5 s, as
    /// Chrome does. `nil` never pings.
    public var pingInterval: Duration? = .seconds(5)
    /// Declare the peer dead after this long without inbound traffic. Defaults to 15 s (Chrome's 5 s ping plus
    /// 10 s liveness). `nil` never gives up.
    public var deadAfter: Duration? = .seconds(15)
    /// Answer the peer's PINGs with PONG. Always on for real peers; the emulator turns it off to fake a stuck
    /// device.
    public var answersPings = true
    /// Stop answering after this many PONGs (the emulator's "stuck device" fault). `nil`: no limit.
    package var pongLimit: Int?
    /// How much later than due a PING may go, so that the timers of many connections fire together: deadlines
    /// are rounded up to a multiple of it, and one wake-up of the event loop serves every connection in the
    /// window (with thousands of connections, the wake-ups, not the PINGs, were most of the idle CPU). At most
    /// a tenth of the shorter interval is used. Defaults to 250 ms; zero keeps every timer exact. Dead-peer
    /// detection is never early.
    public var timerSlack: Duration = .milliseconds(250)
    /// Where in the slack window this end's timers fire, as a fraction of it: senders at 0, servers at 0.5, so
    /// the two ends' timers never fire at the same instant: the first to fire PINGs, and the other, having
    /// heard from it, does not (on one grid, both PINGed and PONGed in every interval).
    package var slackPhase = 0.0

    /// The defaults: ping after 5 s of silence, dead after 15 s, answer every PING.
    public init() {}

    /// Custom values.
    public init(pingInterval: Duration?, deadAfter: Duration?, answersPings: Bool = true) {
        self.pingInterval = pingInterval
        self.deadAfter = deadAfter
        self.answersPings = answersPings
    }
}

/// Answers PINGs, sends PINGs when the line goes quiet and closes the connection when the peer stays silent.
///
/// Time comes from the channel's event loop (`eventLoop.now` and scheduled tasks), so tests drive it with an
/// `EmbeddedEventLoop` and `advanceTime(by:)` instead of sleeping. Any inbound message counts as traffic.
/// Heartbeat messages are consumed here; everything else passes through.
final class HeartbeatHandler: ChannelDuplexHandler {
    typealias InboundIn = CastMessage
    typealias InboundOut = CastMessage
    typealias OutboundIn = CastMessage
    typealias OutboundOut = CastMessage

    private let configuration: HeartbeatConfiguration
    /// ``HeartbeatConfiguration/timerSlack``, at most a tenth of the shorter interval, in nanoseconds, and where
    /// in it the timers fire: fixed per connection, so not worked out on every tick.
    private let slack: Int64
    private let slackPhase: UInt64
    /// The configuration's intervals as SwiftNIO time (a `Duration` is 128-bit arithmetic on every tick).
    private let pingInterval: TimeAmount?
    private let deadAfter: TimeAmount?
    private let localID: String
    private let peerID: String
    private let logger: Logger
    private var lastInbound: NIODeadline?
    private var lastPing: NIODeadline?
    /// The connection's timer in its event loop's slots (``HeartbeatTimers``), made when the heartbeat starts and
    /// scheduled again after each tick; dropped when the channel closes or the handler is removed (its callback
    /// holds this handler).
    private var timer: HeartbeatTimers.Timer?
    /// This connection's PING, built once: every few seconds on every connection, it is most of the traffic of an
    /// idle process.
    private let ping: CastMessage
    /// The last PONG sent, reused while the peer PINGs from the same endpoint.
    private var pong: CastMessage?

    /// Number of PINGs answered, for tests and diagnostics.
    private(set) var pongsSent = 0

    /// Whether timers wait for the TLS handshake, so a slow handshake is judged by its own timeout and never
    /// cut short by the heartbeat.
    private let startsAfterHandshake: Bool
    private var handshakeDone = false

    init(
        configuration: HeartbeatConfiguration,
        localID: String,
        peerID: String,
        startsAfterHandshake: Bool = false,
        logger: Logger
    ) {
        self.configuration = configuration
        self.startsAfterHandshake = startsAfterHandshake
        self.localID = localID
        self.peerID = peerID
        self.logger = logger
        self.ping = CastMessage(
            sourceID: localID,
            destinationID: peerID,
            namespace: CastNamespace.heartbeat,
            payload: .string(Self.pingText)
        )
        let shortest = [configuration.pingInterval, configuration.deadAfter].compactMap { $0 }.min() ?? .zero
        self.slack = max(0, min(configuration.timerSlack, shortest / 10).inNanoseconds)
        self.slackPhase = UInt64(Double(slack) * min(max(configuration.slackPhase, 0), 1))
        self.pingInterval = configuration.pingInterval.map(TimeAmount.init)
        self.deadAfter = configuration.deadAfter.map(TimeAmount.init)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopTimer()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopTimer()
    }

    private func stopTimer() {
        if let timer { HeartbeatTimers.cancel(timer) }
        timer = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is TLSHandshakeCompleted {
            handshakeDone = true
            if context.channel.isActive { start(context: context) }
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func start(context: ChannelHandlerContext) {
        guard lastInbound == nil, !startsAfterHandshake || handshakeDone else { return }
        lastInbound = context.eventLoop.now
        // Strong: the timer goes when the channel goes inactive or the handler is removed. A weak capture would
        // give the handler a side table, making every retain the pipeline takes of it the slow kind.
        timer = HeartbeatTimers.Timer { self.tick(context: context) }
        schedule(context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let message = unwrapInboundIn(data)
        lastInbound = context.eventLoop.now
        lastPing = nil
        guard message.namespace == CastNamespace.heartbeat else {
            context.fireChannelRead(data)
            return
        }
        if configuration.answersPings, pongsSent < (configuration.pongLimit ?? .max), Self.isPing(message) {
            pongsSent += 1
            let source = message.destinationID == CastEndpoint.broadcast ? localID : message.destinationID
            let pong: CastMessage
            if let last = self.pong, last.sourceID == source, last.destinationID == message.sourceID {
                pong = last
            } else {
                pong = CastMessage(
                    sourceID: source,
                    destinationID: message.sourceID,
                    namespace: CastNamespace.heartbeat,
                    payload: .string(Self.pongText)
                )
                self.pong = pong
            }
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        }
    }

    /// The PING and PONG payloads as every known peer writes them.
    static let pingText = #"{"type":"PING"}"#
    static let pongText = #"{"type":"PONG"}"#

    /// Whether a heartbeat message is a PING: the usual text is compared, anything else (other spacing, more
    /// fields) is parsed.
    static func isPing(_ message: CastMessage) -> Bool {
        guard case .string(let text) = message.payload else { return false }
        if text == pingText { return true }
        if text == pongText { return false }
        return (try? message.json())?["type"]?.stringValue == "PING"
    }

    private func schedule(context: ChannelHandlerContext) {
        guard let timer, let lastInbound else { return }
        var next: NIODeadline?
        if let deadAfter {
            next = lastInbound + deadAfter
        }
        if let pingInterval {
            let ping = (lastPing ?? lastInbound) + pingInterval
            next = next.map { min($0, ping) } ?? ping
        }
        guard var next else {
            HeartbeatTimers.cancel(timer)
            return
        }
        let slack = UInt64(self.slack)
        if slack > 0 {
            let shifted = next.uptimeNanoseconds - min(slackPhase, next.uptimeNanoseconds)
            next = .uptimeNanoseconds((shifted + slack - 1) / slack * slack + slackPhase)
        }
        HeartbeatTimers.schedule(timer, on: context.eventLoop, at: next)
    }

    private func tick(context: ChannelHandlerContext) {
        // The channel is active: closing it (or removing this handler) cancels the timer, so no tick asks the
        // channel again (on 10,000 idle connections that was 2–3 % of the idle CPU).
        guard let lastInbound else { return }
        let now = context.eventLoop.now
        if let deadAfter, now >= lastInbound + deadAfter {
            logger.debug("peer silent for too long, closing")
            let silence = configuration.deadAfter ?? .zero
            let error = CastTransportError(.heartbeatTimeout, "no traffic from the peer for \(silence)")
            context.fireErrorCaught(error)
            context.close(promise: nil)
            return
        }
        // Within the slack counts as due: a PONG that moved the due time a little does not cost another wake-up.
        if let pingInterval, now + .nanoseconds(slack) >= (lastPing ?? lastInbound) + pingInterval {
            // Not logged: 2,000 a second on 10,000 idle connections (the log handler's level check alone was about
            // 1 % of the idle samples). A peer that stops answering is logged when it is declared dead.
            lastPing = now
            context.writeAndFlush(wrapOutboundOut(ping), promise: nil)
        }
        schedule(context: context)
    }
}

extension TimeAmount {
    /// Converts a Swift `Duration`, rounding to nanoseconds.
    init(_ duration: Duration) {
        self = .nanoseconds(duration.inNanoseconds)
    }
}
