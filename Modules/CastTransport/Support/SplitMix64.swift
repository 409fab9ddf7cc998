/// A small deterministic random number generator (SplitMix64): the emulator's simulated loss and jitter and the
/// tests' garbage and mutated inputs come out the same on every run of the same seed.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// A number in [0, 1).
    package mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
