// swift-cast — Apache-2.0

import Foundation

extension LogFilter {
    /// A regular expression a message must contain a match for, to narrow output to what one is chasing.
    ///
    /// Uses ICU syntax (`NSRegularExpression`), which is thread-safe and `Sendable`, unlike Swift `Regex`. The
    /// expression is compiled once, here, so an invalid pattern is reported when the filter is built and matching
    /// on the logging path costs no recompilation. Equality and hashing consider only the pattern text and flag.
    public struct MessagePattern: Sendable, Hashable, CustomStringConvertible {
        /// The regular expression as written.
        public let pattern: String
        /// Whether letters match regardless of case (the `/REGEX/i` form).
        public let caseInsensitive: Bool
        private let expression: NSRegularExpression

        /// Compiles `pattern`, throwing ``CastLoggingError/Code/invalidPattern`` with the reason if it is invalid.
        public init(_ pattern: String, caseInsensitive: Bool = false) throws(CastLoggingError) {
            do {
                expression = try NSRegularExpression(
                    pattern: pattern,
                    options: caseInsensitive ? [.caseInsensitive] : []
                )
            } catch {
                throw CastLoggingError(
                    code: .invalidPattern,
                    message: "invalid message pattern '\(pattern)': \(Self.reason(forInvalidPattern: pattern))"
                )
            }
            self.pattern = pattern
            self.caseInsensitive = caseInsensitive
        }

        /// Whether the expression matches anywhere in `message` (a search, not a whole-string match).
        public func matches(_ message: String) -> Bool {
            let range = NSRange(message.startIndex..<message.endIndex, in: message)
            return expression.firstMatch(in: message, options: [], range: range) != nil
        }

        /// The `--log-filter` spelling, `/pattern/` or `/pattern/i`.
        public var description: String {
            "/\(pattern)/\(caseInsensitive ? "i" : "")"
        }

        /// Patterns are equal when their expression and case sensitivity are: the compiled form follows from them.
        public static func == (lhs: MessagePattern, rhs: MessagePattern) -> Bool {
            lhs.pattern == rhs.pattern && lhs.caseInsensitive == rhs.caseInsensitive
        }

        /// Hashes the expression and case sensitivity, as ``==(_:_:)`` compares them.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(pattern)
            hasher.combine(caseInsensitive)
        }

        /// Explains an ICU compile failure; ICU only says "invalid", so ask Swift's parser, which names the problem.
        private static func reason(forInvalidPattern pattern: String) -> String {
            do {
                _ = try Regex(pattern)
            } catch {
                return "\(error)"
            }
            return "not a valid ICU regular expression"
        }
    }
}
