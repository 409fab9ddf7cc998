// The thin wrapper around the system libopus: C types stay in this file.
internal import COpus

/// An Opus encoder for 10 ms frames of interleaved 16-bit PCM, as Chrome sends. Not thread-safe: one task feeds it.
final class OpusEncoder {
    let sampleRate: Int
    let channels: Int
    private let encoder: OpaquePointer

    /// Samples per channel in one 10 ms frame.
    var samplesPerFrame: Int { sampleRate / 100 }

    /// An encoder at `sampleRate` (48,000 for Cast) with `channels` and `bitRate`.
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/encoderFailed``.
    init(sampleRate: Int = 48000, channels: Int = 2, bitRate: Int = 128_000) throws {
        var error: Int32 = 0
        guard let encoder = opus_encoder_create(Int32(sampleRate), Int32(channels), OPUS_APPLICATION_AUDIO, &error),
            error == OPUS_OK
        else {
            throw CastStreamingError(
                .encoderFailed,
                "libopus refused \(sampleRate) Hz × \(channels): \(String(cString: opus_strerror(error)))"
            )
        }
        self.encoder = encoder
        self.sampleRate = sampleRate
        self.channels = channels
        _ = COpus_set_bitrate(encoder, Int32(bitRate))
        _ = COpus_set_complexity(encoder, 5)
    }

    deinit { opus_encoder_destroy(encoder) }

    /// Changes the bit rate from the next frame on.
    func setBitRate(_ bitRate: Int) { _ = COpus_set_bitrate(encoder, Int32(bitRate)) }

    /// Encodes one 10 ms frame of interleaved samples.
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/encoderFailed``.
    func encode(_ samples: [Int16]) throws -> [UInt8] {
        guard samples.count == samplesPerFrame * channels else {
            throw CastStreamingError(.encoderFailed, "an Opus frame here has \(samplesPerFrame * channels) samples")
        }
        var output = [UInt8](repeating: 0, count: 4000)
        let length = opus_encode(encoder, samples, Int32(samplesPerFrame), &output, Int32(output.count))
        guard length >= 0 else {
            throw CastStreamingError(.encoderFailed, "libopus: \(String(cString: opus_strerror(length)))")
        }
        output.removeLast(output.count - Int(length))
        return output
    }
}
