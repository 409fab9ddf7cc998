/// Whether `cast play` may change a file so the device plays it (`--transcode`).
public enum TranscodeMode: String, Sendable, CaseIterable {
    /// Serve as is what the device plays; remux, or transcode only the streams it does not (the default).
    case auto
    /// Re-encode audio and video whatever they are.
    case always
    /// Serve the file as it is, even when the device will probably not play it.
    case never
}

/// How a file reaches a device: served as is, or made into HLS with some streams copied and others re-encoded.
public struct PlaybackPlan: Sendable, Hashable {
    /// What happens to one stream.
    public enum Handling: String, Sendable, Hashable {
        /// Passed through untouched.
        case copy
        /// Re-encoded: H.264 (8-bit 4:2:0, level 4.1, at most 1080p) or AAC stereo.
        case transcode
        /// Left out (no such stream, or video for a speaker).
        case leaveOut
    }

    /// The work the plan needs, in the words `cast status` uses.
    public enum Work: String, Sendable, Hashable {
        /// Served as is, with ranges.
        case none
        /// Repackaged without re-encoding (the container was the problem).
        case remux
        /// Audio re-encoded, video copied.
        case audio
        /// Video re-encoded, audio copied.
        case video
        /// Both re-encoded.
        case audioAndVideo = "audio and video"
    }

    /// The stream index of the video played, when there is one.
    public var videoStream: Int?
    /// The stream index of the audio played, when there is one.
    public var audioStream: Int?
    /// What happens to the video.
    public var video: Handling
    /// What happens to the audio.
    public var audio: Handling
    /// Why the file cannot be served as is (`"ac3 audio"`, `"matroska container"`), empty when it can.
    public var reasons: [String]
    /// The content type to give the device for the file served as is (HLS needs no guess).
    public var contentType: String?

    /// What is re-encoded, in a word, for progress messages.
    public var work: Work {
        switch (video == .transcode, audio == .transcode) {
        case (true, true): return .audioAndVideo
        case (true, false): return .video
        case (false, true): return .audio
        case (false, false): return reasons.isEmpty ? .none : .remux
        }
    }

    /// Whether the file is served untouched (``Work/none``).
    public var servesAsIs: Bool { work == .none }

    /// The plan for a probed file on a device.
    public static func make(
        for probe: MediaProbe,
        device: DeviceMediaSupport,
        mode: TranscodeMode = .auto
    ) throws -> PlaybackPlan {
        let video = device.playsVideo ? probe.video : nil
        let audio = probe.audio
        guard video != nil || audio != nil else {
            throw CastMediaServerError(
                .unplayable,
                device.playsVideo ? "it has no audio or video" : "it has no audio, and the device plays only audio"
            )
        }
        var reasons: [String] = []
        if probe.video != nil, video == nil { reasons.append("video on a device without a screen") }
        let videoProblem = video.flatMap(device.problem(with:))
        let audioProblem = audio.flatMap(device.problem(with:))
        reasons += [videoProblem, audioProblem].compactMap { $0 }
        let container = Container(probe.formatNames)
        let contentType = container.contentType(video: video, audio: audio)
        if contentType == nil { reasons.append("\(probe.formatNames.first ?? "unknown") container") }
        var plan = PlaybackPlan(
            videoStream: video?.index,
            audioStream: audio?.index,
            video: video == nil ? .leaveOut : .copy,
            audio: audio == nil ? .leaveOut : .copy,
            reasons: reasons,
            contentType: contentType
        )
        switch mode {
        case .never:
            plan.reasons = []
            plan.contentType = contentType ?? container.fallbackContentType(hasVideo: video != nil)
            return plan
        case .always:
            if video != nil { plan.video = .transcode }
            if audio != nil { plan.audio = .transcode }
            plan.reasons.append("--transcode always")
            return plan
        case .auto:
            guard !reasons.isEmpty else { return plan }
            // HLS segments are MPEG-TS: only H.264/HEVC and AAC/MP3 travel in them, whatever the device plays.
            if let video, videoProblem != nil || !["h264", "hevc"].contains(video.codec) { plan.video = .transcode }
            if let audio, audioProblem != nil || !["aac", "mp3"].contains(audio.codec) { plan.audio = .transcode }
            return plan
        }
    }

    /// The container families a Cast device opens itself.
    private struct Container {
        let names: Set<String>

        init(_ names: [String]) { self.names = Set(names) }

        static let webMCodecs: Set<String> = ["vp8", "vp9", "av1", "opus", "vorbis"]

        func contentType(video: MediaProbe.Stream?, audio: MediaProbe.Stream?) -> String? {
            if names.contains("mp4") || names.contains("mov") {
                return video == nil ? "audio/mp4" : "video/mp4"
            }
            if names.contains("webm") {
                let codecs = [video?.codec, audio?.codec].compactMap { $0 }
                guard codecs.allSatisfy(Self.webMCodecs.contains) else { return nil }
                return video == nil ? "audio/webm" : "video/webm"
            }
            guard video == nil else { return names.contains("hls") ? "application/x-mpegURL" : nil }
            for (name, type) in [
                ("mp3", "audio/mpeg"), ("flac", "audio/flac"), ("wav", "audio/wav"), ("ogg", "audio/ogg"),
                ("aac", "audio/aac"), ("hls", "application/x-mpegURL"),
            ] where names.contains(name) {
                return type
            }
            return nil
        }

        func fallbackContentType(hasVideo: Bool) -> String {
            if names.contains("matroska") { return hasVideo ? "video/x-matroska" : "audio/x-matroska" }
            return hasVideo ? "video/mp4" : "audio/mp4"
        }
    }
}
