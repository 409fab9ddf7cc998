// The thin wrapper around the system OpenH264: C types stay in this file.
internal import COpenH264

/// A real-time H.264 encoder (OpenH264, constrained baseline): constant bit rate, IDR frames only when asked,
/// each access unit in Annex B with SPS and PPS before every IDR — the form Cast receivers decode. Not
/// thread-safe: one task feeds it.
final class H264Encoder: VideoEncoder {
    let resolution: Resolution
    private let encoder: UnsafeMutablePointer<ISVCEncoder?>
    private(set) var bitRate: Int
    private var info = SFrameBSInfo()

    /// An encoder for I420 frames of `resolution`.
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/encoderFailed``.
    init(resolution: Resolution, frameRate: Int, bitRate: Int, threads: Int = 2) throws {
        guard
            let encoder = COpenH264_create(
                Int32(resolution.width),
                Int32(resolution.height),
                Float(frameRate),
                Int32(bitRate),
                Int32(threads)
            )
        else {
            throw CastStreamingError(.encoderFailed, "OpenH264 refused \(resolution) at \(bitRate) bit/s")
        }
        self.encoder = encoder
        self.resolution = resolution
        self.bitRate = bitRate
    }

    deinit { COpenH264_destroy(encoder) }

    func setBitRate(_ bitRate: Int) {
        guard bitRate != self.bitRate, COpenH264_set_bitrate(encoder, Int32(bitRate)) == 0 else { return }
        self.bitRate = bitRate
    }

    func encode(i420 frame: [UInt8], timestamp: Int64, duration: Int, keyFrame: Bool) throws -> (
        data: [UInt8], isKeyFrame: Bool
    )? {
        var pixels = frame
        let status = pixels.withUnsafeMutableBufferPointer { buffer in
            COpenH264_encode(
                encoder,
                buffer.baseAddress,
                Int32(resolution.width),
                Int32(resolution.height),
                timestamp / 90,
                keyFrame ? 1 : 0,
                &info
            )
        }
        guard status == 0 else { throw CastStreamingError(.encoderFailed, "OpenH264 failed (\(status))") }
        guard COpenH264_is_skipped(&info) == 0 else { return nil }
        var data: [UInt8] = []
        for index in 0..<Int(info.iLayerNum) {
            var length: Int32 = 0
            guard let bytes = COpenH264_layer(&info, Int32(index), &length), length > 0 else { continue }
            data += UnsafeBufferPointer(start: bytes, count: Int(length))
        }
        return data.isEmpty ? nil : (data, COpenH264_is_key_frame(&info) != 0)
    }
}
