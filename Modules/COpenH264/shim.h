// Cisco's OpenH264 (libopenh264-dev, BSD-2-Clause), as CastStreaming's H.264 encoder sees it.
// Its C interface is a table of function pointers; Swift calls these `static inline` wrappers instead
// (prefix `COpenH264_`), which also hold the few settings a real-time Cast sender needs.
#ifndef COPENH264_SHIM_H
#define COPENH264_SHIM_H

#include <stdbool.h>
#include <string.h>
#include <wels/codec_api.h>

/// A real-time encoder for I420 frames: one spatial and temporal layer, constant bit rate, no frame skipping,
/// IDR frames only when asked, SPS and PPS before every IDR. NULL when OpenH264 refuses the settings.
static inline ISVCEncoder *COpenH264_create(int width, int height, float frameRate, int bitRate, int threads) {
    ISVCEncoder *encoder = NULL;
    if (WelsCreateSVCEncoder(&encoder) != 0 || encoder == NULL) return NULL;
    SEncParamExt param;
    memset(&param, 0, sizeof(param));
    (*encoder)->GetDefaultParams(encoder, &param);
    param.iUsageType = CAMERA_VIDEO_REAL_TIME;
    param.iPicWidth = width;
    param.iPicHeight = height;
    param.fMaxFrameRate = frameRate;
    param.iTargetBitrate = bitRate;
    param.iMaxBitrate = UNSPECIFIED_BIT_RATE;
    param.iRCMode = RC_BITRATE_MODE;
    param.bEnableFrameSkip = false;
    param.uiIntraPeriod = 0;
    param.iSpatialLayerNum = 1;
    param.iTemporalLayerNum = 1;
    param.iMultipleThreadIdc = (unsigned short)threads;
    param.eSpsPpsIdStrategy = CONSTANT_ID;
    param.bPrefixNalAddingCtrl = false;
    param.sSpatialLayers[0].iVideoWidth = width;
    param.sSpatialLayers[0].iVideoHeight = height;
    param.sSpatialLayers[0].fFrameRate = frameRate;
    param.sSpatialLayers[0].iSpatialBitrate = bitRate;
    param.sSpatialLayers[0].iMaxSpatialBitrate = UNSPECIFIED_BIT_RATE;
    param.sSpatialLayers[0].uiProfileIdc = PRO_BASELINE;
    param.sSpatialLayers[0].sSliceArgument.uiSliceMode = SM_SINGLE_SLICE;
    if ((*encoder)->InitializeExt(encoder, &param) != 0) {
        WelsDestroySVCEncoder(encoder);
        return NULL;
    }
    int format = videoFormatI420;
    (*encoder)->SetOption(encoder, ENCODER_OPTION_DATAFORMAT, &format);
    return encoder;
}

static inline void COpenH264_destroy(ISVCEncoder *encoder) {
    (*encoder)->Uninitialize(encoder);
    WelsDestroySVCEncoder(encoder);
}

/// Changes the target bit rate from the next frame; 0 on success.
static inline int COpenH264_set_bitrate(ISVCEncoder *encoder, int bitRate) {
    SBitrateInfo info;
    info.iLayer = SPATIAL_LAYER_ALL;
    info.iBitrate = bitRate;
    return (*encoder)->SetOption(encoder, ENCODER_OPTION_BITRATE, &info);
}

/// Encodes one I420 frame (planes packed one after the other); `info` receives the Annex B layers. 0 on success.
static inline int COpenH264_encode(
    ISVCEncoder *encoder, unsigned char *i420, int width, int height, long long milliseconds, int keyFrame,
    SFrameBSInfo *info
) {
    if (keyFrame) (*encoder)->ForceIntraFrame(encoder, true);
    SSourcePicture picture;
    memset(&picture, 0, sizeof(picture));
    picture.iColorFormat = videoFormatI420;
    picture.iPicWidth = width;
    picture.iPicHeight = height;
    picture.iStride[0] = width;
    picture.iStride[1] = width / 2;
    picture.iStride[2] = width / 2;
    picture.pData[0] = i420;
    picture.pData[1] = i420 + width * height;
    picture.pData[2] = i420 + width * height + (width / 2) * (height / 2);
    picture.uiTimeStamp = milliseconds;
    memset(info, 0, sizeof(*info));
    return (*encoder)->EncodeFrame(encoder, &picture, info);
}

/// The bytes of layer `index` of an encoded frame (all its NAL units, with start codes) and their count.
static inline unsigned char *COpenH264_layer(SFrameBSInfo *info, int index, int *length) {
    SLayerBSInfo *layer = &info->sLayerInfo[index];
    int total = 0;
    for (int nal = 0; nal < layer->iNalCount; nal++) total += layer->pNalLengthInByte[nal];
    *length = total;
    return layer->pBsBuf;
}

static inline int COpenH264_is_key_frame(const SFrameBSInfo *info) { return info->eFrameType == videoFrameTypeIDR; }
static inline int COpenH264_is_skipped(const SFrameBSInfo *info) { return info->eFrameType == videoFrameTypeSkip; }
#endif
