/// The RTCP packets Cast Streaming exchanges, each one a value; ``RTCPPacket/parse(_:)`` walks a compound
/// datagram and ``RTCPPacket/compound(_:)`` builds one.
public enum RTCPPacket: Sendable, Hashable {
    /// Sender → receiver: the clock mapping and counts (PT 200).
    case senderReport(SenderReport)
    /// Receiver → sender: loss, jitter and the SR echo for the round trip (PT 201).
    case receiverReport(ReceiverReport)
    /// Receiver → sender: the receiver's clock when it built the compound (XR, block type 4).
    case receiverReferenceTime(receiverSSRC: UInt32, ntpTimestamp: UInt64)
    /// Receiver → sender: "my decoder needs a key frame" (PT 206, FMT 1).
    case pictureLoss(receiverSSRC: UInt32, senderSSRC: UInt32)
    /// Receiver → sender: the checkpoint, NACKs and ACKs (PT 206, FMT 15, `CAST`).
    case castFeedback(CastFeedback)

    /// The SSRC every Cast RTCP packet starts with, which routes it.
    public var ssrc: UInt32 {
        switch self {
        case .senderReport(let report): report.senderSSRC
        case .receiverReport(let report): report.receiverSSRC
        case .receiverReferenceTime(let ssrc, _): ssrc
        case .pictureLoss(let ssrc, _): ssrc
        case .castFeedback(let feedback): feedback.receiverSSRC
        }
    }

    /// Whether `bytes` starts like RTCP (version 2, no padding, a packet type Cast uses) rather than RTP.
    public static func looksLikeRTCP(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 8 && bytes[0] & 0xE0 == 0x80 && [200, 201, 202, 204, 206, 207].contains(bytes[1])
    }

    /// The packets of a compound datagram, in order; types Cast does not use (SDES, APP event logs, other
    /// feedback and XR blocks) are skipped.
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/malformedPacket`` for a header that is not
    ///   version 2 without padding, a length past the datagram, or a body shorter than its type needs.
    public static func parse(_ bytes: [UInt8]) throws -> [RTCPPacket] {
        var packets: [RTCPPacket] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else { throw ByteReader.truncated("an RTCP header") }
            guard bytes[offset] & 0xE0 == 0x80 else {
                throw CastStreamingError(.malformedPacket, "an RTCP header must be version 2 without padding")
            }
            let count = bytes[offset] & 0x1F
            let type = bytes[offset + 1]
            let end = offset + 4 + 4 * (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]))
            guard end <= bytes.count else { throw ByteReader.truncated("an RTCP packet of type \(type)") }
            var body = ByteReader(bytes, from: offset + 4, to: end)
            switch (type, count) {
            case (200, _): packets.append(.senderReport(try SenderReport(body: &body)))
            case (201, _): packets.append(.receiverReport(try ReceiverReport(body: &body, blocks: count)))
            case (207, _):
                let ssrc = try body.uint32()
                while body.remaining >= 4 {
                    let blockType = try body.uint8()
                    _ = try body.uint8()
                    let words = Int(try body.uint16())
                    var block = ByteReader(bytes, from: body.offset, to: body.offset + 4 * words)
                    _ = try body.take(4 * words, "an XR block")
                    if blockType == 4 {
                        packets.append(.receiverReferenceTime(receiverSSRC: ssrc, ntpTimestamp: try block.uint64()))
                    }
                }
            case (206, 1): packets.append(.pictureLoss(receiverSSRC: try body.uint32(), senderSSRC: try body.uint32()))
            case (206, 15):
                if let feedback = try CastFeedback(body: &body) { packets.append(.castFeedback(feedback)) }
            default: break
            }
            offset = end
        }
        return packets
    }

    /// One datagram holding `packets` in order.
    public static func compound(_ packets: [RTCPPacket]) -> [UInt8] {
        var bytes: [UInt8] = []
        for packet in packets { packet.append(to: &bytes) }
        return bytes
    }

    private func append(to bytes: inout [UInt8]) {
        let start = bytes.count
        switch self {
        case .senderReport(let report):
            bytes += [0x80, 200, 0, 0]
            bytes.append(bigEndian: report.senderSSRC)
            bytes.append(bigEndian: report.ntpTimestamp)
            bytes.append(bigEndian: report.rtpTimestamp)
            bytes.append(bigEndian: report.packetCount)
            bytes.append(bigEndian: report.octetCount)
        case .receiverReport(let report):
            bytes += [report.block == nil ? 0x80 : 0x81, 201, 0, 0]
            bytes.append(bigEndian: report.receiverSSRC)
            if let block = report.block { block.append(to: &bytes) }
        case .receiverReferenceTime(let ssrc, let ntp):
            bytes += [0x80, 207, 0, 0]
            bytes.append(bigEndian: ssrc)
            bytes += [4, 0, 0, 2]
            bytes.append(bigEndian: ntp)
        case .pictureLoss(let receiver, let sender):
            bytes += [0x81, 206, 0, 0]
            bytes.append(bigEndian: receiver)
            bytes.append(bigEndian: sender)
        case .castFeedback(let feedback):
            bytes += [0x8F, 206, 0, 0]
            feedback.append(to: &bytes)
        }
        let words = (bytes.count - start - 4) / 4
        bytes[start + 2] = UInt8(words >> 8)
        bytes[start + 3] = UInt8(words & 0xFF)
    }
}

/// An RTCP Sender Report: what the sender's clock read and the stream's RTP time at that same instant.
public struct SenderReport: Sendable, Hashable {
    /// The sending stream's SSRC.
    public var senderSSRC: UInt32
    /// The sender's reference clock as NTP (seconds since 1900 in the high 32 bits, fraction in the low).
    public var ntpTimestamp: UInt64
    /// The stream's RTP time at ``ntpTimestamp``.
    public var rtpTimestamp: UInt32
    /// RTP packets sent so far, retransmissions included.
    public var packetCount: UInt32
    /// Payload bytes sent so far.
    public var octetCount: UInt32

    /// A sender report of the given counts.
    public init(senderSSRC: UInt32, ntpTimestamp: UInt64, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32)
    {
        self.senderSSRC = senderSSRC
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
    }

    /// The middle 32 bits of the NTP time: how a receiver report names this report (LSR).
    public var reportID: UInt32 { UInt32(truncatingIfNeeded: ntpTimestamp >> 16) }

    init(body: inout ByteReader) throws {
        senderSSRC = try body.uint32("a sender report")
        ntpTimestamp = try body.uint64("a sender report")
        rtpTimestamp = try body.uint32("a sender report")
        packetCount = try body.uint32("a sender report")
        octetCount = try body.uint32("a sender report")
    }
}

/// An RTCP Receiver Report, with the report block Cast receivers add when answering a sender report.
public struct ReceiverReport: Sendable, Hashable {
    /// The receiving side's SSRC.
    public var receiverSSRC: UInt32
    /// The report block; absent when the receiver had nothing to report.
    public var block: ReportBlock?

    /// A receiver report.
    public init(receiverSSRC: UInt32, block: ReportBlock?) {
        self.receiverSSRC = receiverSSRC
        self.block = block
    }

    init(body: inout ByteReader, blocks: UInt8) throws {
        receiverSSRC = try body.uint32("a receiver report")
        block = blocks > 0 ? try ReportBlock(body: &body) : nil
    }
}

/// A report block: loss and jitter since the last report, and the echo of the last sender report (RTT).
public struct ReportBlock: Sendable, Hashable {
    /// The SSRC of the stream reported on.
    public var senderSSRC: UInt32
    /// Fraction of packets lost since the last report, in 256ths.
    public var fractionLost: UInt8
    /// Packets lost in all (24 bits, never negative here).
    public var cumulativeLost: UInt32
    /// The highest sequence number received, with its wrap count in the high 16 bits.
    public var extendedHighestSequenceNumber: UInt32
    /// Interarrival jitter in RTP ticks.
    public var jitter: UInt32
    /// ``SenderReport/reportID`` of the last sender report received.
    public var lastSenderReport: UInt32
    /// Time since that report arrived, in 1/65536 s.
    public var delaySinceLastSenderReport: UInt32

    /// A report block.
    public init(
        senderSSRC: UInt32,
        fractionLost: UInt8,
        cumulativeLost: UInt32,
        extendedHighestSequenceNumber: UInt32,
        jitter: UInt32,
        lastSenderReport: UInt32,
        delaySinceLastSenderReport: UInt32
    ) {
        self.senderSSRC = senderSSRC
        self.fractionLost = fractionLost
        self.cumulativeLost = min(cumulativeLost, 0xFF_FFFF)
        self.extendedHighestSequenceNumber = extendedHighestSequenceNumber
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    init(body: inout ByteReader) throws {
        senderSSRC = try body.uint32("a report block")
        let loss = try body.uint32("a report block")
        fractionLost = UInt8(loss >> 24)
        cumulativeLost = loss & 0xFF_FFFF
        extendedHighestSequenceNumber = try body.uint32("a report block")
        jitter = try body.uint32("a report block")
        lastSenderReport = try body.uint32("a report block")
        delaySinceLastSenderReport = try body.uint32("a report block")
    }

    func append(to bytes: inout [UInt8]) {
        bytes.append(bigEndian: senderSSRC)
        bytes.append(bigEndian: UInt32(fractionLost) << 24 | cumulativeLost & 0xFF_FFFF)
        bytes.append(bigEndian: extendedHighestSequenceNumber)
        bytes.append(bigEndian: jitter)
        bytes.append(bigEndian: lastSenderReport)
        bytes.append(bigEndian: delaySinceLastSenderReport)
    }
}

/// Cast feedback: every frame up to the checkpoint is done, these packets are missing, these later frames are
/// complete.
public struct CastFeedback: Sendable, Hashable {
    /// Missing packets of one frame: `packetID` and each set bit *i* of `bitmask` (packet `packetID + 1 + i`);
    /// packet id `0xFFFF` means the whole frame.
    public struct LossField: Sendable, Hashable {
        /// The frame's id, low 8 bits.
        public var frameID: UInt8
        /// The first missing packet, or ``allPackets``.
        public var packetID: UInt16
        /// Further missing packets after ``packetID`` (bit *i*: packet `packetID + 1 + i`).
        public var bitmask: UInt8

        /// A loss field.
        public init(frameID: UInt8, packetID: UInt16, bitmask: UInt8) {
            self.frameID = frameID
            self.packetID = packetID
            self.bitmask = bitmask
        }

        /// The value of ``packetID`` that stands for every packet of the frame.
        public static let allPackets: UInt16 = 0xFFFF

        /// The packet ids this field names; `nil` for the whole frame.
        public var packetIDs: [UInt16]? {
            guard packetID != Self.allPackets else { return nil }
            var ids = [packetID]
            for bit in 0..<8 where bitmask & (1 << bit) != 0 { ids.append(packetID &+ 1 &+ UInt16(bit)) }
            return ids
        }

        /// The fields naming `missing` (sorted packet ids) of frame `frameID`: runs of up to 9 packets each.
        public static func fields(frameID: UInt8, missing: [UInt16]) -> [LossField] {
            var fields: [LossField] = []
            for id in missing {
                if var last = fields.last, id > last.packetID, id - last.packetID <= 8 {
                    last.bitmask |= 1 << UInt8(id - last.packetID - 1)
                    fields[fields.count - 1] = last
                } else {
                    fields.append(LossField(frameID: frameID, packetID: id, bitmask: 0))
                }
            }
            return fields
        }
    }

    /// The receiver's SSRC.
    public var receiverSSRC: UInt32
    /// The sender's SSRC the feedback is for.
    public var senderSSRC: UInt32
    /// The low 8 bits of the last frame such that it and every frame before it are complete or given up.
    public var checkpointFrameID: UInt8
    /// The receiver's target playout delay, in milliseconds.
    public var targetPlayoutDelay: UInt16
    /// The packets missing, frame by frame.
    public var lossFields: [LossField]
    /// The `CST2` counter of feedback messages sent before this one; `nil` without the `CST2` part.
    public var feedbackCount: UInt8?
    /// Frames complete after the checkpoint's gap, as offsets from the checkpoint (≥ 2).
    public var acknowledgedOffsets: [Int]

    /// Feedback (the emulator's receiver and tests build it).
    public init(
        receiverSSRC: UInt32,
        senderSSRC: UInt32,
        checkpointFrameID: UInt8,
        targetPlayoutDelay: UInt16,
        lossFields: [LossField] = [],
        feedbackCount: UInt8? = nil,
        acknowledgedOffsets: [Int] = []
    ) {
        self.receiverSSRC = receiverSSRC
        self.senderSSRC = senderSSRC
        self.checkpointFrameID = checkpointFrameID
        self.targetPlayoutDelay = targetPlayoutDelay
        self.lossFields = lossFields
        self.feedbackCount = feedbackCount
        self.acknowledgedOffsets = acknowledgedOffsets
    }

    private static let castWord: UInt32 = 0x4341_5354  // "CAST"
    private static let cst2Word: UInt32 = 0x4353_5432  // "CST2"

    /// Parses the body after the header; `nil` for a PT 206 FMT 15 packet that is not Cast's.
    init?(body: inout ByteReader) throws {
        receiverSSRC = try body.uint32("Cast feedback")
        senderSSRC = try body.uint32("Cast feedback")
        guard try body.uint32("Cast feedback") == Self.castWord else { return nil }
        checkpointFrameID = try body.uint8("Cast feedback")
        let count = Int(try body.uint8("Cast feedback"))
        targetPlayoutDelay = try body.uint16("Cast feedback")
        lossFields = []
        for _ in 0..<count {
            let frame = try body.uint8("a loss field")
            let packet = try body.uint16("a loss field")
            lossFields.append(LossField(frameID: frame, packetID: packet, bitmask: try body.uint8("a loss field")))
        }
        feedbackCount = nil
        acknowledgedOffsets = []
        // Older receivers end here, or put other bytes after: both are accepted.
        guard body.remaining >= 6, try body.uint32() == Self.cst2Word else { return }
        feedbackCount = try body.uint8()
        let octets = try body.take(Int(try body.uint8()), "the ACK bit vector")
        for (index, octet) in octets.enumerated() {
            for bit in 0..<8 where octet & (1 << bit) != 0 { acknowledgedOffsets.append(2 + 8 * index + bit) }
        }
    }

    func append(to bytes: inout [UInt8]) {
        bytes.append(bigEndian: receiverSSRC)
        bytes.append(bigEndian: senderSSRC)
        bytes.append(bigEndian: Self.castWord)
        let fields = lossFields.prefix(255)
        bytes.append(checkpointFrameID)
        bytes.append(UInt8(fields.count))
        bytes.append(bigEndian: targetPlayoutDelay)
        for field in fields {
            bytes.append(field.frameID)
            bytes.append(bigEndian: field.packetID)
            bytes.append(field.bitmask)
        }
        guard let feedbackCount else { return }
        bytes.append(bigEndian: Self.cst2Word)
        bytes.append(feedbackCount)
        let highest = acknowledgedOffsets.max().map { ($0 - 2) / 8 + 1 } ?? 0
        var octetCount = 2
        while octetCount < highest, octetCount < 254 { octetCount += 4 }
        var octets = [UInt8](repeating: 0, count: octetCount)
        for offset in acknowledgedOffsets where offset >= 2 && (offset - 2) / 8 < octetCount {
            octets[(offset - 2) / 8] |= 1 << UInt8((offset - 2) % 8)
        }
        bytes.append(UInt8(octetCount))
        bytes += octets
    }
}
