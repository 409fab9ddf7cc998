// The thin wrapper around the system libvpx: C types stay in this file.
internal import CVPX

/// A real-time VP8 or VP9 encoder (libvpx): constant bit rate, no look-ahead, key frames only when asked — what a
/// Cast Streaming receiver expects. Bit-rate changes apply from the next frame. Not thread-safe: one task feeds it.
final class VPXEncoder: VideoEncoder {
    let resolution: Resolution
    private let context = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
    private var configuration = vpx_codec_enc_cfg_t()
    private(set) var bitRate: Int

    /// An encoder for I420 frames of `resolution`.
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/encoderFailed`` when libvpx refuses the
    ///   settings (odd sizes, absurd rates).
    init(vp9: Bool = false, resolution: Resolution, frameRate: Int, bitRate: Int, threads: Int = 2) throws {
        self.resolution = resolution
        self.bitRate = bitRate
        let codec = vp9 ? "VP9" : "VP8"
        guard CVPX_default_config(&configuration, vp9 ? 1 : 0) == VPX_CODEC_OK else {
            context.deallocate()
            throw CastStreamingError(.encoderFailed, "libvpx has no \(codec) encoder configuration")
        }
        configuration.g_w = UInt32(resolution.width)
        configuration.g_h = UInt32(resolution.height)
        configuration.g_timebase = vpx_rational(num: 1, den: 90000)
        configuration.g_threads = UInt32(max(1, threads))
        configuration.g_lag_in_frames = 0
        configuration.g_error_resilient = 1
        configuration.g_pass = VPX_RC_ONE_PASS
        configuration.rc_end_usage = VPX_CBR
        configuration.rc_target_bitrate = UInt32(max(1, bitRate / 1000))
        configuration.rc_min_quantizer = 4
        configuration.rc_max_quantizer = 58
        configuration.rc_undershoot_pct = 100
        configuration.rc_overshoot_pct = 15
        configuration.rc_buf_initial_sz = 500
        configuration.rc_buf_optimal_sz = 600
        configuration.rc_buf_sz = 1000
        configuration.rc_dropframe_thresh = 0
        configuration.kf_mode = VPX_KF_DISABLED
        _ = frameRate
        guard CVPX_enc_init(context, &configuration, vp9 ? 1 : 0) == VPX_CODEC_OK else {
            let reason = String(cString: vpx_codec_error_detail(context) ?? vpx_codec_error(context))
            context.deallocate()
            throw CastStreamingError(
                .encoderFailed,
                "libvpx refused \(codec) \(resolution) at \(bitRate) bit/s: \(reason)"
            )
        }
        if vp9 {
            // Speed over quality on small machines: 7–9 are VP9's real-time speeds.
            _ = CVPX_set_cpu_used(context, 8)
            CVPX_tune_vp9_real_time(context)
        } else {
            // Speed over quality on small machines: -6 … -16 are VP8's real-time settings.
            _ = CVPX_set_cpu_used(context, -12)
            _ = CVPX_set_token_partitions(context, 1)
        }
        _ = CVPX_set_static_threshold(context, 1)
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
    }

    /// Changes the target bit rate from the next frame on.
    func setBitRate(_ bitRate: Int) {
        guard bitRate != self.bitRate else { return }
        configuration.rc_target_bitrate = UInt32(max(1, bitRate / 1000))
        if vpx_codec_enc_config_set(context, &configuration) == VPX_CODEC_OK { self.bitRate = bitRate }
    }

    /// Encodes one I420 frame (`width × height × 3/2` bytes) at `timestamp` (90 kHz ticks).
    ///
    /// - Returns: The encoded frame and whether it is a key frame; `nil` when the encoder produced nothing.
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/encoderFailed``.
    func encode(i420 frame: [UInt8], timestamp: Int64, duration: Int, keyFrame: Bool) throws -> (
        data: [UInt8], isKeyFrame: Bool
    )? {
        var image = vpx_image_t()
        let status = frame.withUnsafeBufferPointer { pixels -> vpx_codec_err_t in
            let base = UnsafeMutablePointer(mutating: pixels.baseAddress!)
            vpx_img_wrap(&image, VPX_IMG_FMT_I420, UInt32(resolution.width), UInt32(resolution.height), 1, base)
            return vpx_codec_encode(
                context,
                &image,
                timestamp,
                UInt(duration),
                keyFrame ? CVPX_force_key_frame() : 0,
                UInt(VPX_DL_REALTIME)
            )
        }
        guard status == VPX_CODEC_OK else {
            throw CastStreamingError(.encoderFailed, "libvpx: \(String(cString: vpx_codec_error(context)))")
        }
        var iterator: vpx_codec_iter_t?
        var output: (data: [UInt8], isKeyFrame: Bool)?
        while let packet = vpx_codec_get_cx_data(context, &iterator) {
            guard packet.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
            let frame = packet.pointee.data.frame
            let bytes = UnsafeRawBufferPointer(start: frame.buf, count: frame.sz)
            output = (Array(bytes), CVPX_packet_is_key_frame(packet) != 0)
        }
        return output
    }
}
