import CastMedia
import CastTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A local file made ready for a device: served (as is, or transcoded to HLS as it plays), described as the
/// `MediaInformation` a LOAD sends, with its subtitles as tracks.
public struct CastableFile: Sendable {
    /// What to load: the served URL, content type, duration, title and subtitle tracks.
    public var media: MediaInformation
    /// The track to enable on load (the first subtitles), or `nil` when there are none.
    public var activeTrackIDs: [Int]?
    /// The main item served, for ``MediaServer/diagnose(_:deviceAddress:detailedErrorCode:)`` when the device does not fetch it.
    public var served: SharedMedia
    /// The transcoder working on it, when the device cannot play the file as it is.
    public var transcoder: HLSTranscoder?
    /// The file's name, with the transcoding work done on it, for people.
    public var description: String
    /// Problems met converting subtitles (cues skipped), for people.
    public var warnings: [String]
}

extension MediaServer {
    /// Serves the local file at `path` so that `device` plays it, and describes it for LOAD.
    ///
    /// A local HLS playlist (`.m3u8`) is served with its folder, since its segments are relative to it. A given
    /// `contentType` serves the file as is; otherwise it is probed and served as is, remuxed or transcoded
    /// (``sharePlayable(file:device:mode:options:)``). Subtitles become WebVTT tracks: `extraSubtitles` first
    /// (enabled on load), then sidecar files next to it (`movie.en.srt`), then its own text subtitle streams.
    /// The title is `title`, else the file's name without its extension.
    ///
    /// - Throws: ``CastMediaServerError`` — ``CastMediaServerError/Code/notShareable`` for a missing or unreadable
    ///   file, ``CastMediaServerError/Code/toolMissing`` naming what to install, or
    ///   ``CastMediaServerError/Code/unplayable`` when nothing in it plays on the device.
    public func castableFile(
        _ path: String,
        device: DeviceMediaSupport,
        mode: TranscodeMode = .auto,
        contentType: String? = nil,
        title: String? = nil,
        extraSubtitles: [MediaTrack] = []
    ) async throws -> CastableFile {
        let name = LocalFiles.lastComponent(of: path)
        let title = title ?? LocalFiles.baseName(of: name)
        if path.lowercased().hasSuffix(".m3u8") {
            let folder = try share(folder: LocalFiles.directory(of: path))
            var media = MediaInformation(
                contentID: url(of: folder, relativePath: name),
                contentType: "application/x-mpegURL",
                streamType: .buffered
            )
            media.metadata = .generic(title: title)
            return CastableFile(
                media: media,
                activeTrackIDs: nil,
                served: folder,
                transcoder: nil,
                description: name,
                warnings: []
            )
        }
        var media: MediaInformation
        let served: SharedMedia
        var transcoder: HLSTranscoder?
        var description = name
        var embedded: [PlayableMedia.Subtitles] = []
        if let contentType {
            // The caller said what it is: served as is.
            served = try share(file: path, contentType: contentType)
            media = MediaInformation(contentID: served.url, contentType: served.contentType, streamType: .buffered)
        } else {
            let playable = try await sharePlayable(file: path, device: device, mode: mode)
            served = playable.media
            media = MediaInformation(contentID: served.url, contentType: playable.contentType, streamType: .buffered)
            media.duration = playable.probe?.duration
            media.hlsSegmentFormat = playable.hlsSegmentFormat
            embedded = playable.subtitles
            if let running = playable.transcoder, let plan = playable.plan {
                transcoder = running
                description = "\(name) (transcoding \(plan.work.rawValue): \(plan.reasons.joined(separator: ", ")))"
            }
        }
        media.metadata = .generic(title: title)
        var tracks = extraSubtitles
        var warnings: [String] = []
        for sidecar in SidecarSubtitle.find(forMediaAt: path) {
            // Sidecar files are an extra: one that cannot be used is skipped, but said, like a broken cue is.
            do {
                let (track, problems) = try subtitleTrack(
                    file: sidecar.path,
                    id: tracks.count + 1,
                    language: sidecar.language,
                    name: sidecar.title
                )
                tracks.append(track)
                warnings += problems
            } catch {
                warnings.append("\(error.message); these subtitles are skipped")
            }
        }
        for subtitles in embedded {
            tracks.append(
                .subtitles(
                    id: tracks.count + 1,
                    url: subtitles.media.url,
                    language: subtitles.stream.languageTag ?? "und",
                    name: subtitles.stream.title
                )
            )
        }
        if !tracks.isEmpty { media.tracks = tracks }
        return CastableFile(
            media: media,
            activeTrackIDs: tracks.isEmpty ? nil : [tracks[0].id],
            served: served,
            transcoder: transcoder,
            description: description,
            warnings: warnings
        )
    }

    /// A WebVTT track for a subtitle file (SubRip and SubStation Alpha converted), served from memory, with the
    /// problems met converting it (cues skipped).
    ///
    /// - Throws: ``CastMediaServerError/Code/invalidSubtitles`` for a file that is not `.vtt`, `.srt`, `.ass` or
    ///   `.ssa`, or cannot be read or converted.
    public func subtitleTrack(file: String, id: Int, language: String?, name: String?) throws(CastMediaServerError)
        -> (
            MediaTrack, warnings: [String]
        )
    {
        guard let format = SubtitleFormat(fileExtension: LocalFiles.fileExtension(of: file)) else {
            throw CastMediaServerError(.invalidSubtitles, "\(file): subtitles must be .vtt, .srt, .ass or .ssa")
        }
        guard let bytes = LocalFiles.read(file) else {
            throw CastMediaServerError(
                .invalidSubtitles,
                "\(file): cannot be read (\(String(cString: strerror(errno))))"
            )
        }
        let converted: ConvertedSubtitles
        do {
            converted = try SubtitleConverter.webVTT(from: bytes, format: format)
        } catch {
            throw CastMediaServerError(.invalidSubtitles, "\(file): \(error.message)", cause: error)
        }
        let fileName = LocalFiles.lastComponent(of: file)
        let base = LocalFiles.baseName(of: fileName)
        let shared = share(bytes: Array(converted.webVTT.utf8), name: base + ".vtt", contentType: "text/vtt")
        return (
            .subtitles(id: id, url: shared.url, language: language ?? "und", name: name),
            converted.problems.map { "\(fileName) \($0) (cue skipped)" }
        )
    }
}
