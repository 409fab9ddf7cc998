/// What the first bytes of a file say it is.
///
/// File extensions lie (a `.mp4` that is Matroska, a `.mp3` that is AAC), and a Cast device rejects media whose
/// declared content type does not match, so the content's own signature decides whenever it says something.
public struct SniffedMedia: Sendable, Hashable {
    /// The container (or file format) recognised.
    public enum Container: String, Sendable, Hashable, CaseIterable {
        /// ISO base media: MP4, M4A, M4V, MOV (QuickTime), 3GP.
        case mp4
        /// Matroska (`.mkv`, `.mka`).
        case matroska
        /// WebM, the Matroska subset browsers and Cast devices play.
        case webm
        /// MPEG transport stream, including 192-byte-packet M2TS.
        case mpegTS
        /// MPEG audio (MP3, and layers I and II).
        case mp3
        /// Raw AAC in ADTS frames.
        case aac
        /// Native FLAC.
        case flac
        /// Ogg (Opus, Vorbis, FLAC, Speex, Theora).
        case ogg
        /// WAVE, including RF64 and BW64.
        case wav
        /// AVI.
        case avi
        /// An HLS playlist (master or media): the stream is cast as one URL.
        case hls
        /// A DASH manifest.
        case dash
        /// A list of files (`.m3u` without HLS tags, `.pls`), not castable as such: see ``PlaylistFile``.
        case playlist
        /// WebVTT subtitles.
        case webVTT
        /// SubRip subtitles.
        case subRip
        /// JPEG image.
        case jpeg
        /// PNG image.
        case png
        /// GIF image.
        case gif
        /// WebP image.
        case webp
        /// HEIF/HEIC or AVIF image.
        case heif

        /// Whether this is audio or video a media player plays (streaming manifests included).
        public var isMedia: Bool {
            switch self {
            case .mp4, .matroska, .webm, .mpegTS, .mp3, .aac, .flac, .ogg, .wav, .avi, .hls, .dash: true
            case .playlist, .webVTT, .subRip, .jpeg, .png, .gif, .webp, .heif: false
            }
        }
    }

    /// The container recognised.
    public var container: Container
    /// The content type to serve and to put in a LOAD request.
    public var mimeType: String
    /// The codec, when the first bytes name it ("opus", "vorbis", "theora", "flac", "speex", "mp3", "aac").
    public var codec: String?

    /// Whether this is audio or video (see ``Container/isMedia``); images and subtitles are not.
    public var isMedia: Bool { container.isMedia }

    /// Creates a result.
    public init(container: Container, mimeType: String, codec: String? = nil) {
        self.container = container
        self.mimeType = mimeType
        self.codec = codec
    }
}

/// Recognises media files from their first bytes, and names content types from file extensions.
///
/// Pure and allocation-light: safe to call on any bytes, including hostile ones.
public enum MediaSniffer {
    /// How many leading bytes ``sniff(_:)`` looks at; reading more gains nothing.
    public static let prefixLength = 4096

    /// Identifies the container from the first bytes of a file (up to ``prefixLength``; more are ignored).
    ///
    /// Returns nil when nothing is recognised; the caller then falls back to ``mimeType(forExtension:)``.
    public static func sniff(_ prefix: [UInt8]) -> SniffedMedia? {
        let bytes = prefix.count > prefixLength ? Array(prefix[0..<prefixLength]) : prefix
        // UTF-16 text first: its byte-order mark FF FE would otherwise pass for an MPEG audio frame header.
        if let text = utf16TextAsUTF8(bytes), let media = sniffText(text) { return media }
        return sniffBinary(bytes, allowingID3: true) ?? sniffText(bytes)
    }

    /// The content type for a file extension (with or without the dot, any case), or nil when unknown.
    public static func mimeType(forExtension fileExtension: String) -> String? {
        var key = fileExtension.lowercased()
        if key.hasPrefix(".") { key.removeFirst() }
        return extensionTypes[key]
    }

    /// The content type of a URL by its path's extension (query and fragment ignored), or nil when unknown.
    public static func mimeType(forURL url: String) -> String? {
        let path = url.split(separator: "?").first.map(String.init) ?? url
        let file = path.split(separator: "#").first?.split(separator: "/").last.map(String.init) ?? path
        guard let dot = file.lastIndex(of: ".") else { return nil }
        return mimeType(forExtension: String(file[file.index(after: dot)...]))
    }

    private static let extensionTypes: [String: String] = [
        "mp4": "video/mp4", "m4v": "video/mp4", "m4a": "audio/mp4", "m4b": "audio/mp4", "mov": "video/quicktime",
        "3gp": "video/mp4", "mkv": "video/x-matroska", "mka": "audio/x-matroska", "webm": "video/webm",
        "weba": "audio/webm", "ts": "video/mp2t", "m2ts": "video/mp2t", "mts": "video/mp2t", "mp3": "audio/mpeg",
        "aac": "audio/aac", "flac": "audio/flac", "ogg": "audio/ogg", "oga": "audio/ogg", "ogv": "video/ogg",
        "opus": "audio/ogg", "wav": "audio/wav", "avi": "video/x-msvideo", "m3u8": "application/x-mpegURL",
        "m3u": "audio/x-mpegurl", "pls": "audio/x-scpls", "mpd": "application/dash+xml", "vtt": "text/vtt",
        "srt": "application/x-subrip", "ass": "text/x-ssa", "ssa": "text/x-ssa", "jpg": "image/jpeg",
        "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp", "bmp": "image/bmp",
        "avif": "image/avif", "heic": "image/heic", "heif": "image/heif",
    ]

    // MARK: - Binary signatures

    private static func sniffBinary(_ bytes: [UInt8], allowingID3: Bool) -> SniffedMedia? {
        if let media = sniffISOBaseMedia(bytes) { return media }
        if bytes.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return sniffMatroska(bytes) }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            return SniffedMedia(container: .png, mimeType: "image/png")
        }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return SniffedMedia(container: .jpeg, mimeType: "image/jpeg") }
        if bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8)) {
            return SniffedMedia(container: .gif, mimeType: "image/gif")
        }
        if let media = sniffRIFF(bytes) { return media }
        if bytes.starts(with: Array("fLaC".utf8)) {
            return SniffedMedia(container: .flac, mimeType: "audio/flac", codec: "flac")
        }
        if bytes.starts(with: Array("OggS".utf8)) { return sniffOgg(bytes) }
        if allowingID3, let tagLength = id3TagLength(bytes) {
            // An ID3 tag usually precedes MP3, but also ADTS AAC and (rarely) FLAC: look behind it when we can.
            if tagLength < bytes.count, let inner = sniffBinary(Array(bytes[tagLength...]), allowingID3: false),
                inner.container == .aac || inner.container == .flac || inner.container == .mp3
            {
                return inner
            }
            return SniffedMedia(container: .mp3, mimeType: "audio/mpeg", codec: "mp3")
        }
        if isTransportStream(bytes) { return SniffedMedia(container: .mpegTS, mimeType: "video/mp2t") }
        if let length = adtsFrameLength(bytes, at: 0),
            length + 7 > bytes.count || adtsFrameLength(bytes, at: length) != nil
        {
            return SniffedMedia(container: .aac, mimeType: "audio/aac", codec: "aac")
        }
        if let first = mpegAudioFrame(bytes, at: 0) {
            // A second frame must follow when the prefix reaches it; it must always for FF FE, which is also
            // the byte-order mark of UTF-16 text.
            let next = first.length
            let unconfirmed = next + 4 > bytes.count && !bytes.starts(with: [0xFF, 0xFE])
            if unconfirmed
                || mpegAudioFrame(bytes, at: next).map({ $0.version == first.version && $0.layer == first.layer })
                    == true
            {
                return SniffedMedia(container: .mp3, mimeType: "audio/mpeg", codec: first.layer == 1 ? "mp3" : nil)
            }
        }
        return nil
    }

    /// `ftyp` at offset 4 names the brand; old QuickTime files start directly with another atom.
    private static func sniffISOBaseMedia(_ bytes: [UInt8]) -> SniffedMedia? {
        guard bytes.count >= 8 else { return nil }
        let type = String(decoding: bytes[4..<8], as: UTF8.self)
        let size = bytes.sniffedUInt32(at: 0) ?? 0
        if type == "ftyp" {
            guard bytes.count >= 12 else { return SniffedMedia(container: .mp4, mimeType: "video/mp4") }
            let brand = String(decoding: bytes[8..<12], as: UTF8.self)
            switch brand {
            case "M4A ", "M4B ", "M4P ", "F4A ", "F4B ": return SniffedMedia(container: .mp4, mimeType: "audio/mp4")
            case "qt  ": return SniffedMedia(container: .mp4, mimeType: "video/quicktime")
            case "avif", "avis": return SniffedMedia(container: .heif, mimeType: "image/avif")
            case "heic", "heix", "heim", "heis": return SniffedMedia(container: .heif, mimeType: "image/heic")
            case "mif1", "msf1": return SniffedMedia(container: .heif, mimeType: "image/heif")
            default: return SniffedMedia(container: .mp4, mimeType: "video/mp4")
            }
        }
        let quickTimeAtoms: Set<String> = ["moov", "mdat", "wide", "free", "skip", "pnot"]
        if quickTimeAtoms.contains(type), size == 0 || size == 1 || size >= 8 {
            return SniffedMedia(container: .mp4, mimeType: "video/quicktime")
        }
        return nil
    }

    /// The EBML header's DocType tells WebM from Matroska; an absent DocType means Matroska.
    private static func sniffMatroska(_ bytes: [UInt8]) -> SniffedMedia? {
        let matroska = SniffedMedia(container: .matroska, mimeType: "video/x-matroska")
        guard let header = EBML.elementHeader(bytes, at: 0) else { return matroska }
        var position = header.length
        let end = header.size.map { position + min(bytes.count - position, Int(clamping: $0)) } ?? bytes.count
        while position < end, let child = EBML.elementHeader(bytes, at: position), let size = child.size {
            let start = position + child.length
            guard start <= end, size <= UInt64(end - start) else { break }
            if child.id == 0x4282 {
                let docType = String(decoding: bytes[start..<start + Int(size)].filter { $0 != 0 }, as: UTF8.self)
                switch docType.lowercased() {
                case "webm": return SniffedMedia(container: .webm, mimeType: "video/webm")
                default: return matroska
                }
            }
            position = start + Int(size)
        }
        return matroska
    }

    private static func sniffRIFF(_ bytes: [UInt8]) -> SniffedMedia? {
        guard bytes.count >= 12 else { return nil }
        let magic = String(decoding: bytes[0..<4], as: UTF8.self)
        let form = String(decoding: bytes[8..<12], as: UTF8.self)
        switch (magic, form) {
        case ("RIFF", "WAVE"), ("RF64", "WAVE"), ("BW64", "WAVE"):
            return SniffedMedia(container: .wav, mimeType: "audio/wav")
        case ("RIFF", "AVI "): return SniffedMedia(container: .avi, mimeType: "video/x-msvideo")
        case ("RIFF", "WEBP"): return SniffedMedia(container: .webp, mimeType: "image/webp")
        default: return nil
        }
    }

    /// Walks the beginning-of-stream pages: the first packet of each logical stream names its codec, and an
    /// Ogg file with any video stream (Theora, possibly after a Skeleton stream) is video.
    private static func sniffOgg(_ bytes: [UInt8]) -> SniffedMedia {
        var audioCodec: String?
        var videoCodec: String?
        var page = 0
        for _ in 0..<16 {
            guard page + 27 <= bytes.count, bytes[page..<page + 4].elementsEqual("OggS".utf8) else { break }
            let isBeginning = bytes[page + 5] & 0x02 != 0
            let segmentCount = Int(bytes[page + 26])
            let tableEnd = page + 27 + segmentCount
            guard isBeginning, tableEnd <= bytes.count else { break }
            let packet = bytes[tableEnd...]
            func has(_ signature: [UInt8]) -> Bool { packet.starts(with: signature) }
            if has(Array("OpusHead".utf8)) {
                audioCodec = audioCodec ?? "opus"
            } else if has([0x01] + Array("vorbis".utf8)) {
                audioCodec = audioCodec ?? "vorbis"
            } else if has([0x7F] + Array("FLAC".utf8)) {
                audioCodec = audioCodec ?? "flac"
            } else if has(Array("Speex   ".utf8)) {
                audioCodec = audioCodec ?? "speex"
            } else if has([0x80] + Array("theora".utf8)) {
                videoCodec = videoCodec ?? "theora"
            }
            let bodyLength = bytes[page + 27..<tableEnd].reduce(0) { $0 + Int($1) }
            page = tableEnd + bodyLength
        }
        if let videoCodec { return SniffedMedia(container: .ogg, mimeType: "video/ogg", codec: videoCodec) }
        return SniffedMedia(container: .ogg, mimeType: "audio/ogg", codec: audioCodec)
    }

    /// The whole ID3v2 tag's length (header, body and optional footer), when `bytes` starts with one.
    static func id3TagLength(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 10, bytes.starts(with: Array("ID3".utf8)), bytes[3] != 0xFF, bytes[4] != 0xFF,
            bytes[6..<10].allSatisfy({ $0 < 0x80 })
        else { return nil }
        let size = bytes[6..<10].reduce(0) { $0 << 7 | Int($1) }
        let footer = bytes[5] & 0x10 != 0 ? 10 : 0
        return 10 + size + footer
    }

    /// Sync bytes every 188 bytes (TS) or every 192 bytes after a 4-byte timestamp (M2TS), checked as far as the
    /// prefix goes, at least twice.
    private static func isTransportStream(_ bytes: [UInt8]) -> Bool {
        func synced(first: Int, stride step: Int) -> Bool {
            guard first + step < bytes.count else { return false }
            return stride(from: first, to: min(bytes.count, first + 3 * step), by: step).allSatisfy {
                bytes[$0] == 0x47
            }
        }
        return synced(first: 0, stride: 188) || synced(first: 4, stride: 192)
    }

    /// The frame length of the ADTS header at `offset`, if there is a plausible one.
    private static func adtsFrameLength(_ bytes: [UInt8], at offset: Int) -> Int? {
        guard offset >= 0, offset + 7 <= bytes.count, bytes[offset] == 0xFF, bytes[offset + 1] & 0xF6 == 0xF0 else {
            return nil
        }
        let frequencyIndex = (bytes[offset + 2] >> 2) & 0x0F
        let length = Int(bytes[offset + 3] & 0x03) << 11 | Int(bytes[offset + 4]) << 3 | Int(bytes[offset + 5] >> 5)
        guard frequencyIndex < 13, length >= 7 else { return nil }
        return length
    }

    private struct MPEGAudioFrame {
        /// 0: MPEG 2.5, 2: MPEG 2, 3: MPEG 1.
        var version: UInt8
        /// 1: layer III, 2: layer II, 3: layer I.
        var layer: UInt8
        var length: Int
    }

    /// The MPEG audio frame header at `offset`, if it is valid (no reserved or free-format values).
    private static func mpegAudioFrame(_ bytes: [UInt8], at offset: Int) -> MPEGAudioFrame? {
        guard offset >= 0, offset + 4 <= bytes.count, bytes[offset] == 0xFF, bytes[offset + 1] & 0xE0 == 0xE0 else {
            return nil
        }
        let version = (bytes[offset + 1] >> 3) & 0x03
        let layer = (bytes[offset + 1] >> 1) & 0x03
        let bitrateIndex = Int(bytes[offset + 2] >> 4)
        let rateIndex = Int((bytes[offset + 2] >> 2) & 0x03)
        let padding = Int((bytes[offset + 2] >> 1) & 0x01)
        guard version != 1, layer != 0, bitrateIndex != 0, bitrateIndex != 15, rateIndex != 3,
            bytes[offset + 3] & 0x03 != 2
        else { return nil }
        let isVersion1 = version == 3
        let table: [Int] =
            switch (isVersion1, layer) {
            case (true, 3): [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
            case (true, 2): [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
            case (true, _): [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
            case (false, 3): [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
            case (false, _): [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
            }
        let baseRate = [44_100, 48_000, 32_000][rateIndex]
        let sampleRate = version == 3 ? baseRate : version == 2 ? baseRate / 2 : baseRate / 4
        let bitrate = table[bitrateIndex] * 1000
        let length =
            switch layer {
            case 3: (12 * bitrate / sampleRate + padding) * 4
            case 1 where !isVersion1: 72 * bitrate / sampleRate + padding
            default: 144 * bitrate / sampleRate + padding
            }
        return MPEGAudioFrame(version: version, layer: layer, length: max(length, 4))
    }

    // MARK: - Text signatures

    /// Text with a UTF-16 byte-order mark, re-encoded as UTF-8 (with a UTF-8 byte-order mark).
    private static func utf16TextAsUTF8(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) else { return nil }
        let littleEndian = bytes[0] == 0xFF
        let units = stride(from: 0, to: bytes.count - 1, by: 2).map { index in
            littleEndian
                ? UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
                : UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
        }
        return Array(String(decoding: units, as: UTF16.self).utf8)
    }

    private static func sniffText(_ bytes: [UInt8]) -> SniffedMedia? {
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        let body = bytes[start...]
        if body.starts(with: "#EXTM3U".utf8) {
            if PlaylistFile.isHLSMediaPlaylist(bytes) {
                return SniffedMedia(container: .hls, mimeType: "application/x-mpegURL")
            }
            return SniffedMedia(container: .playlist, mimeType: "audio/x-mpegurl")
        }
        if body.count >= 10, String(decoding: body.prefix(10), as: UTF8.self).lowercased() == "[playlist]" {
            return SniffedMedia(container: .playlist, mimeType: "audio/x-scpls")
        }
        if body.starts(with: "WEBVTT".utf8) {
            let after = body.dropFirst(6).first
            if after == nil || [0x20, 0x09, 0x0A, 0x0D].contains(after) {
                return SniffedMedia(container: .webVTT, mimeType: "text/vtt")
            }
        }
        if body.first == UInt8(ascii: "<"), containsManifestElement(body) {
            return SniffedMedia(container: .dash, mimeType: "application/dash+xml")
        }
        if looksLikeSubRip(body) { return SniffedMedia(container: .subRip, mimeType: "application/x-subrip") }
        return nil
    }

    /// An `<MPD` element start anywhere in the XML prefix (after the declaration and comments).
    private static func containsManifestElement(_ body: ArraySlice<UInt8>) -> Bool {
        let marker = Array("<MPD".utf8)
        var index = body.startIndex
        while index + marker.count < body.endIndex {
            if body[index..<index + marker.count].elementsEqual(marker),
                [0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ">")].contains(body[index + marker.count])
            {
                return true
            }
            index += 1
        }
        return false
    }

    /// A cue number alone on the first line, then a `00:00:01,000 --> 00:00:02,000` timing line.
    private static func looksLikeSubRip(_ body: ArraySlice<UInt8>) -> Bool {
        let lines = body.prefix(256).split(separator: 0x0A, maxSplits: 2, omittingEmptySubsequences: false)
        guard lines.count >= 2 else { return false }
        let number = lines[0].filter { $0 != 0x0D && $0 != 0x20 }
        let timing = Array(lines[1])
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard !number.isEmpty, number.count <= 9, number.allSatisfy({ digits.contains($0) }),
            let first = timing.first, digits.contains(first)
        else { return false }
        return timing.indices.contains { timing[$0...].starts(with: "-->".utf8) }
    }
}

extension Array where Element == UInt8 {
    /// The big-endian `UInt32` at `offset`, or nil when fewer than four bytes remain.
    func sniffedUInt32(at offset: Int) -> UInt32? {
        guard offset >= 0, offset <= count - 4 else { return nil }
        return self[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// EBML (Matroska/WebM) element headers: variable-length ids and sizes.
enum EBML {
    /// An element's id (with its length marker, as the specification writes ids), its payload size (nil when
    /// "unknown", as live streams write it) and the length of the id and size together.
    struct ElementHeader: Hashable {
        var id: UInt32
        var size: UInt64?
        var length: Int
    }

    /// The element header at `offset`, or nil when the bytes there are not a complete, valid one.
    static func elementHeader(_ bytes: [UInt8], at offset: Int) -> ElementHeader? {
        guard offset >= 0, offset < bytes.count else { return nil }
        let idLength = bytes[offset].leadingZeroBitCount + 1
        guard idLength <= 4, offset + idLength < bytes.count else { return nil }
        let id = bytes[offset..<offset + idLength].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let sizeStart = offset + idLength
        let sizeLength = bytes[sizeStart].leadingZeroBitCount + 1
        guard sizeLength <= 8, sizeStart + sizeLength <= bytes.count else { return nil }
        var size = UInt64(bytes[sizeStart]) & (0xFF >> UInt64(sizeLength))
        for byte in bytes[sizeStart + 1..<sizeStart + sizeLength] { size = size << 8 | UInt64(byte) }
        let unknown: UInt64 = (1 << (7 * UInt64(sizeLength))) - 1
        return ElementHeader(id: id, size: size == unknown ? nil : size, length: idLength + sizeLength)
    }

    /// An unsigned integer payload (0 to 8 bytes, big-endian).
    static func unsignedInteger(_ payload: ArraySlice<UInt8>) -> UInt64? {
        guard payload.count <= 8 else { return nil }
        return payload.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A float payload (0, 4 or 8 bytes, big-endian).
    static func float(_ payload: ArraySlice<UInt8>) -> Double? {
        switch payload.count {
        case 0: return 0
        case 4: return Double(Float(bitPattern: payload.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }))
        case 8: return Double(bitPattern: payload.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        default: return nil
        }
    }
}
