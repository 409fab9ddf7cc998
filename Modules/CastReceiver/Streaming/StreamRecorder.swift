import CastStreaming
import CastTransport
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// Writes one kind of stream a mirroring session receives to a file ffmpeg reads (`cast-receiver --stream-record`
/// and `--stream-record-audio`): VP8, VP9 and AV1 video as IVF, H.264 as its Annex B stream, Opus sound as Ogg
/// Opus. Frames before the first a decoder could start from are skipped.
public final class StreamRecorder: Sendable {
    private struct State: Sendable {
        var descriptor: Int32
        var container: StreamContainer
    }

    private let state: NIOLockedValueBox<State>

    /// Creates (or truncates) `path` for the `kind` of stream it records (video unless told otherwise).
    ///
    /// - Throws: ``CastReceiverError`` with ``CastReceiverError/Code/invalidConfiguration`` when it cannot be
    ///   created.
    public init(path: String, kind: OfferedStream.Kind = .video) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw CastReceiverError(.invalidConfiguration, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        state = NIOLockedValueBox(State(descriptor: descriptor, container: StreamContainer(kind: kind)))
    }

    deinit { state.withLockedValue { _ = close($0.descriptor) } }

    /// The frames written so far.
    public var framesRecorded: Int { state.withLockedValue { $0.container.frames } }

    /// Appends a received frame of `kind` (frames of the other kind are ignored).
    public func record(_ kind: OfferedStream.Kind, _ frame: ReceivedFrame) {
        state.withLockedValue { state in
            guard kind == state.container.kind else { return }
            let bytes = state.container.append(frame)
            guard !bytes.isEmpty else { return }
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = write(state.descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    guard written > 0 else { return }
                    offset += written
                }
            }
        }
    }
}
