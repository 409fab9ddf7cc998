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

/// A local file made ready for one device: served as is, or as HLS transcoded on demand, with the text subtitles
/// inside it served as WebVTT. Made by ``MediaServer/sharePlayable(file:device:mode:options:)``.
public struct PlayableMedia: Sendable {
    /// A text subtitle stream of the file, served as WebVTT.
    public struct Subtitles: Sendable {
        /// The subtitle stream in the file.
        public var stream: MediaProbe.Stream
        /// Where its WebVTT is served.
        public var media: SharedMedia
    }

    /// What to give the device: its URL goes in `MediaInformation.contentID`.
    public let media: SharedMedia
    /// The content type for `MediaInformation.contentType`.
    public var contentType: String { media.contentType }
    /// The probe, when ffprobe is installed (and `mode` is not `never`).
    public let probe: MediaProbe?
    /// The plan followed; nil when the file was not probed.
    public let plan: PlaybackPlan?
    /// The transcoder, when the file needs work.
    public let transcoder: HLSTranscoder?
    /// The file's own text subtitles (when ffmpeg is installed), in the file's order.
    public let subtitles: [Subtitles]

    /// The value for `MediaInformation.hlsSegmentFormat` when transcoded: MPEG-TS, audio only or with video.
    public var hlsSegmentFormat: String? {
        guard let plan, transcoder != nil else { return nil }
        return plan.video == .leaveOut ? "ts_aac" : "ts"
    }
}

extension MediaServer {
    /// Shares `file` so that `device` plays it: probed with ffprobe, served as is when it plays, otherwise
    /// remuxed or transcoded on demand as HLS (see ``PlaybackPlan`` and ``HLSTranscoder``).
    ///
    /// Without ffprobe the container decides: MP4, WebM, MP3, FLAC, WAV, Ogg and AAC are served as is; anything
    /// else (Matroska, AVI, MPEG-TS) throws, since sending it would fail on the device.
    ///
    /// - Throws: ``CastMediaServerError/Code/toolMissing`` naming what to install when the file needs a tool that
    ///   is not installed; ``CastMediaServerError/Code/unplayable`` or ``CastMediaServerError/Code/invalidMedia``
    ///   when nothing in it can play.
    public func sharePlayable(
        file: String,
        device: DeviceMediaSupport,
        mode: TranscodeMode = .auto,
        options: TranscodeOptions = TranscodeOptions()
    ) async throws -> PlayableMedia {
        let name = LocalFiles.lastComponent(of: file)
        guard mode != .never else {
            let media = try share(file: file)
            return PlayableMedia(media: media, probe: nil, plan: nil, transcoder: nil, subtitles: [])
        }
        let probe: MediaProbe
        do {
            probe = try await MediaProbe.probe(file: file, ffprobe: Self.sibling("ffprobe", of: options.ffmpeg))
        } catch let error as CastMediaServerError where error.code == .toolMissing {
            try Self.checkContainerWithoutProbe(file: file, name: name)
            let media = try share(file: file)
            return PlayableMedia(media: media, probe: nil, plan: nil, transcoder: nil, subtitles: [])
        }
        let plan = try PlaybackPlan.make(for: probe, device: device, mode: mode)
        var subtitles: [PlayableMedia.Subtitles] = []
        if ExternalTool.find(options.ffmpeg) != nil {
            for stream in probe.textSubtitles {
                let extraction = try EmbeddedSubtitles(file: file, stream: stream, ffmpeg: options.ffmpeg)
                let shared = share(
                    responder: extraction,
                    entry: EmbeddedSubtitles.entryName,
                    contentType: "text/vtt"
                )
                subtitles.append(PlayableMedia.Subtitles(stream: stream, media: shared))
            }
        }
        guard !plan.servesAsIs else {
            let media = try share(file: file, contentType: plan.contentType)
            return PlayableMedia(media: media, probe: probe, plan: plan, transcoder: nil, subtitles: subtitles)
        }
        let transcoder: HLSTranscoder
        do {
            transcoder = try HLSTranscoder(file: file, probe: probe, plan: plan, options: options)
        } catch let error as CastMediaServerError where error.code == .toolMissing {
            throw CastMediaServerError(
                .toolMissing,
                "\(name) has \(plan.reasons.joined(separator: ", ")), which the device does not play; "
                    + "converting it needs ffmpeg, which is not installed: install ffmpeg"
            )
        }
        let media = share(
            responder: transcoder,
            entry: HLSTranscoder.playlistName,
            contentType: "application/x-mpegURL"
        )
        return PlayableMedia(media: media, probe: probe, plan: plan, transcoder: transcoder, subtitles: subtitles)
    }

    /// ffprobe next to a given ffmpeg path, or by name.
    private static func sibling(_ tool: String, of ffmpeg: String) -> String {
        guard ffmpeg.contains("/") else { return tool }
        return LocalFiles.path(tool, in: LocalFiles.directory(of: ffmpeg))
    }

    private static func checkContainerWithoutProbe(file: String, name: String) throws {
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CastMediaServerError(.notShareable, "\(file): cannot be read")
        }
        defer { close(descriptor) }
        let prefix = OpenedFile.readPrefix(descriptor)
        let container = MediaSniffer.sniff(prefix)?.container
        let playable: Set<SniffedMedia.Container> = [.mp4, .webm, .mp3, .aac, .flac, .ogg, .wav, .hls]
        if let container, !playable.contains(container) {
            throw CastMediaServerError(
                .toolMissing,
                "\(name) is \(container) media, which Cast devices do not open; converting it needs ffmpeg "
                    + "(and ffprobe), which is not installed: install ffmpeg"
            )
        }
    }
}
