/// Adapts the video to what the receiver's feedback shows, within the stream's limits, checked every 500 ms:
/// the bit rate falls by 30 % when frames were refused (the receiver is behind) or more than 5 % of packets were
/// resent, and rises by 10 % after a clean period. At the lowest bit rate, trouble halves the frame rate instead
/// (down to a quarter); a clean period restores the frame rate before it raises the bit rate.
public struct BitrateController: Sendable, Hashable {
    public let minimum: Int
    public let maximum: Int
    /// The bit rate the encoder should use now.
    public private(set) var current: Int
    /// Send one captured frame in this many: 1 normally, 2 or 4 when the lowest bit rate is still too much.
    public private(set) var frameInterval = 1
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
            if current == minimum {
                frameInterval = min(4, frameInterval * 2)
            } else {
                current = max(minimum, current * 7 / 10)
            }
        } else if sent > 0 {
            if frameInterval > 1 {
                frameInterval /= 2
            } else {
                current = min(maximum, current * 11 / 10)
            }
        }
        return current
    }
}
