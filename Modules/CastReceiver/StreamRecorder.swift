import CastStreaming
import CastTransport
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// Writes the video a mirroring session receives to a file ffmpeg decodes (`cast-receiver --stream-record`): VP8
/// VP9 and AV1 as IVF (90 kHz timestamps), H.264 as its Annex B stream.
/// Frames before the first key frame are skipped.
public final class StreamRecorder: Sendable {
    private struct State: Sendable {
        var descriptor: Int32
        var frames: UInt32 = 0
        var firstTimestamp: UInt32?
        var isAnnexB = false
    }

    private let state: NIOLockedValueBox<State>

    /// Creates (or truncates) `path`.
    ///
    /// - Throws: ``CastReceiverError`` with ``CastReceiverError/Code/invalidConfiguration`` when it cannot be
    ///   created.
    public init(path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw CastReceiverError(.invalidConfiguration, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        state = NIOLockedValueBox(State(descriptor: descriptor))
    }

    deinit { state.withLockedValue { _ = close($0.descriptor) } }

    /// Appends a received frame of `kind` (audio is not recorded).
    public func record(_ kind: OfferedStream.Kind, _ frame: ReceivedFrame) {
        guard kind == .video else { return }
        state.withLockedValue { state in
            if state.firstTimestamp == nil, frame.isKeyFrame,
                frame.data.starts(with: [0, 0, 1]) || frame.data.starts(with: [0, 0, 0, 1])
            {
                state.isAnnexB = true
                state.firstTimestamp = frame.rtpTimestamp
            }
            if state.isAnnexB {
                write(frame.data, to: state.descriptor)
                state.frames += 1
                return
            }
            if state.firstTimestamp == nil {
                guard frame.isKeyFrame, frame.data.count >= 10 else { return }
                let fourCC: String
                var (width, height): (UInt16, UInt16) = (0, 0)
                if frame.data[3...5] == [0x9d, 0x01, 0x2a] {
                    // A VP8 key frame: 3-byte tag, 9d 01 2a, then 14-bit width and height.
                    fourCC = "VP80"
                    width = UInt16(frame.data[6]) | UInt16(frame.data[7] & 0x3F) << 8
                    height = UInt16(frame.data[8]) | UInt16(frame.data[9] & 0x3F) << 8
                } else if frame.data[0] >> 6 == 2, frame.data[1...3] == [0x49, 0x83, 0x42] {
                    // A VP9 key frame (its size is deep in a bit-packed header: the decoder reads it there).
                    fourCC = "VP90"
                } else if frame.data.starts(with: [0x12, 0x00]) {
                    // An AV1 temporal unit, starting with its temporal delimiter OBU.
                    fourCC = "AV01"
                } else {
                    return
                }
                var header = Array("DKIF".utf8)
                header += littleEndian(UInt16(0)) + littleEndian(UInt16(32)) + Array(fourCC.utf8)
                header += littleEndian(width) + littleEndian(height)
                header += littleEndian(UInt32(90000)) + littleEndian(UInt32(1)) + littleEndian(UInt32(0))
                header += littleEndian(UInt32(0))
                write(header, to: state.descriptor)
                state.firstTimestamp = frame.rtpTimestamp
            }
            let pts = UInt64(frame.rtpTimestamp &- state.firstTimestamp!)
            write(littleEndian(UInt32(frame.data.count)) + littleEndian(pts) + frame.data, to: state.descriptor)
            state.frames += 1
        }
    }

    private func write(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    private func littleEndian<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
}
