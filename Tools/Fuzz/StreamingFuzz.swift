// swift-cast — Apache-2.0

import CastStreaming
import CastTransport

#if DEBUG || CAST_FUZZING
@testable import CastStreaming
#endif

/// Cast Streaming's parsers: RTP and RTCP datagrams from the network, OFFER and ANSWER from the control channel.
enum StreamingFuzz {
    /// One RTP datagram; what parses re-serializes to the same bytes.
    static func rtp(_ bytes: [UInt8]) {
        guard let packet = try? RTPPacket(parsing: bytes) else { return }
        let again = packet.serialized()
        // Unknown extensions are skipped on parse, so only packets without them round-trip byte for byte.
        if bytes[12] & 0x3F == (packet.newPlayoutDelay == nil ? 0 : 1), again != bytes,
            (try? RTPPacket(parsing: again)) != packet
        {
            fatalError("RTP packet did not round-trip")
        }
    }

    /// One RTCP compound datagram; what parses rebuilds into a datagram that parses to the same packets.
    static func rtcp(_ bytes: [UInt8]) {
        _ = RTCPPacket.looksLikeRTCP(bytes)
        guard let packets = try? RTCPPacket.parse(bytes) else { return }
        let rebuilt = RTCPPacket.compound(packets)
        guard let again = try? RTCPPacket.parse(rebuilt), again.count == packets.count else {
            fatalError("RTCP compound did not re-parse")
        }
    }

    /// An OFFER or ANSWER message as JSON: parsed, streams chosen, answered.
    static func controlMessage(_ bytes: [UInt8]) {
        guard let json = FuzzInput.json(bytes) else { return }
        if let offer = try? StreamingOffer(json: json["offer"] ?? json) {
            let chosen = offer.selectStreams(videoCodecs: ["vp8", "h264"], audioCodecs: ["opus", "aac"])
            _ = offer.message(sequenceNumber: 1).jsonString
            _ = chosen.map(\.json)
        }
        if let answer = try? StreamingAnswer(message: json) {
            _ = answer.maximumVideoBitRate
            _ = answer.maximumVideoResolution
            _ = answer.message(sequenceNumber: 1).jsonString
        }
    }

    #if DEBUG || CAST_FUZZING
    /// A receiver fed datagrams (each a 2-byte length, then the bytes) as if from the network, a sender report
    /// first, with feedback after each; a datagram of one byte advances the clock by that many milliseconds.
    static func streamReceiver(_ bytes: [UInt8]) {
        let crypto = try! FrameCrypto(key: Array(repeating: 1, count: 16), ivMask: Array(repeating: 2, count: 16))
        var receiver = StreamReceiver(
            configuration: .init(
                senderSSRC: 77777,
                receiverSSRC: 77778,
                rtpTimebase: 90000,
                crypto: crypto,
                targetPlayoutDelay: .milliseconds(400)
            )
        )
        var now = StreamingMoment(monotonic: .seconds(10))
        receiver.receive(
            SenderReport(senderSSRC: 77777, ntpTimestamp: now.ntp, rtpTimestamp: 0, packetCount: 0, octetCount: 0),
            at: now
        )
        var offset = 0
        while offset + 2 <= bytes.count {
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            let end = min(bytes.count, offset + 2 + length)
            let datagram = Array(bytes[(offset + 2)..<end])
            offset = end
            if datagram.count == 1 {
                now = now.advanced(by: .milliseconds(Int64(datagram[0])))
                _ = receiver.deliverCompleted(at: now)
            } else if let packet = try? RTPPacket(parsing: datagram), packet.ssrc == 77777 {
                _ = receiver.receive(packet, at: now)
            }
            _ = try? RTCPPacket.parse(receiver.feedback(at: now))
        }
    }
    #endif
}
