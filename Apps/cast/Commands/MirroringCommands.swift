import ArgumentParser
import CastDiscovery
import CastLogging
import CastMediaServer
import CastReceiver
import CastSession
import CastStreaming
import CastTransport
import NIOConcurrencyHelpers

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `cast screen`: this computer's screen, a window, a region or any video, mirrored over Cast Streaming.
struct ScreenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screen",
        abstract: "Mirror the screen, a window or any video to a TV over Cast Streaming (as Chrome does).",
        discussion: """
            Captures with ffmpeg (X11: the DISPLAY, --window or --region; --input for any file, URL or device), \
            encodes VP8, VP9, H.264 or AV1 (and Opus with --audio) here and streams it to the mirroring app at a --delay of 400 ms. \
            Runs until Ctrl-C, --duration, or `cast stop`. Examples: cast screen, cast screen --window Firefox \
            --audio, cast screen --region 1280x720+0+0, cast screen --input movie.mkv --audio --duration 60
            """
    )
    @OptionGroup var global: GlobalOptions
    @Option(help: "Mirror one X11 window: its name or id (0x…).") var window: String?
    @Option(help: "Mirror a region of the screen: WxH+X+Y.") var region: String?
    @Option(help: "Mirror any file, URL or device ffmpeg reads instead of the screen ('test': a test pattern).")
    var input: String?
    @Option(help: "The X11 display to capture (default: $DISPLAY).") var display: String?
    @Flag(help: "Also send this computer's sound (the desktop's monitor, or --input's own sound).") var audio = false
    @Option(help: "Target playout delay in milliseconds.") var delay = 400
    @Option(help: "Highest video bit rate, bits per second.") var maxBitrate = 5_000_000
    @Option(help: "Video codec: vp8, vp9, h264, av1, or auto (offer all; the TV picks).") var codec = "vp8"
    @Option(help: "Picture size sent, WxH.") var size = "1280x720"
    @Option(help: "Frames per second.") var fps = 30
    @Option(help: "Stop after this many seconds.") var duration: Double?

    func run() async throws {
        let runtime = try CLIRuntime(global) { $0.receiverApplicationID = MirroringSession.applicationID }
        do {
            var options = ScreenMirror.Options()
            options.resolution = try Self.resolution(size)
            options.frameRate = fps
            options.maximumBitRate = maxBitrate
            options.targetDelay = .milliseconds(Int64(delay))
            switch codec {
            // auto offers them all (Chrome's order); the TV takes the one it prefers.
            case "auto": options.videoCodecs = VideoFrameEncoder.codecs
            case _ where VideoFrameEncoder.codecs.contains(codec): options.videoCodecs = [codec]
            default: throw CLIError(.usage, "--codec \(codec): vp8, vp9, h264, av1 or auto")
            }
            options.video = try await videoSource(frameRate: fps)
            if audio { options.audio = input.map { $0 == "test" ? .testPattern() : .input($0) } ?? .desktopAudio() }
            try await Mirroring.run(options, runtime: runtime, duration: duration)
        } catch {
            throw runtime.fail(error)
        }
    }

    private func videoSource(frameRate: Int) async throws -> CaptureSource {
        if let input { return input == "test" ? .testPattern(frameRate: frameRate) : .input(input) }
        guard let display = display ?? getenv("DISPLAY").map({ String(cString: $0) }) else {
            throw CLIError(.usage, "no X11 display: set DISPLAY or --display, or mirror a file with --input")
        }
        if let region {
            guard let area = CaptureSource.Region(geometry: region) else {
                throw CLIError(.usage, "--region \(region): expected WxH+X+Y, for example 1280x720+0+0")
            }
            return .screen(display: display, region: area, frameRate: frameRate)
        }
        if let window {
            return .window(
                id: try await Self.windowID(window, display: display),
                display: display,
                frameRate: frameRate
            )
        }
        return .screen(display: display, frameRate: frameRate)
    }

    static func resolution(_ text: String) throws -> Resolution {
        let parts = text.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] >= 16, parts[1] >= 16, parts[0] % 2 == 0, parts[1] % 2 == 0 else {
            throw CLIError(.usage, "--size \(text): expected an even WxH such as 1280x720")
        }
        return Resolution(width: parts[0], height: parts[1])
    }

    /// An X11 window id: given as `0x…`, or looked up by name with `xwininfo` (x11-utils).
    static func windowID(_ window: String, display: String) async throws -> String {
        if window.hasPrefix("0x") { return window }
        let xwininfo = try ExternalTool.require("xwininfo", for: "--window NAME")
        let output = try await xwininfo.output(arguments: ["-display", display, "-name", window])
        guard let line = output.split(separator: "\n").first(where: { $0.contains("Window id:") }),
            let id = line.split(separator: " ").first(where: { $0.hasPrefix("0x") })
        else {
            throw CLIError(.usage, "no window called '\(window)' on \(display)")
        }
        return String(id)
    }
}

/// `cast audio`: this computer's sound to a speaker, a speaker group or a TV.
struct AudioCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audio",
        abstract: "Send this computer's sound to a speaker, a group or a TV over Cast Streaming.",
        discussion: """
            Captures the desktop's sound (PulseAudio or PipeWire's monitor of the default output, or --source), \
            encodes Opus here and streams it to the audio mirroring app. Runs until Ctrl-C, --duration or \
            `cast stop`. Examples: cast audio --device Kitchen, cast audio --input song.flac
            """
    )
    @OptionGroup var global: GlobalOptions
    @Option(help: "The PulseAudio/PipeWire source to capture (default: the monitor of the default output).")
    var source: String?
    @Option(help: "Send any file, URL or device ffmpeg reads instead ('test': a tone).") var input: String?
    @Option(help: "Target playout delay in milliseconds.") var delay = 400
    @Option(help: "Bit rate, bits per second.") var bitrate = 128_000
    @Option(help: "Stop after this many seconds.") var duration: Double?

    func run() async throws {
        let runtime = try CLIRuntime(global) { $0.receiverApplicationID = MirroringSession.audioOnlyApplicationID }
        do {
            var options = ScreenMirror.Options()
            options.audio =
                input.map { $0 == "test" ? .testPattern() : .input($0) }
                ?? .desktopAudio(monitor: source ?? "@DEFAULT_MONITOR@")
            options.audioBitRate = bitrate
            options.targetDelay = .milliseconds(Int64(delay))
            try await Mirroring.run(options, runtime: runtime, duration: duration)
        } catch {
            throw runtime.fail(error)
        }
    }
}

/// What `cast screen` and `cast audio` share: the session, the status line, the end.
enum Mirroring {
    static func run(_ options: ScreenMirror.Options, runtime: CLIRuntime, duration: Double?) async throws {
        let termination = TerminationSignal()
        var device = try await runtime.resolveDevice()
        var options = options
        var castOptions = runtime.options
        if options.video != nil, device.capabilities.isEmpty {
            // An address alone does not say whether it shows pictures: ask the device, as a scan does.
            device = (try? await AddressScanner(logger: runtime.logger).describe(device)) ?? device
        }
        if options.video != nil, !device.mayPlayVideo {
            // A speaker or a speaker group shows no picture: its sound goes to the audio-only app, as Chrome does.
            guard options.audio != nil else {
                throw CLIError(
                    .usage,
                    "\(device.friendlyName) plays sound only: add --audio to send the sound, or use cast audio"
                )
            }
            options.video = nil
            castOptions.receiverApplicationID = MirroringSession.audioOnlyApplicationID
            if !runtime.global.json { runtime.warn("\(device.friendlyName) plays sound only: sending the sound") }
        }
        let context = CastContext(options: castOptions, logger: runtime.logger)
        let session = try await context.sessionManager.startSession(with: device)
        let mirror = ScreenMirror(options: options)
        let last = Latest<ScreenMirror.Progress>()
        let live = runtime.isTTY && !runtime.global.json
        if !runtime.global.json { runtime.warn("mirroring to \(device.friendlyName); Ctrl-C stops") }
        var ended: (any Error)?
        await withTaskGroup(of: (any Error)?.self) { group in
            group.addTask {
                do {
                    try await mirror.run(on: session, logger: runtime.logger) { progress in
                        last.set(progress)
                        if live { FileHandleOutput.standardErrorInPlace(statusLine(progress)) }
                    }
                    return nil
                } catch {
                    return error
                }
            }
            group.addTask {
                _ = await termination.wait()
                return nil
            }
            if let duration {
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(Int64(duration * 1000)))
                    return nil
                }
            }
            ended = await group.next() ?? nil
            group.cancelAll()
        }
        if live { FileHandleOutput.standardError("") }
        await context.sessionManager.endSession(stopCasting: true)
        if let error = ended as? CastStreamingError, error.code == .sessionEnded {
            runtime.warn("the receiver stopped mirroring")
        } else if let ended {
            throw ended
        }
        if let progress = last.value { runtime.emit(json: json(progress), text: "mirrored: " + statusLine(progress)) }
    }

    static func statusLine(_ progress: ScreenMirror.Progress) -> String {
        var parts: [String] = []
        if let video = progress.video {
            parts.append("\(progress.resolution)")
            parts.append(String(printf: "%.0f fps", progress.framesPerSecond))
            parts.append("\(progress.targetBitRate / 1000) kbit/s target")
            parts.append("\(video.framesSent) frames, \(video.framesRefused) dropped")
        }
        parts.append(String(printf: "%.0f kbit/s sent", progress.sentBitRate / 1000))
        let streams = [progress.video, progress.audio].compactMap { $0 }
        parts.append("\(streams.reduce(0) { $0 + $1.packetsRetransmitted }) resent")
        if let rtt = streams.compactMap(\.roundTripTime).first {
            parts.append(String(printf: "rtt %.1f ms", rtt.inSeconds * 1000))
        }
        return parts.joined(separator: ", ")
    }

    static func json(_ progress: ScreenMirror.Progress) -> JSONValue {
        func stream(_ statistics: StreamStatistics) -> JSONValue {
            [
                "framesSent": .number(Double(statistics.framesSent)),
                "framesDropped": .number(Double(statistics.framesRefused)),
                "framesAcknowledged": .number(Double(statistics.framesAcknowledged)),
                "packetsSent": .number(Double(statistics.packetsSent)),
                "packetsRetransmitted": .number(Double(statistics.packetsRetransmitted)),
                "bytesSent": .number(Double(statistics.bytesSent)),
                "keyFramesRequested": .number(Double(statistics.pictureLossIndications)),
                "roundTripMilliseconds": statistics.roundTripTime.map { .number($0.inSeconds * 1000) } ?? .null,
            ]
        }
        var object: [String: JSONValue] = [
            "framesPerSecond": .number(progress.framesPerSecond),
            "targetBitRate": .number(Double(progress.targetBitRate)),
            "sentBitRate": .number(progress.sentBitRate.rounded()),
            "resolution": .string("\(progress.resolution)"),
            "frameInterval": .number(Double(progress.frameInterval)),
        ]
        if let video = progress.video { object["video"] = stream(video) }
        if let audio = progress.audio { object["audio"] = stream(audio) }
        return .object(object)
    }
}

/// The last value a callback saw.
private final class Latest<Value: Sendable>: Sendable {
    private let box = NIOLockedValueBox<Value?>(nil)
    var value: Value? { box.withLockedValue { $0 } }
    func set(_ value: Value) { box.withLockedValue { $0 = value } }
}
