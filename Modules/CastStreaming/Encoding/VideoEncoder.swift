/// What the mirror needs of a video encoder: I420 frames in, one access unit out, key frames on request and
/// bit-rate changes from the next frame: ``VPXEncoder`` (VP8, VP9) and ``H264Encoder``.
protocol VideoEncoder: AnyObject {
    /// Changes the target bit rate from the next frame on.
    func setBitRate(_ bitRate: Int)

    /// Encodes one I420 frame at `timestamp` (90 kHz ticks); `nil` when the encoder produced nothing.
    func encode(i420 frame: [UInt8], timestamp: Int64, duration: Int, keyFrame: Bool) throws -> (
        data: [UInt8], isKeyFrame: Bool
    )?
}

/// The codecs encoded here, in the order a sender prefers them when a receiver takes several (Chrome's order).
let encodableVideoCodecs = ["vp9", "h264", "vp8"]

/// The encoder for `codec` (`vp8`, `vp9` or `h264`).
///
/// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/encoderFailed`` for another codec or settings
///   the encoder refuses.
func makeVideoEncoder(codec: String, resolution: Resolution, frameRate: Int, bitRate: Int) throws -> any VideoEncoder {
    switch codec {
    case "vp8": try VPXEncoder(resolution: resolution, frameRate: frameRate, bitRate: bitRate)
    case "vp9": try VPXEncoder(vp9: true, resolution: resolution, frameRate: frameRate, bitRate: bitRate)
    case "h264": try H264Encoder(resolution: resolution, frameRate: frameRate, bitRate: bitRate)
    default: throw CastStreamingError(.encoderFailed, "no \(codec) encoder here: vp8, vp9 and h264 are")
    }
}
