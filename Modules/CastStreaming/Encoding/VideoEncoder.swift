/// What the mirror needs of a video encoder: I420 frames in, one access unit out, key frames on request and
/// bit-rate changes from the next frame: ``VPXEncoder`` (VP8, VP9), ``H264Encoder`` and ``AV1Encoder``.
protocol VideoEncoder: AnyObject {
    /// Changes the target bit rate from the next frame on.
    func setBitRate(_ bitRate: Int)

    /// Encodes one I420 frame at `timestamp` (90 kHz ticks); `nil` when the encoder produced nothing.
    func encode(i420 frame: [UInt8], timestamp: Int64, duration: Int, keyFrame: Bool) throws -> (
        data: [UInt8], isKeyFrame: Bool
    )?
}

/// The encoder for `codec` (`vp8`, `vp9`, `h264` or `av1`).
///
/// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/encoderFailed`` for another codec or settings
///   the encoder refuses.
func makeVideoEncoder(codec: String, resolution: Resolution, frameRate: Int, bitRate: Int) throws -> any VideoEncoder {
    switch codec {
    case "vp8": try VPXEncoder(resolution: resolution, frameRate: frameRate, bitRate: bitRate)
    case "vp9": try VPXEncoder(vp9: true, resolution: resolution, frameRate: frameRate, bitRate: bitRate)
    case "h264": try H264Encoder(resolution: resolution, frameRate: frameRate, bitRate: bitRate)
    case "av1": try AV1Encoder(resolution: resolution, frameRate: frameRate, bitRate: bitRate)
    default: throw CastStreamingError(.encoderFailed, "no \(codec) encoder here: vp8, vp9, h264 and av1 are")
    }
}
