import CastTransport
import NIOConcurrencyHelpers

/// Raw pictures in, ``EncodedFrame``s out (VP8 or H.264): for a program that draws its own frames — a game, a
/// rendered view, a camera it reads itself — and sends them with ``MirroringSession/send(_:on:)``. Frames are
/// encoded one at a time; any thread may call.
public final class VideoFrameEncoder: @unchecked Sendable {
    // @unchecked: the encoder is only touched under `lock`.
    /// The codecs encoded here, in the order Chrome prefers them when a receiver takes several.
    public static let codecs = ["av1", "vp9", "h264", "vp8"]

    /// One of ``codecs``.
    public let codec: String
    /// The picture's size the encoder was made for.
    public let resolution: Resolution
    /// Frames per second.
    public let frameRate: Int
    private let lock = NIOLock()
    private let encoder: any VideoEncoder

    /// An encoder for I420 pictures of `resolution` (even sizes).
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/encoderFailed`` for another codec or
    ///   settings the encoder refuses.
    public init(codec: String = "vp8", resolution: Resolution, frameRate: Int = 30, bitRate: Int = 2_500_000) throws {
        self.codec = codec
        self.resolution = resolution
        self.frameRate = frameRate
        self.encoder = try makeVideoEncoder(
            codec: codec,
            resolution: resolution,
            frameRate: frameRate,
            bitRate: bitRate
        )
    }

    /// Changes the target bit rate from the next frame on (what ``BitrateController`` says).
    public func setBitRate(_ bitRate: Int) { lock.withLock { encoder.setBitRate(bitRate) } }

    /// Encodes one I420 picture (`width × height × 3/2` bytes: Y, then U, then V) captured at `captureTime`
    /// (``StreamingMoment/monotonic``'s clock); a key frame when `keyFrame` — pass
    /// ``MirroringSession/wantsKeyFrame(on:)``.
    ///
    /// - Returns: The frame, or `nil` when the encoder skipped this picture.
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/encoderFailed``.
    public func encode(i420 picture: [UInt8], captureTime: Duration, keyFrame: Bool = false) throws -> EncodedFrame? {
        let expected = I420.size(of: resolution)
        guard picture.count == expected else {
            throw CastStreamingError(
                .encoderFailed,
                "an I420 \(resolution) picture has \(expected) bytes, not \(picture.count)"
            )
        }
        let ticks = Int64((captureTime.inSeconds * 90000).rounded())
        let encoded = try lock.withLock {
            try encoder.encode(i420: picture, timestamp: ticks, duration: 90000 / frameRate, keyFrame: keyFrame)
        }
        return encoded.map { EncodedFrame(data: $0.data, isKeyFrame: $0.isKeyFrame, captureTime: captureTime) }
    }
}

/// 10 ms of 16-bit PCM in, an Opus ``EncodedFrame`` out, its RTP time counting samples from the first frame.
/// Any thread may call; frames are encoded one at a time.
public final class AudioFrameEncoder: @unchecked Sendable {
    // @unchecked: the encoder and the sample count are only touched under `lock`.
    private let lock = NIOLock()
    private let encoder: OpusEncoder
    private var samplesSent: Int64 = 0

    /// An Opus encoder (48 kHz stereo by default, as Chrome sends).
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/encoderFailed``.
    public init(sampleRate: Int = 48000, channels: Int = 2, bitRate: Int = 128_000) throws {
        encoder = try OpusEncoder(sampleRate: sampleRate, channels: channels, bitRate: bitRate)
    }

    /// Samples per channel in one frame (10 ms).
    public var samplesPerFrame: Int { encoder.samplesPerFrame }

    /// Changes the bit rate from the next frame on.
    public func setBitRate(_ bitRate: Int) { lock.withLock { encoder.setBitRate(bitRate) } }

    /// Encodes ``samplesPerFrame`` interleaved samples per channel captured at `captureTime`.
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/encoderFailed``.
    public func encode(_ samples: [Int16], captureTime: Duration) throws -> EncodedFrame {
        try lock.withLock {
            let packet = try encoder.encode(samples)
            defer { samplesSent += Int64(encoder.samplesPerFrame) }
            // Every Opus packet decodes alone: each is a key frame to Cast.
            return EncodedFrame(data: packet, isKeyFrame: true, captureTime: captureTime, rtpTimestamp: samplesSent)
        }
    }
}
