/// What a Cast device plays without help: codecs, their limits and containers. It decides whether a file is
/// served as is, remuxed or transcoded (see ``PlaybackPlan``).
///
/// The table, from Google's published supported-media list and the models' specifications (conservative: a
/// device left out of a row gets transcoded content that it would maybe have played):
///
/// | model (`md` in the device's TXT record) | video | largest picture |
/// |---|---|---|
/// | every video device | H.264 (8-bit 4:2:0, level ≤ 4.1), VP8 | 1920×1080 |
/// | Chromecast Ultra | + HEVC (Main, Main 10), VP9, H.264 level ≤ 5.1 | 3840×2160 |
/// | Chromecast with Google TV, Google TV Streamer | + HEVC, VP9, AV1, H.264 level ≤ 5.1 | 3840×2160 |
/// | Chromecast HD (Google TV) | + HEVC, VP9, AV1 | 1920×1080 |
/// | Google Nest Hub, Nest Hub Max | + VP9 | 1920×1080 |
/// | speakers and groups (no `video_out` capability) | none: the video is left out | — |
///
/// Audio everywhere: AAC (LC, HE; at most 2 channels), MP3, Opus, Vorbis, FLAC, WAV (PCM). AC-3, E-AC-3, DTS and
/// TrueHD are transcoded to AAC stereo (passthrough depends on the TV behind the device).
/// Containers: MP4/M4A/MOV, WebM (Matroska holding only WebM codecs), MP3, FLAC, WAV, Ogg, ADTS AAC and HLS.
public struct DeviceMediaSupport: Sendable, Hashable {
    /// Whether the device shows video; speakers do not.
    public var playsVideo: Bool
    /// Video codecs, by ffmpeg's names (`h264`, `vp8`, `hevc`, `vp9`, `av1`).
    public var videoCodecs: Set<String>
    /// The highest H.264 level, as ffmpeg numbers it (41 = 4.1).
    public var maximumH264Level: Int
    /// The largest picture's long side, in pixels (either orientation).
    public var maximumLongSide: Int
    /// The largest picture's short side, in pixels.
    public var maximumShortSide: Int
    /// Audio codecs, by ffmpeg's names.
    public var audioCodecs: Set<String>
    /// The most audio channels played as is.
    public var maximumAudioChannels: Int

    /// Describes what a device plays; the defaults suit a 1080p Chromecast.
    public init(
        playsVideo: Bool = true,
        videoCodecs: Set<String> = ["h264", "vp8"],
        maximumH264Level: Int = 41,
        maximumLongSide: Int = 1920,
        maximumShortSide: Int = 1080,
        audioCodecs: Set<String> = Self.audioEverywhere,
        maximumAudioChannels: Int = 2
    ) {
        self.playsVideo = playsVideo
        self.videoCodecs = videoCodecs
        self.maximumH264Level = maximumH264Level
        self.maximumLongSide = maximumLongSide
        self.maximumShortSide = maximumShortSide
        self.audioCodecs = audioCodecs
        self.maximumAudioChannels = maximumAudioChannels
    }

    /// Audio every Cast device decodes.
    public static let audioEverywhere: Set<String> = [
        "aac", "mp3", "opus", "vorbis", "flac", "pcm_s16le", "pcm_s24le", "pcm_u8", "pcm_f32le",
    ]

    /// The support of a device, from its model name and whether it has the `video_out` capability.
    public static func forModel(_ modelName: String?, playsVideo: Bool) -> DeviceMediaSupport {
        guard playsVideo else { return DeviceMediaSupport(playsVideo: false, videoCodecs: []) }
        let model = (modelName ?? "").lowercased()
        var support = DeviceMediaSupport()
        if model.contains("ultra") || model.contains("google tv") {
            support.videoCodecs.formUnion(["hevc", "vp9"])
            support.maximumH264Level = 51
            (support.maximumLongSide, support.maximumShortSide) = (3840, 2160)
        }
        if model.contains("google tv") || model == "chromecast hd" {
            support.videoCodecs.insert("av1")
        }
        if model.contains("nest hub") { support.videoCodecs.insert("vp9") }
        return support
    }

    /// Why the device cannot play `stream` as is, or nil when it can.
    func problem(with stream: MediaProbe.Stream) -> String? {
        switch stream.kind {
        case .video:
            guard videoCodecs.contains(stream.codec) else { return "\(stream.codec) video" }
            if stream.codec == "h264" {
                if let format = stream.pixelFormat, !["yuv420p", "yuvj420p"].contains(format) {
                    return "H.264 in \(format)"
                }
                if let level = stream.level, level > maximumH264Level {
                    return "H.264 level \(Double(level) / 10)"
                }
            }
            if let width = stream.width, let height = stream.height,
                max(width, height) > maximumLongSide || min(width, height) > maximumShortSide
            {
                return "\(width)×\(height) video"
            }
            return nil
        case .audio:
            guard audioCodecs.contains(stream.codec) else { return "\(stream.codec) audio" }
            if let channels = stream.channels, channels > maximumAudioChannels {
                return "\(channels)-channel audio"
            }
            return nil
        case .subtitle, .other:
            return nil
        }
    }
}
