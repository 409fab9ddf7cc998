// swift-cast — Apache-2.0

import CastMediaServer
import Dispatch

/// The parsers of files and requests the media server and `cast play` read: subtitles, playlists, media
/// containers (sniffing and durations), HLS playlists.
enum MediaServerFuzz {
    /// Every subtitle format; a conversion that succeeds must be WebVTT with one timing line per cue.
    static func subtitles(_ bytes: [UInt8]) {
        for format in SubtitleFormat.allCases {
            guard let converted = try? SubtitleConverter.webVTT(from: bytes, format: format) else { continue }
            precondition(converted.webVTT.hasPrefix("WEBVTT"), "converted subtitles lack the WEBVTT header")
            if format != .webVTT {
                let arrows = converted.webVTT.components(separatedBy: " --> ").count - 1
                precondition(arrows == converted.cueCount, "\(arrows) timing lines for \(converted.cueCount) cues")
            }
        }
    }

    /// The input as an `.m3u` and as a `.pls` playlist, and the HLS check.
    static func playlist(_ bytes: [UInt8]) {
        _ = try? PlaylistFile.entries(in: bytes, playlistPath: "/fuzz/list.m3u")
        _ = try? PlaylistFile.entries(in: bytes, playlistPath: "/fuzz/list.pls")
        _ = PlaylistFile.isHLSMediaPlaylist(bytes)
        if let playlist = try? HLSPlaylist.parse(String(decoding: bytes, as: UTF8.self)) {
            _ = playlist.duration
            _ = playlist.segment(at: 30)
        }
    }

    /// The first bytes sniffed, then the file read for its duration as every container it could be.
    static func mediaFile(_ bytes: [UInt8]) {
        _ = MediaSniffer.sniff(Array(bytes.prefix(MediaSniffer.prefixLength)))
        let done = DispatchSemaphore(value: 0)
        Task {
            // An in-memory reader never suspends: this finishes without waiting on anything else.
            for container in [SniffedMedia.Container.mp4, .matroska, .webm, .wav, .flac, .hls] {
                _ = try? await MediaDuration.seconds(of: container, reader: InMemoryByteReader(bytes))
            }
            done.signal()
        }
        done.wait()
    }
}

#if DEBUG || CAST_FUZZING
@testable import CastMediaServer

extension MediaServerFuzz {
    /// What a request line can carry: the path (tokens, traversal) and the `Range` header.
    static func request(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        if let segments = RequestPath.segments(of: String(lines[0])) {
            for segment in segments {
                precondition(segment != ".." && segment != "." && !segment.contains("/"), "unsafe segment \(segment)")
            }
        }
        let header = lines.count > 1 ? String(lines[1]) : String(lines[0])
        if let range = ByteRangeRequest(header: header) {
            for size: UInt64 in [0, 1, 1000, UInt64.max] {
                guard let part = range.resolve(size: size) else { continue }
                precondition(part.upperBound < size, "a range past the end")
            }
        }
    }
}
#endif
