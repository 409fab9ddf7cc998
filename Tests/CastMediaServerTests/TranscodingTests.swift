import Foundation
import Testing

@testable import CastMediaServer

@Suite struct PlaybackPlanTests {
    private func stream(
        _ index: Int,
        _ kind: MediaProbe.Stream.Kind,
        _ codec: String,
        _ configure: (inout MediaProbe.Stream) -> Void = { _ in }
    ) -> MediaProbe.Stream {
        var stream = MediaProbe.Stream(index: index, kind: kind, codec: codec)
        if kind == .video {
            stream.pixelFormat = "yuv420p"
            stream.level = 40
            (stream.width, stream.height) = (1280, 720)
        }
        if kind == .audio { stream.channels = 2 }
        configure(&stream)
        return stream
    }

    private let chromecast = DeviceMediaSupport.forModel("Chromecast", playsVideo: true)
    private let ultra = DeviceMediaSupport.forModel("Chromecast Ultra", playsVideo: true)
    private let speaker = DeviceMediaSupport.forModel("Google Home", playsVideo: false)
    private let mp4 = ["mov", "mp4", "m4a", "3gp", "3g2", "mj2"]
    private let matroska = ["matroska", "webm"]

    @Test func whatPlaysIsServedAsIs() throws {
        let probe = MediaProbe(
            formatNames: mp4,
            duration: 60,
            streams: [stream(0, .video, "h264"), stream(1, .audio, "aac")]
        )
        let plan = try PlaybackPlan.make(for: probe, device: chromecast)
        #expect(plan.work == .none)
        #expect(plan.servesAsIs)
        #expect(plan.contentType == "video/mp4")
        #expect(plan.reasons.isEmpty)
    }

    @Test func theWrongContainerIsRemuxed() throws {
        let probe = MediaProbe(
            formatNames: matroska,
            duration: 60,
            streams: [stream(0, .video, "h264"), stream(1, .audio, "aac")]
        )
        let plan = try PlaybackPlan.make(for: probe, device: chromecast)
        #expect(plan.work == .remux)
        #expect(plan.video == .copy && plan.audio == .copy)
        #expect(plan.reasons == ["matroska container"])
    }

    @Test func surroundAudioIsTranscodedAlone() throws {
        let probe = MediaProbe(
            formatNames: matroska,
            duration: 60,
            streams: [stream(0, .video, "h264"), stream(1, .audio, "ac3") { $0.channels = 6 }]
        )
        let plan = try PlaybackPlan.make(for: probe, device: chromecast)
        #expect(plan.work == .audio)
        #expect(plan.video == .copy && plan.audio == .transcode)
        #expect(plan.reasons.contains("ac3 audio"))
        // Six-channel AAC is transcoded too (to stereo).
        let aac51 = MediaProbe(
            formatNames: mp4,
            duration: 60,
            streams: [stream(0, .video, "h264"), stream(1, .audio, "aac") { $0.channels = 6 }]
        )
        #expect(try PlaybackPlan.make(for: aac51, device: chromecast).work == .audio)
    }

    @Test func videoTheModelCannotDecodeIsTranscoded() throws {
        let hevc = MediaProbe(
            formatNames: mp4,
            duration: 60,
            streams: [stream(0, .video, "hevc"), stream(1, .audio, "aac")]
        )
        #expect(try PlaybackPlan.make(for: hevc, device: chromecast).work == .video)
        #expect(try PlaybackPlan.make(for: hevc, device: ultra).work == .none)
        // 4:4:4 H.264, too high a level, too large a picture: the codec's name is not enough.
        for configure: (inout MediaProbe.Stream) -> Void in [
            { $0.pixelFormat = "yuv444p" }, { $0.level = 51 }, { ($0.width, $0.height) = (3840, 2160) },
        ] {
            let probe = MediaProbe(
                formatNames: mp4,
                duration: 60,
                streams: [stream(0, .video, "h264", configure), stream(1, .audio, "aac")]
            )
            #expect(try PlaybackPlan.make(for: probe, device: chromecast).work == .video)
        }
        // Portrait 1080×1920 fits a 1920×1080 device.
        let portrait = MediaProbe(
            formatNames: mp4,
            duration: 60,
            streams: [stream(0, .video, "h264") { ($0.width, $0.height) = (1080, 1920) }]
        )
        #expect(try PlaybackPlan.make(for: portrait, device: chromecast).work == .none)
    }

    @Test func webMIsServedAsIsWhereVP9PlaysAndTranscodedWhereNot() throws {
        let probe = MediaProbe(
            formatNames: matroska,
            duration: 60,
            streams: [stream(0, .video, "vp9"), stream(1, .audio, "opus")]
        )
        let onUltra = try PlaybackPlan.make(for: probe, device: ultra)
        #expect(onUltra.work == .none)
        #expect(onUltra.contentType == "video/webm")
        // On a first Chromecast VP9 must become H.264, and Opus cannot travel in MPEG-TS segments.
        let onChromecast = try PlaybackPlan.make(for: probe, device: chromecast)
        #expect(onChromecast.work == .audioAndVideo)
    }

    @Test func speakersGetTheSoundOnly() throws {
        let movie = MediaProbe(
            formatNames: mp4,
            duration: 60,
            streams: [stream(0, .video, "h264"), stream(1, .audio, "aac")]
        )
        let plan = try PlaybackPlan.make(for: movie, device: speaker)
        #expect(plan.video == .leaveOut)
        #expect(plan.videoStream == nil)
        #expect(plan.work == .remux)
        // An MP3's cover art is not video.
        let song = MediaProbe(
            formatNames: ["mp3"],
            duration: 200,
            streams: [stream(0, .audio, "mp3"), stream(1, .video, "mjpeg") { $0.isAttachedPicture = true }]
        )
        let songPlan = try PlaybackPlan.make(for: song, device: chromecast)
        #expect(songPlan.work == .none)
        #expect(songPlan.contentType == "audio/mpeg")
        let silent = MediaProbe(formatNames: mp4, duration: 60, streams: [stream(0, .video, "h264")])
        #expect {
            try PlaybackPlan.make(for: silent, device: speaker)
        } throws: { ($0 as? CastMediaServerError)?.code == .unplayable }
    }

    @Test func modesOverrideTheTable() throws {
        let probe = MediaProbe(
            formatNames: matroska,
            duration: 60,
            streams: [stream(0, .video, "h264"), stream(1, .audio, "ac3")]
        )
        let never = try PlaybackPlan.make(for: probe, device: chromecast, mode: .never)
        #expect(never.work == .none)
        #expect(never.contentType == "video/x-matroska")
        let mp4Probe = MediaProbe(
            formatNames: mp4,
            duration: 60,
            streams: [stream(0, .video, "h264"), stream(1, .audio, "aac")]
        )
        let always = try PlaybackPlan.make(for: mp4Probe, device: chromecast, mode: .always)
        #expect(always.work == .audioAndVideo)
    }

    @Test func theTableNamesModels() {
        #expect(chromecast.videoCodecs == ["h264", "vp8"])
        #expect(ultra.videoCodecs.isSuperset(of: ["hevc", "vp9"]))
        #expect(DeviceMediaSupport.forModel("Chromecast with Google TV", playsVideo: true).videoCodecs.contains("av1"))
        #expect(DeviceMediaSupport.forModel("Google Nest Hub", playsVideo: true).videoCodecs.contains("vp9"))
        #expect(DeviceMediaSupport.forModel(nil, playsVideo: true) == chromecast)
        #expect(!speaker.playsVideo)
    }
}

@Suite struct MediaProbeTests {
    @Test func readsFFprobeJSONLiberally() throws {
        let json = """
            {"streams": [
              {"index": 0, "codec_name": "h264", "codec_type": "video", "profile": "High", "level": 41,
               "pix_fmt": "yuv420p", "width": 1920, "height": 1080, "disposition": {"default": 1}},
              {"index": 1, "codec_name": "AC3", "codec_type": "audio", "channels": 6,
               "tags": {"language": "eng", "title": "Surround"}, "disposition": {"default": 0}},
              {"index": 2, "codec_name": "subrip", "codec_type": "subtitle", "tags": {"LANGUAGE": "fra"}},
              {"index": 3, "codec_name": "hdmv_pgs_subtitle", "codec_type": "subtitle", "tags": {"language": "und"}},
              {"index": 4, "codec_type": "attachment"}
            ],
             "format": {"format_name": "matroska,webm", "duration": "7200.040000"}}
            """
        let probe = try MediaProbe(ffprobeJSON: Data(json.utf8))
        #expect(probe.formatNames == ["matroska", "webm"])
        #expect(probe.duration == 7200.04)
        #expect(probe.video?.level == 41)
        #expect(probe.video?.isDefault == true)
        #expect(probe.audio?.codec == "ac3")
        #expect(probe.audio?.language == "eng")
        #expect(probe.audio?.title == "Surround")
        #expect(probe.textSubtitles.map(\.index) == [2])
        #expect(probe.textSubtitles.first?.language == "fra")
        #expect(probe.streams[3].language == nil)
        #expect(probe.streams[4].kind == .other)
        #expect(probe.streams[4].codec == "unknown")
    }

    @Test func languagesBecomeBCP47Tags() {
        var stream = MediaProbe.Stream(index: 0, kind: .subtitle, codec: "subrip")
        for (code, tag) in [("fra", "fr"), ("fre", "fr"), ("GER", "de"), ("eng", "en"), ("haw", "haw")] {
            stream.language = code
            #expect(stream.languageTag == tag, "\(code)")
        }
        stream.language = nil
        #expect(stream.languageTag == nil)
    }

    @Test func refusesWhatIsNotAProbe() {
        for text in ["not json", "[]", #"{"streams": [], "format": {}}"#] {
            #expect {
                try MediaProbe(ffprobeJSON: Data(text.utf8))
            } throws: { ($0 as? CastMediaServerError)?.code == .invalidMedia }
        }
    }

    @Test func noDurationMeansNone() throws {
        let json = #"{"streams": [{"codec_type": "audio", "codec_name": "mp3"}], "format": {"duration": "N/A"}}"#
        let probe = try MediaProbe(ffprobeJSON: Data(json.utf8))
        #expect(probe.duration == nil)
        #expect(probe.audio?.index == 0)
    }

    @Test func inputsAreFileURLs() {
        #expect(MediaProbe.inputURL("/a/b:c.mkv") == "file:/a/b:c.mkv")
        #expect(MediaProbe.inputURL("-x.mkv").hasSuffix("/-x.mkv"))
        #expect(MediaProbe.inputURL("-x.mkv").hasPrefix("file:/"))
    }
}

@Suite struct ExternalToolTests {
    @Test func aMissingToolSaysWhatToInstall() {
        #expect(ExternalTool.find("no-such-tool-\(UUID().uuidString)") == nil)
        #expect {
            try ExternalTool.require("/nonexistent/ffprobe", for: "checking what a file holds")
        } throws: { error in
            let error = error as? CastMediaServerError
            return error?.code == .toolMissing && error?.message.contains("install ffmpeg") == true
        }
        #expect {
            try ExternalTool.require("yt-dlp-\(UUID().uuidString)", for: "x")
        } throws: { ($0 as? CastMediaServerError)?.code == .toolMissing }
    }

    @Test func aFailingToolReportsItsComplaint() async throws {
        let shell = try #require(ExternalTool.find("sh"))
        let output = try await shell.output(arguments: ["-c", "echo out; echo err >&2"])
        #expect(output == "out\n")
        await #expect {
            try await shell.output(arguments: ["-c", "echo first >&2; echo 'it broke' >&2; exit 3"])
        } throws: { error in
            let error = error as? CastMediaServerError
            return error?.code == .toolFailed && error?.message.contains("it broke") == true
        }
        await #expect {
            try await shell.output(arguments: ["-c", "yes"], limit: 1000)
        } throws: { ($0 as? CastMediaServerError)?.code == .toolFailed }
    }

    @Test func aLongRunningToolStreamsItsLinesAndIsKilled() async throws {
        let shell = try #require(ExternalTool.find("sh"))
        let process = ToolProcess.launch(shell, arguments: ["-c", "echo one; echo two; exec sleep 1000"])
        var lines: [String] = []
        for await line in process.outputLines {
            lines.append(line)
            if lines.count == 2 { break }
        }
        #expect(lines == ["one", "two"])
        process.pause()
        process.resume()
        process.kill()
        let exit = await process.exit()
        #expect(!exit.succeeded)
    }
}

@Suite struct HLSSegmentationTests {
    @Test func segmentsCoverTheDurationWithoutASliver() {
        #expect(HLSTranscoder.segments(duration: 12, length: 6) == [6, 6])
        #expect(HLSTranscoder.segments(duration: 13, length: 6) == [6, 6, 1])
        let sliver = HLSTranscoder.segments(duration: 12.2, length: 6)
        #expect(sliver.count == 2)
        #expect(abs(sliver[1] - 6.2) < 1e-9)
        #expect(HLSTranscoder.segments(duration: 2, length: 6) == [2])
        #expect(HLSTranscoder.segments(duration: 7200, length: 6).count == 1200)
    }

    @Test func segmentNamesRoundTrip() {
        #expect(HLSTranscoder.segmentName(12) == "segment-00012.ts")
        #expect(HLSTranscoder.segmentIndex("segment-00012.ts") == 12)
        #expect(HLSTranscoder.segmentIndex("segment-x.ts") == nil)
        #expect(HLSTranscoder.segmentIndex("../segment-00001.ts") == nil)
    }
}

/// The transcoder with a real ffmpeg on real (tiny) media, served by a real server.
@Suite(.enabled(if: ExternalTool.find("ffmpeg") != nil && ExternalTool.find("ffprobe") != nil))
struct HLSTranscoderTests {
    /// A 60-second MKV: H.264 (4:2:0, keyframes every 2 s) with 5.1 AC-3 audio and a French SubRip track.
    private static func makeMovie(in folder: TemporaryFolder) async throws -> String {
        let subtitles = try folder.write("s.srt", "1\n00:00:01,000 --> 00:00:03,000\nBonjour\n\n")
        let movie = folder.path + "/movie with spaces.mkv"
        let ffmpeg = try #require(ExternalTool.find("ffmpeg"))
        _ = try await ffmpeg.output(arguments: [
            "-nostdin", "-loglevel", "error", "-y",
            "-f", "lavfi", "-i", "testsrc=size=64x36:rate=10",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
            "-i", subtitles, "-t", "60", "-map", "0", "-map", "1", "-map", "2",
            "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "20",
            "-c:a", "ac3", "-ac", "6", "-c:s", "srt", "-metadata:s:s:0", "language=fra", "-metadata:s:s:0",
            "title=Français", movie,
        ])
        return movie
    }

    private static func probeSegment(_ bytes: [UInt8], in folder: TemporaryFolder, name: String) async throws
        -> (codecs: [String], start: Double)
    {
        let file = try folder.write(name, bytes)
        let ffprobe = try #require(ExternalTool.find("ffprobe"))
        let output = try await ffprobe.output(arguments: [
            "-v", "error", "-print_format", "json", "-show_format", "-show_streams", file,
        ])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let streams = json["streams"] as? [[String: Any]] ?? []
        let format = json["format"] as? [String: Any] ?? [:]
        let codecs = streams.compactMap { stream -> String? in
            guard let codec = stream["codec_name"] as? String else { return nil }
            return "\(codec)/\(stream["channels"].map { "\($0)" } ?? "-")"
        }
        return (codecs.sorted(), Double(format["start_time"] as? String ?? "") ?? -1)
    }

    @Test func anAC3MovieBecomesSeekableHLS() async throws {
        let folder = try TemporaryFolder()
        let movie = try await Self.makeMovie(in: folder)
        let probe = try await MediaProbe.probe(file: movie)
        #expect(abs((probe.duration ?? 0) - 60) < 0.2)
        #expect(probe.textSubtitles.first?.language == "fra")
        let plan = try PlaybackPlan.make(for: probe, device: .forModel("Chromecast", playsVideo: true))
        #expect(plan.work == .audio)

        var options = TranscodeOptions()
        options.segmentDuration = 2
        options.lookAhead = 3
        options.temporaryDirectory = folder.path
        let transcoder = try HLSTranscoder(file: movie, probe: probe, plan: plan, options: options)
        let server = try await MediaServer.start(reaching: "127.0.0.1")
        let base = server.sharePath(of: transcoder)

        let playlist = try await RawHTTPClient.exchange(port: server.port, path: base + HLSTranscoder.playlistName)
        #expect(playlist.status == 200)
        #expect(playlist.header("Access-Control-Allow-Origin") == "*")
        #expect(playlist.text.hasPrefix("#EXTM3U"))
        #expect(playlist.text.contains("#EXT-X-PLAYLIST-TYPE:VOD"))
        #expect(playlist.text.contains("#EXT-X-ENDLIST"))
        #expect(playlist.text.components(separatedBy: "#EXTINF:").count - 1 == 30)

        // The first segment: H.264 copied, AC-3 5.1 now AAC stereo.
        let first = try await RawHTTPClient.exchange(port: server.port, path: base + "segment-00000.ts")
        #expect(first.status == 200)
        #expect(first.body.first == 0x47)
        let firstProbe = try await Self.probeSegment(first.body, in: folder, name: "first.ts")
        #expect(firstProbe.codecs == ["aac/2", "h264/-"])

        // A seek near the end: one segment's work, with timestamps that continue the first run's.
        let late = try await RawHTTPClient.exchange(port: server.port, path: base + "segment-00027.ts")
        #expect(late.status == 200)
        let lateProbe = try await Self.probeSegment(late.body, in: folder, name: "late.ts")
        #expect(lateProbe.codecs == ["aac/2", "h264/-"])
        #expect(abs(lateProbe.start - firstProbe.start - 54) < 0.5, "\(lateProbe.start) vs \(firstProbe.start)")

        // The next one comes from the same run; a segment past the end is not there.
        #expect(try await RawHTTPClient.exchange(port: server.port, path: base + "segment-00028.ts").status == 200)
        #expect(try await RawHTTPClient.exchange(port: server.port, path: base + "segment-00030.ts").status == 404)
        #expect(try await RawHTTPClient.exchange(port: server.port, path: base + "../x").status == 404)

        // Bounded temporary files: a few behind the device and the run's look-ahead, plus the segment ffmpeg may be
        // writing when the pause reaches it (on a busy machine the signal can land a segment or two late: 10 files
        // were seen beside two CPU-bound loads).
        let hlsFolder = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasPrefix("cast-hls-") }
        )
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path + "/" + hlsFolder)
        #expect(files.count <= options.lookAhead + 7, "\(files)")

        var progress: [TranscodeProgress] = []
        await transcoder.stop()
        for await step in transcoder.progress { progress.append(step) }
        #expect(progress.contains { $0.segment == 0 && $0.runStart == 0 })
        #expect(progress.contains { $0.segment == 27 && $0.runStart == 27 })
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/" + hlsFolder))
        // After stop, nothing more is made.
        #expect(try await RawHTTPClient.exchange(port: server.port, path: base + "segment-00005.ts").status == 500)
        await server.stop()
    }

    @Test func embeddedSubtitlesBecomeWebVTT() async throws {
        let folder = try TemporaryFolder()
        let movie = try await Self.makeMovie(in: folder)
        let probe = try await MediaProbe.probe(file: movie)
        let track = try #require(probe.textSubtitles.first)
        #expect(track.title == "Français")
        let subtitles = try EmbeddedSubtitles(file: movie, stream: track)
        let text = String(decoding: try await subtitles.webVTT(), as: UTF8.self)
        #expect(text.hasPrefix("WEBVTT"))
        #expect(text.contains("00:01.0") && text.contains(" --> 00:03.0"))
        #expect(text.contains("Bonjour"))
    }

    @Test func whatIsNotMediaIsRefusedByTheProbe() async throws {
        let folder = try TemporaryFolder()
        let file = try folder.write("notes.mkv", "just some words, not a movie\n")
        await #expect {
            try await MediaProbe.probe(file: file)
        } throws: { ($0 as? CastMediaServerError)?.code == .invalidMedia }
    }
}

@Suite struct TranscoderFolderTests {
    @Test func foldersOfDeadProcessesAreRemoved() throws {
        let folder = try TemporaryFolder()
        // pid_max is at most 2^22: this process cannot exist. The live one (ours) and other files stay.
        try folder.write("cast-hls-99999999-abc/run1-00000.ts", [0x47])
        try folder.write("cast-hls-\(getpid())-def/run1-00000.ts", [0x47])
        try folder.write("cast-hls-notapid/x", [0])
        try folder.write("other/x", [0])
        HLSTranscoder.removeAbandonedFolders(in: folder.path)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(left == ["cast-hls-\(getpid())-def", "cast-hls-notapid", "other"])
    }
}

@Suite struct PageResolverTests {
    @Test func pagesAreURLsThatNameNoMediaType() {
        #expect(PageResolver.looksLikePage("https://www.youtube.com/watch?v=abc"))
        #expect(PageResolver.looksLikePage("https://vimeo.com/12345"))
        #expect(PageResolver.looksLikePage("http://127.0.0.1:8000/page.html"))
        #expect(!PageResolver.looksLikePage("https://example.com/a.mp4"))
        #expect(!PageResolver.looksLikePage("https://example.com/live/index.m3u8?token=1"))
        #expect(!PageResolver.looksLikePage("rtsp://camera/stream"))
        #expect(!PageResolver.looksLikePage("not a url"))
    }

    @Test func readsYtDLPsDescription() throws {
        let json = """
            {"url": "https://cdn.example.com/v.mp4", "title": "A talk", "thumbnail": "https://i.example.com/t.jpg",
             "ext": "mp4", "protocol": "https", "is_live": null, "duration": 754.5}
            """
        let page = try PageResolver.parse(Data(json.utf8), page: "https://example.com/watch")
        #expect(page.url == "https://cdn.example.com/v.mp4")
        #expect(page.contentType == "video/mp4")
        #expect(page.title == "A talk")
        #expect(page.thumbnail == "https://i.example.com/t.jpg")
        #expect(!page.isLive)
        #expect(page.duration == 754.5)
        let live =
            #"{"url": "https://cdn.example.com/live.m3u8", "protocol": "m3u8_native", "ext": "mp4", "is_live": true}"#
        let livePage = try PageResolver.parse(Data(live.utf8), page: "https://example.com/live")
        #expect(livePage.contentType == "application/x-mpegURL")
        #expect(livePage.isLive)
    }

    @Test func whatIsNotOneStreamIsAnError() {
        for text in ["nonsense", #"{"title": "needs merging", "requested_formats": [{"format_id": "1"}]}"#] {
            #expect {
                try PageResolver.parse(Data(text.utf8), page: "https://example.com/x")
            } throws: { ($0 as? CastMediaServerError)?.code == .toolFailed }
        }
    }

    @Test func withoutYtDLPTheErrorSaysWhatToInstall() async {
        await #expect {
            try await PageResolver.resolve("https://example.com/watch", ytDLP: "/nonexistent/yt-dlp")
        } throws: { error in
            let error = error as? CastMediaServerError
            return error?.code == .toolMissing && error?.message.contains("pip install yt-dlp") == true
        }
    }
}

/// Segments from a stand-in ffmpeg (a script). What ffmpeg reports that the playlist does not have: it reports a segment far past
/// the end — first, so it is read before any segment is served — then writes the segments from the one asked
/// for to the end, as ffmpeg's segment muxer can with a last sliver (a real ffmpeg does so only now and then; this crashed the transcoder once under load).
@Suite(.enabled(if: ExternalTool.find("sh") != nil))
struct HLSTranscoderReportTests {
    /// A transcoder of an AC-3 Matroska file of `duration` seconds whose ffmpeg is a script: it prints the name
    /// of segment `reported` first when given, then writes and prints each segment from the one asked for
    /// (`-segment_start_number`) to `last`, each holding "segment N".
    private func standInTranscoder(
        in folder: TemporaryFolder,
        reporting reported: Int? = nil,
        through last: Int,
        duration: Double
    ) throws -> HLSTranscoder {
        let script = try folder.write(
            "ffmpeg",
            """
            #!/bin/sh
            start=0; previous=""
            for argument; do
                [ "$previous" = "-segment_start_number" ] && start=$argument
                previous=$argument; template=$argument
            done
            for index in \(reported.map(String.init) ?? "") $(seq "$start" \(last)); do
                name=$(printf "$(basename "$template")" "$index")
                printf 'segment %s' "$index" > "$(dirname "$template")/$name"
                echo "$name"
            done

            """
        )
        chmod(script, 0o755)
        var options = TranscodeOptions()
        options.ffmpeg = script
        options.temporaryDirectory = folder.path
        let probe = MediaProbe(
            formatNames: ["matroska", "webm"],
            duration: duration,
            streams: [MediaProbe.Stream(index: 0, kind: .audio, codec: "ac3")]
        )
        let plan = try PlaybackPlan.make(for: probe, device: DeviceMediaSupport())
        return try HLSTranscoder(file: "/dev/null", probe: probe, plan: plan, options: options)
    }

    @Test func aSegmentPastThePlaylistIsIgnored() async throws {
        let folder = try TemporaryFolder()
        let transcoder = try standInTranscoder(in: folder, reporting: 99999, through: 1, duration: 12)
        for index in 0..<2 {
            let request = MediaRequest(path: HLSTranscoder.segmentName(index), peer: nil, isHead: false)
            guard case .file(let path, _) = try await transcoder.respond(to: request) else {
                Issue.record("segment \(index) is not a file")
                continue
            }
            #expect(
                String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self) == "segment \(index)"
            )
        }
        await transcoder.stop()
    }

    /// A HEAD on a segment not made yet is answered as a GET would be: after the segment is made, with its length
    /// (it was once 200 with `Content-Length: 0`, an empty segment to a player).
    @Test func aHeadOnASegmentNotMadeYetWaitsForIt() async throws {
        let folder = try TemporaryFolder()
        let transcoder = try standInTranscoder(in: folder, through: 2, duration: 18)
        let server = try await MediaServer.start(reaching: "127.0.0.1")
        let base = server.sharePath(of: transcoder)
        let segment = base + HLSTranscoder.segmentName(1)
        let head = try await RawHTTPClient.exchange(port: server.port, method: "HEAD", path: segment)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "\("segment 1".utf8.count)")
        #expect(head.header("Content-Type") == "video/mp2t")
        #expect(head.bodyCount == 0)
        let get = try await RawHTTPClient.exchange(port: server.port, path: segment)
        #expect(get.text == "segment 1")
        #expect(get.header("ETag") == head.header("ETag"))
        await transcoder.stop()
        await server.stop()
    }
}

extension MediaServer {
    /// Shares `transcoder`'s HLS playlist and answers the path its files are served under (with a slash at the end).
    fileprivate func sharePath(of transcoder: HLSTranscoder) -> String {
        let shared = share(
            responder: transcoder,
            entry: HLSTranscoder.playlistName,
            contentType: "application/x-mpegURL"
        )
        return String(shared.url.dropFirst(baseURL.count).dropLast(HLSTranscoder.playlistName.count))
    }
}
