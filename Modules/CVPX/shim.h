// The system libvpx (libvpx-dev), as CastStreaming's VP8 and VP9 encoders see it.
// Function-like macros cannot be called from Swift, so each one the project needs gets a
// `static inline` wrapper here with a `CVPX_` prefix.
#ifndef CVPX_SHIM_H
#define CVPX_SHIM_H

#include <vpx/vpx_encoder.h>
#include <vpx/vp8cx.h>

/// libvpx's encoder interface: VP9 when `vp9` is non-zero, else VP8.
static inline vpx_codec_iface_t *CVPX_interface(int vp9) { return vp9 ? vpx_codec_vp9_cx() : vpx_codec_vp8_cx(); }

static inline vpx_codec_err_t CVPX_enc_init(vpx_codec_ctx_t *context, const vpx_codec_enc_cfg_t *config, int vp9) {
    return vpx_codec_enc_init(context, CVPX_interface(vp9), config, 0);
}

static inline vpx_codec_err_t CVPX_default_config(vpx_codec_enc_cfg_t *config, int vp9) {
    return vpx_codec_enc_config_default(CVPX_interface(vp9), config, 0);
}

/// VP9 in real time: row-based multithreading, and no frame-parallel decoding dependencies to wait for.
static inline void CVPX_tune_vp9_real_time(vpx_codec_ctx_t *context) {
    vpx_codec_control(context, VP9E_SET_ROW_MT, 1);
    vpx_codec_control(context, VP9E_SET_TILE_COLUMNS, 1);
    vpx_codec_control(context, VP9E_SET_AQ_MODE, 3);
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
