import CastTransport
import Testing

@testable import CastStreaming

/// The sending and receiving halves without sockets, on injected time: loss repaired by NACK, late frames
/// skipped, the 120-frame window, picture loss, round-trip time.
@Suite struct StreamEngineTests {
    private let start = StreamingMoment(monotonic: .seconds(100))

    private func pair(delay: Duration = .milliseconds(400)) -> (StreamSender, StreamReceiver) {
        let sender = StreamSender(
            configuration: .init(
                senderSSRC: 77777,
                receiverSSRC: 77778,
                payloadType: 96,
                rtpTimebase: 90000,
                crypto: testCrypto,
                targetPlayoutDelay: delay
            ),
            firstSequenceNumber: 65530
        )
        let receiver = StreamReceiver(
            configuration: .init(
                senderSSRC: 77777,
                receiverSSRC: 77778,
                rtpTimebase: 90000,
                crypto: testCrypto,
                targetPlayoutDelay: delay
            )
        )
        return (sender, receiver)
    }

    private func frame(_ byte: UInt8, size: Int, key: Bool, at time: Duration) -> EncodedFrame {
        EncodedFrame(data: Array(repeating: byte, count: size), isKeyFrame: key, captureTime: time)
    }

    /// Feeds the sender's RTCP (all of it) to the receiver, and RTP except packets `dropping` says to lose.
    private func deliver(
        _ datagrams: [[UInt8]],
        to receiver: inout StreamReceiver,
        at now: StreamingMoment,
        dropping: (RTPPacket) -> Bool = { _ in false }
    ) throws -> [ReceivedFrame] {
        var frames: [ReceivedFrame] = []
        for datagram in datagrams {
            if RTCPPacket.looksLikeRTCP(datagram) {
                for case .senderReport(let report) in try RTCPPacket.parse(datagram) {
                    receiver.receive(report, at: now)
                }
            } else {
                let packet = try RTPPacket(parsing: datagram)
                if !dropping(packet) { frames += receiver.receive(packet, at: now) }
            }
        }
        return frames
    }

    private func feedback(_ bytes: [UInt8], to sender: inout StreamSender, at now: StreamingMoment) throws {
        for packet in try RTCPPacket.parse(bytes) { sender.handle(packet, at: now.monotonic) }
    }

    @Test func lostPacketIsNackedResentAndTheFramesArriveInOrder() throws {
        var (sender, receiver) = pair()
        try sender.enqueue(frame(0xAA, size: 3000, key: true, at: start.monotonic))
        try sender.enqueue(frame(0xBB, size: 100, key: false, at: start.monotonic + .milliseconds(33)))
        var datagrams = sender.reportIfDue(at: start).map { [RTCPPacket.compound([$0])] } ?? []
        datagrams += sender.packetsToSend(limit: 21, at: start.monotonic)
        #expect(datagrams.count == 5)  // SR, 3 packets of frame 0, 1 of frame 1
        let first = try deliver(datagrams, to: &receiver, at: start) { $0.frameID == 0 && $0.packetID == 1 }
        #expect(first.isEmpty)
        #expect(receiver.isMissingPackets)

        let later = start.advanced(by: .milliseconds(5))
        let report = receiver.feedback(at: later)
        let parsed = try RTCPPacket.parse(report)
        guard case .castFeedback(let nack) = parsed.last else {
            Issue.record("no Cast feedback in \(parsed)")
            return
        }
        #expect(nack.lossFields == [.init(frameID: 0, packetID: 1, bitmask: 0)])
        #expect(nack.acknowledgedOffsets == [2])  // frame 1 is complete behind the gap
        // It reaches the sender 5 ms after it left: that is the round trip (the receiver's hold time excluded).
        try feedback(report, to: &sender, at: later.advanced(by: .milliseconds(5)))
        let roundTrip = try #require(sender.roundTripTime)
        #expect(abs(roundTrip.inSeconds - 0.005) < 0.0001)

        let resent = sender.packetsToSend(limit: 21, at: later.monotonic)
        #expect(resent.count == 1)
        let frames = try deliver(resent, to: &receiver, at: later)
        #expect(frames.map(\.frameID) == [0, 1])
        #expect(frames[0].data == Array(repeating: 0xAA, count: 3000) && frames[0].isKeyFrame)
        #expect(frames[1].data == Array(repeating: 0xBB, count: 100) && !frames[1].isKeyFrame)
        #expect(receiver.statistics.packetsRecovered == 1)

        try feedback(receiver.feedback(at: later), to: &sender, at: later)
        #expect(sender.framesInFlight == 0 && sender.checkpoint == 1)
        #expect(sender.statistics.packetsRetransmitted == 1 && sender.statistics.framesAcknowledged == 2)
    }

    @Test func lateFrameIsSkippedForTheNextKeyFrame() throws {
        var (sender, receiver) = pair(delay: .milliseconds(200))
        try sender.enqueue(frame(1, size: 10, key: true, at: start.monotonic))
        try sender.enqueue(frame(2, size: 10, key: false, at: start.monotonic + .milliseconds(33)))
        try sender.enqueue(frame(3, size: 10, key: true, at: start.monotonic + .milliseconds(66)))
        var datagrams = [RTCPPacket.compound([sender.reportIfDue(at: start)!])]
        datagrams += sender.packetsToSend(limit: 21, at: start.monotonic)
        let delivered = try deliver(datagrams, to: &receiver, at: start) { $0.frameID == 1 }
        #expect(delivered.map(\.frameID) == [0])
        // Before frame 1's playout time, the receiver waits for it.
        #expect(receiver.deliverCompleted(at: start.advanced(by: .milliseconds(50))).isEmpty)
        let afterPlayout = receiver.deliverCompleted(at: start.advanced(by: .milliseconds(300)))
        #expect(afterPlayout.map(\.frameID) == [2])
        #expect(receiver.statistics.framesLate == 1 && receiver.checkpoint == 2)
        // The jump of the checkpoint retires the skipped frame at the sender too.
        try feedback(receiver.feedback(at: start.advanced(by: .milliseconds(300))), to: &sender, at: start)
        #expect(sender.framesInFlight == 0)
    }

    @Test func theWindowRefusesFrame121WithoutAcknowledgements() throws {
        var (sender, _) = pair()
        for index in 0..<120 {
            try sender.enqueue(
                frame(0, size: 10, key: index == 0, at: start.monotonic + .microseconds(Int64(index) * 20))
            )
        }
        #expect(!sender.wantsKeyFrame)
        let refused = streamingErrorCode {
            try sender.enqueue(frame(0, size: 10, key: false, at: start.monotonic + .milliseconds(3)))
        }
        #expect(refused == .frameRefused)
        #expect(sender.wantsKeyFrame && sender.statistics.framesRefused == 1)
    }

    @Test func tooMuchMediaInFlightIsRefused() throws {
        var (sender, _) = pair(delay: .milliseconds(400))
        try sender.enqueue(frame(0, size: 10, key: true, at: start.monotonic))
        try sender.enqueue(frame(0, size: 10, key: false, at: start.monotonic + .milliseconds(150)))
        let refused = streamingErrorCode {
            try sender.enqueue(frame(0, size: 10, key: false, at: start.monotonic + .milliseconds(250)))
        }
        #expect(refused == .frameRefused)  // 250 ms in flight > 400/2
    }

    @Test func pictureLossAsksTheEncoderForAKeyFrame() throws {
        var (sender, receiver) = pair()
        try sender.enqueue(frame(1, size: 10, key: true, at: start.monotonic))
        var datagrams = [RTCPPacket.compound([sender.reportIfDue(at: start)!])]
        datagrams += sender.packetsToSend(limit: 21, at: start.monotonic)
        _ = try deliver(datagrams, to: &receiver, at: start)
        try feedback(receiver.feedback(at: start), to: &sender, at: start)
        #expect(!sender.wantsKeyFrame)
        receiver.requestKeyFrame()
        let withPLI = receiver.feedback(at: start)
        #expect(try RTCPPacket.parse(withPLI).contains(.pictureLoss(receiverSSRC: 77778, senderSSRC: 77777)))
        try feedback(withPLI, to: &sender, at: start)
        #expect(sender.wantsKeyFrame && sender.statistics.pictureLossIndications == 1)
    }

    @Test func kickstartResendsTheLastPacketWhenTheReceiverHeardNothing() throws {
        var (sender, _) = pair(delay: .milliseconds(400))
        try sender.enqueue(frame(1, size: 10, key: true, at: start.monotonic))
        #expect(sender.packetsToSend(limit: 21, at: start.monotonic).count == 1)
        #expect(sender.packetsToSend(limit: 21, at: start.monotonic + .milliseconds(10)).isEmpty)
        #expect(sender.packetsToSend(limit: 21, at: start.monotonic + .milliseconds(20)).count == 1)
    }

    @Test func bitRateFallsOnTroubleAndRecoversSlowly() {
        var controller = BitrateController(minimum: 300_000, maximum: 5_000_000, start: 2_000_000)
        var statistics = StreamStatistics()
        statistics.packetsSent = 100
        #expect(controller.update(with: statistics) == 2_200_000)
        statistics.packetsSent = 200
        statistics.packetsRetransmitted = 10
        #expect(controller.update(with: statistics) == 1_540_000)
        statistics.framesRefused = 1
        statistics.packetsSent = 210
        #expect(controller.update(with: statistics) == 1_078_000)
        for _ in 0..<20 { _ = controller.update(with: statistics) }
        #expect(controller.current == 1_078_000)  // nothing sent: no change
    }

    @Test func atTheLowestBitRateTheFrameRateThenTheSizeGiveWay() {
        var controller = BitrateController(minimum: 300_000, maximum: 5_000_000, start: 300_000)
        var statistics = StreamStatistics()
        for (refused, interval, divisor) in [(1, 2, 1), (2, 4, 1), (3, 4, 2), (4, 4, 2)] {
            statistics.framesRefused = refused
            statistics.packetsSent += 10
            #expect(controller.update(with: statistics) == 300_000)
            #expect(controller.frameInterval == interval && controller.resolutionDivisor == divisor)
        }
        // Clean periods undo them in the opposite order, then raise the bit rate.
        for (interval, divisor) in [(4, 1), (2, 1), (1, 1)] {
            statistics.packetsSent += 100
            #expect(controller.update(with: statistics) == 300_000)
            #expect(controller.frameInterval == interval && controller.resolutionDivisor == divisor)
        }
        statistics.packetsSent += 100
        #expect(controller.update(with: statistics) == 330_000)
    }

    @Test func aHalvedPictureAveragesEachBlock() {
        let size = Resolution(width: 4, height: 4)
        // Y: a 4x4 plane; U and V: 2x2 each.
        let luma: [UInt8] = [10, 20, 200, 200, 30, 40, 100, 104, 0, 0, 255, 255, 0, 4, 255, 255]
        let picture = luma + [7, 9, 11, 13] + [250, 6, 0, 0]
        #expect(I420.halved(size) == Resolution(width: 2, height: 2))
        // Each output sample is the rounded mean of its 2x2 block: Y 2x2, U and V 1x1.
        #expect(I420.halve(picture, from: size) == [25, 151, 1, 255, 10, 64])
    }
}
