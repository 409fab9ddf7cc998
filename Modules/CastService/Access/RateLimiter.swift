import CastTransport
import NIOConcurrencyHelpers

/// How many requests one client may make: a token bucket per client address.
public struct RateLimit: Sendable, Hashable {
    /// Requests per second a client may keep up. Defaults to 50.
    public var requestsPerSecond: Double
    /// Requests a client may make at once after being idle. Defaults to 100.
    public var burst: Int

    /// Creates a limit; the defaults let a web remote and scripts work freely and stop a runaway loop.
    public init(requestsPerSecond: Double = 50, burst: Int = 100) {
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
    }
}

/// Token buckets per client, refilled from an injected clock; bounded in how many clients it remembers.
final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Duration
    }

    private let limit: RateLimit
    private let maximumClients: Int
    private let now: @Sendable () -> Duration
    private let buckets = NIOLockedValueBox<[String: Bucket]>([:])

    /// `now` is a monotonic time (any origin); tests pass a manual one.
    init(limit: RateLimit, maximumClients: Int = 4096, now: @escaping @Sendable () -> Duration) {
        self.limit = limit
        self.maximumClients = maximumClients
        self.now = now
    }

    /// Takes one request from `client`'s bucket: `nil` when allowed, else how long until the next is.
    func admit(_ client: String) -> Duration? {
        let time = now()
        let capacity = Double(max(limit.burst, 1))
        let rate = max(limit.requestsPerSecond, 0.001)
        return buckets.withLockedValue { buckets in
            var bucket = buckets[client] ?? Bucket(tokens: capacity, updated: time)
            let elapsed = (time - bucket.updated).inSeconds
            bucket.tokens = min(capacity, bucket.tokens + max(elapsed, 0) * rate)
            bucket.updated = time
            defer {
                buckets[client] = bucket
                if buckets.count > maximumClients {
                    Self.forgetIdle(&buckets, at: time, capacity: capacity, rate: rate)
                }
            }
            guard bucket.tokens >= 1 else { return .seconds((1 - bucket.tokens) / rate) }
            bucket.tokens -= 1
            return nil
        }
    }

    /// Drops clients whose buckets are full again (they lose nothing by being forgotten), else the longest idle.
    private static func forgetIdle(_ buckets: inout [String: Bucket], at time: Duration, capacity: Double, rate: Double)
    {
        let count = buckets.count
        buckets = buckets.filter { $0.value.tokens + (time - $0.value.updated).inSeconds * rate < capacity }
        if buckets.count == count, let oldest = buckets.min(by: { $0.value.updated < $1.value.updated }) {
            buckets[oldest.key] = nil
        }
    }
}
