// The thin wrapper around the system libaom: C types stay in this file.
internal import CAOM

/// A real-time AV1 encoder (libaom, speed 10): constant bit rate, no look-ahead, key frames only when asked; each
/// frame is one temporal unit of OBUs, as libaom writes it. Not thread-safe: one task feeds it.
final class AV1Encoder: VideoEncoder {
    let resolution: Resolution
    private let encoder: UnsafeMutablePointer<CAOM_encoder>
    private(set) var bitRate: Int

    /// An encoder for I420 frames of `resolution`.
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/encoderFailed``.
    init(resolution: Resolution, frameRate: Int, bitRate: Int, threads: Int = 2) throws {
        guard
            let encoder = CAOM_create(
                UInt32(resolution.width),
                UInt32(resolution.height),
                UInt32(max(1, bitRate / 1000)),
                UInt32(max(1, threads))
            )
        else {
            throw CastStreamingError(.encoderFailed, "libaom refused AV1 \(resolution) at \(bitRate) bit/s")
        }
        self.encoder = encoder
        self.resolution = resolution
        self.bitRate = bitRate
    }

    deinit { CAOM_destroy(encoder) }

    func setBitRate(_ bitRate: Int) {
        guard bitRate != self.bitRate, CAOM_set_bitrate(encoder, UInt32(max(1, bitRate / 1000))) == 0 else { return }
        self.bitRate = bitRate
    }

    func encode(i420 frame: [UInt8], timestamp: Int64, duration: Int, keyFrame: Bool) throws -> (
        data: [UInt8], isKeyFrame: Bool
    )? {
        var pixels = frame
        let status = pixels.withUnsafeMutableBufferPointer {
            CAOM_encode(encoder, $0.baseAddress, timestamp, UInt(duration), keyFrame ? 1 : 0)
        }
        guard status == 0 else {
            throw CastStreamingError(.encoderFailed, "libaom: \(String(cString: CAOM_error(encoder)))")
        }
        var iterator: aom_codec_iter_t?
        var size = 0
        var isKey: Int32 = 0
        var output: (data: [UInt8], isKeyFrame: Bool)?
        while let bytes = CAOM_next_frame(encoder, &iterator, &size, &isKey) {
            output = (Array(UnsafeBufferPointer(start: bytes, count: size)), isKey != 0)
        }
        return output
    }
}
