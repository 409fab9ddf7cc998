/// Adapts the video to what the receiver's feedback shows, within the stream's limits, checked every 500 ms.
/// Trouble — frames refused (the receiver is behind) or more than 5 % of packets resent — first lowers the bit
/// rate by 30 % per period down to its minimum, then halves the frame rate (down to a quarter), then halves the
/// picture's width and height. A clean period undoes them in the opposite order, one step at a time, and only then
/// raises the bit rate by 10 %.
public struct BitrateController: Sendable, Hashable {
    /// The lowest bit rate, in bits per second.
    public let minimum: Int
    /// The highest bit rate, in bits per second.
    public let maximum: Int
    /// The bit rate the encoder should use now.
    public private(set) var current: Int
    /// Send one captured frame in this many: 1 normally, 2 or 4 when the lowest bit rate is still too much.
    public private(set) var frameInterval = 1
    /// Divide the picture's width and height by this: 1 normally, 2 when a quarter of the frames is still too much.
    public private(set) var resolutionDivisor = 1
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
            if current > minimum {
                current = max(minimum, current * 7 / 10)
            } else if frameInterval < 4 {
                frameInterval *= 2
            } else {
                resolutionDivisor = 2
            }
        } else if sent > 0 {
            if resolutionDivisor > 1 {
                resolutionDivisor = 1
            } else if frameInterval > 1 {
                frameInterval /= 2
            } else {
                current = min(maximum, current * 11 / 10)
            }
        }
        return current
    }
}
