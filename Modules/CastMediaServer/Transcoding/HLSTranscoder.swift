import CastLogging
import CastTransport
import Logging
import NIOConcurrencyHelpers

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

/// Settings of an ``HLSTranscoder``.
public struct TranscodeOptions: Sendable {
    /// Segment length in seconds; keyframes are forced on the boundaries when video is re-encoded. Default 6.
    public var segmentDuration: Double = 6
    /// Segments made ahead of the last one the device asked for before ffmpeg is paused. Default 5 (30 s).
    public var lookAhead = 5
    /// The folder in which a private folder holds the segments while they are needed. Default: the system's
    /// temporary folder.
    public var temporaryDirectory = FileManager.default.temporaryDirectory.path
    /// ffmpeg, by name (searched in `PATH`) or path. Default `ffmpeg`.
    public var ffmpeg = "ffmpeg"
    /// Where the transcoder logs ffmpeg's runs; silent by default.
    public var logger = Logger.castDisabled

    /// The defaults.
    public init() {}
}

/// How far an ``HLSTranscoder`` is.
public struct TranscodeProgress: Sendable, Hashable {
    /// The segment just made.
    public var segment: Int
    /// Segments in the playlist.
    public var segments: Int
    /// The segment the current ffmpeg run started at (where the device last jumped to).
    public var runStart: Int
    /// Media seconds made per second of wall time in the current run (`1` is real time).
    public var speed: Double
}

/// A file made playable on demand: an HLS VOD playlist written at once from the probed duration, each segment
/// produced by ffmpeg when the device asks for it (Jellyfin-style).
///
/// One ffmpeg run makes consecutive segments from the one asked for, a few ahead of the device (then it is paused
/// until the device catches up). A request far from what the run is making — a seek — ends the run and starts one
/// at the segment asked for, so a seek to any point costs one segment's work. Segments behind the device are
/// deleted: the folder holds a bounded number of files, and is removed by ``stop()``.
///
/// Share it with ``MediaServer/share(responder:entry:contentType:)`` under ``playlistName``.
public final class HLSTranscoder: MediaResponder {
    /// The entry to share it under.
    public static let playlistName = "index.m3u8"

    /// The playlist's segment lengths, in order.
    public let segmentDurations: [Double]
    /// What is copied and what is re-encoded.
    public let plan: PlaybackPlan
    /// Progress, as segments are made (one consumer).
    public let progress: AsyncStream<TranscodeProgress>

    private let source: String
    private let options: TranscodeOptions
    private let ffmpeg: ExternalTool
    private let folder: String
    private let progressContinuation: AsyncStream<TranscodeProgress>.Continuation
    private let state = NIOLockedValueBox(State())

    private struct Run: Sendable {
        let id: Int
        let first: Int
        let process: ToolProcess
        let started: ContinuousClock.Instant
        var next: Int
        var paused = false
    }

    private struct State {
        /// Segments on disk: index → file (each run writes its own files, so a killed run cannot spoil the next).
        var made: [Int: String] = [:]
        var waiters: [Int: [CheckedContinuation<Void, any Error>]] = [:]
        var run: Run?
        var runs = 0
        var lastAsked = 0
        var stopped = false
    }

    /// Prepares the transcoding of `file` (nothing runs until a segment is asked for).
    ///
    /// - Throws: ``CastMediaServerError/Code/toolMissing`` without ffmpeg; ``CastMediaServerError/Code/invalidMedia``
    ///   when the probe knows no duration (a live source cannot be VOD).
    public init(file: String, probe: MediaProbe, plan: PlaybackPlan, options: TranscodeOptions = TranscodeOptions())
        throws
    {
        guard let duration = probe.duration else {
            throw CastMediaServerError(.invalidMedia, "\(file): its length is unknown, so it cannot be made seekable")
        }
        self.ffmpeg = try ExternalTool.require(options.ffmpeg, for: "transcoding")
        self.source = file
        self.plan = plan
        self.options = options
        self.segmentDurations = Self.segments(duration: duration, length: options.segmentDuration)
        Self.removeAbandonedFolders(in: options.temporaryDirectory)
        let template = LocalFiles.path("\(Self.folderPrefix)\(getpid())-XXXXXX", in: options.temporaryDirectory)
        var path = Array(template.utf8CString)
        guard mkdtemp(&path) != nil else {
            throw CastMediaServerError(.notShareable, "cannot make a folder in \(options.temporaryDirectory)")
        }
        self.folder = String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        (progress, progressContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(16))
    }

    deinit {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Segment folders are named after the process that made them, so one killed before it could clean up is
    /// removed by the next.
    static let folderPrefix = "cast-hls-"

    static func removeAbandonedFolders(in directory: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        where name.hasPrefix(folderPrefix) {
            guard let pid = Int32(name.dropFirst(folderPrefix.count).prefix { $0 != "-" }),
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            try? FileManager.default.removeItem(atPath: LocalFiles.path(name, in: directory))
        }
    }

    /// Fixed-length segments; a last piece shorter than half a second joins the one before it (ffmpeg cuts
    /// only on a frame).
    static func segments(duration: Double, length: Double) -> [Double] {
        let whole = Int(duration / length)
        guard whole > 0 else { return [duration] }
        var durations = Array(repeating: length, count: whole)
        let rest = duration - Double(whole) * length
        if rest >= 0.5 {
            durations.append(rest)
        } else {
            durations[whole - 1] += rest
        }
        return durations
    }

    /// The HLS VOD playlist.
    public var playlist: String {
        var lines = [
            "#EXTM3U", "#EXT-X-VERSION:3",
            "#EXT-X-TARGETDURATION:\(Int((segmentDurations.max() ?? options.segmentDuration).rounded(.up)))",
            "#EXT-X-MEDIA-SEQUENCE:0", "#EXT-X-PLAYLIST-TYPE:VOD",
        ]
        for (index, duration) in segmentDurations.enumerated() {
            lines.append("#EXTINF:\(String(printf: "%.6f", duration)),")
            lines.append(Self.segmentName(index))
        }
        lines.append("#EXT-X-ENDLIST")
        return lines.joined(separator: "\n") + "\n"
    }

    static func segmentName(_ index: Int) -> String { String(printf: "segment-%05d.ts", CInt(index)) }

    static func segmentIndex(_ name: String) -> Int? {
        guard name.hasPrefix("segment-"), name.hasSuffix(".ts") else { return nil }
        return Int(name.dropFirst(8).dropLast(3))
    }

    /// The files a run writes, as ffmpeg's output template (`%05d` is the segment's index).
    static func runFilePattern(run: Int) -> String { "run\(run)-%05d.ts" }

    /// The file a run writes segment `index` to.
    static func runFileName(run: Int, index: Int) -> String { String(printf: runFilePattern(run: run), CInt(index)) }

    /// The playlist, or a segment: made (or waited for) when asked, so a seek costs one segment's work.
    public func respond(to request: MediaRequest) async throws -> MediaResponse {
        if request.path == Self.playlistName {
            return .bytes(Array(playlist.utf8), contentType: "application/x-mpegURL")
        }
        guard let index = Self.segmentIndex(request.path), segmentDurations.indices.contains(index) else {
            return .notFound
        }
        // A HEAD waits for the segment as a GET does: its length is not known before it exists, and an empty
        // answer would tell a player the segment is empty.
        return .file(path: try await segment(index), contentType: "video/mp2t")
    }

    /// Ends ffmpeg, fails whoever waits, removes the segments.
    public func stop() async {
        let (run, waiters) = state.withLockedValue { state in
            state.stopped = true
            defer {
                state.run = nil
                state.waiters = [:]
            }
            return (state.run, state.waiters.values.flatMap { $0 })
        }
        run?.process.kill()
        _ = await run?.process.exit()
        for waiter in waiters { waiter.resume(throwing: CastMediaServerError(.toolFailed, "transcoding stopped")) }
        progressContinuation.finish()
        try? FileManager.default.removeItem(atPath: folder)
    }

    private func madeFile(_ index: Int) -> String? { state.withLockedValue { $0.made[index] } }

    /// Waits until segment `index` is on disk, starting a run at it unless the current one will soon make it;
    /// returns its file.
    private func segment(_ index: Int) async throws -> String {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            enum Step {
                case ready, failed(any Error), wait(ended: Run?, started: Int?, stale: [Int: String])
            }
            let step = state.withLockedValue { state -> Step in
                if state.stopped { return .failed(CastMediaServerError(.toolFailed, "transcoding stopped")) }
                state.lastAsked = index
                if state.made[index] != nil { return .ready }
                state.waiters[index, default: []].append(continuation)
                if let run = state.run, run.next <= index, index <= run.next + options.lookAhead {
                    return .wait(ended: nil, started: nil, stale: [:])
                }
                // A seek (or a segment already deleted): a new run from here; what the old one made ahead goes.
                let ended = state.run
                state.runs += 1
                state.run = nil
                let stale = state.made.filter { $0.key >= index || $0.key < index - 2 }
                for key in stale.keys { state.made[key] = nil }
                return .wait(ended: ended, started: state.runs, stale: stale)
            }
            switch step {
            case .ready: continuation.resume()
            case .failed(let error): continuation.resume(throwing: error)
            case .wait(let ended, let started, let stale):
                ended?.process.kill()
                for file in stale.values { unlink(file) }
                if let started { startRun(id: started, at: index) }
            }
            pruneAndPace()
        }
        guard let file = madeFile(index) else {
            throw CastMediaServerError(.toolFailed, "segment \(index) was deleted before it was served")
        }
        return file
    }

    private func startRun(id: Int, at first: Int) {
        let start = segmentDurations[..<first].reduce(0, +)
        let process = ToolProcess.launch(ffmpeg, arguments: arguments(run: id, first: first, start: start))
        options.logger.debug("transcoding from segment \(first) (\(Int(start)) s)", metadata: ["run": "\(id)"])
        let run = Run(id: id, first: first, process: process, started: .now, next: first)
        let current = state.withLockedValue { state -> Bool in
            guard !state.stopped, state.runs == id else { return false }
            state.run = run
            return true
        }
        guard current else {
            process.kill()
            return
        }
        Task { await follow(run) }
    }

    /// Reads the segments ffmpeg reports as complete, then how it ended.
    private func follow(_ run: Run) async {
        for await line in run.process.outputLines {
            let name = line.trimmingWhitespace()
            // ffmpeg may cut one more (tiny) segment than the playlist has: nobody asks for it.
            guard let dash = name.firstIndex(of: "-"), name.hasSuffix(".ts"),
                let index = Int(name[name.index(after: dash)...].dropLast(3)),
                (run.first..<segmentDurations.count).contains(index)
            else { continue }
            let (waiters, progress) = state.withLockedValue {
                state -> ([CheckedContinuation<Void, any Error>], TranscodeProgress?) in
                guard state.run?.id == run.id else { return ([], nil) }
                state.made[index] = folder + "/" + Self.runFileName(run: run.id, index: index)
                state.run?.next = index + 1
                let made = segmentDurations[run.first...index].reduce(0, +)
                let seconds = max(0.001, (ContinuousClock.now - run.started) / .seconds(1))
                return (
                    state.waiters.removeValue(forKey: index) ?? [],
                    TranscodeProgress(
                        segment: index,
                        segments: segmentDurations.count,
                        runStart: run.first,
                        speed: made / seconds
                    )
                )
            }
            for waiter in waiters { waiter.resume() }
            if let progress { progressContinuation.yield(progress) }
            pruneAndPace()
        }
        let exit = await run.process.exit()
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, any Error>] in
            guard state.run?.id == run.id else { return [] }
            state.run = nil
            // Whoever waits for a segment this run did not make: ended early (or the file is shorter than it said).
            defer { state.waiters = [:] }
            return state.waiters.values.flatMap { $0 }
        }
        guard !waiters.isEmpty else { return }
        let error =
            exit.succeeded
            ? CastMediaServerError(.invalidMedia, "\(source) ended before its declared length")
            : CastMediaServerError(.toolFailed, "ffmpeg failed transcoding \(source): \(exit.summary)")
        options.logger.warning("\(error)")
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    /// Keeps ffmpeg a few segments ahead of the device (paused beyond), and the folder to the segments around it.
    private func pruneAndPace() {
        let (pause, resume, remove) = state.withLockedValue { state -> (ToolProcess?, ToolProcess?, [String]) in
            // Ahead of the device there are only the current run's few segments (it is paused beyond them).
            let behind = state.made.filter { $0.key < state.lastAsked - 2 }
            for key in behind.keys { state.made[key] = nil }
            let remove = Array(behind.values)
            guard var run = state.run else { return (nil, nil, remove) }
            let ahead = run.next - state.lastAsked > options.lookAhead
            defer { state.run = run }
            if ahead, !run.paused {
                run.paused = true
                return (run.process, nil, remove)
            }
            if !ahead, run.paused {
                run.paused = false
                return (nil, run.process, remove)
            }
            return (nil, nil, remove)
        }
        pause?.pause()
        resume?.resume()
        for file in remove { unlink(file) }
    }

    /// ffmpeg's arguments for a run making segments from `first`, which starts `start` seconds in.
    private func arguments(run: Int, first: Int, start: Double) -> [String] {
        var arguments = ["-nostdin", "-hide_banner", "-loglevel", "error"]
        if start > 0 { arguments += ["-ss", String(printf: "%.3f", start)] }
        arguments += ["-i", MediaProbe.inputURL(source)]
        if let video = plan.videoStream, plan.video != .leaveOut {
            arguments += ["-map", "0:\(video)"]
            if plan.video == .copy {
                arguments += ["-c:v", "copy"]
            } else {
                arguments += [
                    "-c:v", "libx264", "-preset", "veryfast", "-crf", "21", "-maxrate", "10M", "-bufsize", "20M",
                    "-profile:v", "high", "-level:v", "4.1", "-pix_fmt", "yuv420p",
                    "-vf",
                    "scale=w='min(1920,iw)':h='min(1080,ih)':force_original_aspect_ratio=decrease:"
                        + "force_divisible_by=2",
                    "-force_key_frames", "expr:gte(t,n_forced*\(options.segmentDuration))",
                ]
            }
        }
        if let audio = plan.audioStream, plan.audio != .leaveOut {
            arguments += ["-map", "0:\(audio)"]
            arguments += plan.audio == .copy ? ["-c:a", "copy"] : ["-c:a", "aac", "-ac", "2", "-b:a", "192k"]
        }
        arguments += [
            "-sn", "-dn", "-map_metadata", "-1",
            "-f", "segment", "-segment_format", "mpegts",
            "-segment_time", String(options.segmentDuration),
            "-segment_start_number", String(first),
            "-initial_offset", String(printf: "%.3f", start),
            "-segment_list", "pipe:1", "-segment_list_type", "flat",
            folder + "/" + Self.runFilePattern(run: run),
        ]
        return arguments
    }
}
