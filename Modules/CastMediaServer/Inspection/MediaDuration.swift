#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Random access to the bytes of a file or a remote resource, so a parser reads only what it needs (a box
/// header here, the movie header there) instead of the whole file: over HTTP each read is one range request.
public protocol ByteRangeReader: Sendable {
    /// The total size in bytes, when known (HTTP servers may not say).
    var size: UInt64? { get }

    /// The bytes in `range`; fewer only when the resource ends inside it (none when it ends before it).
    func read(_ range: Range<UInt64>) async throws -> [UInt8]
}

/// A ``ByteRangeReader`` over bytes already in memory: for tests, fuzzing, and prefixes already read.
public struct InMemoryByteReader: ByteRangeReader {
    /// The bytes read from.
    public var bytes: [UInt8]

    /// Creates a reader over `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The number of bytes held.
    public var size: UInt64? { UInt64(bytes.count) }

    /// The bytes in `range`, cut short at the end.
    public func read(_ range: Range<UInt64>) async throws -> [UInt8] {
        let count = UInt64(bytes.count)
        let lower = Int(min(range.lowerBound, count))
        let upper = Int(min(range.upperBound, count))
        return Array(bytes[lower..<upper])
    }
}

/// A ``ByteRangeReader`` over a local regular file, with positional reads (`pread`), so concurrent reads
/// never race on a shared offset. Reads block the calling thread; files are local, so that is brief.
public struct FileByteReader: ByteRangeReader {
    /// The descriptor, closed when the last copy of the reader goes away.
    private final class Descriptor: Sendable {
        let value: Int32
        init(_ value: Int32) { self.value = value }
        deinit { close(value) }
    }

    private let descriptor: Descriptor
    /// The path opened.
    public let path: String
    /// The file's size when it was opened; reads stop there even if the file grows.
    public let size: UInt64?

    /// Opens `path` for reading.
    ///
    /// - Throws: ``CastMediaServerError/Code/notShareable`` when it cannot be opened or is not a regular file.
    public init(path: String) throws {
        let value = open(path, O_RDONLY | O_CLOEXEC)
        guard value >= 0 else {
            throw CastMediaServerError(.notShareable, "cannot open \(path): \(Self.errorText(errno))")
        }
        let descriptor = Descriptor(value)
        var info = stat()
        guard fstat(value, &info) == 0 else {
            throw CastMediaServerError(.notShareable, "cannot read \(path): \(Self.errorText(errno))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw CastMediaServerError(.notShareable, "\(path) is not a regular file")
        }
        self.descriptor = descriptor
        self.path = path
        self.size = UInt64(max(0, info.st_size))
    }

    /// The bytes in `range`, cut short at the size the file had when opened.
    public func read(_ range: Range<UInt64>) async throws -> [UInt8] {
        let end = min(range.upperBound, size ?? 0)
        guard range.lowerBound < end else { return [] }
        let count = Int(end - range.lowerBound)
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let offset = off_t(range.lowerBound) + off_t(done)
            let result = buffer.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return pread(descriptor.value, base + done, count - done, offset)
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw CastMediaServerError(.notShareable, "cannot read \(path): \(Self.errorText(errno))")
            }
            if result == 0 { break }
            done += result
        }
        if done < count { buffer.removeLast(count - done) }
        return buffer
    }

    private static func errorText(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }
}

/// How long media plays, read from its container's own header: the value to put in a LOAD request when the
/// caller did not give one, and what a receiver emulator reports.
///
/// Every parser reads as little as it can through a ``ByteRangeReader`` and bounds what it reads, so hostile
/// or truncated files neither crash it, nor loop, nor make it allocate more than a few megabytes.
public enum MediaDuration {
    /// The duration in seconds, or nil when the container does not record one (live streams, MP3, MPEG-TS,
    /// Ogg, a file truncated before its index).
    ///
    /// - Throws: ``CastMediaServerError/Code/invalidMedia`` when the bytes are not that container at all or its
    ///   structure is impossible (a box smaller than its header, a movie header over 64 MiB, no EBML header, no
    ///   `#EXTM3U`); errors of `reader` as they are.
    public static func seconds(of container: SniffedMedia.Container, reader: some ByteRangeReader) async throws
        -> Double?
    {
        let seconds: Double? =
            switch container {
            case .mp4: try await MP4Duration.seconds(reader: reader)
            case .matroska, .webm: try await MatroskaDuration.seconds(reader: reader)
            case .hls: try await hlsSeconds(reader: reader)
            case .wav: try await WAVEDuration.seconds(reader: reader)
            case .flac: try await flacSeconds(reader: reader)
            default: nil
            }
        guard let seconds, seconds.isFinite, seconds > 0 else { return nil }
        return seconds
    }

    /// The largest HLS playlist read (a three-hour film in two-second segments is well under 1 MiB).
    static let maximumPlaylistSize: UInt64 = 16 << 20

    private static func hlsSeconds(reader: some ByteRangeReader) async throws -> Double? {
        if let size = reader.size, size > maximumPlaylistSize {
            throw CastMediaServerError(.invalidMedia, "HLS playlist is larger than \(maximumPlaylistSize >> 20) MiB")
        }
        let wanted = min(reader.size ?? .max, maximumPlaylistSize + 1)
        let bytes = try await reader.read(0..<wanted)
        guard bytes.count <= maximumPlaylistSize else {
            throw CastMediaServerError(.invalidMedia, "HLS playlist is larger than \(maximumPlaylistSize >> 20) MiB")
        }
        do {
            // Not `String(decoding:)`: repairing much invalid UTF-8 is slow, and legacy titles are Windows-1252.
            return try HLSPlaylist.parse(PlaylistFile.decodeUTF8OrLegacy(bytes[...])).duration
        } catch {
            throw CastMediaServerError(.invalidMedia, "not an HLS playlist", cause: error)
        }
    }

    /// STREAMINFO, the first metadata block after `fLaC` (behind an ID3 tag, sometimes): total samples / rate.
    private static func flacSeconds(reader: some ByteRangeReader) async throws -> Double? {
        var start: UInt64 = 0
        var bytes = try await reader.read(0..<64)
        if let tagLength = MediaSniffer.id3TagLength(bytes) {
            start = UInt64(tagLength)
            bytes = try await reader.read(start..<start + 64)
        }
        guard bytes.count >= 42, bytes.starts(with: Array("fLaC".utf8)), bytes[4] & 0x7F == 0 else {
            throw CastMediaServerError(.invalidMedia, "FLAC file without STREAMINFO")
        }
        let info = bytes[8...]
        let base = info.startIndex
        let sampleRate = UInt64(info[base + 10]) << 12 | UInt64(info[base + 11]) << 4 | UInt64(info[base + 12] >> 4)
        let samples = info[base + 14..<base + 18].reduce(UInt64(info[base + 13] & 0x0F)) { $0 << 8 | UInt64($1) }
        guard sampleRate > 0, samples > 0 else { return nil }
        return Double(samples) / Double(sampleRate)
    }
}

// MARK: - ISO base media (MP4, MOV)

enum MP4Duration {
    /// The largest `moov` read; real ones are kilobytes to a few megabytes (hours of tiny samples).
    static let maximumMovieBoxSize: UInt64 = 64 << 20
    /// Top-level boxes walked before giving up (each may cost a request over HTTP).
    static let maximumTopLevelBoxes = 4096

    /// Walks the top-level boxes by their headers only, so a `moov` after gigabytes of `mdat` costs one small
    /// read per box before it.
    static func seconds(reader: some ByteRangeReader) async throws -> Double? {
        let fileSize = reader.size
        var offset: UInt64 = 0
        for _ in 0..<maximumTopLevelBoxes {
            if let fileSize, offset >= fileSize { return nil }
            guard offset <= UInt64.max - 16 else { return nil }
            let header = try await reader.read(offset..<offset + 16)
            guard header.count >= 8 else { return nil }
            let size32 = UInt64(header.bigEndianUInt32(at: 0))
            let type = header.fourCC(at: 4)
            var headerLength: UInt64 = 8
            var boxSize: UInt64?
            switch size32 {
            case 0:
                boxSize = fileSize.map { $0 - offset }
            case 1:
                guard header.count >= 16 else {
                    throw CastMediaServerError(.invalidMedia, "MP4 box '\(type)' at \(offset) is truncated")
                }
                boxSize = header.bigEndianUInt64(at: 8)
                headerLength = 16
            default:
                boxSize = size32
            }
            if let boxSize, boxSize < headerLength {
                throw CastMediaServerError(
                    .invalidMedia,
                    "MP4 box '\(type)' at \(offset) claims \(boxSize) bytes, less than its header"
                )
            }
            if type == "moov" {
                let start = offset + headerLength
                let payloadSize = boxSize.map { $0 - headerLength }
                if let payloadSize, payloadSize > maximumMovieBoxSize {
                    throw CastMediaServerError(
                        .invalidMedia,
                        "MP4 movie header is \(payloadSize) bytes, over \(maximumMovieBoxSize >> 20) MiB"
                    )
                }
                let wanted = payloadSize ?? maximumMovieBoxSize + 1
                guard start <= UInt64.max - wanted else { return nil }
                let payload = try await reader.read(start..<start + wanted)
                guard UInt64(payload.count) <= maximumMovieBoxSize else {
                    throw CastMediaServerError(.invalidMedia, "MP4 movie header is over 64 MiB")
                }
                return movieSeconds(payload)
            }
            guard let boxSize else { return nil }
            let (next, overflow) = offset.addingReportingOverflow(boxSize)
            guard !overflow else { return nil }
            offset = next
        }
        return nil
    }

    /// `mvhd` duration / timescale; when that is unset (0 or all ones, as fragmented files write it), the
    /// `mehd` fragment duration, then the longest track's `mdhd`.
    static func movieSeconds(_ moov: [UInt8]) -> Double? {
        var movie: (timescale: UInt64, duration: UInt64)?
        var fragmentDuration: UInt64?
        var longestTrack: Double?
        for box in BoxSequence(bytes: moov, range: 0..<moov.count) {
            switch box.type {
            case "mvhd":
                movie = movie ?? headerTimes(moov, box.payload)
            case "mvex":
                for child in BoxSequence(bytes: moov, range: box.payload) where child.type == "mehd" {
                    fragmentDuration = fragmentDuration ?? fragmentHeaderDuration(moov, child.payload)
                }
            case "trak":
                for media in BoxSequence(bytes: moov, range: box.payload) where media.type == "mdia" {
                    for header in BoxSequence(bytes: moov, range: media.payload) where header.type == "mdhd" {
                        guard let times = headerTimes(moov, header.payload), times.timescale > 0,
                            isSet(times.duration)
                        else { continue }
                        let seconds = Double(times.duration) / Double(times.timescale)
                        longestTrack = max(longestTrack ?? 0, seconds)
                    }
                }
            default:
                continue
            }
        }
        if let movie, movie.timescale > 0 {
            if isSet(movie.duration) { return Double(movie.duration) / Double(movie.timescale) }
            if let fragmentDuration, isSet(fragmentDuration) {
                return Double(fragmentDuration) / Double(movie.timescale)
            }
        }
        return longestTrack
    }

    /// 0 and all ones (32 or 64 bits) mean "unknown".
    private static func isSet(_ duration: UInt64) -> Bool {
        duration != 0 && duration != UInt64(UInt32.max) && duration != .max
    }

    /// Timescale and duration of a `mvhd` or `mdhd` (same layout up to there): version 0 has 32-bit times,
    /// version 1 64-bit ones.
    private static func headerTimes(_ bytes: [UInt8], _ payload: Range<Int>) -> (timescale: UInt64, duration: UInt64)? {
        guard let version = payload.first.map({ bytes[$0] }) else { return nil }
        let base = payload.lowerBound + 4
        switch version {
        case 0:
            guard payload.count >= 20 else { return nil }
            return (UInt64(bytes.bigEndianUInt32(at: base + 8)), UInt64(bytes.bigEndianUInt32(at: base + 12)))
        case 1:
            guard payload.count >= 32 else { return nil }
            return (UInt64(bytes.bigEndianUInt32(at: base + 16)), bytes.bigEndianUInt64(at: base + 20))
        default:
            return nil
        }
    }

    private static func fragmentHeaderDuration(_ bytes: [UInt8], _ payload: Range<Int>) -> UInt64? {
        guard let version = payload.first.map({ bytes[$0] }) else { return nil }
        let base = payload.lowerBound + 4
        switch version {
        case 0 where payload.count >= 8: return UInt64(bytes.bigEndianUInt32(at: base))
        case 1 where payload.count >= 12: return bytes.bigEndianUInt64(at: base)
        default: return nil
        }
    }
}

/// The child boxes in `range` of `bytes`; stops at the first one that is too small or runs past the range.
struct BoxSequence: Sequence, IteratorProtocol {
    struct Box {
        var type: String
        var payload: Range<Int>
    }

    let bytes: [UInt8]
    let range: Range<Int>
    private var position: Int

    init(bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        self.range = range
        position = range.lowerBound
    }

    mutating func next() -> Box? {
        guard range.upperBound - position >= 8 else { return nil }
        let remaining = range.upperBound - position
        let size32 = Int(bytes.bigEndianUInt32(at: position))
        var headerLength = 8
        let size: Int
        switch size32 {
        case 0:
            size = remaining
        case 1:
            guard remaining >= 16 else { return nil }
            let large = bytes.bigEndianUInt64(at: position + 8)
            guard large <= UInt64(remaining) else { return nil }
            size = Int(large)
            headerLength = 16
        default:
            size = size32
        }
        guard size >= headerLength, size <= remaining else {
            position = range.upperBound
            return nil
        }
        let box = Box(type: bytes.fourCC(at: position + 4), payload: position + headerLength..<position + size)
        position += size
        return box
    }
}

// MARK: - Matroska and WebM

enum MatroskaDuration {
    /// The first read: the EBML header, SeekHead and Info fit in it for every file muxed the usual way.
    static let initialReadSize: UInt64 = 64 << 10
    /// The largest Info or SeekHead read (real ones are under a kilobyte).
    static let maximumMetadataSize: UInt64 = 1 << 20
    /// Segment children walked, and extra reads made, before giving up.
    static let maximumSegmentChildren = 1024
    static let maximumReads = 64

    static let ebmlID: UInt32 = 0x1A45_DFA3
    static let segmentID: UInt32 = 0x1853_8067
    static let seekHeadID: UInt32 = 0x114D_9B74
    static let infoID: UInt32 = 0x1549_A966
    static let clusterID: UInt32 = 0x1F43_B675

    /// Segment → Info → Duration × TimestampScale, walking the Segment's children by their sizes (so a large
    /// Cluster or Void before Info costs one header read), or following the SeekHead to Info.
    static func seconds(reader: some ByteRangeReader) async throws -> Double? {
        var source = try await WindowedSource(reader: reader, initialSize: initialReadSize, maximumReads: maximumReads)
        guard let ebml = try await source.header(at: 0), ebml.id == ebmlID, let ebmlSize = ebml.size else {
            throw CastMediaServerError(.invalidMedia, "Matroska file without an EBML header")
        }
        var offset = UInt64(ebml.length).addingReportingOverflow(ebmlSize)
        guard !offset.overflow else { return nil }

        // Top level: the Segment, after any Void.
        var segment: (start: UInt64, end: UInt64?)?
        for _ in 0..<8 {
            guard let header = try await source.header(at: offset.partialValue) else { return nil }
            let start = offset.partialValue + UInt64(header.length)
            if header.id == segmentID {
                segment = (start, header.size.flatMap { start.addingReportingOverflow($0).overflow ? nil : start + $0 })
                break
            }
            guard let size = header.size else { return nil }
            offset = start.addingReportingOverflow(size)
            guard !offset.overflow else { return nil }
        }
        guard let segment else { return nil }

        var position = segment.start
        var infoPosition: UInt64?
        for _ in 0..<maximumSegmentChildren {
            if let end = segment.end ?? reader.size, position >= end { break }
            guard let header = try await source.header(at: position) else { break }
            let payloadStart = position + UInt64(header.length)
            switch header.id {
            case infoID:
                guard let size = header.size, size <= maximumMetadataSize else { return nil }
                return info(try await source.bytes(at: payloadStart, count: size))
            case seekHeadID:
                if let size = header.size, size <= maximumMetadataSize {
                    let seeks = try await source.bytes(at: payloadStart, count: size)
                    infoPosition = infoPosition ?? seekPosition(of: infoID, in: seeks)
                }
            default:
                break
            }
            // Media data: Info comes before it in practice, so once the SeekHead has said where Info is, go there.
            if header.id == clusterID, infoPosition != nil { break }
            guard let size = header.size else { break }
            let next = payloadStart.addingReportingOverflow(size)
            guard !next.overflow else { break }
            position = next.partialValue
        }

        guard let infoPosition, case let (target, false) = segment.start.addingReportingOverflow(infoPosition),
            let header = try await source.header(at: target), header.id == infoID, let size = header.size,
            size <= maximumMetadataSize
        else { return nil }
        return info(try await source.bytes(at: target + UInt64(header.length), count: size))
    }

    /// Duration (float) × TimestampScale (default 1 ms) in an Info payload.
    private static func info(_ payload: [UInt8]) -> Double? {
        var scale: UInt64 = 1_000_000
        var duration: Double?
        var position = 0
        while let header = EBML.elementHeader(payload, at: position), let size = header.size,
            size <= UInt64(payload.count - position - header.length)
        {
            let start = position + header.length
            let value = payload[start..<start + Int(size)]
            switch header.id {
            case 0x2A_D7B1: scale = EBML.unsignedInteger(value) ?? scale
            case 0x4489: duration = EBML.float(value)
            default: break
            }
            position = start + Int(size)
        }
        guard let duration, duration.isFinite, duration > 0, scale > 0 else { return nil }
        return duration * Double(scale) / 1_000_000_000
    }

    /// The SeekPosition (relative to the Segment's payload) of the element `id` in a SeekHead payload.
    private static func seekPosition(of id: UInt32, in payload: [UInt8]) -> UInt64? {
        let wantedID = (0..<4).map { UInt8(truncatingIfNeeded: id >> (8 * (3 - $0))) }.drop { $0 == 0 }
        for seek in EBMLChildren(payload, in: 0..<payload.count) where seek.id == 0x4DBB {
            var seekID: ArraySlice<UInt8>?
            var position: UInt64?
            for field in EBMLChildren(payload, in: seek.payload) {
                switch field.id {
                case 0x53AB: seekID = payload[field.payload]
                case 0x53AC: position = EBML.unsignedInteger(payload[field.payload])
                default: break
                }
            }
            if let seekID, seekID.elementsEqual(wantedID), let position { return position }
        }
        return nil
    }
}

/// The known-size child elements in `range` of `bytes`; stops at the first unknown-size or overlong one.
struct EBMLChildren: Sequence, IteratorProtocol {
    let bytes: [UInt8]
    let range: Range<Int>
    private var position: Int

    init(_ bytes: [UInt8], in range: Range<Int>) {
        self.bytes = bytes
        self.range = range
        position = range.lowerBound
    }

    mutating func next() -> (id: UInt32, payload: Range<Int>)? {
        guard position < range.upperBound, let header = EBML.elementHeader(bytes, at: position),
            let size = header.size, header.length <= range.upperBound - position,
            size <= UInt64(range.upperBound - position - header.length)
        else { return nil }
        let start = position + header.length
        position = start + Int(size)
        return (header.id, start..<position)
    }
}

/// Reads through a ``ByteRangeReader`` keeping the first bytes and the last extra read, and counting reads.
struct WindowedSource<Reader: ByteRangeReader> {
    let reader: Reader
    private let head: [UInt8]
    private var window: [UInt8] = []
    private var windowStart: UInt64 = 0
    private var readsLeft: Int
    /// Where the resource ends, once a short read has shown it.
    private var knownEnd: UInt64?

    init(reader: Reader, initialSize: UInt64, maximumReads: Int) async throws {
        self.reader = reader
        head = try await reader.read(0..<min(initialSize, reader.size ?? initialSize))
        knownEnd = reader.size ?? (UInt64(head.count) < initialSize ? UInt64(head.count) : nil)
        readsLeft = maximumReads
    }

    /// The element header at `offset`, or nil at the end or when the bytes there are not one.
    mutating func header(at offset: UInt64) async throws -> EBML.ElementHeader? {
        let bytes = try await self.bytes(at: offset, count: 12)
        return EBML.elementHeader(bytes, at: 0)
    }

    /// The `count` bytes at `offset` (fewer at the end); `count` must be bounded by the caller.
    mutating func bytes(at offset: UInt64, count: UInt64) async throws -> [UInt8] {
        var end = offset.addingReportingOverflow(count).overflow ? UInt64.max : offset + count
        if let knownEnd { end = min(end, knownEnd) }
        guard offset < end else { return [] }
        if end <= UInt64(head.count) { return Array(head[Int(offset)..<Int(end)]) }
        if offset >= windowStart, end <= windowStart + UInt64(window.count) {
            return Array(window[Int(offset - windowStart)..<Int(end - windowStart)])
        }
        guard readsLeft > 0 else { return [] }
        readsLeft -= 1
        // Read a little ahead: the next element header usually follows closely.
        let ahead = max(end - offset, 4096)
        let readEnd = offset.addingReportingOverflow(ahead).overflow ? UInt64.max : offset + ahead
        window = try await reader.read(offset..<readEnd)
        windowStart = offset
        if UInt64(window.count) < readEnd - offset { knownEnd = offset + UInt64(window.count) }
        let available = min(end - offset, UInt64(window.count))
        return Array(window[0..<Int(available)])
    }
}

// MARK: - WAVE

enum WAVEDuration {
    static let maximumChunks = 1024

    /// `data` size / `fmt ` byte rate, walking chunk headers; RF64 takes the data size from `ds64`.
    static func seconds(reader: some ByteRangeReader) async throws -> Double? {
        let riff = try await reader.read(0..<12)
        guard riff.count == 12, ["RIFF", "RF64", "BW64"].contains(riff.fourCC(at: 0)), riff.fourCC(at: 8) == "WAVE"
        else {
            throw CastMediaServerError(.invalidMedia, "WAVE file without a RIFF header")
        }
        var offset: UInt64 = 12
        var byteRate: UInt64?
        var dataSize: UInt64?
        var largeDataSize: UInt64?
        for _ in 0..<maximumChunks {
            guard offset <= UInt64.max - 64 else { break }
            let header = try await reader.read(offset..<offset + 8)
            guard header.count == 8 else { break }
            let id = header.fourCC(at: 0)
            let size32 = UInt64(header.littleEndianUInt32(at: 4))
            let payloadStart = offset + 8
            var size = size32
            switch id {
            case "ds64":
                let payload = try await reader.read(payloadStart..<payloadStart + min(size32, 28))
                if payload.count >= 16 { largeDataSize = payload.littleEndianUInt64(at: 8) }
            case "fmt ":
                let payload = try await reader.read(payloadStart..<payloadStart + min(size32, 16))
                if payload.count >= 12 { byteRate = UInt64(payload.littleEndianUInt32(at: 8)) }
            case "data":
                if size32 == 0xFFFF_FFFF, let largeDataSize { size = largeDataSize }
                let available = reader.size.map { $0 > payloadStart ? $0 - payloadStart : 0 }
                if size == 0 || size == 0xFFFF_FFFF, let available { size = available }  // streamed, never patched
                dataSize = min(size, available ?? size)
            default:
                break
            }
            if let byteRate, let dataSize, byteRate > 0 { return Double(dataSize) / Double(byteRate) }
            let padded = size.addingReportingOverflow(size & 1)
            let next = payloadStart.addingReportingOverflow(padded.partialValue)
            guard !padded.overflow, !next.overflow else { break }
            offset = next.partialValue
            if let fileSize = reader.size, offset >= fileSize { break }
        }
        return nil
    }
}

// MARK: - HLS

/// An HLS playlist: a master playlist listing variant streams, or a media playlist listing segments.
///
/// Enough of RFC 8216 to know a stream's duration and which segment plays at a given time, which is what a
/// receiver emulator needs to fetch like a real device.
public struct HLSPlaylist: Sendable, Hashable {
    /// One media segment.
    public struct Segment: Sendable, Hashable {
        /// The segment's URI as written (often relative to the playlist's URL).
        public var uri: String
        /// Its `#EXTINF` duration in seconds.
        public var duration: Double

        /// Creates a segment.
        public init(uri: String, duration: Double) {
            self.uri = uri
            self.duration = duration
        }
    }

    /// Which of the two playlist kinds this is.
    public enum Kind: Sendable, Hashable {
        /// Variant streams (`#EXT-X-STREAM-INF` URIs, as written), in playlist order.
        case master(variants: [String])
        /// Segments in order; `isEnded` when the playlist is complete (`#EXT-X-ENDLIST` or
        /// `#EXT-X-PLAYLIST-TYPE:VOD`), otherwise it is live and grows.
        case media(segments: [Segment], isEnded: Bool, targetDuration: Double?)
    }

    /// Which kind, with its content.
    public var kind: Kind

    /// Creates a playlist.
    public init(kind: Kind) {
        self.kind = kind
    }

    /// Parses playlist text (LF or CRLF, optional byte-order mark).
    ///
    /// - Throws: ``CastMediaServerError/Code/invalidPlaylist`` when the text does not start with `#EXTM3U`.
    public static func parse(_ text: String) throws -> HLSPlaylist {
        guard PlaylistFile.startsWithExtendedM3UHeader(text) else {
            throw CastMediaServerError(.invalidPlaylist, "HLS playlist does not start with #EXTM3U")
        }
        let lines = PlaylistFile.playlistLines(text).map { PlaylistFile.trimmedLine($0) }.filter { !$0.isEmpty }
        var variants: [String] = []
        var segments: [Segment] = []
        var isEnded = false
        var targetDuration: Double?
        var pendingDuration: Double?
        var expectsVariant = false
        for line in lines.dropFirst() {
            if line.hasPrefix("#") {
                if let value = tagValue(line, "#EXTINF:") {
                    let number = value.prefix { $0 != "," }
                    pendingDuration = Double(trimmedNumber(number)).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } ?? 0
                } else if let value = tagValue(line, "#EXT-X-TARGETDURATION:") {
                    targetDuration = Double(trimmedNumber(value)).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
                } else if line.hasPrefix("#EXT-X-ENDLIST") {
                    isEnded = true
                } else if let value = tagValue(line, "#EXT-X-PLAYLIST-TYPE:"), trimmedNumber(value) == "VOD" {
                    isEnded = true
                } else if line.hasPrefix("#EXT-X-STREAM-INF") {
                    expectsVariant = true
                }
                continue
            }
            if expectsVariant {
                variants.append(String(line))
                expectsVariant = false
            } else {
                segments.append(Segment(uri: String(line), duration: pendingDuration ?? 0))
                pendingDuration = nil
            }
        }
        if !variants.isEmpty { return HLSPlaylist(kind: .master(variants: variants)) }
        return HLSPlaylist(kind: .media(segments: segments, isEnded: isEnded, targetDuration: targetDuration))
    }

    /// The total duration of a complete media playlist; nil for a live one (it grows) or a master playlist
    /// (each variant has its own).
    public var duration: Double? {
        guard case let .media(segments, true, _) = kind else { return nil }
        return segments.reduce(0) { $0 + $1.duration }
    }

    /// The segment playing at `seconds` from the start and when it starts, for a media playlist; nil past the
    /// end or for a master playlist. Negative times give the first segment.
    public func segment(at seconds: Double) -> (index: Int, startTime: Double)? {
        guard case let .media(segments, _, _) = kind, !seconds.isNaN else { return nil }
        var start = 0.0
        for (index, segment) in segments.enumerated() {
            if seconds < start + segment.duration { return (index, start) }
            start += segment.duration
        }
        return nil
    }

    private static func tagValue(_ line: Substring, _ tag: String) -> Substring? {
        line.hasPrefix(tag) ? line.dropFirst(tag.count) : nil
    }

    private static func trimmedNumber(_ text: Substring) -> Substring {
        PlaylistFile.trimmedLine(text)
    }
}

// MARK: - Byte helpers

extension Array where Element == UInt8 {
    /// Callers check bounds first; these read big- or little-endian integers at `offset`.
    func bigEndianUInt32(at offset: Int) -> UInt32 {
        self[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    func bigEndianUInt64(at offset: Int) -> UInt64 {
        self[offset..<offset + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }

    func littleEndianUInt32(at offset: Int) -> UInt32 {
        self[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    func littleEndianUInt64(at offset: Int) -> UInt64 {
        self[offset..<offset + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Four bytes as a box or chunk type ("moov", "fmt "); bytes that are not text come out as U+FFFD.
    func fourCC(at offset: Int) -> String {
        String(decoding: self[offset..<offset + 4], as: UTF8.self)
    }
}
