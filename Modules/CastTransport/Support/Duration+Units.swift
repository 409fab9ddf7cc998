extension Duration {
    /// The duration in seconds, for JSON fields, rates and messages.
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }

    /// The duration in whole nanoseconds (rounded toward zero), for APIs that count in nanoseconds.
    public var inNanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
