// swift-cast — Apache-2.0

import CastTransport

/// The duration syntax of profiles, environment variables and overrides: a decimal number and a unit.
///
/// | Written | Means |
/// |---|---|
/// | `500ms` | 500 milliseconds |
/// | `5s`, `1.5s` | seconds |
/// | `2m` | minutes |
/// | `1h` | hours |
///
/// No sign, no spaces inside, no exponent; the unit is required so `5` is never guessed to mean seconds.
public enum ConfigDuration {
    /// The duration `text` denotes, or `nil` if it is not of the form above (surrounding whitespace is ignored).
    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingASCIIWhitespace()
        let digits = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unit = trimmed.dropFirst(digits.count)
        let nanosecondsPerUnit: Int64
        switch unit {
        case "ms": nanosecondsPerUnit = 1_000_000
        case "s": nanosecondsPerUnit = 1_000_000_000
        case "m": nanosecondsPerUnit = 60_000_000_000
        case "h": nanosecondsPerUnit = 3_600_000_000_000
        default: return nil
        }
        let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty }),
            let whole = Int64(parts[0]), whole <= 1_000_000
        else {
            return nil
        }
        var nanoseconds = whole * nanosecondsPerUnit
        if parts.count == 2 {
            // Exact decimal arithmetic on the fraction's digits, so 0.1s is exactly 100 ms.
            var scale = nanosecondsPerUnit
            for digit in parts[1] {
                scale /= 10
                guard scale > 0 || digit == "0" else { return nil }
                nanoseconds += Int64(digit.wholeNumberValue ?? 0) * scale
            }
        }
        return .nanoseconds(nanoseconds)
    }

    /// `duration` in the same syntax, with the largest unit that writes it exactly: `2m`, `30s`, `1.5s`, `500ms`.
    public static func format(_ duration: Duration) -> String {
        let nanoseconds = duration.inNanoseconds
        if nanoseconds == 0 {
            return "0s"
        }
        if nanoseconds % 3_600_000_000_000 == 0 {
            return "\(nanoseconds / 3_600_000_000_000)h"
        }
        if nanoseconds % 60_000_000_000 == 0 {
            return "\(nanoseconds / 60_000_000_000)m"
        }
        if nanoseconds % 1_000_000_000 == 0 {
            return "\(nanoseconds / 1_000_000_000)s"
        }
        if nanoseconds < 1_000_000_000, nanoseconds % 1_000_000 == 0 {
            return "\(nanoseconds / 1_000_000)ms"
        }
        var fraction = String(nanoseconds % 1_000_000_000)
        fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
        while fraction.last == "0" {
            fraction.removeLast()
        }
        return "\(nanoseconds / 1_000_000_000).\(fraction)s"
    }
}

extension StringProtocol {
    /// The string without leading and trailing spaces, tabs and line breaks.
    func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
