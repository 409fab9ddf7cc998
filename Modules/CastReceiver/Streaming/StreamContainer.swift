import CastStreaming

/// Puts received frames into a file format ffmpeg reads, for the recorder and the decoder: VP8, VP9 and AV1 as
/// IVF (90 kHz timestamps), H.264 as its Annex B stream, Opus as Ogg Opus (RFC 7845). The format is chosen by the
/// first frame a decoder could start from (a key frame; any Opus packet); frames before it are skipped.
struct StreamContainer: Sendable {
    enum Format: String, Sendable {
        case ivf, annexB = "h264", oggOpus = "ogg"
    }

    let kind: OfferedStream.Kind
    private(set) var format: Format?
    /// The codec the first frame showed (`vp8`, `vp9`, `av1`, `h264`, `opus`).
    private(set) var codec: String?
    /// Frames written (after the header).
    private(set) var frames = 0
    private var firstTimestamp: UInt32 = 0
    private var ogg = OggPager()

    init(kind: OfferedStream.Kind) { self.kind = kind }

    /// The bytes that append `frame` (preceded by the file's header for the first one); empty for a frame skipped.
    mutating func append(_ frame: ReceivedFrame) -> [UInt8] {
        var bytes: [UInt8] = []
        if format == nil {
            guard let header = start(with: frame) else { return [] }
            bytes = header
            firstTimestamp = frame.rtpTimestamp
        }
        let elapsed = frame.rtpTimestamp &- firstTimestamp
        switch format! {
        case .annexB:
            bytes += frame.data
        case .ivf:
            bytes += littleEndian(UInt32(frame.data.count)) + littleEndian(UInt64(elapsed)) + frame.data
        case .oggOpus:
            // One packet per page: more than an Ogg page holds is no Opus packet (those are under 8 KB).
            guard frame.data.count < OggPager.largestPacket else { return bytes }
            // The granule position is the sample count at the end of the page's packet (48 kHz, the RTP timebase).
            let end = UInt64(elapsed) + UInt64(OpusPacket.sampleCount(frame.data))
            bytes += ogg.page(frame.data, granule: end)
        }
        frames += 1
        return bytes
    }

    private mutating func start(with frame: ReceivedFrame) -> [UInt8]? {
        if kind == .audio {
            guard let channels = OpusPacket.channelCount(frame.data) else { return nil }
            format = .oggOpus
            codec = "opus"
            return ogg.page(OpusPacket.head(channels: channels), granule: 0, flags: 0x02)
                + ogg.page(OpusPacket.tags, granule: 0)
        }
        guard frame.isKeyFrame, frame.data.count >= 10 else { return nil }
        if frame.data.starts(with: [0, 0, 1]) || frame.data.starts(with: [0, 0, 0, 1]) {
            format = .annexB
            codec = "h264"
            return []
        }
        let fourCC: String
        var (width, height): (UInt16, UInt16) = (0, 0)
        if frame.data[3...5] == [0x9d, 0x01, 0x2a] {
            // A VP8 key frame: 3-byte tag, 9d 01 2a, then 14-bit width and height.
            (fourCC, codec) = ("VP80", "vp8")
            width = UInt16(frame.data[6]) | UInt16(frame.data[7] & 0x3F) << 8
            height = UInt16(frame.data[8]) | UInt16(frame.data[9] & 0x3F) << 8
        } else if frame.data[0] >> 6 == 2, frame.data[1...3] == [0x49, 0x83, 0x42] {
            // A VP9 key frame (its size is deep in a bit-packed header: the decoder reads it there).
            (fourCC, codec) = ("VP90", "vp9")
        } else if frame.data.starts(with: [0x12, 0x00]) {
            // An AV1 temporal unit, starting with its temporal delimiter OBU.
            (fourCC, codec) = ("AV01", "av1")
        } else {
            return nil
        }
        format = .ivf
        var header = Array("DKIF".utf8)
        header += littleEndian(UInt16(0)) + littleEndian(UInt16(32)) + Array(fourCC.utf8)
        header += littleEndian(width) + littleEndian(height)
        header += littleEndian(UInt32(90000)) + littleEndian(UInt32(1)) + littleEndian(UInt32(0))
        header += littleEndian(UInt32(0))
        return header
    }
}

/// What the Ogg encapsulation needs of an Opus packet (RFC 6716 §3.1) and the two header packets (RFC 7845 §5).
enum OpusPacket {
    /// Samples at 48 kHz in `packet`, from its TOC byte and frame count; 0 for a malformed packet.
    static func sampleCount(_ packet: [UInt8]) -> Int {
        guard let toc = packet.first else { return 0 }
        let configuration = Int(toc >> 3)
        // Frame durations in units of 2.5 ms (120 samples): SILK 10/20/40/60 ms, hybrid 10/20, CELT 2.5/5/10/20.
        let units: Int
        switch configuration {
        case 0..<12: units = [4, 8, 16, 24][configuration % 4]
        case 12..<16: units = [4, 8][configuration % 2]
        default: units = [1, 2, 4, 8][configuration % 4]
        }
        let frames: Int
        switch toc & 0x03 {
        case 0: frames = 1
        case 1, 2: frames = 2
        default: frames = packet.count > 1 ? Int(packet[1] & 0x3F) : 0
        }
        return units * 120 * frames
    }

    /// 1 or 2 from the TOC byte's stereo flag; nil for an empty packet.
    static func channelCount(_ packet: [UInt8]) -> Int? {
        packet.first.map { $0 & 0x04 != 0 ? 2 : 1 }
    }

    /// The identification header: version 1, channels, the encoder's usual 312-sample pre-skip, 48 kHz, no gain,
    /// mapping family 0.
    static func head(channels: Int) -> [UInt8] {
        Array("OpusHead".utf8) + [1, UInt8(channels)] + littleEndian(UInt16(312)) + littleEndian(UInt32(48000))
            + [0, 0, 0]
    }

    /// The comment header: a vendor string and no comments.
    static let tags: [UInt8] = {
        let vendor = Array("swift-cast emulator".utf8)
        return Array("OpusTags".utf8) + littleEndian(UInt32(vendor.count)) + vendor + littleEndian(UInt32(0))
    }()
}

/// Ogg pages of one logical stream, one packet per page (RFC 3533).
struct OggPager: Sendable {
    private var sequence: UInt32 = 0
    private let serial: UInt32 = 0x4361_7374
    /// One page carries at most 255 lacing values of up to 255 bytes.
    static let largestPacket = 255 * 255

    /// A page holding `packet` whole; `flags` 0x02 marks the stream's first page.
    mutating func page(_ packet: [UInt8], granule: UInt64, flags: UInt8 = 0) -> [UInt8] {
        // Lacing: 255 for each full segment, then the remainder (0 when the packet is a multiple of 255).
        var lacing = [UInt8](repeating: 255, count: packet.count / 255)
        lacing.append(UInt8(packet.count % 255))
        var page = Array("OggS".utf8) + [0, flags] + littleEndian(granule) + littleEndian(serial)
        page += littleEndian(sequence) + [0, 0, 0, 0] + [UInt8(lacing.count)] + lacing + packet
        let checksum = Self.crc(page)
        page.replaceSubrange(22..<26, with: littleEndian(checksum))
        sequence += 1
        return page
    }

    /// Ogg's CRC-32: polynomial 0x04C11DB7, not reflected, initial value 0, no final XOR.
    static func crc(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }
}

func littleEndian<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] {
    withUnsafeBytes(of: value.littleEndian) { Array($0) }
}
