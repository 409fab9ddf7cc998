// The system libaom (libaom-dev), as CastStreaming's AV1 encoder sees it.
// Its controls are variadic macros Swift cannot call: the encoder's set-up lives in these `static inline`
// wrappers (prefix `CAOM_`), with the few settings a real-time Cast sender needs.
#ifndef CAOM_SHIM_H
#define CAOM_SHIM_H

#include <stdlib.h>
#include <aom/aom_encoder.h>
#include <aom/aomcx.h>

typedef struct {
    aom_codec_ctx_t codec;
    aom_codec_enc_cfg_t config;
    aom_image_t image;
    unsigned int width;
    unsigned int height;
} CAOM_encoder;

/// A real-time AV1 encoder for I420 frames: constant bit rate, no look-ahead, key frames only when asked,
/// the fastest real-time speed. NULL when libaom refuses the settings.
static inline CAOM_encoder *CAOM_create(unsigned int width, unsigned int height, unsigned int kilobits, unsigned int threads) {
    CAOM_encoder *encoder = calloc(1, sizeof(CAOM_encoder));
    if (encoder == NULL) return NULL;
    if (aom_codec_enc_config_default(aom_codec_av1_cx(), &encoder->config, AOM_USAGE_REALTIME) != AOM_CODEC_OK) {
        free(encoder);
        return NULL;
    }
    encoder->width = width;
    encoder->height = height;
    encoder->config.g_w = width;
    encoder->config.g_h = height;
    encoder->config.g_timebase.num = 1;
    encoder->config.g_timebase.den = 90000;
    encoder->config.g_threads = threads;
    encoder->config.g_lag_in_frames = 0;
    encoder->config.rc_end_usage = AOM_CBR;
    encoder->config.rc_target_bitrate = kilobits;
    encoder->config.rc_min_quantizer = 10;
    encoder->config.rc_max_quantizer = 56;
    encoder->config.rc_undershoot_pct = 50;
    encoder->config.rc_overshoot_pct = 50;
    encoder->config.rc_buf_initial_sz = 600;
    encoder->config.rc_buf_optimal_sz = 600;
    encoder->config.rc_buf_sz = 1000;
    encoder->config.kf_mode = AOM_KF_DISABLED;
    if (aom_codec_enc_init(&encoder->codec, aom_codec_av1_cx(), &encoder->config, 0) != AOM_CODEC_OK) {
        free(encoder);
        return NULL;
    }
    aom_codec_control(&encoder->codec, AOME_SET_CPUUSED, 10);
    aom_codec_control(&encoder->codec, AV1E_SET_ROW_MT, 1);
    aom_codec_control(&encoder->codec, AV1E_SET_TILE_COLUMNS, 1);
    aom_codec_control(&encoder->codec, AV1E_SET_AQ_MODE, 3);
    aom_codec_control(&encoder->codec, AV1E_SET_ENABLE_CDEF, 1);
    aom_codec_control(&encoder->codec, AV1E_SET_DELTAQ_MODE, 0);
    return encoder;
}

static inline void CAOM_destroy(CAOM_encoder *encoder) {
    aom_codec_destroy(&encoder->codec);
    free(encoder);
}

/// Changes the target bit rate from the next frame; 0 on success.
static inline int CAOM_set_bitrate(CAOM_encoder *encoder, unsigned int kilobits) {
    encoder->config.rc_target_bitrate = kilobits;
    return aom_codec_enc_config_set(&encoder->codec, &encoder->config) == AOM_CODEC_OK ? 0 : -1;
}

/// Encodes one I420 frame (planes packed one after the other) at `pts` (90 kHz); 0 on success.
static inline int CAOM_encode(CAOM_encoder *encoder, unsigned char *i420, long long pts, unsigned long duration, int keyFrame) {
    aom_img_wrap(&encoder->image, AOM_IMG_FMT_I420, encoder->width, encoder->height, 1, i420);
    aom_codec_err_t status = aom_codec_encode(&encoder->codec, &encoder->image, pts, duration, keyFrame ? AOM_EFLAG_FORCE_KF : 0);
    return status == AOM_CODEC_OK ? 0 : -1;
}

/// The next encoded temporal unit after `CAOM_encode` (NULL when there is none): its bytes, size and key-frame flag.
static inline const unsigned char *CAOM_next_frame(CAOM_encoder *encoder, aom_codec_iter_t *iterator, size_t *size, int *keyFrame) {
    const aom_codec_cx_pkt_t *packet;
    while ((packet = aom_codec_get_cx_data(&encoder->codec, iterator)) != NULL) {
        if (packet->kind != AOM_CODEC_CX_FRAME_PKT) continue;
        *size = packet->data.frame.sz;
        *keyFrame = (packet->data.frame.flags & AOM_FRAME_IS_KEY) != 0;
        return packet->data.frame.buf;
    }
    return NULL;
}

static inline const char *CAOM_error(CAOM_encoder *encoder) { return aom_codec_error(&encoder->codec); }
#endif
