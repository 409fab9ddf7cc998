import CastTransport
import NIOConcurrencyHelpers
import NIOCore

/// The receiving end of Cast Streaming, as a Chromecast runs it: answers an OFFER (stream choice, its UDP port,
/// its SSRCs), locks onto the sender's address with the first valid packet, reassembles and decrypts frames,
/// and sends RTCP back — receiver reports, reference time, picture loss and Cast feedback (every 30 ms while
/// something is missing, every 500 ms otherwise, at once after a sender report or a completed frame). The
/// emulator (`cast-receiver`) runs one per mirroring session; tests use it directly.
public final class StreamingReceiverEndpoint: Sendable {
    /// How the endpoint behaves.
    public struct Options: Sendable {
        /// Video codecs in order of preference. Defaults to VP8, then H.264 (the reference receiver's).
        public var videoCodecs = ["vp8", "h264"]
        /// Audio codecs in order of preference. Defaults to Opus, then AAC.
        public var audioCodecs = ["opus", "aac"]
        /// The share of inbound RTP packets, and of the RTCP it sends back, to drop (0–1), to simulate a lossy
        /// network. Defaults to 0.
        public var lossRate = 0.0
        /// The most random delay added to each inbound packet (which also reorders them). Defaults to none.
        public var jitter: Duration = .zero
        /// The UDP port to bind; 0 (the default) picks a free one, as real devices do.
        public var port = 0
        /// Called on the socket's event loop with every completed, decrypted frame.
        public var frameHandler: (@Sendable (OfferedStream.Kind, ReceivedFrame) -> Void)?

        /// The defaults.
        public init() {}
    }

    fileprivate struct State: Sendable {
        var receivers: [Int: StreamReceiver] = [:]
        var kinds: [Int: OfferedStream.Kind] = [:]
        var sender: SocketAddress?
        /// When each stream's last feedback left: the next is due 30 ms (something missing) or 500 ms after it,
        /// judged when the tick comes, so a loss that appears shortens the wait.
        var lastFeedback: [Int: Duration] = [:]
        var random = SplitMix64(seed: 0x5eed)
        var datagramsDropped = 0
        var malformedDatagrams = 0
    }

    /// What the endpoint answered.
    public let answer: StreamingAnswer
    private let options: Options
    private let socket: DatagramSocket
    private let state: NIOLockedValueBox<State>
    private let ticker: NIOLockedValueBox<RepeatedTask?>

    private init(answer: StreamingAnswer, options: Options, socket: DatagramSocket, state: NIOLockedValueBox<State>) {
        self.answer = answer
        self.options = options
        self.socket = socket
        self.state = state
        self.ticker = NIOLockedValueBox(nil)
    }

    /// Picks streams from `offer`, binds a UDP port on `host` and returns the endpoint with its ANSWER.
    ///
    /// - Throws: ``CastStreamingError`` — ``CastStreamingError/Code/noStreamSelected`` (no offered codec is
    ///   acceptable), ``CastStreamingError/Code/socketFailed``.
    public static func answering(
        _ offer: StreamingOffer,
        host: String,
        options: Options = Options()
    ) async throws -> StreamingReceiverEndpoint {
        let chosen = offer.selectStreams(videoCodecs: options.videoCodecs, audioCodecs: options.audioCodecs)
        guard !chosen.isEmpty else {
            throw CastStreamingError(.noStreamSelected, "Failed to select any streams from OFFER")
        }
        var state = State()
        var ssrcs: [UInt32] = []
        for stream in chosen {
            // Not the sender's SSRC + 1, as real devices do not do that either.
            var ssrc = UInt32.random(in: 1...UInt32.max)
            while chosen.contains(where: { $0.ssrc == ssrc }) || ssrcs.contains(ssrc) { ssrc &+= 1 }
            ssrcs.append(ssrc)
            state.receivers[stream.index] = StreamReceiver(
                configuration: .init(
                    senderSSRC: stream.ssrc,
                    receiverSSRC: ssrc,
                    rtpTimebase: stream.rtpTimebase,
                    crypto: stream.crypto,
                    targetPlayoutDelay: stream.targetDelay
                )
            )
            state.kinds[stream.index] = stream.kind
        }
        let box = NIOLockedValueBox(state)
        let endpoint = NIOLockedValueBox<StreamingReceiverEndpoint?>(nil)
        let socket = try await DatagramSocket.bind(host: host, port: options.port) { from, datagram in
            endpoint.withLockedValue { $0 }?.arrived(datagram, from: from)
        }
        let answer = StreamingAnswer(
            udpPort: socket.localAddress?.port ?? options.port,
            sendIndexes: chosen.map(\.index),
            receiverSSRCs: ssrcs
        )
        let receiver = StreamingReceiverEndpoint(answer: answer, options: options, socket: socket, state: box)
        endpoint.withLockedValue { $0 = receiver }
        receiver.startTicking()
        return receiver
    }

    /// The kinds of the chosen streams.
    public var kinds: [OfferedStream.Kind] { state.withLockedValue { Array($0.kinds.values) } }

    /// What each stream has received so far.
    public var statistics: [OfferedStream.Kind: ReceiverStatistics] {
        state.withLockedValue { state in
            var result: [OfferedStream.Kind: ReceiverStatistics] = [:]
            for (index, receiver) in state.receivers { result[state.kinds[index]!] = receiver.statistics }
            return result
        }
    }

    /// Inbound packets dropped on purpose (``Options/lossRate``) and datagrams that did not parse.
    public var dropped: (simulated: Int, malformed: Int) {
        state.withLockedValue { ($0.datagramsDropped, $0.malformedDatagrams) }
    }

    /// Asks the sender for a key frame on the stream of `kind` (a decoder that lost its references).
    public func requestKeyFrame(on kind: OfferedStream.Kind = .video) {
        state.withLockedValue { state in
            for (index, streamKind) in state.kinds where streamKind == kind {
                state.receivers[index]!.requestKeyFrame()
            }
        }
    }

    /// Stops receiving and closes the socket.
    public func close() async {
        ticker.withLockedValue { $0 }?.cancel()
        await socket.close()
    }

    // MARK: - Packets

    private func arrived(_ datagram: [UInt8], from address: SocketAddress) {
        var delay: Duration = .zero
        let drop = state.withLockedValue { state -> Bool in
            guard !RTCPPacket.looksLikeRTCP(datagram) else { return false }
            if options.lossRate > 0, state.random.nextUnit() < options.lossRate {
                state.datagramsDropped += 1
                return true
            }
            if options.jitter > .zero { delay = .fractionalSeconds(options.jitter.inSeconds * state.random.nextUnit()) }
            return false
        }
        guard !drop else { return }
        if delay > .zero {
            socket.eventLoop.scheduleTask(in: .nanoseconds(delay.inNanoseconds)) { [self] in
                handle(datagram, from: address)
            }
        } else {
            handle(datagram, from: address)
        }
    }

    private func handle(_ datagram: [UInt8], from address: SocketAddress) {
        let now = StreamingMoment.now()
        var completed: [(OfferedStream.Kind, ReceivedFrame)] = []
        var replies: [[UInt8]] = []
        var destination: SocketAddress?
        state.withLockedValue { state in
            if let sender = state.sender, sender != address { return }
            if RTCPPacket.looksLikeRTCP(datagram) {
                guard let packets = try? RTCPPacket.parse(datagram) else {
                    state.malformedDatagrams += 1
                    return
                }
                for case .senderReport(let report) in packets {
                    guard let index = state.index(ofSender: report.senderSSRC) else { continue }
                    state.sender = state.sender ?? address
                    state.receivers[index]!.receive(report, at: now)
                    replies.append(state.receivers[index]!.feedback(at: now))
                    state.lastFeedback[index] = now.monotonic
                }
            } else {
                guard let packet = try? RTPPacket(parsing: datagram), let index = state.index(ofSender: packet.ssrc)
                else {
                    state.malformedDatagrams += 1
                    return
                }
                state.sender = state.sender ?? address
                let before = state.receivers[index]!.checkpoint
                let frames = state.receivers[index]!.receive(packet, at: now)
                completed += frames.map { (state.kinds[index]!, $0) }
                if state.receivers[index]!.checkpoint != before {
                    replies.append(state.receivers[index]!.feedback(at: now))
                    state.lastFeedback[index] = now.monotonic
                }
            }
            destination = state.sender
        }
        if let destination { sendFeedback(replies, to: destination) }
        if let handler = options.frameHandler { for (kind, frame) in completed { handler(kind, frame) } }
    }

    /// Sends feedback to the sender, less the share ``Options/lossRate`` drops.
    private func sendFeedback(_ replies: [[UInt8]], to destination: SocketAddress) {
        var kept = replies
        if options.lossRate > 0 {
            kept = state.withLockedValue { state in
                replies.filter { _ in
                    guard state.random.nextUnit() < options.lossRate else { return true }
                    state.datagramsDropped += 1
                    return false
                }
            }
        }
        socket.send(kept, to: destination)
    }

    /// Every 10 ms: skip late frames, and send feedback that is due.
    private func startTicking() {
        let task = socket.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(10), delay: .milliseconds(10)) {
            [weak self] _ in
            guard let self else { return }
            let now = StreamingMoment.now()
            var completed: [(OfferedStream.Kind, ReceivedFrame)] = []
            var replies: [[UInt8]] = []
            let destination = state.withLockedValue { state -> SocketAddress? in
                guard let sender = state.sender else { return nil }
                for index in state.receivers.keys {
                    let before = state.receivers[index]!.checkpoint
                    completed += state.receivers[index]!.deliverCompleted(at: now).map { (state.kinds[index]!, $0) }
                    let due =
                        state.lastFeedback[index].map { now.monotonic >= $0 + state.feedbackInterval(index) } ?? true
                    if due || state.receivers[index]!.checkpoint != before {
                        replies.append(state.receivers[index]!.feedback(at: now))
                        state.lastFeedback[index] = now.monotonic
                    }
                }
                return sender
            }
            if let destination { sendFeedback(replies, to: destination) }
            if let handler = options.frameHandler { for (kind, frame) in completed { handler(kind, frame) } }
        }
        ticker.withLockedValue { $0 = task }
    }
}

extension StreamingReceiverEndpoint.State {
    func index(ofSender ssrc: UInt32) -> Int? {
        receivers.first { $0.value.configuration.senderSSRC == ssrc }?.key
    }

    /// 30 ms while a frame is incomplete, 500 ms otherwise (the reference's intervals).
    func feedbackInterval(_ index: Int) -> Duration {
        receivers[index]!.isMissingPackets ? .milliseconds(30) : .milliseconds(500)
    }
}
