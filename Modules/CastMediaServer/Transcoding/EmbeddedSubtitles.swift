import NIOConcurrencyHelpers

/// Text subtitles inside a media file (SubRip, ASS, mov_text, WebVTT), extracted as WebVTT by ffmpeg when a
/// player first asks for them, so a file's own subtitles become tracks.
///
/// Share it with ``MediaServer/share(responder:entry:contentType:)`` under ``entryName``.
public final class EmbeddedSubtitles: MediaResponder {
    /// The entry to share it under.
    public static let entryName = "subtitles.vtt"

    /// The stream, as probed: its language and title name the track.
    public let stream: MediaProbe.Stream
    private let ffmpeg: ExternalTool
    private let arguments: [String]
    /// Started on first use: a file with five subtitle languages is read once per track actually shown.
    private let extraction = NIOLockedValueBox<Task<[UInt8], any Error>?>(nil)

    /// Prepares the extraction of `stream` from `file`.
    ///
    /// - Throws: ``CastMediaServerError/Code/toolMissing`` without ffmpeg.
    public init(file: String, stream: MediaProbe.Stream, ffmpeg: String = "ffmpeg") throws {
        self.ffmpeg = try ExternalTool.require(ffmpeg, for: "extracting subtitles")
        self.stream = stream
        self.arguments = [
            "-nostdin", "-hide_banner", "-loglevel", "error", "-i", MediaProbe.inputURL(file),
            "-map", "0:\(stream.index)", "-f", "webvtt", "pipe:1",
        ]
    }

    /// The WebVTT text, extracted on first use.
    ///
    /// - Throws: ``CastMediaServerError/Code/toolFailed`` when ffmpeg cannot extract it.
    public func webVTT() async throws -> [UInt8] {
        let task = extraction.withLockedValue { task in
            if let task { return task }
            let started = Task { [ffmpeg, arguments] in Array(try await ffmpeg.output(arguments: arguments).utf8) }
            task = started
            return started
        }
        return try await task.value
    }

    /// The WebVTT, extracted by ffmpeg on the first request and kept for the others.
    public func respond(to request: MediaRequest) async throws -> MediaResponse {
        guard request.path == Self.entryName else { return .notFound }
        return .bytes(try await webVTT(), contentType: "text/vtt")
    }

    deinit { extraction.withLockedValue { $0 }?.cancel() }
}
