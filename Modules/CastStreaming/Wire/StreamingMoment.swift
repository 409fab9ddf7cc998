import CastTransport

#if canImport(Glibc)
import Glibc
#endif

/// A moment as Cast Streaming reads it: monotonic time for schedules (timers, round trips, playout) and NTP time
/// for reports. NTP time is the wall clock read once per process and advanced with the monotonic clock, so it
/// never jumps, and two processes on one machine agree on it (how capture-to-receipt delay is measured).
public struct StreamingMoment: Sendable, Hashable {
    /// Monotonic time since an arbitrary origin.
    public var monotonic: Duration
    /// The same moment as a 64-bit NTP timestamp (seconds since 1900 in the high 32 bits).
    public var ntp: UInt64

    /// A moment from its two readings.
    public init(monotonic: Duration, ntp: UInt64) {
        self.monotonic = monotonic
        self.ntp = ntp
    }

    /// A moment at `monotonic`, its NTP time derived from `ntpSeconds` for tests that only care about schedules.
    public init(monotonic: Duration) {
        self.init(monotonic: monotonic, ntp: NTPTime.timestamp(seconds: 3_900_000_000 + monotonic.inSeconds))
    }

    /// Now, from the system's clocks.
    public static func now() -> StreamingMoment {
        let monotonic = monotonicNow()
        return StreamingMoment(
            monotonic: monotonic,
            ntp: NTPTime.timestamp(seconds: anchor.ntpSeconds + (monotonic - anchor.monotonic).inSeconds)
        )
    }

    /// `self` moved by `offset` on both clocks.
    public func advanced(by offset: Duration) -> StreamingMoment {
        StreamingMoment(
            monotonic: monotonic + offset,
            ntp: NTPTime.timestamp(seconds: NTPTime.seconds(ntp) + offset.inSeconds)
        )
    }

    private static let anchor: (monotonic: Duration, ntpSeconds: Double) = {
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        return (monotonicNow(), Double(wall.tv_sec) + Double(wall.tv_nsec) / 1e9 + NTPTime.unixEpochOffset)
    }()

    private static func monotonicNow() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}

/// NTP timestamps: 32 bits of seconds since 1900, 32 bits of fraction.
public enum NTPTime {
    /// Seconds from 1900-01-01 to 1970-01-01.
    public static let unixEpochOffset: Double = 2_208_988_800

    /// The timestamp of `seconds` since 1900.
    public static func timestamp(seconds: Double) -> UInt64 {
        let whole = seconds.rounded(.down)
        return UInt64(whole) << 32 | UInt64(((seconds - whole) * 4_294_967_296).rounded(.down))
    }

    /// Seconds since 1900 of `timestamp`.
    public static func seconds(_ timestamp: UInt64) -> Double {
        Double(timestamp >> 32) + Double(timestamp & 0xFFFF_FFFF) / 4_294_967_296
    }
}

extension Duration {
    /// A duration of `seconds`, which may have a fraction.
    static func fractionalSeconds(_ seconds: Double) -> Duration { .nanoseconds(Int64((seconds * 1e9).rounded())) }
}
