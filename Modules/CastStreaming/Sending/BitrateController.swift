/// Adapts the video bit rate to what the receiver's feedback shows, within the stream's limits: down by 30 %
/// when frames were refused (the receiver is behind) or more than 5 % of packets were resent, up by 10 % when a
/// period went cleanly — additive caution, multiplicative recovery, checked every 500 ms.
public struct BitrateController: Sendable, Hashable {
    public let minimum: Int
    public let maximum: Int
    /// The bit rate the encoder should use now.
    public private(set) var current: Int
    private var last = StreamStatistics()

    /// Starts at `start`, clamped into `minimum…maximum`.
    public init(minimum: Int, maximum: Int, start: Int) {
        self.minimum = minimum
        self.maximum = max(minimum, maximum)
        self.current = min(max(start, minimum), max(minimum, maximum))
    }

    /// Looks at the stream's statistics since the last call and returns the new bit rate.
    public mutating func update(with statistics: StreamStatistics) -> Int {
        let sent = statistics.packetsSent - last.packetsSent
        let resent = statistics.packetsRetransmitted - last.packetsRetransmitted
        let refused = statistics.framesRefused - last.framesRefused
        last = statistics
        if refused > 0 || (sent > 20 && resent * 20 > sent) {
            current = max(minimum, current * 7 / 10)
        } else if sent > 0 {
            current = min(maximum, current * 11 / 10)
        }
        return current
    }
}
