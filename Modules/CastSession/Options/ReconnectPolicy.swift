#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How long to wait between reconnection attempts: exponential backoff with jitter, capped.
///
/// With the defaults (1 s, ×2, cap 30 s, ±20 % jitter) the waits are about:
///
/// | failed attempts | 0 | 1 | 2 | 3 | 4 | 5+ |
/// |---|---|---|---|---|---|---|
/// | wait (s) | 1 | 2 | 4 | 8 | 16 | 30 |
public struct ReconnectPolicy: Sendable, Hashable {
    /// The first wait. Defaults to 1 s.
    public var initialDelay: Duration = .seconds(1)
    /// The longest wait. Defaults to 30 s.
    public var maximumDelay: Duration = .seconds(30)
    /// Growth per failed attempt. Defaults to 2.
    public var multiplier: Double = 2
    /// Random spread as a fraction of the wait: 0.2 gives ±20 %. Defaults to 0.2.
    public var jitter: Double = 0.2
    /// Give up after this many failed attempts; `nil` (the default) never gives up.
    public var maximumAttempts: Int?

    /// The defaults.
    public init() {}

    /// The wait before the next attempt after `failedAttempts` failures.
    ///
    /// Pure: the randomness comes in as `random` (0 ≤ random < 1; 0.5 means no jitter).
    public func delay(afterFailedAttempts failedAttempts: Int, random: Double) -> Duration {
        let initial = initialDelay.seconds
        let cap = maximumDelay.seconds
        // At most 64 doublings matter before any cap is reached; bounding the exponent keeps huge attempt
        // counts (and multipliers ≤ 1) cheap and free of overflow.
        let exponent = Double(min(max(0, failedAttempts), 64))
        var base = initial * pow(max(multiplier, 0), exponent)
        if !base.isFinite { base = cap }
        base = min(base, cap)
        let spread = base * jitter * (random * 2 - 1)
        let seconds = min(cap, max(0, base + spread))
        return .nanoseconds(Int64(seconds * 1e9))
    }

    /// Whether another attempt is allowed after `failedAttempts` failures.
    public func allowsAttempt(afterFailedAttempts failedAttempts: Int) -> Bool {
        maximumAttempts.map { failedAttempts < $0 } ?? true
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
