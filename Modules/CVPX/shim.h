// The system libvpx (libvpx-dev), as CastStreaming's VP8 encoder sees it.
// Function-like macros cannot be called from Swift, so each one the project needs gets a
// `static inline` wrapper here with a `CVPX_` prefix.
#ifndef CVPX_SHIM_H
#define CVPX_SHIM_H

#include <vpx/vpx_encoder.h>
#include <vpx/vp8cx.h>

static inline vpx_codec_err_t CVPX_enc_init(vpx_codec_ctx_t *context, const vpx_codec_enc_cfg_t *config) {
    return vpx_codec_enc_init(context, vpx_codec_vp8_cx(), config, 0);
}

static inline vpx_codec_err_t CVPX_default_config(vpx_codec_enc_cfg_t *config) {
    return vpx_codec_enc_config_default(vpx_codec_vp8_cx(), config, 0);
}

static inline vpx_codec_err_t CVPX_set_cpu_used(vpx_codec_ctx_t *context, int value) {
    return vpx_codec_control(context, VP8E_SET_CPUUSED, value);
}

static inline vpx_codec_err_t CVPX_set_static_threshold(vpx_codec_ctx_t *context, unsigned int value) {
    return vpx_codec_control(context, VP8E_SET_STATIC_THRESHOLD, value);
}

static inline vpx_codec_err_t CVPX_set_token_partitions(vpx_codec_ctx_t *context, int value) {
    return vpx_codec_control(context, VP8E_SET_TOKEN_PARTITIONS, value);
}

static inline vpx_enc_frame_flags_t CVPX_force_key_frame(void) { return VPX_EFLAG_FORCE_KF; }

static inline int CVPX_packet_is_key_frame(const vpx_codec_cx_pkt_t *packet) {
    return (packet->data.frame.flags & VPX_FRAME_IS_KEY) != 0;
}
#endif
