import CastSession
import Testing

/// The backoff is a pure function of the attempt count and a random number.
@Suite struct ReconnectPolicyTests {
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    @Test(arguments: [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (4, 16.0), (5, 30.0), (6, 30.0)])
    func defaultsDoubleFromOneSecondToThirty(failedAttempts: Int, expected: Double) {
        let policy = ReconnectPolicy()
        #expect(policy.delay(afterFailedAttempts: failedAttempts, random: 0.5) == .seconds(expected))
    }

    @Test func theDefaultsAreDocumented() {
        let policy = ReconnectPolicy()
        #expect(policy.initialDelay == .seconds(1))
        #expect(policy.maximumDelay == .seconds(30))
        #expect(policy.multiplier == 2)
        #expect(policy.jitter == 0.2)
        #expect(policy.maximumAttempts == nil)
    }

    @Test(arguments: [0, 1, 2, 3, 4])
    func jitterStaysWithinTwentyPercent(failedAttempts: Int) {
        let policy = ReconnectPolicy()
        let base = Self.seconds(policy.delay(afterFailedAttempts: failedAttempts, random: 0.5))
        let low = Self.seconds(policy.delay(afterFailedAttempts: failedAttempts, random: 0))
        let high = Self.seconds(policy.delay(afterFailedAttempts: failedAttempts, random: 0.999_999_999))
        #expect(abs(low - base * 0.8) < 1e-6)
        #expect(abs(high - base * 1.2) < 1e-6)
        for random in stride(from: 0.0, to: 1.0, by: 0.05) {
            let value = Self.seconds(policy.delay(afterFailedAttempts: failedAttempts, random: random))
            #expect(value >= low - 1e-9 && value <= high + 1e-9)
        }
    }

    @Test(arguments: [5, 6, 10, 100])
    func theCapHoldsWithJitter(failedAttempts: Int) {
        let policy = ReconnectPolicy()
        let high = policy.delay(afterFailedAttempts: failedAttempts, random: 0.999_999)
        let low = policy.delay(afterFailedAttempts: failedAttempts, random: 0)
        #expect(high <= policy.maximumDelay)
        #expect(high == .seconds(30))
        #expect(low == .seconds(24))
    }

    @Test(arguments: [64, 1_024, 1_000_000, Int.max])
    func hugeAttemptCountsDoNotOverflow(failedAttempts: Int) {
        let policy = ReconnectPolicy()
        #expect(policy.delay(afterFailedAttempts: failedAttempts, random: 0.5) == .seconds(30))
        var steep = ReconnectPolicy()
        steep.multiplier = 1e300
        #expect(steep.delay(afterFailedAttempts: failedAttempts, random: 0.5) == .seconds(30))
    }

    @Test func negativeAttemptCountsActLikeNone() {
        #expect(ReconnectPolicy().delay(afterFailedAttempts: -5, random: 0.5) == .seconds(1))
    }

    @Test func aCustomPolicy() {
        var policy = ReconnectPolicy()
        policy.initialDelay = .milliseconds(250)
        policy.multiplier = 3
        policy.maximumDelay = .seconds(5)
        policy.jitter = 0
        let waits = (0..<5).map { policy.delay(afterFailedAttempts: $0, random: 0.9) }
        #expect(waits == [.milliseconds(250), .milliseconds(750), .milliseconds(2250), .seconds(5), .seconds(5)])
    }

    @Test func aConstantPolicy() {
        // Chrome's policy: 15 s, factor 1, capped at 30 s; a moderately large count stays cheap and constant.
        var policy = ReconnectPolicy()
        policy.initialDelay = .seconds(15)
        policy.multiplier = 1
        policy.jitter = 0
        #expect(policy.delay(afterFailedAttempts: 0, random: 0.1) == .seconds(15))
        #expect(policy.delay(afterFailedAttempts: 100_000, random: 0.1) == .seconds(15))
    }

    @Test(
        arguments: [
            (nil, 0, true), (nil, 1_000_000, true), (2, 0, true), (2, 1, true), (2, 2, false), (2, 3, false),
            (0, 0, false),
        ] as [(Int?, Int, Bool)]
    )
    func allowsAttempt(maximum: Int?, failed: Int, allowed: Bool) {
        var policy = ReconnectPolicy()
        policy.maximumAttempts = maximum
        #expect(policy.allowsAttempt(afterFailedAttempts: failed) == allowed)
    }
}
