/// Frame ids: per stream, 0 for the first frame and one more for each frame after it; only their low 8 bits
/// travel, so each side expands them against an id it knows (the reference's "closest value" rules).
public enum FrameID {
    /// The most frames that may be in flight: keeps the 8-bit comparisons unambiguous.
    public static let maximumInFlight: Int64 = 120

    /// The full id with low bits `low` nearest to `reference` (how the RTP parser expands packets).
    public static func expand(_ low: UInt8, closestTo reference: Int64) -> Int64 {
        let candidate = (reference & ~0xFF) | Int64(low)
        if candidate - reference > 128 { return candidate - 256 }
        if reference - candidate > 127 { return candidate + 256 }
        return candidate
    }

    /// The greatest full id with low bits `low` that is not after `reference` (RTCP checkpoints).
    public static func expand(_ low: UInt8, atOrBefore reference: Int64) -> Int64 {
        let candidate = (reference & ~0xFF) | Int64(low)
        return candidate > reference ? candidate - 256 : candidate
    }

    /// The smallest full id with low bits `low` after `reference` (NACKed frames, after the checkpoint).
    public static func expand(_ low: UInt8, after reference: Int64) -> Int64 {
        let candidate = (reference & ~0xFF) | Int64(low)
        return candidate > reference ? candidate : candidate + 256
    }

    /// The low 8 bits that go on the wire (`-1`, "before the first frame", is `0xFF`).
    public static func wire(_ id: Int64) -> UInt8 { UInt8(truncatingIfNeeded: id) }
}
