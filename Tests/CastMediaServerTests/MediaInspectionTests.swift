import CastTransport
import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import CastMediaServer

// MARK: - Builders

/// Big-endian and little-endian integers as bytes.
private func bigEndianBytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.bigEndian) { Array($0) }
}

private func littleEndianBytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.littleEndian) { Array($0) }
}

/// ISO base media boxes.
private enum MP4Builder {
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        bigEndianBytes(UInt32(8 + payload.count)) + Array(type.utf8) + payload
    }

    static func fullBox(_ type: String, version: UInt8, _ payload: [UInt8]) -> [UInt8] {
        box(type, [version, 0, 0, 0] + payload)
    }

    static func times(version: UInt8, timescale: UInt32, duration: UInt64) -> [UInt8] {
        version == 0
            ? bigEndianBytes(UInt32(1)) + bigEndianBytes(UInt32(2)) + bigEndianBytes(timescale)
                + bigEndianBytes(UInt32(truncatingIfNeeded: duration))
            : bigEndianBytes(UInt64(1)) + bigEndianBytes(UInt64(2)) + bigEndianBytes(timescale)
                + bigEndianBytes(duration)
    }

    static func mvhd(version: UInt8 = 0, timescale: UInt32, duration: UInt64) -> [UInt8] {
        fullBox(
            "mvhd",
            version: version,
            times(version: version, timescale: timescale, duration: duration) + zeroBytes(80)
        )
    }

    static func trak(version: UInt8 = 0, timescale: UInt32, duration: UInt64) -> [UInt8] {
        let mdhd = fullBox(
            "mdhd",
            version: version,
            times(version: version, timescale: timescale, duration: duration) + zeroBytes(4)
        )
        let hdlr = fullBox("hdlr", version: 0, zeroBytes(4) + Array("vide".utf8) + zeroBytes(13))
        return box("trak", fullBox("tkhd", version: 0, zeroBytes(80)) + box("mdia", mdhd + hdlr))
    }

    static func mvex(version: UInt8, fragmentDuration: UInt64) -> [UInt8] {
        let duration =
            version == 0
            ? bigEndianBytes(UInt32(truncatingIfNeeded: fragmentDuration)) : bigEndianBytes(fragmentDuration)
        return box("mvex", fullBox("mehd", version: version, duration) + fullBox("trex", version: 0, zeroBytes(20)))
    }

    static let ftyp = box("ftyp", Array("isom".utf8) + bigEndianBytes(UInt32(512)) + Array("isomiso2avc1mp41".utf8))

    static func file(_ boxes: [UInt8]...) -> [UInt8] { ftyp + boxes.joined() }
}

/// EBML (Matroska) elements.
private enum EBMLBuilder {
    static func id(_ id: UInt32) -> [UInt8] { Array(bigEndianBytes(id).drop { $0 == 0 }) }

    /// Sizes below 127 in one byte, others in eight (both are valid EBML).
    static func size(_ size: UInt64) -> [UInt8] {
        size < 127 ? [0x80 | UInt8(size)] : [0x01] + bigEndianBytes(size).dropFirst()
    }

    static let unknownSize: [UInt8] = [0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]

    static func element(_ elementID: UInt32, _ payload: [UInt8]) -> [UInt8] {
        id(elementID) + size(UInt64(payload.count)) + payload
    }

    static func uint(_ elementID: UInt32, _ value: UInt64) -> [UInt8] {
        element(elementID, Array(bigEndianBytes(value).drop { $0 == 0 }))
    }

    static func string(_ elementID: UInt32, _ value: String) -> [UInt8] { element(elementID, Array(value.utf8)) }

    static func header(docType: String?) -> [UInt8] {
        element(
            0x1A45_DFA3,
            uint(0x4286, 1) + uint(0x42F7, 1) + uint(0x42F2, 4) + uint(0x42F3, 8)
                + (docType.map { string(0x4282, $0) } ?? []) + uint(0x4287, 4) + uint(0x4285, 2)
        )
    }

    static func info(scale: UInt64? = nil, duration: [UInt8]?) -> [UInt8] {
        element(
            0x1549_A966,
            (scale.map { uint(0x2A_D7B1, $0) } ?? []) + (duration.map { element(0x4489, $0) } ?? [])
                + string(0x4D80, "test muxer") + string(0x5741, "test app")
        )
    }

    static func float32(_ value: Float) -> [UInt8] { bigEndianBytes(value.bitPattern) }
    static func float64(_ value: Double) -> [UInt8] { bigEndianBytes(value.bitPattern) }

    static let tracks = element(0x1654_AE6B, element(0xAE, uint(0xD7, 1) + uint(0x83, 1) + string(0x86, "V_VP9")))
    static let cluster = element(0x1F43_B675, uint(0xE7, 0) + element(0xA3, [0x81, 0, 0, 0x80] + zeroBytes(32)))

    static func seekHead(infoPosition: UInt64) -> [UInt8] {
        element(0x114D_9B74, element(0x4DBB, element(0x53AB, [0x15, 0x49, 0xA9, 0x66]) + uint(0x53AC, infoPosition)))
    }

    static func segment(_ children: [UInt8]..., unknownSize: Bool = false) -> [UInt8] {
        let payload = Array(children.joined())
        return id(0x1853_8067) + (unknownSize ? Self.unknownSize : size(UInt64(payload.count))) + payload
    }
}

private func zeroBytes(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }

/// A reader that does not know the size, as over HTTP without a Content-Length.
private struct UnsizedReader: ByteRangeReader {
    var bytes: [UInt8]
    var size: UInt64? { nil }

    func read(_ range: Range<UInt64>) async throws -> [UInt8] {
        try await InMemoryByteReader(bytes).read(range)
    }
}

/// One Ogg page holding one packet (under 255 bytes).
private func oggPage(_ packet: [UInt8], beginning: Bool = true, serial: UInt32 = 1) -> [UInt8] {
    Array("OggS".utf8) + [0, beginning ? 0x02 : 0x00] + zeroBytes(8) + littleEndianBytes(serial) + zeroBytes(8) + [
        1, UInt8(packet.count),
    ]
        + packet
}

/// A file of `size` bytes that exists only where `regions` say (zeros elsewhere), counting what is read,
/// and refusing reads over 4 MiB as a parser reading a whole `mdat` would.
private final class SparseReader: ByteRangeReader {
    struct Region {
        var offset: UInt64
        var bytes: [UInt8]
    }

    struct Reading: Error {}

    let size: UInt64?
    let regions: [Region]
    private let counters = NIOLockedValueBox((reads: 0, bytes: 0))

    init(size: UInt64?, regions: [Region]) {
        self.size = size
        self.regions = regions
    }

    var reads: Int { counters.withLockedValue { $0.reads } }
    var bytesRead: Int { counters.withLockedValue { $0.bytes } }

    func read(_ range: Range<UInt64>) async throws -> [UInt8] {
        let upper = min(range.upperBound, size ?? range.upperBound)
        guard range.lowerBound < upper else { return [] }
        guard upper - range.lowerBound <= 4 << 20 else { throw Reading() }
        var bytes = zeroBytes(Int(upper - range.lowerBound))
        for region in regions {
            let start = max(region.offset, range.lowerBound)
            let end = min(region.offset + UInt64(region.bytes.count), upper)
            guard start < end else { continue }
            for offset in start..<end {
                bytes[Int(offset - range.lowerBound)] = region.bytes[Int(offset - region.offset)]
            }
        }
        counters.withLockedValue {
            $0.reads += 1
            $0.bytes += bytes.count
        }
        return bytes
    }
}

// MARK: - Sniffing

/// The container and content type from a file's first bytes, for every format a Cast sender shares.
@Suite struct MediaSnifferTests {
    static func expect(
        _ bytes: [UInt8],
        _ container: SniffedMedia.Container,
        _ mimeType: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let sniffed = MediaSniffer.sniff(bytes)
        #expect(sniffed?.container == container, sourceLocation: sourceLocation)
        #expect(sniffed?.mimeType == mimeType, sourceLocation: sourceLocation)
    }

    @Test func isoBaseMediaBrands() {
        func ftyp(_ brand: String) -> [UInt8] {
            MP4Builder.box("ftyp", Array(brand.utf8) + zeroBytes(4) + Array(brand.utf8) + Array("isom".utf8))
                + zeroBytes(64)
        }
        Self.expect(ftyp("isom"), .mp4, "video/mp4")
        Self.expect(ftyp("mp42"), .mp4, "video/mp4")
        Self.expect(ftyp("3gp4"), .mp4, "video/mp4")
        Self.expect(ftyp("M4A "), .mp4, "audio/mp4")
        Self.expect(ftyp("M4B "), .mp4, "audio/mp4")
        Self.expect(ftyp("qt  "), .mp4, "video/quicktime")
        Self.expect(ftyp("heic"), .heif, "image/heic")
        Self.expect(ftyp("avif"), .heif, "image/avif")
        #expect(MediaSniffer.sniff(ftyp("heic"))?.isMedia == false)
        // Old QuickTime files start with another atom.
        Self.expect(MP4Builder.box("moov", MP4Builder.mvhd(timescale: 600, duration: 6000)), .mp4, "video/quicktime")
        Self.expect(
            bigEndianBytes(UInt32(8)) + Array("wide".utf8) + bigEndianBytes(UInt32(0)) + Array("mdat".utf8),
            .mp4,
            "video/quicktime"
        )
        // A truncated ftyp still says MP4.
        Self.expect(Array(MP4Builder.ftyp.prefix(10)), .mp4, "video/mp4")
    }

    @Test func webMAndMatroskaByDocType() {
        let webm = EBMLBuilder.header(docType: "webm") + EBMLBuilder.segment(EBMLBuilder.info(duration: nil))
        Self.expect(webm, .webm, "video/webm")
        Self.expect(EBMLBuilder.header(docType: "matroska"), .matroska, "video/x-matroska")
        Self.expect(EBMLBuilder.header(docType: nil), .matroska, "video/x-matroska")
        Self.expect(Array(EBMLBuilder.header(docType: "webm").prefix(6)), .matroska, "video/x-matroska")
        Self.expect([0x1A, 0x45, 0xDF, 0xA3], .matroska, "video/x-matroska")
    }

    @Test func transportStreams() {
        let packet = [0x47, 0x40, 0x00, 0x10] + zeroBytes(184)
        Self.expect(packet + packet + packet + packet, .mpegTS, "video/mp2t")
        Self.expect(packet + packet, .mpegTS, "video/mp2t")
        let m2ts = zeroBytes(4) + packet
        Self.expect(m2ts + m2ts + m2ts, .mpegTS, "video/mp2t")
        // A single packet, or a broken third one, is not enough.
        #expect(MediaSniffer.sniff(packet) == nil)
        #expect(MediaSniffer.sniff(packet + packet + [0x00] + zeroBytes(187)) == nil)
    }

    /// MPEG-1 layer III, 128 kbit/s, 44.1 kHz: 417-byte frames.
    static let mp3Frame: [UInt8] = [0xFF, 0xFB, 0x90, 0x64] + zeroBytes(413)
    /// AAC LC, 44.1 kHz, stereo, 20-byte ADTS frames.
    static let adtsFrame: [UInt8] = [0xFF, 0xF1, 0x50, 0x80, 0x02, 0x9F, 0xFC] + zeroBytes(13)

    static func id3(_ bodyLength: Int) -> [UInt8] {
        Array("ID3".utf8) + [4, 0, 0] + [0, 0, UInt8(bodyLength >> 7), UInt8(bodyLength & 0x7F)] + zeroBytes(bodyLength)
    }

    @Test func mpegAudioAndADTS() {
        Self.expect(Self.mp3Frame + Self.mp3Frame, .mp3, "audio/mpeg")
        #expect(MediaSniffer.sniff(Self.mp3Frame + Self.mp3Frame)?.codec == "mp3")
        Self.expect(Array(Self.mp3Frame.prefix(4)), .mp3, "audio/mpeg")
        Self.expect(Self.id3(300) + Self.mp3Frame, .mp3, "audio/mpeg")
        Self.expect(Self.id3(10_000), .mp3, "audio/mpeg")
        Self.expect(Self.adtsFrame + Self.adtsFrame, .aac, "audio/aac")
        Self.expect(Self.id3(20) + Self.adtsFrame + Self.adtsFrame, .aac, "audio/aac")
        // Reserved bitrate, reserved sample rate, free format, or a second frame that does not follow.
        #expect(MediaSniffer.sniff([0xFF, 0xFB, 0xF0, 0x64] + zeroBytes(500)) == nil)
        #expect(MediaSniffer.sniff([0xFF, 0xFB, 0x9C, 0x64] + zeroBytes(500)) == nil)
        #expect(MediaSniffer.sniff([0xFF, 0xFB, 0x00, 0x64] + zeroBytes(500)) == nil)
        #expect(MediaSniffer.sniff(Self.mp3Frame + zeroBytes(8)) == nil)
        #expect(MediaSniffer.sniff(Self.adtsFrame + zeroBytes(20)) == nil)
    }

    @Test func flacOggAndWave() {
        Self.expect(Array("fLaC".utf8) + zeroBytes(38), .flac, "audio/flac")
        Self.expect(Self.id3(30) + Array("fLaC".utf8) + zeroBytes(38), .flac, "audio/flac")

        let opus = oggPage(Array("OpusHead".utf8) + [1, 2] + zeroBytes(9))
        let vorbis = oggPage([0x01] + Array("vorbis".utf8) + zeroBytes(23))
        let theora = oggPage([0x80] + Array("theora".utf8) + zeroBytes(35), serial: 2)
        let skeleton = oggPage(Array("fishead\0".utf8) + zeroBytes(56), serial: 3)
        #expect(MediaSniffer.sniff(opus) == SniffedMedia(container: .ogg, mimeType: "audio/ogg", codec: "opus"))
        #expect(MediaSniffer.sniff(vorbis) == SniffedMedia(container: .ogg, mimeType: "audio/ogg", codec: "vorbis"))
        #expect(MediaSniffer.sniff(theora + vorbis)?.mimeType == "video/ogg")
        #expect(
            MediaSniffer.sniff(skeleton + vorbis + theora)
                == SniffedMedia(container: .ogg, mimeType: "video/ogg", codec: "theora")
        )
        #expect(MediaSniffer.sniff(Array("OggS".utf8)) == SniffedMedia(container: .ogg, mimeType: "audio/ogg"))

        func riff(_ magic: String, _ form: String) -> [UInt8] {
            Array(magic.utf8) + littleEndianBytes(UInt32(100)) + Array(form.utf8) + zeroBytes(32)
        }
        Self.expect(riff("RIFF", "WAVE"), .wav, "audio/wav")
        Self.expect(riff("RF64", "WAVE"), .wav, "audio/wav")
        Self.expect(riff("RIFF", "AVI "), .avi, "video/x-msvideo")
        Self.expect(riff("RIFF", "WEBP"), .webp, "image/webp")
        #expect(MediaSniffer.sniff(riff("RIFF", "CDXA")) == nil)
    }

    @Test func imagesAreNotMedia() {
        Self.expect([0xFF, 0xD8, 0xFF, 0xE0] + zeroBytes(16), .jpeg, "image/jpeg")
        Self.expect([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + zeroBytes(16), .png, "image/png")
        Self.expect(Array("GIF89a".utf8) + zeroBytes(16), .gif, "image/gif")
        Self.expect(Array("GIF87a".utf8), .gif, "image/gif")
        for image in [[0xFF, 0xD8, 0xFF], Array("GIF89a".utf8)] {
            #expect(MediaSniffer.sniff(image)?.isMedia == false)
        }
    }

    @Test func textFormats() {
        let media = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.0,\nseg0.ts\n"
        Self.expect(Array(media.utf8), .hls, "application/x-mpegURL")
        let master = [0xEF, 0xBB, 0xBF] + Array("#EXTM3U\r\n#EXT-X-STREAM-INF:BANDWIDTH=1\r\nv.m3u8\r\n".utf8)
        Self.expect(master, .hls, "application/x-mpegURL")
        #expect(MediaSniffer.sniff(master)?.isMedia == true)
        Self.expect(Array("#EXTM3U\n#EXTINF:3,Song\nsong.mp3\n".utf8), .playlist, "audio/x-mpegurl")
        Self.expect(Array("[playlist]\nFile1=a.mp3\n".utf8), .playlist, "audio/x-scpls")
        #expect(MediaSniffer.sniff(Array("[playlist]\nFile1=a.mp3\n".utf8))?.isMedia == false)

        let dash = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- generated -->
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static">
            """
        Self.expect(Array(dash.utf8), .dash, "application/dash+xml")
        #expect(MediaSniffer.sniff(Array("<html><body>MPD</body></html>".utf8)) == nil)

        Self.expect(Array("WEBVTT\n\n00:00.000 --> 00:01.000\nHi\n".utf8), .webVTT, "text/vtt")
        Self.expect([0xEF, 0xBB, 0xBF] + Array("WEBVTT - title\n".utf8), .webVTT, "text/vtt")
        Self.expect(Array("WEBVTT".utf8), .webVTT, "text/vtt")
        #expect(MediaSniffer.sniff(Array("WEBVTTX\n".utf8)) == nil)

        Self.expect(Array("1\r\n00:00:01,000 --> 00:00:02,500\r\nHello\r\n".utf8), .subRip, "application/x-subrip")
        // UTF-16 text, whose byte-order mark looks like an MPEG audio frame header.
        for bigEndian in [false, true] {
            var utf16: [UInt8] = bigEndian ? [0xFE, 0xFF] : [0xFF, 0xFE]
            for unit in "1\n00:00:01,000 --> 00:00:02,500\nHi\n".utf16 {
                let (high, low) = (UInt8(unit >> 8), UInt8(unit & 0xFF))
                utf16 += bigEndian ? [high, low] : [low, high]
            }
            Self.expect(utf16, .subRip, "application/x-subrip")
        }
        #expect(MediaSniffer.sniff([0xFF, 0xFE, 0x31, 0x00]) == nil)
        #expect(MediaSniffer.sniff(Array("1\nHello world\n".utf8)) == nil)
        #expect(MediaSniffer.sniff(Array("plain text, nothing else".utf8)) == nil)
    }

    @Test func garbageAndTruncatedInputs() {
        #expect(MediaSniffer.sniff([]) == nil)
        #expect(MediaSniffer.sniff([0x00]) == nil)
        #expect(MediaSniffer.sniff([0xFF]) == nil)
        #expect(MediaSniffer.sniff(zeroBytes(4096)) == nil)
        #expect(MediaSniffer.sniff(Array("ID3".utf8)) == nil)
        // Every prefix of every sample: no crash, and nothing outside the known containers.
        let samples: [[UInt8]] = [
            MP4Builder.ftyp, EBMLBuilder.header(docType: "webm"), Self.mp3Frame + Self.mp3Frame,
            Self.adtsFrame + Self.adtsFrame, oggPage(Array("OpusHead".utf8)), Self.id3(40) + Self.adtsFrame,
        ]
        for sample in samples {
            for length in 0...sample.count { _ = MediaSniffer.sniff(Array(sample.prefix(length))) }
        }
        var generator = SplitMix64(seed: 3)
        for _ in 0..<3000 {
            let count = Int(generator.next() % 600)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            // Start some with a real signature, so parsing goes past the first check.
            let heads: [[UInt8]] = [
                [0x1A, 0x45, 0xDF, 0xA3], Array("OggS".utf8), Array("ID3\u{3}".utf8), [0xFF, 0xFB],
            ]
            let head = heads[Int(generator.next() % 5) % heads.count]
            if generator.next() % 2 == 0 { bytes = head + bytes }
            _ = MediaSniffer.sniff(bytes)
        }
        // Longer prefixes than needed are fine.
        Self.expect(Array("WEBVTT\n".utf8) + Array(repeating: 0x41, count: 100_000), .webVTT, "text/vtt")
    }

    @Test func mimeTypesByExtension() {
        let expected: [String: String] = [
            "mp4": "video/mp4", "m4v": "video/mp4", "m4a": "audio/mp4", "mov": "video/quicktime",
            "mkv": "video/x-matroska", "webm": "video/webm", "ts": "video/mp2t", "m2ts": "video/mp2t",
            "mp3": "audio/mpeg", "aac": "audio/aac", "flac": "audio/flac", "ogg": "audio/ogg", "oga": "audio/ogg",
            "opus": "audio/ogg", "wav": "audio/wav", "avi": "video/x-msvideo", "m3u8": "application/x-mpegURL",
            "mpd": "application/dash+xml", "vtt": "text/vtt", "srt": "application/x-subrip", "jpg": "image/jpeg",
            "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        ]
        for (fileExtension, mimeType) in expected {
            #expect(MediaSniffer.mimeType(forExtension: fileExtension) == mimeType)
            #expect(MediaSniffer.mimeType(forExtension: "." + fileExtension.uppercased()) == mimeType)
        }
        #expect(MediaSniffer.mimeType(forExtension: "exe") == nil)
        #expect(MediaSniffer.mimeType(forExtension: "") == nil)
    }
}

// MARK: - Duration

/// Durations from container headers, reading little, and surviving anything.
@Suite struct MediaDurationTests {
    static func seconds(_ container: SniffedMedia.Container, _ bytes: [UInt8]) async throws -> Double? {
        try await MediaDuration.seconds(of: container, reader: InMemoryByteReader(bytes))
    }

    static func expectInvalid(
        _ container: SniffedMedia.Container,
        _ reader: some ByteRangeReader,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let error = await #expect(throws: CastMediaServerError.self, sourceLocation: sourceLocation) {
            try await MediaDuration.seconds(of: container, reader: reader)
        }
        #expect(error?.code == .invalidMedia, sourceLocation: sourceLocation)
    }

    // MARK: MP4

    @Test func mp4MovieHeaderVersions() async throws {
        let version0 = MP4Builder.file(MP4Builder.box("moov", MP4Builder.mvhd(timescale: 1000, duration: 5_400_500)))
        #expect(try await Self.seconds(.mp4, version0) == 5400.5)
        // Ten hours at 1 MHz does not fit 32 bits.
        let version1 = MP4Builder.file(
            MP4Builder.box("moov", MP4Builder.mvhd(version: 1, timescale: 1_000_000, duration: 36_000_000_000))
        )
        #expect(try await Self.seconds(.mp4, version1) == 36_000)
    }

    @Test func mp4MoovAfterAHugeMdatReadsOnlyHeaders() async throws {
        let moov = MP4Builder.box(
            "moov",
            MP4Builder.mvhd(timescale: 90_000, duration: 90_000 * 7_200)
                + MP4Builder.trak(timescale: 90_000, duration: 1)
        )
        let fileSize: UInt64 = 4 << 30
        let moovOffset = fileSize - UInt64(moov.count)
        let mdatOffset = UInt64(MP4Builder.ftyp.count)
        let mdatHeader = bigEndianBytes(UInt32(1)) + Array("mdat".utf8) + bigEndianBytes(moovOffset - mdatOffset)
        let reader = SparseReader(
            size: fileSize,
            regions: [.init(offset: 0, bytes: MP4Builder.ftyp + mdatHeader), .init(offset: moovOffset, bytes: moov)]
        )
        #expect(try await MediaDuration.seconds(of: .mp4, reader: reader) == 7200)
        #expect(reader.reads <= 4)
        #expect(reader.bytesRead < 1024)
    }

    @Test func mp4FallsBackToTheLongestTrackThenToTheFragmentDuration() async throws {
        for unset: UInt64 in [0, 0xFFFF_FFFF] {
            let moov = MP4Builder.box(
                "moov",
                MP4Builder.mvhd(timescale: 1000, duration: unset)
                    + MP4Builder.trak(timescale: 48_000, duration: 480_000)
                    + MP4Builder.trak(version: 1, timescale: 25, duration: 25 * 12 + 12)
                    + MP4Builder.trak(timescale: 0, duration: 99)
            )
            #expect(try await Self.seconds(.mp4, MP4Builder.file(moov)) == 12.48)
        }
        let unsetVersion1 = MP4Builder.box(
            "moov",
            MP4Builder.mvhd(version: 1, timescale: 1000, duration: .max) + MP4Builder.trak(timescale: 10, duration: 30)
        )
        #expect(try await Self.seconds(.mp4, MP4Builder.file(unsetVersion1)) == 3)

        for version: UInt8 in [0, 1] {
            let fragmented = MP4Builder.box(
                "moov",
                MP4Builder.mvhd(timescale: 1000, duration: 0) + MP4Builder.trak(timescale: 1000, duration: 0)
                    + MP4Builder.mvex(version: version, fragmentDuration: 95_250)
            )
            let file = MP4Builder.file(
                fragmented,
                MP4Builder.box("moof", zeroBytes(16)),
                MP4Builder.box("mdat", zeroBytes(16))
            )
            #expect(try await Self.seconds(.mp4, file) == 95.25)
        }
        let nothing = MP4Builder.box("moov", MP4Builder.mvhd(timescale: 1000, duration: 0))
        #expect(try await Self.seconds(.mp4, MP4Builder.file(nothing)) == nil)
        #expect(try await Self.seconds(.mp4, MP4Builder.file(MP4Builder.box("moov", []))) == nil)
    }

    @Test func mp4SizeZeroAndLargeSizeBoxes() async throws {
        // moov written with size 0: it runs to the end of the file.
        let moov = MP4Builder.box("moov", MP4Builder.mvhd(timescale: 10, duration: 25))
        let open = MP4Builder.file(bigEndianBytes(UInt32(0)) + moov.dropFirst(4))
        #expect(try await Self.seconds(.mp4, open) == 2.5)
        // mdat running to the end of the file, with no moov anywhere: no duration.
        let noMovie = MP4Builder.file(bigEndianBytes(UInt32(0)) + Array("mdat".utf8) + zeroBytes(100))
        #expect(try await Self.seconds(.mp4, noMovie) == nil)
        // A 64-bit size on the moov itself.
        let payload = MP4Builder.mvhd(timescale: 10, duration: 25)
        let large =
            bigEndianBytes(UInt32(1)) + Array("moov".utf8) + bigEndianBytes(UInt64(16 + payload.count)) + payload
        #expect(try await Self.seconds(.mp4, MP4Builder.file(large)) == 2.5)
        // A reader that cannot say how long the resource is (HTTP without a length) still works.
        #expect(try await MediaDuration.seconds(of: .mp4, reader: UnsizedReader(bytes: open)) == 2.5)
    }

    @Test func mp4RefusesImpossibleOrOversizedBoxes() async throws {
        await Self.expectInvalid(
            .mp4,
            InMemoryByteReader(MP4Builder.ftyp + bigEndianBytes(UInt32(4)) + Array("free".utf8))
        )
        await Self.expectInvalid(
            .mp4,
            InMemoryByteReader(bigEndianBytes(UInt32(1)) + Array("mdat".utf8) + bigEndianBytes(UInt64(8)))
        )
        await Self.expectInvalid(.mp4, InMemoryByteReader(bigEndianBytes(UInt32(1)) + Array("mdat".utf8)))
        // A 100 MiB moov is refused before it is read.
        let hugeMovie = SparseReader(
            size: 200 << 20,
            regions: [.init(offset: 0, bytes: MP4Builder.ftyp + bigEndianBytes(UInt32(100 << 20)) + Array("moov".utf8))]
        )
        await Self.expectInvalid(.mp4, hugeMovie)
        #expect(hugeMovie.bytesRead < 64)
        // Sizes beyond the end of the file, or no moov at all: no duration.
        let beyond = MP4Builder.file(bigEndianBytes(UInt32(0x7FFF_FFFF)) + Array("mdat".utf8) + zeroBytes(64))
        #expect(try await Self.seconds(.mp4, beyond) == nil)
        let farBeyond = MP4Builder.file(bigEndianBytes(UInt32(1)) + Array("mdat".utf8) + bigEndianBytes(UInt64.max))
        #expect(try await Self.seconds(.mp4, farBeyond) == nil)
        #expect(try await Self.seconds(.mp4, MP4Builder.ftyp) == nil)
        #expect(try await Self.seconds(.mp4, []) == nil)
        // Thousands of empty boxes end the walk without reading them all.
        let manyBoxes = SparseReader(
            size: 1 << 40,
            regions: [
                .init(offset: 0, bytes: Array(Array(repeating: MP4Builder.box("free", []), count: 5000).joined()))
            ]
        )
        #expect(try await MediaDuration.seconds(of: .mp4, reader: manyBoxes) == nil)
        #expect(manyBoxes.reads <= MP4Duration.maximumTopLevelBoxes)
    }

    @Test func mp4MalformedChildBoxesNeverHang() async throws {
        let badChildren: [[UInt8]] = [
            bigEndianBytes(UInt32(0)) + Array("mvhd".utf8) + [0, 0, 0, 0],
            bigEndianBytes(UInt32(3)) + Array("trak".utf8),
            bigEndianBytes(UInt32(1)) + Array("trak".utf8) + bigEndianBytes(UInt64(4)),
            bigEndianBytes(UInt32(1)) + Array("trak".utf8) + bigEndianBytes(UInt64.max),
            MP4Builder.box(
                "trak",
                bigEndianBytes(UInt32(0)) + Array("mdia".utf8) + bigEndianBytes(UInt32(7)) + Array("mdhd".utf8)
            ),
            MP4Builder.fullBox("mvhd", version: 2, zeroBytes(100)),
            MP4Builder.fullBox("mvhd", version: 1, zeroBytes(8)),
            MP4Builder.box("mvex", MP4Builder.fullBox("mehd", version: 1, [1])),
        ]
        for child in badChildren {
            let file = MP4Builder.file(MP4Builder.box("moov", child))
            #expect(try await Self.seconds(.mp4, file) == nil)
        }
        // Every truncation of a valid file: a value, nil or invalidMedia, never a crash.
        let valid = MP4Builder.file(
            MP4Builder.box(
                "moov",
                MP4Builder.mvhd(timescale: 1000, duration: 0) + MP4Builder.trak(timescale: 10, duration: 40)
            )
        )
        for length in 0...valid.count {
            do {
                let value = try await Self.seconds(.mp4, Array(valid.prefix(length)))
                #expect(value == nil || value == 4)
            } catch let error as CastMediaServerError {
                #expect(error.code == .invalidMedia)
            }
        }
    }

    // MARK: Matroska

    static let webmHeader = EBMLBuilder.header(docType: "webm")

    @Test func matroskaDurationAsFloat32AndFloat64WithScales() async throws {
        let float32 =
            Self.webmHeader
            + EBMLBuilder.segment(
                EBMLBuilder.info(duration: EBMLBuilder.float32(12_345)),
                EBMLBuilder.tracks,
                EBMLBuilder.cluster
            )
        #expect(try await Self.seconds(.webm, float32) == 12.345)

        let float64 =
            EBMLBuilder.header(docType: "matroska")
            + EBMLBuilder.segment(EBMLBuilder.info(scale: 100_000, duration: EBMLBuilder.float64(1_234_567)))
        let seconds = try #require(try await Self.seconds(.matroska, float64))
        #expect(abs(seconds - 123.4567) < 1e-9)
    }

    @Test func matroskaUnknownSizeSegmentAndLiveFiles() async throws {
        let unknown =
            Self.webmHeader
            + EBMLBuilder.segment(
                EBMLBuilder.info(duration: EBMLBuilder.float64(60_000)),
                EBMLBuilder.cluster,
                unknownSize: true
            )
        #expect(try await Self.seconds(.webm, unknown) == 60)
        // MediaRecorder-style live WebM: no Duration, an unknown-size Cluster.
        let live =
            Self.webmHeader
            + EBMLBuilder.segment(
                EBMLBuilder.info(scale: 1_000_000, duration: nil),
                EBMLBuilder.id(0x1F43_B675) + EBMLBuilder.unknownSize + zeroBytes(40),
                unknownSize: true
            )
        #expect(try await Self.seconds(.webm, live) == nil)
        #expect(try await Self.seconds(.webm, Self.webmHeader + EBMLBuilder.segment(EBMLBuilder.cluster)) == nil)
    }

    @Test func matroskaInfoFarFromTheStartIsFoundWithFewReads() async throws {
        // A 1 MiB Void before Info: walked over by its size.
        let voidSize: UInt64 = 1 << 20
        let head = Self.webmHeader + EBMLBuilder.id(0x1853_8067) + EBMLBuilder.unknownSize
        let voidHeader = [0xEC] + EBMLBuilder.size(voidSize)
        let info = EBMLBuilder.info(duration: EBMLBuilder.float32(90_000))
        let infoOffset = UInt64(head.count + voidHeader.count) + voidSize
        let walked = SparseReader(
            size: infoOffset + UInt64(info.count) + (50 << 20),
            regions: [.init(offset: 0, bytes: head + voidHeader), .init(offset: infoOffset, bytes: info)]
        )
        #expect(try await MediaDuration.seconds(of: .webm, reader: walked) == 90)
        #expect(walked.reads <= 2)
        #expect(walked.bytesRead <= 80 << 10)

        // Info after a 100 MiB Cluster, found through the SeekHead.
        let clusterSize: UInt64 = 100 << 20
        let clusterHeader = EBMLBuilder.id(0x1F43_B675) + EBMLBuilder.size(clusterSize)
        let seekHeadLength = EBMLBuilder.seekHead(infoPosition: 0xFFFF_FFFF).count  // same 4-byte position
        let infoPosition = UInt64(seekHeadLength + clusterHeader.count) + clusterSize
        let start = Self.webmHeader + EBMLBuilder.id(0x1853_8067) + EBMLBuilder.unknownSize
        let sought = SparseReader(
            size: UInt64(start.count) + infoPosition + UInt64(info.count),
            regions: [
                .init(offset: 0, bytes: start + EBMLBuilder.seekHead(infoPosition: infoPosition) + clusterHeader),
                .init(offset: UInt64(start.count) + infoPosition, bytes: info),
            ]
        )
        #expect(try await MediaDuration.seconds(of: .webm, reader: sought) == 90)
        #expect(sought.reads <= 2)
    }

    @Test func matroskaMalformedInputs() async throws {
        await Self.expectInvalid(.matroska, InMemoryByteReader(Array("not matroska at all".utf8)))
        await Self.expectInvalid(.matroska, InMemoryByteReader([]))
        await Self.expectInvalid(.matroska, InMemoryByteReader(EBMLBuilder.id(0x1A45_DFA3) + EBMLBuilder.unknownSize))
        // Info claiming a petabyte, a Segment claiming more than the file, elements of size 0, zero-length ids.
        let hugeInfo =
            Self.webmHeader + EBMLBuilder.id(0x1853_8067) + EBMLBuilder.unknownSize
            + EBMLBuilder.id(0x1549_A966) + EBMLBuilder.size(1 << 50)
        #expect(try await Self.seconds(.webm, hugeInfo) == nil)
        let emptyElements =
            Self.webmHeader
            + EBMLBuilder.segment(
                EBMLBuilder.element(0xEC, []),
                EBMLBuilder.element(0xBF, []),
                EBMLBuilder.element(0x1549_A966, [])
            )
        #expect(try await Self.seconds(.webm, emptyElements) == nil)
        let zeroID = Self.webmHeader + EBMLBuilder.id(0x1853_8067) + EBMLBuilder.unknownSize + zeroBytes(64)
        #expect(try await Self.seconds(.webm, zeroID) == nil)
        for duration in [
            EBMLBuilder.float64(.nan), EBMLBuilder.float64(-5), EBMLBuilder.float64(.infinity), [1, 2, 3],
        ] {
            let file = Self.webmHeader + EBMLBuilder.segment(EBMLBuilder.info(duration: duration))
            #expect(try await Self.seconds(.webm, file) == nil)
        }
        let zeroScale =
            Self.webmHeader + EBMLBuilder.segment(EBMLBuilder.info(scale: 0, duration: EBMLBuilder.float32(5)))
        #expect(try await Self.seconds(.webm, zeroScale) == nil)

        let valid =
            Self.webmHeader
            + EBMLBuilder.segment(
                EBMLBuilder.seekHead(infoPosition: 20),
                EBMLBuilder.info(duration: EBMLBuilder.float32(2_000))
            )
        for length in 0...valid.count {
            do {
                let value = try await Self.seconds(.webm, Array(valid.prefix(length)))
                #expect(value == nil || value == 2)
            } catch let error as CastMediaServerError {
                #expect(error.code == .invalidMedia)
            }
        }
    }

    // MARK: HLS

    static let vod = """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-TARGETDURATION:10
        #EXT-X-MEDIA-SEQUENCE:0
        #EXTINF:10.0,
        seg0.ts
        #EXT-X-DISCONTINUITY
        #EXTINF:10,title
        https://cdn.example.com/seg1.ts
        #EXTINF:5.5,
        seg2.ts
        #EXT-X-ENDLIST
        """

    @Test func hlsVODLiveAndMaster() async throws {
        let vod = try HLSPlaylist.parse(Self.vod)
        #expect(
            vod.kind
                == .media(
                    segments: [
                        .init(uri: "seg0.ts", duration: 10),
                        .init(uri: "https://cdn.example.com/seg1.ts", duration: 10),
                        .init(uri: "seg2.ts", duration: 5.5),
                    ],
                    isEnded: true,
                    targetDuration: 10
                )
        )
        #expect(vod.duration == 25.5)
        #expect(try await Self.seconds(.hls, Array(Self.vod.utf8)) == 25.5)

        let live = Self.vod.replacingOccurrences(of: "#EXT-X-ENDLIST", with: "")
        #expect(try HLSPlaylist.parse(live).duration == nil)
        #expect(try await Self.seconds(.hls, Array(live.utf8)) == nil)
        guard case .media(let segments, let isEnded, let targetDuration) = try HLSPlaylist.parse(live).kind else {
            Issue.record("live playlist not parsed as media")
            return
        }
        #expect(segments.count == 3)
        #expect(!isEnded)
        #expect(targetDuration == 10)
        let typedVOD = "#EXTM3U\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:4,\na.ts\n"
        #expect(try HLSPlaylist.parse(typedVOD).duration == 4)

        let master =
            "\u{FEFF}#EXTM3U\r\n#EXT-X-STREAM-INF:BANDWIDTH=1280000,RESOLUTION=1280x720\r\nhi/index.m3u8\r\n"
            + "#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1,URI=\"if.m3u8\"\r\n"
            + "#EXT-X-STREAM-INF:BANDWIDTH=300000\r\n\r\nlo/index.m3u8\r\n"
        #expect(try HLSPlaylist.parse(master).kind == .master(variants: ["hi/index.m3u8", "lo/index.m3u8"]))
        #expect(try HLSPlaylist.parse(master).duration == nil)
        #expect(try await Self.seconds(.hls, Array(master.utf8)) == nil)

        #expect(try HLSPlaylist.parse("#EXTM3U\n").kind == .media(segments: [], isEnded: false, targetDuration: nil))
    }

    @Test func hlsSegmentAtATime() throws {
        let playlist = try HLSPlaylist.parse(Self.vod)
        func segment(at seconds: Double) -> [Double]? {
            playlist.segment(at: seconds).map { [Double($0.index), $0.startTime] }
        }
        #expect(segment(at: 0) == [0, 0])
        #expect(segment(at: -3) == [0, 0])
        #expect(segment(at: 9.99) == [0, 0])
        #expect(segment(at: 10) == [1, 10])
        #expect(segment(at: 25) == [2, 20])
        #expect(segment(at: 25.5) == nil)
        #expect(segment(at: .nan) == nil)
        #expect(try HLSPlaylist.parse("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n").segment(at: 0) == nil)
    }

    @Test func hlsMalformedInputs() async throws {
        let error = #expect(throws: CastMediaServerError.self) { try HLSPlaylist.parse("seg0.ts\n#EXTM3U\n") }
        #expect(error?.code == .invalidPlaylist)
        #expect(throws: CastMediaServerError.self) { try HLSPlaylist.parse("") }
        await Self.expectInvalid(.hls, InMemoryByteReader(zeroBytes(100)))
        let odd = """
            #EXTM3U
            #EXTINF:abc,
            a.ts
            #EXTINF:-4,
            b.ts
            #EXTINF:nan,
            c.ts
            d.ts
            #EXT-X-TARGETDURATION:x
            #EXT-X-ENDLIST
            """
        let parsed = try HLSPlaylist.parse(odd)
        #expect(
            parsed.kind
                == .media(
                    segments: ["a.ts", "b.ts", "c.ts", "d.ts"].map { .init(uri: $0, duration: 0) },
                    isEnded: true,
                    targetDuration: nil
                )
        )
        #expect(try await Self.seconds(.hls, Array(odd.utf8)) == nil)
        // Over 16 MiB is refused without reading it all.
        let huge = SparseReader(size: 1 << 30, regions: [.init(offset: 0, bytes: Array("#EXTM3U\n".utf8))])
        await Self.expectInvalid(.hls, huge)
    }

    // MARK: Other containers

    static func wave(dataSize: UInt32, chunks: [UInt8] = [], rf64: UInt64? = nil) -> [UInt8] {
        let format =
            Array("fmt ".utf8) + littleEndianBytes(UInt32(16)) + littleEndianBytes(UInt16(1))
            + littleEndianBytes(UInt16(2))
            + littleEndianBytes(UInt32(44_100)) + littleEndianBytes(UInt32(176_400)) + littleEndianBytes(UInt16(4))
            + littleEndianBytes(UInt16(16))
        let ds64 =
            rf64.map {
                Array("ds64".utf8) + littleEndianBytes(UInt32(28)) + zeroBytes(8) + littleEndianBytes($0)
                    + zeroBytes(12)
            } ?? []
        let data = Array("data".utf8) + littleEndianBytes(dataSize)
        return Array((rf64 == nil ? "RIFF" : "RF64").utf8) + littleEndianBytes(UInt32(0)) + Array("WAVE".utf8) + ds64
            + chunks
            + format + data
    }

    @Test func waveFlacAndContainersWithoutDuration() async throws {
        let list = Array("LIST".utf8) + littleEndianBytes(UInt32(5)) + Array("INFOx".utf8) + [0]  // odd size, padded
        let wave = Self.wave(dataSize: 176_400 * 3, chunks: list) + zeroBytes(64)
        // The data chunk is cut short: the duration is what is there.
        #expect(try await Self.seconds(.wav, wave) == 64.0 / 176_400)
        let reader = SparseReader(size: UInt64(wave.count - 64) + 176_400 * 3, regions: [.init(offset: 0, bytes: wave)])
        #expect(try await MediaDuration.seconds(of: .wav, reader: reader) == 3)
        let large = Self.wave(dataSize: 0xFFFF_FFFF, rf64: 176_400 * 7200)
        let largeReader = SparseReader(
            size: UInt64(large.count) + 176_400 * 7200,
            regions: [.init(offset: 0, bytes: large)]
        )
        #expect(try await MediaDuration.seconds(of: .wav, reader: largeReader) == 7200)
        await Self.expectInvalid(.wav, InMemoryByteReader(Array("RIFF\0\0\0\0AVI ".utf8)))
        #expect(try await Self.seconds(.wav, Array("RIFF\0\0\0\0WAVE".utf8)) == nil)

        // STREAMINFO: 44.1 kHz, 441 000 samples.
        var streamInfo = zeroBytes(34)
        streamInfo[10] = 0x0A
        streamInfo[11] = 0xC4
        streamInfo[12] = 0x42
        streamInfo[13] = 0xF0
        streamInfo[14..<18] = ArraySlice(bigEndianBytes(UInt32(441_000)))
        let flac = Array("fLaC".utf8) + [0x80, 0, 0, 34] + streamInfo
        #expect(try await Self.seconds(.flac, flac) == 10)
        #expect(try await Self.seconds(.flac, MediaSnifferTests.id3(100) + flac) == 10)
        await Self.expectInvalid(.flac, InMemoryByteReader(Array("fLaC".utf8)))

        let mp3 = MediaSnifferTests.mp3Frame + MediaSnifferTests.mp3Frame
        for container in [SniffedMedia.Container.mp3, .mpegTS, .ogg, .avi, .aac, .dash, .jpeg] {
            #expect(try await Self.seconds(container, mp3) == nil)
        }
    }

    @Test func randomBytesNeverCrashAnyParser() async {
        var generator = SplitMix64(seed: 5)
        let heads: [[UInt8]] = [
            MP4Builder.ftyp, Self.webmHeader, Self.webmHeader + EBMLBuilder.id(0x1853_8067) + EBMLBuilder.unknownSize,
            Array("#EXTM3U\n".utf8), Array("RIFF\0\0\0\0WAVE".utf8), Array("fLaC".utf8), [],
        ]
        let containers: [SniffedMedia.Container] = [.mp4, .webm, .matroska, .hls, .wav, .flac]
        for round in 0..<1500 {
            let count = Int(generator.next() % 400)
            let body = (0..<count).map { _ in
                UInt8(truncatingIfNeeded: generator.next() % 7 == 0 ? 0 : generator.next())
            }
            let bytes = heads[round % heads.count] + body
            for container in containers {
                _ = try? await Self.seconds(container, bytes)
            }
            _ = try? HLSPlaylist.parse(String(decoding: bytes, as: UTF8.self))
        }
    }

    // MARK: Readers

    @Test func inMemoryReaderClampsToItsBytes() async throws {
        let reader = InMemoryByteReader([1, 2, 3, 4, 5])
        #expect(reader.size == 5)
        #expect(try await reader.read(1..<3) == [2, 3])
        #expect(try await reader.read(3..<100) == [4, 5])
        #expect(try await reader.read(7..<9) == [])
        #expect(try await reader.read(0..<UInt64.max) == [1, 2, 3, 4, 5])
    }

    @Test func fileReaderReadsRangesOfALocalFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inspection-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bytes = MP4Builder.file(
            MP4Builder.box("mdat", zeroBytes(10_000)),
            MP4Builder.box("moov", MP4Builder.mvhd(timescale: 2, duration: 5))
        )
        let path = directory.appendingPathComponent("clip.mp4").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let reader = try FileByteReader(path: path)
        #expect(reader.size == UInt64(bytes.count))
        #expect(try await reader.read(4..<8) == Array("ftyp".utf8))
        #expect(try await reader.read(UInt64(bytes.count - 2)..<UInt64(bytes.count + 10)) == Array(bytes.suffix(2)))
        #expect(try await reader.read(UInt64(bytes.count)..<UInt64(bytes.count + 10)) == [])
        #expect(try await reader.read(5..<5) == [])
        #expect(try await MediaDuration.seconds(of: .mp4, reader: reader) == 2.5)

        for bad in [directory.path, directory.appendingPathComponent("missing.mp4").path] {
            let error = #expect(throws: CastMediaServerError.self) { try FileByteReader(path: bad) }
            #expect(error?.code == .notShareable)
        }
    }
}

// MARK: - Real files

/// Real clips made by ffmpeg, when it is installed: the synthetic bytes above are what matters, this checks the
/// parsers agree with a real muxer.
@Suite struct RealMediaFileTests {
    static let ffmpeg: String? = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        .split(separator: ":")
        .map { "\($0)/ffmpeg" }
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    struct Sample {
        var name: String
        var arguments: [String]
        var container: SniffedMedia.Container
        var mimeType: String
        /// Whether the container records a duration (the parsers then agree with ffprobe).
        var hasDuration: Bool
    }

    static let video = ["-f", "lavfi", "-i", "testsrc=duration=3:size=64x48:rate=10"]
    static let audio = ["-f", "lavfi", "-i", "sine=frequency=440:duration=3:sample_rate=48000"]
    static let both = video + audio

    static let samples: [Sample] = [
        Sample(
            name: "clip.mp4",
            arguments: both + ["-c:v", "libx264", "-c:a", "aac"],
            container: .mp4,
            mimeType: "video/mp4",
            hasDuration: true
        ),
        Sample(
            name: "faststart.mp4",
            arguments: both + ["-c:v", "libx264", "-c:a", "aac", "-movflags", "+faststart"],
            container: .mp4,
            mimeType: "video/mp4",
            hasDuration: true
        ),
        Sample(
            name: "fragmented.mp4",
            arguments: both + ["-c:v", "libx264", "-c:a", "aac", "-movflags", "frag_keyframe+default_base_moof"],
            container: .mp4,
            mimeType: "video/mp4",
            hasDuration: true
        ),
        Sample(
            name: "empty-moov.mp4",  // No duration until the fragments are read: not parsed, nil.
            arguments: both + ["-c:v", "libx264", "-c:a", "aac", "-movflags", "frag_keyframe+empty_moov"],
            container: .mp4,
            mimeType: "video/mp4",
            hasDuration: false
        ),
        Sample(
            name: "clip.mov",
            arguments: both + ["-c:v", "mpeg4"],
            container: .mp4,
            mimeType: "video/quicktime",
            hasDuration: true
        ),
        Sample(
            name: "clip.m4a",
            arguments: audio + ["-c:a", "aac"],
            container: .mp4,
            mimeType: "audio/mp4",
            hasDuration: true
        ),
        Sample(
            name: "clip.mkv",
            arguments: both + ["-c:v", "mpeg4", "-c:a", "flac"],
            container: .matroska,
            mimeType: "video/x-matroska",
            hasDuration: true
        ),
        Sample(
            name: "clip.webm",
            arguments: both + ["-c:v", "libvpx", "-deadline", "realtime", "-c:a", "libopus"],
            container: .webm,
            mimeType: "video/webm",
            hasDuration: true
        ),
        Sample(
            name: "clip.ts",
            arguments: both + ["-c:v", "mpeg4", "-c:a", "mp2"],
            container: .mpegTS,
            mimeType: "video/mp2t",
            hasDuration: false
        ),
        Sample(
            name: "clip.mp3",
            arguments: audio + ["-c:a", "libmp3lame"],
            container: .mp3,
            mimeType: "audio/mpeg",
            hasDuration: false
        ),
        Sample(
            name: "bare.mp3",
            arguments: audio + ["-c:a", "libmp3lame", "-write_xing", "0", "-id3v2_version", "0"],
            container: .mp3,
            mimeType: "audio/mpeg",
            hasDuration: false
        ),
        Sample(
            name: "clip.aac",
            arguments: audio + ["-c:a", "aac"],
            container: .aac,
            mimeType: "audio/aac",
            hasDuration: false
        ),
        Sample(name: "clip.flac", arguments: audio, container: .flac, mimeType: "audio/flac", hasDuration: true),
        Sample(
            name: "clip.ogg",
            arguments: audio + ["-c:a", "libvorbis"],
            container: .ogg,
            mimeType: "audio/ogg",
            hasDuration: false
        ),
        Sample(
            name: "clip.opus",
            arguments: audio + ["-c:a", "libopus"],
            container: .ogg,
            mimeType: "audio/ogg",
            hasDuration: false
        ),
        Sample(
            name: "clip.ogv",
            arguments: both + ["-c:v", "libtheora", "-c:a", "libvorbis"],
            container: .ogg,
            mimeType: "video/ogg",
            hasDuration: false
        ),
        Sample(name: "clip.wav", arguments: audio, container: .wav, mimeType: "audio/wav", hasDuration: true),
        Sample(
            name: "clip.avi",
            arguments: both + ["-c:v", "mpeg4"],
            container: .avi,
            mimeType: "video/x-msvideo",
            hasDuration: false
        ),
        Sample(
            name: "index.m3u8",
            arguments: both + [
                "-c:v", "libx264", "-c:a", "aac", "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod",
            ],
            container: .hls,
            mimeType: "application/x-mpegURL",
            hasDuration: true
        ),
        Sample(
            name: "frame.jpg",
            arguments: video + ["-frames:v", "1"],
            container: .jpeg,
            mimeType: "image/jpeg",
            hasDuration: false
        ),
        Sample(
            name: "frame.png",
            arguments: video + ["-frames:v", "1"],
            container: .png,
            mimeType: "image/png",
            hasDuration: false
        ),
        Sample(
            name: "frames.gif",
            arguments: video + ["-frames:v", "3"],
            container: .gif,
            mimeType: "image/gif",
            hasDuration: false
        ),
        Sample(
            name: "frame.webp",
            arguments: video + ["-frames:v", "1"],
            container: .webp,
            mimeType: "image/webp",
            hasDuration: false
        ),
    ]

    @Test(.enabled(if: ffmpeg != nil)) func clipsMadeByFFmpeg() async throws {
        let ffmpeg = try #require(Self.ffmpeg)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ffmpeg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for sample in Self.samples {
            let path = directory.appendingPathComponent(sample.name).path
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ffmpeg)
            process.arguments = ["-hide_banner", "-loglevel", "error", "-y"] + sample.arguments + [path]
            try process.run()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "ffmpeg failed for \(sample.name)")

            let reader = try FileByteReader(path: path)
            let prefix = try await reader.read(0..<UInt64(MediaSniffer.prefixLength))
            let sniffed = MediaSniffer.sniff(prefix)
            #expect(sniffed?.container == sample.container, "\(sample.name)")
            #expect(sniffed?.mimeType == sample.mimeType, "\(sample.name)")
            let seconds = try await MediaDuration.seconds(of: sample.container, reader: reader)
            if sample.hasDuration {
                let expected = Self.probedDuration(path) ?? 3
                #expect(abs((seconds ?? 0) - expected) < 0.02, "\(sample.name): \(String(describing: seconds))")
            } else {
                #expect(seconds == nil, "\(sample.name)")
            }
        }
    }
    /// The container duration ffprobe reports, when ffprobe is installed next to ffmpeg.
    static func probedDuration(_ path: String) -> Double? {
        guard let ffmpeg else { return nil }
        let ffprobe = URL(fileURLWithPath: ffmpeg).deletingLastPathComponent().appendingPathComponent("ffprobe")
        guard FileManager.default.isExecutableFile(atPath: ffprobe.path) else { return nil }
        let process = Process()
        let output = Pipe()
        process.executableURL = ffprobe
        process.arguments = ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path]
        process.standardOutput = output
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Double(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
