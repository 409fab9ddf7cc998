// The system libopus (libopus-dev), as CastStreaming's audio encoder sees it.
// opus_encoder_ctl is variadic, which Swift cannot call: each request the project makes gets a
// `static inline` wrapper here with a `COpus_` prefix.
#ifndef COPUS_SHIM_H
#define COPUS_SHIM_H

#include <opus.h>

static inline int COpus_set_bitrate(OpusEncoder *encoder, opus_int32 bitrate) {
    return opus_encoder_ctl(encoder, OPUS_SET_BITRATE(bitrate));
}

static inline int COpus_set_complexity(OpusEncoder *encoder, opus_int32 complexity) {
    return opus_encoder_ctl(encoder, OPUS_SET_COMPLEXITY(complexity));
}
#endif
