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

    /// What the receiver answered.
    public let answer: StreamingAnswer
    /// The offered streams the receiver chose.
    public let streams: [OfferedStream]
    private let socket: DatagramSocket
    private let remote: SocketAddress
    private let senders: NIOLockedValueBox<[Int: StreamSender]>
    private let pacing: NIOLockedValueBox<RepeatedTask?>
    private let logger: Logger

    /// Packets per 10 ms burst: the reference's 24 Mbit/s ceiling.
    static let burstPacketLimit = 21

    private init(
        answer: StreamingAnswer,
        streams: [OfferedStream],
        senders: [Int: StreamSender],
        socket: DatagramSocket,
        remote: SocketAddress,
        logger: Logger
    ) {
        self.answer = answer
        self.streams = streams
        self.senders = NIOLockedValueBox(senders)
        self.socket = socket
        self.remote = remote
        self.pacing = NIOLockedValueBox(nil)
        self.logger = logger
    }

    /// Sends `offer` to the mirroring app `session` runs, waits for the ANSWER and opens the UDP socket to the
    /// receiver (the control connection's address, the ANSWER's port).
    ///
    /// - Parameter answerTimeout: How long to wait for the channel and the ANSWER. Defaults to 15 s (Chrome's).
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
        let channel = try GenericChannel(namespace: namespace)
        let connections = channel.connectionChanges()
        let replies = channel.messages()
        session.add(channel)
        defer { session.remove(channel) }
        let sequenceNumber = Int.random(in: 1...1_000_000)
        let message = try await withDeadline(answerTimeout) {
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
        let receivers = NIOLockedValueBox<MirroringSession?>(nil)
        let socket = try await DatagramSocket.bind(host: remote.protocol == .inet6 ? "::" : "0.0.0.0", port: 0) {
            from,
            datagram in
            receivers.withLockedValue { $0 }?.receive(datagram, from: from)
        }
        let mirroring = MirroringSession(
            answer: answer,
            streams: chosen,
            senders: senders,
            socket: socket,
            remote: remote,
            logger: logger
        )
        receivers.withLockedValue { $0 = mirroring }
        mirroring.startPacing()
        logger.info(
            "streaming to \(host):\(answer.udpPort)",
            metadata: ["cast.streams": "\(chosen.map { "\($0.codecName)#\($0.index)" })"]
        )
        return mirroring
    }

    /// The chosen stream of `kind`, if the receiver took one.
    public func stream(_ kind: OfferedStream.Kind) -> OfferedStream? { streams.first { $0.kind == kind } }

    /// Sends one encoded frame on the stream of `kind`: packets leave at once, up to a burst.
    ///
    /// - Throws: ``CastStreamingError`` — ``CastStreamingError/Code/noStreamSelected`` when there is no such
    ///   stream, ``CastStreamingError/Code/frameRefused`` when the receiver is too far behind (drop the frame and
    ///   make the next video frame a key frame).
    public func send(_ frame: EncodedFrame, on kind: OfferedStream.Kind) throws {
        guard let index = stream(kind)?.index else {
            throw CastStreamingError(.noStreamSelected, "the receiver took no \(kind) stream")
        }
        let now = StreamingMoment.now()
        let datagrams = try senders.withLockedValue { senders -> [[UInt8]] in
            try senders[index]!.enqueue(frame)
            return burst(&senders, at: now)
        }
        socket.send(datagrams, to: remote)
    }

    /// Whether the receiver asked for a key frame (picture loss) or a refused frame broke the reference chain.
    public func wantsKeyFrame(on kind: OfferedStream.Kind = .video) -> Bool {
        guard let index = stream(kind)?.index else { return false }
        return senders.withLockedValue { $0[index]?.wantsKeyFrame ?? false }
    }

    /// Announces a new target playout delay to the receiver with the next frame of every stream.
    public func changePlayoutDelay(to delay: Duration) {
        senders.withLockedValue { senders in
            for index in senders.keys { senders[index]!.changePlayoutDelay(to: delay) }
        }
    }

    /// What each stream has done so far.
    public var statistics: [OfferedStream.Kind: StreamStatistics] {
        senders.withLockedValue { senders in
            var result: [OfferedStream.Kind: StreamStatistics] = [:]
            for stream in streams { result[stream.kind] = senders[stream.index]?.statistics }
            return result
        }
    }

    /// Stops sending and closes the socket. The app keeps running: end the ``CastSession`` to stop it.
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
            let datagrams = senders.withLockedValue { burst(&$0, at: now) }
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
        // Only the receiver's endpoint may talk to this socket.
        guard address == remote, RTCPPacket.looksLikeRTCP(datagram) else { return }
        let packets: [RTCPPacket]
        do {
            packets = try RTCPPacket.parse(datagram)
        } catch {
            logger.debug("dropping a malformed RTCP datagram: \(error)")
            return
        }
        let now = StreamingMoment.now().monotonic
        senders.withLockedValue { senders in
            for packet in packets {
                guard let index = senders.keys.first(where: { senders[$0]!.configuration.receiverSSRC == packet.ssrc })
                else { continue }
                senders[index]!.handle(packet, at: now)
            }
        }
    }
}

/// Runs `body` and fails with ``CastStreamingError/Code/answerTimedOut`` when it has not returned a value
/// within `timeout` (or returned `nil`).
func withDeadline<Value: Sendable>(
    _ timeout: Duration,
    _ body: @escaping @Sendable () async throws -> Value?
) async throws -> Value {
    try await withThrowingTaskGroup(of: Value?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw CastStreamingError(.answerTimedOut, "no ANSWER within \(timeout.inSeconds) s")
        }
        return value
    }
}
