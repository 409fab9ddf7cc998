/// The sending half of one stream, without I/O: frames in, datagrams out, receiver feedback applied — the
/// reference sender's rules (§11 of the protocol notes), driven by whoever owns the socket and the clock.
struct StreamSender: Sendable {
    /// What the OFFER and ANSWER fixed for the stream.
    struct Configuration: Sendable {
        var senderSSRC: UInt32
        var receiverSSRC: UInt32
        var payloadType: UInt8
        /// RTP ticks per second: 90,000 for video, the sample rate for audio.
        var rtpTimebase: Int
        var crypto: FrameCrypto
        var targetPlayoutDelay: Duration
        var maximumPacketSize = RTPPacket.maximumPacketSizeIPv4
        /// How often sender reports go out.
        var reportInterval: Duration = .milliseconds(500)
    }

    private struct InFlightFrame: Sendable {
        var id: Int64
        var rtpTimestamp: Int64
        var referenceTime: Duration
        var isKeyFrame: Bool
        var ciphertext: [UInt8]
        var newPlayoutDelay: UInt16?
        var needsSend: [Bool]
        var lastSent: [Duration?]

        var packetCount: Int { needsSend.count }
    }

    let configuration: Configuration
    private(set) var statistics = StreamStatistics()
    /// The last frame id handed out (`-1` before the first).
    private(set) var lastEnqueued: Int64 = -1
    /// Every frame up to this one is acknowledged or given up by the receiver.
    private(set) var checkpoint: Int64 = -1
    /// The smoothed round-trip time, once a receiver report has answered a sender report.
    private(set) var roundTripTime: Duration?
    /// Set by a picture-loss indication: the encoder's next frame should be a key frame.
    private(set) var wantsKeyFrame = true
    private var frames: [Int64: InFlightFrame] = [:]
    private var nextSequenceNumber: UInt16
    private var packetCount: UInt32 = 0
    private var octetCount: UInt32 = 0
    private var lastReport: Duration?
    private var sentReports: [(id: UInt32, at: Duration)] = []
    private var latestKnownToReceiver: Int64 = -1
    private var newestReferenceTime: Duration?
    private var newestRTPTimestamp: Int64 = 0
    private var firstCaptureTime: Duration?
    private var pendingPlayoutDelay: UInt16?

    init(configuration: Configuration, firstSequenceNumber: UInt16 = .random(in: 0...UInt16.max)) {
        self.configuration = configuration
        self.nextSequenceNumber = firstSequenceNumber
    }

    /// Frames sent but not yet acknowledged.
    var framesInFlight: Int { frames.count }

    /// Whether any packet waits to be sent (new or NACKed).
    var hasPacketsToSend: Bool { frames.values.contains { $0.needsSend.contains(true) } }

    /// Announces a new target playout delay with the next frame (the Adaptive Latency extension).
    mutating func changePlayoutDelay(to delay: Duration) {
        pendingPlayoutDelay = UInt16(clamping: Int((delay.inSeconds * 1000).rounded()))
    }

    /// Takes a frame: encrypts it once and flags all its packets for sending.
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/frameRefused`` when 120 frames are in
    ///   flight, more media is in flight than half the playout delay (plus half the round trip) covers, the
    ///   frame does not advance the RTP time, or it needs more than 65,534 packets. The encoder should then make
    ///   its next video frame a key frame.
    mutating func enqueue(_ frame: EncodedFrame) throws {
        let id = lastEnqueued + 1
        let rtp = frame.rtpTimestamp ?? rtpTimestamp(forCaptureTime: frame.captureTime)
        do {
            try admit(id: id, rtp: rtp, size: frame.data.count)
        } catch {
            statistics.framesRefused += 1
            wantsKeyFrame = true
            throw error
        }
        if firstCaptureTime == nil { firstCaptureTime = frame.captureTime }
        let count = packetCount(forFrameBytes: frame.data.count)
        frames[id] = InFlightFrame(
            id: id,
            rtpTimestamp: rtp,
            referenceTime: frame.captureTime,
            isKeyFrame: frame.isKeyFrame,
            ciphertext: configuration.crypto.apply(toFrame: id, frame.data),
            newPlayoutDelay: pendingPlayoutDelay,
            needsSend: Array(repeating: true, count: count),
            lastSent: Array(repeating: nil, count: count)
        )
        pendingPlayoutDelay = nil
        lastEnqueued = id
        newestReferenceTime = frame.captureTime
        newestRTPTimestamp = rtp
        if frame.isKeyFrame { wantsKeyFrame = false }
        statistics.framesSent += 1
        statistics.bytesEncoded += frame.data.count
    }

    private func admit(id: Int64, rtp: Int64, size: Int) throws {
        guard id - checkpoint <= FrameID.maximumInFlight else {
            throw CastStreamingError(.frameRefused, "120 frames are in flight: the receiver is not acknowledging")
        }
        if lastEnqueued >= 0, rtp <= newestRTPTimestamp {
            throw CastStreamingError(.frameRefused, "the frame's RTP time does not advance")
        }
        if let oldest = frames.keys.min().flatMap({ frames[$0] }) {
            let inFlight = Double(rtp - oldest.rtpTimestamp) / Double(configuration.rtpTimebase)
            let allowed = configuration.targetPlayoutDelay.inSeconds / 2 + (roundTripTime?.inSeconds ?? 0) / 2
            guard inFlight <= allowed else {
                throw CastStreamingError(
                    .frameRefused,
                    "\(Int(inFlight * 1000)) ms of media in flight, more than the \(Int(allowed * 1000)) ms allowed"
                )
            }
        }
        guard packetCount(forFrameBytes: size) <= 65534 else {
            throw CastStreamingError(.frameRefused, "a \(size)-byte frame needs more than 65,534 packets")
        }
    }

    private func packetCount(forFrameBytes size: Int) -> Int {
        let capacity = configuration.maximumPacketSize - RTPPacket.reservedHeaderSize
        return max(1, (size + capacity - 1) / capacity)
    }

    private func rtpTimestamp(forCaptureTime time: Duration) -> Int64 {
        guard let first = firstCaptureTime else { return 0 }
        return Int64(((time - first).inSeconds * Double(configuration.rtpTimebase)).rounded())
    }

    // MARK: - Sending

    /// A sender report when one is due: before the first RTP packet while no round trip is known, then every
    /// ``Configuration/reportInterval``.
    mutating func reportIfDue(at now: StreamingMoment) -> RTCPPacket? {
        if let lastReport, now.monotonic - lastReport < configuration.reportInterval { return nil }
        guard let reference = newestReferenceTime else { return nil }
        let elapsed = (now.monotonic - reference).inSeconds * Double(configuration.rtpTimebase)
        let report = SenderReport(
            senderSSRC: configuration.senderSSRC,
            ntpTimestamp: now.ntp,
            rtpTimestamp: UInt32(truncatingIfNeeded: newestRTPTimestamp + Int64(elapsed.rounded())),
            packetCount: packetCount,
            octetCount: octetCount
        )
        lastReport = now.monotonic
        sentReports.append((report.reportID, now.monotonic))
        if sentReports.count > 8 { sentReports.removeFirst() }
        return .senderReport(report)
    }

    /// Up to `limit` packets to send now: the oldest frame's flagged packets first, then the "kickstart" resend
    /// of the newest frame's last packet when the receiver may not know it exists.
    mutating func packetsToSend(limit: Int, at now: Duration) -> [[UInt8]] {
        var packets: [[UInt8]] = []
        for id in frames.keys.sorted() where packets.count < limit {
            guard var frame = frames[id] else { continue }
            for packetID in frame.needsSend.indices where frame.needsSend[packetID] && packets.count < limit {
                if frame.lastSent[packetID] != nil { statistics.packetsRetransmitted += 1 }
                packets.append(makePacket(frame, packetID: packetID))
                frame.needsSend[packetID] = false
                frame.lastSent[packetID] = now
            }
            frames[id] = frame
        }
        if packets.isEmpty, latestKnownToReceiver < lastEnqueued, var newest = frames[lastEnqueued] {
            let last = newest.packetCount - 1
            let wait = max(configuration.targetPlayoutDelay / 20, (roundTripTime ?? .zero) * 2)
            if let sent = newest.lastSent[last], now - sent >= wait {
                statistics.packetsRetransmitted += 1
                packets.append(makePacket(newest, packetID: last))
                newest.lastSent[last] = now
                frames[lastEnqueued] = newest
            }
        }
        return packets
    }

    private mutating func makePacket(_ frame: InFlightFrame, packetID: Int) -> [UInt8] {
        let capacity = configuration.maximumPacketSize - RTPPacket.reservedHeaderSize
        let start = packetID * capacity
        let payload = frame.ciphertext[start..<min(start + capacity, frame.ciphertext.count)]
        let packet = RTPPacket(
            payloadType: configuration.payloadType,
            marker: packetID == frame.packetCount - 1,
            sequenceNumber: nextSequenceNumber,
            rtpTimestamp: UInt32(truncatingIfNeeded: frame.rtpTimestamp),
            ssrc: configuration.senderSSRC,
            isKeyFrame: frame.isKeyFrame,
            frameID: FrameID.wire(frame.id),
            packetID: UInt16(packetID),
            maxPacketID: UInt16(frame.packetCount - 1),
            referencedFrameID: FrameID.wire(frame.isKeyFrame ? frame.id : frame.id - 1),
            newPlayoutDelay: packetID == 0 ? frame.newPlayoutDelay : nil,
            payload: payload
        )
        nextSequenceNumber &+= 1
        packetCount &+= 1
        octetCount &+= UInt32(payload.count)
        statistics.packetsSent += 1
        statistics.bytesSent += payload.count
        return packet.serialized()
    }

    // MARK: - Feedback

    /// Applies one RTCP packet from the receiver that arrived at `now`.
    mutating func handle(_ packet: RTCPPacket, at now: Duration) {
        switch packet {
        case .receiverReport(let report):
            guard let block = report.block, let sent = sentReports.first(where: { $0.id == block.lastSenderReport })
            else { return }
            var sample = now - sent.at - .fractionalSeconds(Double(block.delaySinceLastSenderReport) / 65536)
            if sample <= .zero { sample = .microseconds(75) }
            guard sample <= configuration.targetPlayoutDelay else { return }
            roundTripTime = roundTripTime.map { ($0 * 7 + sample) / 8 } ?? sample
            statistics.roundTripTime = roundTripTime
        case .pictureLoss:
            statistics.pictureLossIndications += 1
            // One key frame newer than the checkpoint still on its way answers the request already.
            let keyFrameInFlight = frames.values.contains { $0.isKeyFrame && $0.id > checkpoint }
            if !keyFrameInFlight { wantsKeyFrame = true }
        case .castFeedback(let feedback):
            apply(feedback, at: now)
        case .senderReport, .receiverReferenceTime:
            break
        }
    }

    private mutating func apply(_ feedback: CastFeedback, at now: Duration) {
        let newCheckpoint = FrameID.expand(feedback.checkpointFrameID, atOrBefore: lastEnqueued)
        if newCheckpoint > checkpoint {
            for id in frames.keys where id <= newCheckpoint {
                frames[id] = nil
                statistics.framesAcknowledged += 1
            }
            checkpoint = newCheckpoint
        }
        latestKnownToReceiver = max(latestKnownToReceiver, checkpoint)
        for offset in feedback.acknowledgedOffsets {
            let id = newCheckpoint + Int64(offset)
            latestKnownToReceiver = max(latestKnownToReceiver, id)
            if frames.removeValue(forKey: id) != nil { statistics.framesAcknowledged += 1 }
        }
        let guardTime = now - (roundTripTime ?? .zero)
        for field in feedback.lossFields {
            let id = FrameID.expand(field.frameID, after: newCheckpoint)
            latestKnownToReceiver = max(latestKnownToReceiver, id)
            guard var frame = frames[id] else { continue }
            let packetIDs = field.packetIDs.map { $0.map(Int.init) } ?? Array(frame.needsSend.indices)
            for packetID in packetIDs where packetID < frame.packetCount {
                if let sent = frame.lastSent[packetID], sent <= guardTime { frame.needsSend[packetID] = true }
            }
            frames[id] = frame
            statistics.negativeAcknowledgements += 1
        }
    }
}

/// What one stream has done so far.
public struct StreamStatistics: Sendable, Hashable {
    /// Frames handed to the stream and accepted.
    public var framesSent = 0
    /// Frames refused because too many or too much media was in flight (the receiver is behind).
    public var framesRefused = 0
    /// Frames the receiver acknowledged (or gave up on, when its checkpoint skipped them).
    public var framesAcknowledged = 0
    /// Packets sent the first time.
    public var packetsSent = 0
    /// Packets sent again after a NACK or to tell the receiver of a frame it has not seen.
    public var packetsRetransmitted = 0
    /// Encoded bytes, before packetization.
    public var bytesEncoded = 0
    /// Payload bytes sent, retransmissions included.
    public var bytesSent = 0
    /// Loss fields received.
    public var negativeAcknowledgements = 0
    /// Picture-loss indications received (each asks for a key frame).
    public var pictureLossIndications = 0
    /// The smoothed round-trip time.
    public var roundTripTime: Duration?

    /// Statistics with every count at 0.
    public init() {}
}
