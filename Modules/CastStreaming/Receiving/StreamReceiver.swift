import CastTransport

/// A frame the receiver completed, decrypted, in frame-id order.
public struct ReceivedFrame: Sendable {
    /// The frame's id, counted from the first frame.
    public var frameID: Int64
    /// The frame's RTP time.
    public var rtpTimestamp: UInt32
    /// Whether the frame decodes on its own.
    public var isKeyFrame: Bool
    /// The decrypted codec bytes.
    public var data: [UInt8]
    /// From capture at the sender to completion here, through the sender reports' clock mapping (both clocks
    /// are NTP, so the figure holds between processes of one machine or synchronised machines).
    public var captureToReceipt: Duration?

    /// A completed frame, as a receiver hands it over (or a program feeding a recorder or decoder).
    public init(
        frameID: Int64,
        rtpTimestamp: UInt32,
        isKeyFrame: Bool,
        data: [UInt8],
        captureToReceipt: Duration? = nil
    ) {
        self.frameID = frameID
        self.rtpTimestamp = rtpTimestamp
        self.isKeyFrame = isKeyFrame
        self.data = data
        self.captureToReceipt = captureToReceipt
    }
}

/// The receiving half of one stream, without I/O: packets in, completed frames and feedback out — the reference
/// receiver's rules (§12 of the protocol notes).
struct StreamReceiver: Sendable {
    struct Configuration: Sendable {
        var senderSSRC: UInt32
        var receiverSSRC: UInt32
        var rtpTimebase: Int
        var crypto: FrameCrypto
        var targetPlayoutDelay: Duration
    }

    private struct PartialFrame: Sendable {
        var maxPacketID: Int?
        var payloads: [Int: ArraySlice<UInt8>] = [:]
        var isKeyFrame = false
        var referencedFrameID: Int64?
        var rtpTimestamp: UInt32?
        var playoutDelay: Duration?

        var isComplete: Bool { maxPacketID.map { payloads.count == $0 + 1 } ?? false }
        var isIndependent: Bool { isKeyFrame }
    }

    let configuration: Configuration
    private(set) var statistics = ReceiverStatistics()
    /// The last frame consumed (delivered or skipped as late).
    private(set) var checkpoint: Int64 = -1
    private var highestSeen: Int64 = -1
    private var frames: [Int64: PartialFrame] = [:]
    private var lastReport: (report: SenderReport, arrival: StreamingMoment)?
    private var reportToAnswer = false
    private var playoutDelays: [(from: Int64, delay: Duration)] = []
    private var feedbackCount: UInt8 = 0
    private var nackedPackets: Set<Int64> = []
    /// Sequence numbers seen, for the report block.
    private var highestSequence: Int64?
    private var packetsAtLastReport = 0
    private var expectedAtLastReport: Int64 = 0
    /// RFC 3550's interarrival jitter estimate, in RTP ticks, and the last packet's transit time.
    private var jitter = 0.0
    private var lastTransit: Double?
    /// A key frame is wanted until one completes: raised at the start and when the decoder asks.
    private(set) var wantsKeyFrame = true

    init(configuration: Configuration) {
        self.configuration = configuration
        playoutDelays = [(0, configuration.targetPlayoutDelay)]
    }

    /// Whether any known frame after the checkpoint is incomplete (feedback is then due every 30 ms).
    var isMissingPackets: Bool {
        highestSeen > checkpoint && (checkpoint + 1...highestSeen).contains { frames[$0]?.isComplete != true }
    }

    /// Asks the sender for a key frame until one completes (a decoder that lost its references).
    mutating func requestKeyFrame() { wantsKeyFrame = true }

    // MARK: - Input

    /// Takes a sender report.
    mutating func receive(_ report: SenderReport, at now: StreamingMoment) {
        lastReport = (report, now)
        reportToAnswer = true
        statistics.senderReports += 1
    }

    /// Takes one RTP packet of this stream; returns the frames it completed, in order.
    mutating func receive(_ packet: RTPPacket, at now: StreamingMoment) -> [ReceivedFrame] {
        statistics.packetsReceived += 1
        track(sequenceNumber: packet.sequenceNumber)
        let transit = now.monotonic.inSeconds * Double(configuration.rtpTimebase) - Double(packet.rtpTimestamp)
        if let lastTransit {
            // Differences of 32-bit RTP times: a wrap shows as a jump of 2^32, which is not jitter.
            let difference = abs(transit - lastTransit)
            if difference < 4_294_967_296 / 2 { jitter += (difference - jitter) / 16 }
        }
        lastTransit = transit
        let id = FrameID.expand(packet.frameID, closestTo: max(highestSeen, checkpoint))
        guard id > checkpoint, id - checkpoint <= FrameID.maximumInFlight else {
            statistics.packetsIgnored += 1
            return []
        }
        var frame = frames[id] ?? PartialFrame()
        if let maxPacketID = frame.maxPacketID, maxPacketID != Int(packet.maxPacketID) {
            statistics.packetsIgnored += 1
            return []
        }
        if packet.packetID == 0 {
            // Packet 0 carries the frame's metadata, and is useless before a sender report maps its RTP time.
            guard lastReport != nil else {
                statistics.packetsIgnored += 1
                return []
            }
            frame.isKeyFrame = packet.isKeyFrame
            let referenced = packet.referencedFrameID.map { FrameID.expand($0, closestTo: id) }
            frame.referencedFrameID = referenced ?? (packet.isKeyFrame ? id : id - 1)
            frame.rtpTimestamp = packet.rtpTimestamp
            if let delay = packet.newPlayoutDelay {
                playoutDelays.append((id, .milliseconds(Int64(delay))))
            }
        }
        frame.maxPacketID = Int(packet.maxPacketID)
        let key = Int(packet.packetID)
        if frame.payloads[key] != nil {
            statistics.duplicatePackets += 1
        } else {
            frame.payloads[key] = packet.payload
            if nackedPackets.remove(id << 16 | Int64(key)) != nil { statistics.packetsRecovered += 1 }
        }
        frames[id] = frame
        highestSeen = max(highestSeen, id)
        return deliverCompleted(at: now)
    }

    private mutating func track(sequenceNumber: UInt16) {
        guard let highest = highestSequence else {
            highestSequence = Int64(sequenceNumber)
            expectedAtLastReport = Int64(sequenceNumber)
            return
        }
        let delta = Int64(Int16(bitPattern: sequenceNumber &- UInt16(truncatingIfNeeded: highest)))
        if delta > 0 { highestSequence = highest + delta }
    }

    // MARK: - Output

    /// Consumes complete frames in order, and skips frames whose playout time has passed when a later
    /// independently decodable frame is complete (the reference receiver's late-frame rule).
    mutating func deliverCompleted(at now: StreamingMoment) -> [ReceivedFrame] {
        var delivered: [ReceivedFrame] = []
        while true {
            let next = checkpoint + 1
            if let frame = frames[next], frame.isComplete, frame.rtpTimestamp != nil {
                delivered.append(consume(next, frame, at: now))
                continue
            }
            guard next <= highestSeen, let playout = playoutTime(of: next), now.monotonic > playout,
                let later = (next + 1...max(next + 1, highestSeen)).first(where: {
                    frames[$0].map { $0.isComplete && $0.isIndependent } ?? false
                })
            else { break }
            statistics.framesLate += Int(later - next)
            for id in next..<later { frames[id] = nil }
            checkpoint = later - 1
        }
        return delivered
    }

    private mutating func consume(_ id: Int64, _ frame: PartialFrame, at now: StreamingMoment) -> ReceivedFrame {
        frames[id] = nil
        checkpoint = id
        var data: [UInt8] = []
        for packetID in 0...(frame.maxPacketID ?? 0) { data += frame.payloads[packetID] ?? [] }
        statistics.framesCompleted += 1
        if frame.isKeyFrame {
            statistics.keyFrames += 1
            wantsKeyFrame = false
        }
        var delay: Duration?
        if let (report, _) = lastReport, let rtp = frame.rtpTimestamp {
            let ticks = Double(Int32(bitPattern: rtp &- report.rtpTimestamp)) / Double(configuration.rtpTimebase)
            let capture = NTPTime.seconds(report.ntpTimestamp) + ticks
            delay = .fractionalSeconds(NTPTime.seconds(now.ntp) - capture)
            statistics.recordDelay(delay!)
        }
        return ReceivedFrame(
            frameID: id,
            rtpTimestamp: frame.rtpTimestamp ?? 0,
            isKeyFrame: frame.isKeyFrame,
            data: configuration.crypto.apply(toFrame: id, data),
            captureToReceipt: delay
        )
    }

    /// When frame `id` should play: its capture time on this receiver's clock (the last sender report's arrival
    /// plus the RTP difference) plus the playout delay in force for it; `nil` before packet 0 arrived.
    private func playoutTime(of id: Int64) -> Duration? {
        guard let (report, arrival) = lastReport, let rtp = frames[id]?.rtpTimestamp else {
            // Without packet 0, the frame's time is unknown: judge it by the next frame that has one.
            guard let later = frames.keys.filter({ $0 > id && frames[$0]?.rtpTimestamp != nil }).min() else {
                return nil
            }
            return playoutTime(of: later)
        }
        let ticks = Double(Int32(bitPattern: rtp &- report.rtpTimestamp)) / Double(configuration.rtpTimebase)
        let delay = playoutDelays.last(where: { $0.from <= id })?.delay ?? configuration.targetPlayoutDelay
        return arrival.monotonic + .fractionalSeconds(ticks) + delay
    }

    /// The receiver's compound RTCP: RR (with a report block answering the last sender report), XR receiver
    /// reference time, PLI while a key frame is wanted, and Cast feedback.
    mutating func feedback(at now: StreamingMoment) -> [UInt8] {
        var packets: [RTCPPacket] = []
        var block: ReportBlock?
        if reportToAnswer, let (report, arrival) = lastReport, let highest = highestSequence {
            let expected = highest - expectedAtLastReport
            let received = statistics.packetsReceived - packetsAtLastReport
            let lost = max(0, expected - Int64(received))
            block = ReportBlock(
                senderSSRC: configuration.senderSSRC,
                fractionLost: expected > 0 ? UInt8(min(255, lost * 256 / expected)) : 0,
                cumulativeLost: UInt32(clamping: statistics.packetsLostEstimate + Int(lost)),
                extendedHighestSequenceNumber: UInt32(truncatingIfNeeded: highest),
                jitter: UInt32(clamping: Int(jitter.rounded())),
                lastSenderReport: report.reportID,
                delaySinceLastSenderReport: UInt32(clamping: Int((now.monotonic - arrival.monotonic).inSeconds * 65536))
            )
            statistics.packetsLostEstimate += Int(lost)
            expectedAtLastReport = highest
            packetsAtLastReport = statistics.packetsReceived
            reportToAnswer = false
        }
        packets.append(.receiverReport(ReceiverReport(receiverSSRC: configuration.receiverSSRC, block: block)))
        packets.append(.receiverReferenceTime(receiverSSRC: configuration.receiverSSRC, ntpTimestamp: now.ntp))
        if wantsKeyFrame, lastReport != nil {
            packets.append(.pictureLoss(receiverSSRC: configuration.receiverSSRC, senderSSRC: configuration.senderSSRC))
        }
        packets.append(.castFeedback(castFeedback()))
        feedbackCount &+= 1
        return RTCPPacket.compound(packets)
    }

    private mutating func castFeedback() -> CastFeedback {
        var losses: [CastFeedback.LossField] = []
        var acknowledged: [Int] = []
        if highestSeen > checkpoint {
            for id in checkpoint + 1...highestSeen {
                guard let frame = frames[id] else {
                    losses.append(
                        .init(frameID: FrameID.wire(id), packetID: CastFeedback.LossField.allPackets, bitmask: 0)
                    )
                    continue
                }
                if frame.isComplete {
                    if id - checkpoint >= 2 { acknowledged.append(Int(id - checkpoint)) }
                    continue
                }
                let last = frame.maxPacketID ?? 0
                let missing = (0...last).filter { frame.payloads[$0] == nil }
                for packetID in missing { nackedPackets.insert(id << 16 | Int64(packetID)) }
                losses += CastFeedback.LossField.fields(frameID: FrameID.wire(id), missing: missing.map { UInt16($0) })
            }
        }
        statistics.negativeAcknowledgements += losses.count
        let delay = playoutDelays.last(where: { $0.from <= checkpoint + 1 })?.delay ?? configuration.targetPlayoutDelay
        return CastFeedback(
            receiverSSRC: configuration.receiverSSRC,
            senderSSRC: configuration.senderSSRC,
            checkpointFrameID: FrameID.wire(checkpoint),
            targetPlayoutDelay: UInt16(clamping: Int(delay.inSeconds * 1000)),
            lossFields: Array(losses.prefix(255)),
            feedbackCount: feedbackCount,
            acknowledgedOffsets: acknowledged.filter { $0 < 2 + 8 * 254 }
        )
    }
}

/// What one received stream has seen so far.
public struct ReceiverStatistics: Sendable, Hashable {
    /// Packets that arrived.
    public var packetsReceived = 0
    /// Packets for frames already consumed, too far ahead, inconsistent, or packet 0 before any sender report.
    public var packetsIgnored = 0
    /// Packets that arrived twice.
    public var duplicatePackets = 0
    /// Packets that arrived after this receiver NACKed them.
    public var packetsRecovered = 0
    /// Packets that never arrived, as far as the sequence numbers tell.
    public var packetsLostEstimate = 0
    /// Frames completed and handed on.
    public var framesCompleted = 0
    /// Key frames among them.
    public var keyFrames = 0
    /// Frames given up because their playout time passed while a later frame was ready.
    public var framesLate = 0
    /// Sender reports received.
    public var senderReports = 0
    /// Loss fields sent (each asks for missing packets again).
    public var negativeAcknowledgements = 0
    /// Capture-to-receipt delay of completed frames, in milliseconds: sum, maximum, and a coarse histogram
    /// (1 ms buckets up to 2 s) for percentiles.
    public var delayCount = 0
    /// The sum of the delays, for the mean.
    public var delaySumMilliseconds = 0.0
    /// The longest delay.
    public var delayMaximumMilliseconds = 0.0
    var delayBuckets = [Int](repeating: 0, count: 2001)

    /// Statistics with every count at 0.
    public init() {}

    mutating func recordDelay(_ delay: Duration) {
        let milliseconds = delay.inSeconds * 1000
        delayCount += 1
        delaySumMilliseconds += milliseconds
        delayMaximumMilliseconds = max(delayMaximumMilliseconds, milliseconds)
        delayBuckets[min(2000, max(0, Int(milliseconds)))] += 1
    }

    /// The delay below which `fraction` of frames completed (to the millisecond above).
    public func delayPercentile(_ fraction: Double) -> Double? {
        guard delayCount > 0 else { return nil }
        let target = Int((Double(delayCount) * fraction).rounded(.up))
        var seen = 0
        for (index, count) in delayBuckets.enumerated() {
            seen += count
            if seen >= target { return Double(index + 1) }
        }
        return delayMaximumMilliseconds
    }
}

extension ReceiverStatistics {
    /// The figures as JSON (delays in milliseconds), for statistics files and tests driving `cast-receiver`.
    public var json: JSONValue {
        [
            "packetsReceived": .number(Double(packetsReceived)),
            "packetsIgnored": .number(Double(packetsIgnored)),
            "duplicatePackets": .number(Double(duplicatePackets)),
            "packetsRecovered": .number(Double(packetsRecovered)),
            "framesCompleted": .number(Double(framesCompleted)),
            "keyFrames": .number(Double(keyFrames)),
            "framesLate": .number(Double(framesLate)),
            "senderReports": .number(Double(senderReports)),
            "negativeAcknowledgements": .number(Double(negativeAcknowledgements)),
            "delayP50": delayPercentile(0.5).map { .number($0) } ?? .null,
            "delayP99": delayPercentile(0.99).map { .number($0) } ?? .null,
            "delayMax": delayCount > 0 ? .number(delayMaximumMilliseconds.rounded()) : .null,
        ]
    }
}
