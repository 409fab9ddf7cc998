/// One Cast RTP packet: the RTP header, the Cast header (key frame, frame and packet ids, referenced frame,
/// extensions) and a slice of the encrypted frame.
public struct RTPPacket: Sendable, Hashable {
    /// Payload types Cast uses: 96–104 and 127 (Chrome sends 127 for audio, 96 for video).
    public static let castPayloadTypes: ClosedRange<UInt8> = 96...104
    /// Chrome's payload type for every audio stream.
    public static let audioPayloadType: UInt8 = 127
    /// Chrome's payload type for every video stream.
    public static let videoPayloadType: UInt8 = 96
    /// The largest datagram over IPv4 (1500 − 20 − 8).
    public static let maximumPacketSizeIPv4 = 1472
    /// The largest datagram over IPv6 (1500 − 40 − 8).
    public static let maximumPacketSizeIPv6 = 1452
    /// Header room reserved in every packet: 19 bytes of headers and a 4-byte latency extension.
    public static let reservedHeaderSize = 23

    /// Whether `payloadType` is one Cast uses.
    public static func isCastPayloadType(_ payloadType: UInt8) -> Bool {
        castPayloadTypes.contains(payloadType) || payloadType == 127
    }

    /// The codec's payload type (96 for audio, 97… for video, see ``isCastPayloadType(_:)``).
    public var payloadType: UInt8
    /// Set on the frame's last packet only.
    public var marker: Bool
    /// RTP's sequence number, one per packet across frames.
    public var sequenceNumber: UInt16
    /// The low 32 bits of the frame's RTP time; the same in every packet of a frame.
    public var rtpTimestamp: UInt32
    /// The sending stream's SSRC.
    public var ssrc: UInt32
    /// Whether the frame is a key frame.
    public var isKeyFrame: Bool
    /// The frame id's low 8 bits.
    public var frameID: UInt8
    /// The packet's index within its frame.
    public var packetID: UInt16
    /// The frame's packet count − 1.
    public var maxPacketID: UInt16
    /// The low 8 bits of the frame this one depends on; `nil` when the byte is absent (the frame itself for a key
    /// frame, the one before otherwise).
    public var referencedFrameID: UInt8?
    /// A new target playout delay in milliseconds (the Adaptive Latency extension), from this frame on.
    public var newPlayoutDelay: UInt16?
    /// A slice of the encrypted frame.
    public var payload: ArraySlice<UInt8>

    /// A packet with the given fields.
    public init(
        payloadType: UInt8,
        marker: Bool,
        sequenceNumber: UInt16,
        rtpTimestamp: UInt32,
        ssrc: UInt32,
        isKeyFrame: Bool,
        frameID: UInt8,
        packetID: UInt16,
        maxPacketID: UInt16,
        referencedFrameID: UInt8?,
        newPlayoutDelay: UInt16? = nil,
        payload: ArraySlice<UInt8>
    ) {
        self.payloadType = payloadType
        self.marker = marker
        self.sequenceNumber = sequenceNumber
        self.rtpTimestamp = rtpTimestamp
        self.ssrc = ssrc
        self.isKeyFrame = isKeyFrame
        self.frameID = frameID
        self.packetID = packetID
        self.maxPacketID = maxPacketID
        self.referencedFrameID = referencedFrameID
        self.newPlayoutDelay = newPlayoutDelay
        self.payload = payload
    }

    /// The packet's bytes.
    public func serialized() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.reservedHeaderSize + payload.count)
        bytes.append(0x80)
        bytes.append((marker ? 0x80 : 0) | (payloadType & 0x7F))
        bytes.append(bigEndian: sequenceNumber)
        bytes.append(bigEndian: rtpTimestamp)
        bytes.append(bigEndian: ssrc)
        let extensions: UInt8 = newPlayoutDelay == nil ? 0 : 1
        bytes.append((isKeyFrame ? 0x80 : 0) | (referencedFrameID == nil ? 0 : 0x40) | extensions)
        bytes.append(frameID)
        bytes.append(bigEndian: packetID)
        bytes.append(bigEndian: maxPacketID)
        if let referencedFrameID { bytes.append(referencedFrameID) }
        if let newPlayoutDelay {
            bytes.append(bigEndian: UInt16(1 << 10 | 2))
            bytes.append(bigEndian: newPlayoutDelay)
        }
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// Parses a packet the way the reference receiver does.
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/malformedPacket``: shorter than 18 bytes,
    ///   not version 2 without padding, extension or CSRC, not a Cast payload type, an illegal packet id, or
    ///   truncated headers and extensions.
    public init(parsing bytes: [UInt8]) throws {
        guard bytes.count >= 18 else {
            throw CastStreamingError(.malformedPacket, "an RTP packet has at least 18 bytes, not \(bytes.count)")
        }
        guard bytes[0] == 0x80 else {
            throw CastStreamingError(.malformedPacket, "not a Cast RTP packet (first byte \(bytes[0]), not 0x80)")
        }
        var reader = ByteReader(bytes, from: 1)
        let second = try reader.uint8()
        marker = second & 0x80 != 0
        payloadType = second & 0x7F
        guard Self.isCastPayloadType(payloadType) else {
            throw CastStreamingError(.malformedPacket, "payload type \(payloadType) is not a Cast payload type")
        }
        sequenceNumber = try reader.uint16()
        rtpTimestamp = try reader.uint32()
        ssrc = try reader.uint32()
        let flags = try reader.uint8()
        isKeyFrame = flags & 0x80 != 0
        frameID = try reader.uint8()
        packetID = try reader.uint16()
        maxPacketID = try reader.uint16()
        guard maxPacketID != 0xFFFF, packetID <= maxPacketID else {
            throw CastStreamingError(.malformedPacket, "packet id \(packetID) of max \(maxPacketID) is illegal")
        }
        referencedFrameID = flags & 0x40 != 0 ? try reader.uint8("the referenced frame id") : nil
        newPlayoutDelay = nil
        for _ in 0..<(flags & 0x3F) {
            let word = try reader.uint16("an extension header")
            let size = Int(word & 0x3FF)
            let data = try reader.take(size, "an extension")
            if word >> 10 == 1 {
                guard size == 2 else {
                    throw CastStreamingError(
                        .malformedPacket,
                        "the adaptive latency extension has 2 bytes, not \(size)"
                    )
                }
                newPlayoutDelay = UInt16(data[data.startIndex]) << 8 | UInt16(data[data.startIndex + 1])
            }
        }
        payload = bytes[reader.offset...]
    }
}
