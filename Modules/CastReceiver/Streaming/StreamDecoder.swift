import CastMediaServer
import CastStreaming
import CastTransport
import NIOConcurrencyHelpers
import Subprocess
import SystemPackage

/// Decodes one kind of stream a mirroring session receives with ffmpeg, to prove that it is valid video or sound
/// (`cast-receiver --decode`). Frames go through the recorder's container (IVF, Annex B, Ogg Opus) into
/// `ffmpeg -f framecrc`, which prints a line for each frame it decodes; each line ffmpeg writes to its standard
/// error is a decoding error. A frame id 0 after others (a new OFFER restarts the stream) starts a new ffmpeg.
/// ffmpeg decodes far faster than real time, so frames are never dropped on its account.
public final class StreamDecoder: Sendable {
    /// What was decoded so far, over every stream of this kind.
    public struct Statistics: Sendable, Equatable {
        /// The codec of the latest stream (`vp8`, `vp9`, `av1`, `h264`, `opus`), once a frame showed it.
        public var codec: String?
        /// Frames handed to ffmpeg.
        public var framesFed = 0
        /// Frames ffmpeg decoded.
        public var framesDecoded = 0
        /// Lines ffmpeg complained with (corrupt or undecodable data).
        public var errors = 0
        /// The latest complaint.
        public var lastError: String?

        /// As the emulator's statistics file shows it.
        public var json: JSONValue {
            [
                "codec": codec.map { .string($0) } ?? .null, "framesFed": .number(Double(framesFed)),
                "framesDecoded": .number(Double(framesDecoded)), "errors": .number(Double(errors)),
                "lastError": lastError.map { .string($0) } ?? .null,
            ]
        }
    }

    private struct State: Sendable {
        var container: StreamContainer
        var input: AsyncStream<[UInt8]>.Continuation?
        var runs: [Task<Void, Never>] = []
        var statistics = Statistics()
    }

    /// The kind of stream decoded.
    public let kind: OfferedStream.Kind
    private let ffmpeg: ExternalTool
    private let state: NIOLockedValueBox<State>

    /// A decoder for `kind` streams.
    ///
    /// - Throws: ``CastReceiverError`` with ``CastReceiverError/Code/toolMissing`` when ffmpeg is not installed.
    public init(kind: OfferedStream.Kind) throws {
        guard let ffmpeg = ExternalTool.find("ffmpeg") else {
            throw CastReceiverError(
                .toolMissing,
                "decoding what a mirroring session receives needs ffmpeg: install ffmpeg"
            )
        }
        self.kind = kind
        self.ffmpeg = ffmpeg
        state = NIOLockedValueBox(State(container: StreamContainer(kind: kind)))
    }

    deinit { state.withLockedValue { $0.input?.finish() } }

    /// What was decoded so far (ffmpeg reports as it goes; ``finish()`` waits for its last word).
    public var statistics: Statistics { state.withLockedValue { $0.statistics } }

    /// Hands a received frame of `kind` to ffmpeg (frames of the other kind are ignored).
    public func decode(_ kind: OfferedStream.Kind, _ frame: ReceivedFrame) {
        guard kind == self.kind else { return }
        state.withLockedValue { state in
            if frame.frameID == 0, state.container.frames > 0 {
                state.input?.finish()
                state.input = nil
                state.container = StreamContainer(kind: kind)
            }
            let before = state.container.frames
            let bytes = state.container.append(frame)
            guard !bytes.isEmpty else { return }
            if state.input == nil, let format = state.container.format {
                let (stream, input) = AsyncStream<[UInt8]>.makeStream()
                state.input = input
                state.statistics.codec = state.container.codec
                state.runs.append(Task { [ffmpeg, box = self.state] in await Self.run(ffmpeg, format, stream, box) })
            }
            state.statistics.framesFed += state.container.frames - before
            state.input?.yield(bytes)
        }
    }

    /// Ends the input and waits until ffmpeg has decoded everything it was given.
    public func finish() async -> Statistics {
        let runs = state.withLockedValue { state in
            state.input?.finish()
            state.input = nil
            return state.runs
        }
        for run in runs { await run.value }
        return statistics
    }

    /// One ffmpeg for one stream; it holds the state box, not the decoder, so that dropping the decoder ends it.
    private static func run(
        _ ffmpeg: ExternalTool,
        _ format: StreamContainer.Format,
        _ input: AsyncStream<[UInt8]>,
        _ state: NIOLockedValueBox<State>
    ) async {
        let command = ffmpeg.commandLine([
            // A small probe and flushed lines, so that frames are counted as they arrive, not at the end; one
            // decoding thread, which holds back no frames for the others.
            "-hide_banner", "-nostdin", "-loglevel", "error", "-probesize", "32768", "-threads", "1", "-f",
            format.rawValue, "-i", "pipe:0", "-flush_packets", "1", "-f", "framecrc", "pipe:1",
        ])
        do {
            _ = try await Subprocess.run(
                .path(FilePath(command.executable)),
                arguments: Arguments(command.arguments),
                input: .inputWriter,
                output: .sequence,
                error: .sequence
            ) { execution in
                await withTaskGroup(of: Void.self) { group in
                    group.addTask {
                        let writer = execution.standardInputWriter
                        for await bytes in input {
                            guard (try? await writer.write(bytes)) != nil else { break }
                        }
                        try? await writer.finish()
                    }
                    group.addTask {
                        // framecrc: one line per decoded frame, after a few `#` header lines.
                        do {
                            for try await line in execution.standardOutput.strings(as: UTF8.self)
                            where !line.hasPrefix("#") && !line.isEmpty {
                                state.withLockedValue { $0.statistics.framesDecoded += 1 }
                            }
                        } catch {}
                    }
                    group.addTask {
                        do {
                            for try await line in execution.standardError.strings(as: UTF8.self) where !line.isEmpty {
                                state.withLockedValue {
                                    $0.statistics.errors += 1
                                    $0.statistics.lastError = line
                                }
                            }
                        } catch {}
                    }
                }
            }
        } catch {
            state.withLockedValue {
                $0.statistics.errors += 1
                $0.statistics.lastError = "ffmpeg did not run: \(error)"
            }
        }
    }
}
