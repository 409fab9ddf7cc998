import CastLogging
import CastSession
import CastTransport
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// A negotiated Cast Streaming session on a running mirroring app: the OFFER/ANSWER exchange done, a UDP socket
/// to the receiver, and one sender per chosen stream. Hand it encoded frames; it encrypts, packetizes, paces
/// (bursts every 10 ms), sends sender reports, retransmits what the receiver NACKs and tells when the receiver
/// wants a key frame. ``ScreenMirror`` feeds it from a capture; a program can push its own frames.
public final class MirroringSession: Sendable {
    /// The mirroring receiver app, audio and video (`0F5096E8`).
    public static let applicationID = "0F5096E8"
    /// The audio-only mirroring receiver app, for speakers and speaker groups (`85CDB22F`).
    public static let audioOnlyApplicationID = "85CDB22F"
    /// Where OFFER and ANSWER travel.
    public static let namespace = "urn:x-cast:com.google.cast.webrtc"

    /// What the OFFER/ANSWER exchange fixed; replaced whole by ``renegotiate(_:on:answerTimeout:)``.
    private struct Negotiated: Sendable {
        var answer: StreamingAnswer
        var streams: [OfferedStream]
        var senders: [Int: StreamSender]
        var remote: SocketAddress
    }

    private let socket: DatagramSocket
    private let state: NIOLockedValueBox<Negotiated>
    private let pacing: NIOLockedValueBox<RepeatedTask?>
    private let logger: Logger

    /// Packets per 10 ms burst: the reference's 24 Mbit/s ceiling.
    static let burstPacketLimit = 21

    private init(negotiated: Negotiated, socket: DatagramSocket, logger: Logger) {
        self.state = NIOLockedValueBox(negotiated)
        self.socket = socket
        self.pacing = NIOLockedValueBox(nil)
        self.logger = logger
    }

    /// What the receiver answered.
    public var answer: StreamingAnswer { state.withLockedValue { $0.answer } }
    /// The offered streams the receiver chose.
    public var streams: [OfferedStream] { state.withLockedValue { $0.streams } }

    /// Sends `offer` to the mirroring app `session` runs, waits for the ANSWER and opens the UDP socket to the
    /// receiver (the control connection's address, the ANSWER's port).
    ///
    /// - Parameters:
    ///   - session: A session running the mirroring app (`0F5096E8`, or `85CDB22F` for audio only).
    ///   - offer: The streams to propose.
    ///   - answerTimeout: How long to wait for the channel and the ANSWER. Defaults to 15 s (Chrome's).
    ///   - logger: Where the session logs; silent by default.
    /// - Throws: ``CastStreamingError`` — ``CastStreamingError/Code/answerTimedOut``,
    ///   ``CastStreamingError/Code/offerRejected``, ``CastStreamingError/Code/invalidAnswer``,
    ///   ``CastStreamingError/Code/noStreamSelected``, ``CastStreamingError/Code/socketFailed``.
    public static func start(
        on session: CastSession,
        offer: StreamingOffer,
        answerTimeout: Duration = .seconds(15),
        logger: Logger = .castDisabled
    ) async throws -> MirroringSession {
        let logger = logger.withCategory(CastLogCategory.streaming)
        let negotiated = try await negotiate(offer, on: session, answerTimeout: answerTimeout, logger: logger)
        let mirrorings = NIOLockedValueBox<MirroringSession?>(nil)
        let socket = try await DatagramSocket.bind(
            host: negotiated.remote.protocol == .inet6 ? "::" : "0.0.0.0",
            port: 0
        ) { from, datagram in
            mirrorings.withLockedValue { $0 }?.receive(datagram, from: from)
        }
        let mirroring = MirroringSession(negotiated: negotiated, socket: socket, logger: logger)
        mirrorings.withLockedValue { $0 = mirroring }
        mirroring.startPacing()
        return mirroring
    }

    /// Replaces every stream with those of a new `offer` (another codec, size or key), as a sender does when what
    /// it captures changes: the receiver answers again and frame ids restart at 0. Frames in flight are dropped.
    ///
    /// - Throws: The errors of ``start(on:offer:answerTimeout:logger:)``; the old streams stay in place then.
    public func renegotiate(_ offer: StreamingOffer, on session: CastSession, answerTimeout: Duration = .seconds(15))
        async throws
    {
        let negotiated = try await Self.negotiate(offer, on: session, answerTimeout: answerTimeout, logger: logger)
        state.withLockedValue { $0 = negotiated }
    }

    /// The OFFER/ANSWER exchange on the webrtc namespace, and a sender per chosen stream.
    private static func negotiate(
        _ offer: StreamingOffer,
        on session: CastSession,
        answerTimeout: Duration,
        logger: Logger
    ) async throws -> Negotiated {
        let channel = try GenericChannel(namespace: namespace)
        let connections = channel.connectionChanges()
        let replies = channel.messages()
        session.add(channel)
        defer { session.remove(channel) }
        let sequenceNumber = Int.random(in: 1...1_000_000)
        let message = try await withTimeLimit(answerTimeout) {
            CastStreamingError(.answerTimedOut, "no ANSWER within \(answerTimeout.inSeconds) s")
        } _: {
            if !channel.isConnected {
                for await connected in connections where connected { break }
            }
            try await channel.sendTextMessage(offer.message(sequenceNumber: sequenceNumber).jsonString)
            logger.debug("OFFER sent", metadata: ["cast.streams": "\(offer.streams.count)"])
            for await reply in replies {
                guard case .string(let text) = reply, let json = try? JSONValue(parsing: text),
                    json["type"]?.stringValue?.uppercased() == "ANSWER", json["seqNum"]?.intValue == sequenceNumber
                else { continue }
                return json
            }
            return nil
        }
        let answer = try StreamingAnswer(message: message)
        var chosen: [OfferedStream] = []
        var senders: [Int: StreamSender] = [:]
        for (index, receiverSSRC) in zip(answer.sendIndexes, answer.receiverSSRCs) {
            guard let stream = offer.streams.first(where: { $0.index == index }) else { continue }
            chosen.append(stream)
            let configuration = StreamSender.Configuration(
                senderSSRC: stream.ssrc,
                receiverSSRC: receiverSSRC,
                payloadType: stream.payloadType,
                rtpTimebase: stream.rtpTimebase,
                crypto: stream.crypto,
                targetPlayoutDelay: stream.targetDelay
            )
            senders[index] = StreamSender(configuration: configuration)
        }
        guard !chosen.isEmpty else {
            throw CastStreamingError(.noStreamSelected, "the ANSWER chose none of the offered streams")
        }
        let host = session.device.host
        let remote: SocketAddress
        do {
            remote = try SocketAddress.makeAddressResolvingHost(host, port: answer.udpPort)
        } catch {
            throw CastStreamingError(.socketFailed, "cannot resolve \(host): \(error)", cause: error)
        }
        logger.info(
            "streaming to \(host):\(answer.udpPort)",
            metadata: ["cast.streams": "\(chosen.map { "\($0.codecName)#\($0.index)" })"]
        )
        return Negotiated(answer: answer, streams: chosen, senders: senders, remote: remote)
    }

    /// The chosen stream of `kind`, if the receiver took one.
    public func stream(_ kind: OfferedStream.Kind) -> OfferedStream? { streams.first { $0.kind == kind } }

    /// Sends one encoded frame on the stream of `kind`: packets leave at once, up to a burst.
    ///
    /// - Throws: ``CastStreamingError`` — ``CastStreamingError/Code/noStreamSelected`` when there is no such
    ///   stream, ``CastStreamingError/Code/frameRefused`` when the receiver is too far behind (drop the frame and
    ///   make the next video frame a key frame).
    public func send(_ frame: EncodedFrame, on kind: OfferedStream.Kind) throws {
        let now = StreamingMoment.now()
        let (datagrams, remote) = try state.withLockedValue { state -> ([[UInt8]], SocketAddress) in
            guard let index = state.streams.first(where: { $0.kind == kind })?.index else {
                throw CastStreamingError(.noStreamSelected, "the receiver took no \(kind) stream")
            }
            try state.senders[index]!.enqueue(frame)
            return (burst(&state.senders, at: now), state.remote)
        }
        socket.send(datagrams, to: remote)
    }

    /// Whether the receiver asked for a key frame (picture loss) or a refused frame broke the reference chain.
    public func wantsKeyFrame(on kind: OfferedStream.Kind = .video) -> Bool {
        state.withLockedValue { state in
            guard let index = state.streams.first(where: { $0.kind == kind })?.index else { return false }
            return state.senders[index]?.wantsKeyFrame ?? false
        }
    }

    /// Announces a new target playout delay to the receiver with the next frame of every stream.
    public func changePlayoutDelay(to delay: Duration) {
        state.withLockedValue { state in
            for index in state.senders.keys { state.senders[index]!.changePlayoutDelay(to: delay) }
        }
    }

    /// What each stream has done so far.
    public var statistics: [OfferedStream.Kind: StreamStatistics] {
        state.withLockedValue { state in
            var result: [OfferedStream.Kind: StreamStatistics] = [:]
            for stream in state.streams { result[stream.kind] = state.senders[stream.index]?.statistics }
            return result
        }
    }

    /// Stops sending and closes the socket. The app keeps running: end the `CastSession` to stop it.
    public func close() async {
        pacing.withLockedValue { $0 }?.cancel()
        await socket.close()
    }

    // MARK: - Sending and feedback

    private func startPacing() {
        let task = socket.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(10), delay: .milliseconds(10)) {
            [weak self] _ in
            guard let self else { return }
            let now = StreamingMoment.now()
            let (datagrams, remote) = state.withLockedValue { (burst(&$0.senders, at: now), $0.remote) }
            socket.send(datagrams, to: remote)
        }
        pacing.withLockedValue { $0 = task }
    }

    /// One burst: every due sender report first, then packets in SSRC order (audio before video) up to the limit.
    private func burst(_ senders: inout [Int: StreamSender], at now: StreamingMoment) -> [[UInt8]] {
        var datagrams: [[UInt8]] = []
        let order = senders.keys.sorted {
            senders[$0]!.configuration.senderSSRC < senders[$1]!.configuration.senderSSRC
        }
        for index in order {
            if let report = senders[index]!.reportIfDue(at: now) { datagrams.append(RTCPPacket.compound([report])) }
        }
        var budget = Self.burstPacketLimit
        for index in order where budget > 0 {
            let packets = senders[index]!.packetsToSend(limit: budget, at: now.monotonic)
            budget -= packets.count
            datagrams += packets
        }
        return datagrams
    }

    private func receive(_ datagram: [UInt8], from address: SocketAddress) {
        guard RTCPPacket.looksLikeRTCP(datagram) else { return }
        let packets: [RTCPPacket]
        do {
            packets = try RTCPPacket.parse(datagram)
        } catch {
            logger.debug("dropping a malformed RTCP datagram: \(error)")
            return
        }
        let now = StreamingMoment.now().monotonic
        state.withLockedValue { state in
            // Only the receiver's endpoint may talk to this socket.
            guard address == state.remote else { return }
            for packet in packets {
                guard
                    let index = state.senders.keys.first(where: {
                        state.senders[$0]!.configuration.receiverSSRC == packet.ssrc
                    })
                else { continue }
                state.senders[index]!.handle(packet, at: now)
            }
        }
    }
}
