import CastMediaServer
import NIOConcurrencyHelpers
import Subprocess
import SystemPackage

/// ffmpeg reading a ``CaptureSource`` and writing fixed-size raw frames to its standard output, handed over one
/// frame at a time with the moment it arrived. It dies with this process (or when the stream is dropped).
struct RawCapture: Sendable {
    /// A raw frame and when its last byte arrived.
    struct Frame: Sendable {
        var bytes: [UInt8]
        var arrival: StreamingMoment
    }

    /// I420 video at `resolution` and `frameRate`, letterboxed to keep the source's aspect ratio.
    static func video(_ source: CaptureSource, resolution: Resolution, frameRate: Int) throws -> RawCapture {
        let filter =
            "scale=\(resolution.width):\(resolution.height):force_original_aspect_ratio=decrease,"
            + "pad=\(resolution.width):\(resolution.height):(ow-iw)/2:(oh-ih)/2,fps=\(frameRate)"
        return try RawCapture(
            source: source,
            outputArguments: ["-map", "0:v:0", "-an", "-vf", filter, "-pix_fmt", "yuv420p", "-f", "rawvideo"],
            frameSize: resolution.width * resolution.height * 3 / 2
        )
    }

    /// 48 kHz 16-bit stereo in 10 ms frames.
    static func audio(_ source: CaptureSource, sampleRate: Int = 48000, channels: Int = 2) throws -> RawCapture {
        // A test pattern's second input is its tone; other sources have their sound in the first input.
        let map = source.inputArguments.filter { $0 == "-i" }.count > 1 ? "1:a:0" : "0:a:0"
        return try RawCapture(
            source: source,
            outputArguments: ["-map", map, "-vn", "-ac", "\(channels)", "-ar", "\(sampleRate)", "-f", "s16le"],
            frameSize: sampleRate / 100 * channels * 2
        )
    }

    let tool: ExternalTool
    let arguments: [String]
    let frameSize: Int

    private init(source: CaptureSource, outputArguments: [String], frameSize: Int) throws {
        guard let ffmpeg = ExternalTool.find("ffmpeg") else {
            throw CastStreamingError(
                .toolMissing,
                "capturing \(source) needs ffmpeg, which is not installed: install ffmpeg"
            )
        }
        tool = ffmpeg
        arguments =
            ["-hide_banner", "-loglevel", "error", "-nostdin", "-fflags", "nobuffer", "-flags", "low_delay"]
            + source.inputArguments + outputArguments + ["pipe:1"]
        self.frameSize = frameSize
    }

    /// Runs ffmpeg and calls `body` with each frame until the source ends, `body` throws or the task is cancelled.
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/captureFailed`` when ffmpeg cannot start or
    ///   fails (with the end of its complaint).
    func run(_ body: @escaping @Sendable (Frame) async throws -> Void) async throws {
        let command = tool.commandLine(arguments)
        let frameSize = self.frameSize
        let result: ExecutionResult<Void, SequenceOutput, StringOutput<UTF8>>
        do {
            result = try await Subprocess.run(
                .path(FilePath(command.executable)),
                arguments: Arguments(command.arguments),
                input: .none,
                output: .sequence,
                error: .string(limit: 64 << 10)
            ) { execution in
                // Each chunk is copied once, straight into the frame it belongs to.
                var frame = [UInt8](repeating: 0, count: frameSize)
                var filled = 0
                for try await buffer in execution.standardOutput {
                    var completed: [[UInt8]] = []
                    buffer.withUnsafeBytes { chunk in
                        var offset = 0
                        while offset < chunk.count {
                            let count = min(frameSize - filled, chunk.count - offset)
                            frame.withUnsafeMutableBytes {
                                $0.baseAddress!.advanced(by: filled).copyMemory(
                                    from: chunk.baseAddress!.advanced(by: offset),
                                    byteCount: count
                                )
                            }
                            filled += count
                            offset += count
                            if filled == frameSize {
                                completed.append(frame)
                                filled = 0
                            }
                        }
                    }
                    let arrival = StreamingMoment.now()
                    for bytes in completed { try await body(Frame(bytes: bytes, arrival: arrival)) }
                }
            }
        } catch let error as CastStreamingError {
            throw error
        } catch is CancellationError {
            return
        } catch {
            if Task.isCancelled { return }
            throw CastStreamingError(.captureFailed, "ffmpeg did not run: \(error)", cause: error)
        }
        guard result.terminationStatus.isSuccess || Task.isCancelled else {
            let complaint = result.standardError.split(whereSeparator: \.isNewline).suffix(3).joined(separator: " / ")
            throw CastStreamingError(.captureFailed, "ffmpeg failed (\(result.terminationStatus)): \(complaint)")
        }
    }
}
