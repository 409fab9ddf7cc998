/// One encoded frame ready to send: a VP8/H.264 access unit or an Opus packet, with its capture time.
public struct EncodedFrame: Sendable {
    /// The codec's bytes for the frame (not encrypted yet).
    public var data: [UInt8]
    /// Whether it decodes alone (video key frames; every Opus packet).
    public var isKeyFrame: Bool
    /// When it was captured, on ``StreamingMoment/monotonic``'s clock: playout is scheduled from it.
    public var captureTime: Duration
    /// Its position on the stream's timeline in RTP ticks; `nil` derives it from ``captureTime``.
    public var rtpTimestamp: Int64?

    /// A frame.
    public init(data: [UInt8], isKeyFrame: Bool, captureTime: Duration, rtpTimestamp: Int64? = nil) {
        self.data = data
        self.isKeyFrame = isKeyFrame
        self.captureTime = captureTime
        self.rtpTimestamp = rtpTimestamp
    }
}
