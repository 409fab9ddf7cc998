import CastStreaming
import Testing

/// RTP and RTCP against the reference's worked byte examples (§7.5, §9.3, §9.9), and the parsers' refusals.
@Suite struct WireFormatTests {
    @Test func videoPacketOfTheReference() throws {
        let bytes = hexBytes("80 60 12 34 00 00 38 40 00 01 2f d1 41 05 00 00 00 01 04 04 02 01 90 de ad")
        let packet = RTPPacket(
            payloadType: 96,
            marker: false,
            sequenceNumber: 0x1234,
            rtpTimestamp: 14400,
            ssrc: 77777,
            isKeyFrame: false,
            frameID: 5,
            packetID: 0,
            maxPacketID: 1,
            referencedFrameID: 4,
            newPlayoutDelay: 400,
            payload: [0xde, 0xad]
        )
        #expect(packet.serialized() == bytes)
        #expect(try RTPPacket(parsing: bytes) == packet)
    }

    @Test func audioPacketOfTheReference() throws {
        let bytes = hexBytes("80 ff ff fe 00 00 05 a0 00 00 7a b7 c0 03 00 00 00 00 03 01 02")
        let parsed = try RTPPacket(parsing: bytes)
        #expect(parsed.marker && parsed.isKeyFrame && parsed.payloadType == 127)
        #expect(parsed.sequenceNumber == 0xfffe && parsed.rtpTimestamp == 1440 && parsed.ssrc == 31415)
        #expect(parsed.frameID == 3 && parsed.referencedFrameID == 3 && Array(parsed.payload) == [1, 2])
        #expect(parsed.serialized() == bytes)
    }

    @Test(arguments: [
        ("80 60 12 34 00 00 38 40 00 01 2f d1 41", "short"),
        ("90 60 12 34 00 00 38 40 00 01 2f d1 01 05 00 00 00 01", "extension bit"),
        ("80 08 12 34 00 00 38 40 00 01 2f d1 01 05 00 00 00 01", "payload type 8"),
        ("80 60 12 34 00 00 38 40 00 01 2f d1 01 05 00 00 ff ff", "max packet id 0xFFFF"),
        ("80 60 12 34 00 00 38 40 00 01 2f d1 01 05 00 03 00 01", "packet id past the max"),
        ("80 60 12 34 00 00 38 40 00 01 2f d1 41 05 00 00 00 01", "reference byte missing"),
        ("80 60 12 34 00 00 38 40 00 01 2f d1 01 05 00 00 00 01 04 03 02 01 90", "latency extension of 3 bytes"),
        ("80 60 12 34 00 00 38 40 00 01 2f d1 01 05 00 00 00 01 08 10 00", "truncated extension"),
    ])
    func refusesMalformedRTP(hex: String, what: String) {
        #expect(streamingErrorCode { _ = try RTPPacket(parsing: hexBytes(hex)) } == .malformedPacket, "\(what)")
    }

    @Test func senderReportOfTheReference() throws {
        let bytes = hexBytes("80 c8 00 06 00 01 2f d1 e8 f0 a1 b2 40 00 00 00 00 00 49 d4 00 00 04 d2 00 16 e3 60")
        let report = SenderReport(
            senderSSRC: 77777,
            ntpTimestamp: 0xe8f0_a1b2_4000_0000,
            rtpTimestamp: 18900,
            packetCount: 1234,
            octetCount: 1_500_000
        )
        #expect(RTCPPacket.compound([.senderReport(report)]) == bytes)
        #expect(try RTCPPacket.parse(bytes) == [.senderReport(report)])
        #expect(report.reportID == 0xa1b2_4000)
    }

    /// The 100-byte receiver compound: RR with a report block, XR reference time, PLI, Cast feedback with
    /// NACKs (frame 10 packets 0, 2, 3; all of frame 12) and CST2 ACKs (frames 11 and 13).
    @Test func receiverCompoundOfTheReference() throws {
        let bytes = hexBytes(
            """
            81 c9 00 07 00 01 2f d2 00 01 2f d1 03 00 00 11 00 01 12 34 00 00 00 5a a1 b2 40 00 00 00 19 9a
            80 cf 00 04 00 01 2f d2 04 00 00 02 e8 f0 a1 b2 80 00 00 00
            81 ce 00 02 00 01 2f d2 00 01 2f d1
            8f ce 00 08 00 01 2f d2 00 01 2f d1 43 41 53 54 09 02 01 90
            0a 00 00 06 0c ff ff 00 43 53 54 32 07 02 05 00
            """
        )
        let block = ReportBlock(
            senderSSRC: 77777,
            fractionLost: 3,
            cumulativeLost: 17,
            extendedHighestSequenceNumber: 0x0001_1234,
            jitter: 90,
            lastSenderReport: 0xa1b2_4000,
            delaySinceLastSenderReport: 6554
        )
        let feedback = CastFeedback(
            receiverSSRC: 77778,
            senderSSRC: 77777,
            checkpointFrameID: 9,
            targetPlayoutDelay: 400,
            lossFields: [
                .init(frameID: 10, packetID: 0, bitmask: 0b110),
                .init(frameID: 12, packetID: CastFeedback.LossField.allPackets, bitmask: 0),
            ],
            feedbackCount: 7,
            acknowledgedOffsets: [2, 4]
        )
        let packets: [RTCPPacket] = [
            .receiverReport(ReceiverReport(receiverSSRC: 77778, block: block)),
            .receiverReferenceTime(receiverSSRC: 77778, ntpTimestamp: 0xe8f0_a1b2_8000_0000),
            .pictureLoss(receiverSSRC: 77778, senderSSRC: 77777),
            .castFeedback(feedback),
        ]
        #expect(bytes.count == 100)
        #expect(RTCPPacket.compound(packets) == bytes)
        #expect(try RTCPPacket.parse(bytes) == packets)
        #expect(feedback.lossFields[0].packetIDs == [0, 2, 3])
        #expect(feedback.lossFields[1].packetIDs == nil)
    }

    @Test func feedbackWithoutCST2AndUnknownPacketsIsAccepted() throws {
        // An SDES packet (skipped), then Cast feedback that ends after its loss fields (older receivers).
        let bytes = hexBytes("81 ca 00 01 00 00 00 01  8f ce 00 04 00 01 2f d2 00 01 2f d1 43 41 53 54 09 00 01 90")
        let packets = try RTCPPacket.parse(bytes)
        guard case .castFeedback(let feedback) = packets.first else {
            Issue.record("no feedback in \(packets)")
            return
        }
        #expect(packets.count == 1 && feedback.feedbackCount == nil && feedback.lossFields.isEmpty)
    }

    @Test(arguments: [
        ("a0 c8 00 00", "padding"),
        ("80 c8 00 06 00 01 2f d1", "length past the datagram"),
        ("80 c8 00 01 00 01 2f d1", "sender report cut short"),
        ("80 c8", "header cut short"),
    ])
    func refusesMalformedRTCP(hex: String, what: String) {
        #expect(streamingErrorCode { _ = try RTCPPacket.parse(hexBytes(hex)) } == .malformedPacket, "\(what)")
    }

    @Test func lossFieldsSplitLongRuns() {
        let fields = CastFeedback.LossField.fields(frameID: 4, missing: [0, 1, 2, 9, 10, 20])
        #expect(fields.map(\.packetID) == [0, 9, 20])
        #expect(fields.flatMap { $0.packetIDs ?? [] } == [0, 1, 2, 9, 10, 20])
    }

    @Test func frameIDsExpandAsTheReferenceSays() {
        #expect(FrameID.expand(0x02, closestTo: 254) == 258)
        #expect(FrameID.expand(0xFE, closestTo: 258) == 254)
        #expect(FrameID.expand(0xFF, atOrBefore: 300) == 255)
        #expect(FrameID.expand(0xFF, atOrBefore: -1) == -1)
        #expect(FrameID.expand(0x01, after: 255) == 257)
        #expect(FrameID.wire(-1) == 0xFF)
    }
}
