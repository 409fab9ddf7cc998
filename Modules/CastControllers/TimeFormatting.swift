/// Formats positions and durations the way media controllers show them.
public enum TimeFormatting {
    /// `1:02:03`, `4:05` or `0:07`; `--:--` for unknown values.
    public static func clock(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return "--:--" }
        let total = Int(seconds.rounded(.down))
        let hours = total / 3600
        let minutes = (total % 3600) / 60
        let secs = total % 60
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(secs))" : "\(minutes):\(two(secs))"
    }

    /// Parses `SECONDS`, `+SECONDS`, `-SECONDS`, `MM:SS` or `HH:MM:SS`.
    ///
    /// - Returns: The value and whether it is relative (`+`/`-`), or `nil` when the text is not a time.
    public static func parseSeek(_ text: String) -> (seconds: Double, isRelative: Bool)? {
        var body = Substring(text)
        var sign = 1.0
        var isRelative = false
        if body.hasPrefix("+") || body.hasPrefix("-") {
            isRelative = true
            sign = body.hasPrefix("-") ? -1 : 1
            body = body.dropFirst()
        }
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (index, part) in parts.enumerated() {
            guard let value = Double(part), value >= 0, value.isFinite else { return nil }
            if index > 0, value >= 60 { return nil }
            total = total * 60 + value
        }
        return (sign * total, isRelative)
    }
}
