// swift-cast — Apache-2.0

extension LogFilter {
    /// A regular expression a message must contain a match for, to narrow output to what one is chasing.
    ///
    /// Uses Swift `Regex` syntax (the ICU/PCRE-style syntax `NSRegularExpression` takes), matched Unicode scalar by
    /// scalar as ICU does. The expression is compiled once, here, so an invalid pattern is reported when the filter
    /// is built and matching on the logging path costs no recompilation. Equality and hashing consider only the
    /// pattern text and flag.
    public struct MessagePattern: Sendable, Hashable, CustomStringConvertible {
        /// The regular expression as written.
        public let pattern: String
        /// Whether letters match regardless of case (the `/REGEX/i` form).
        public let caseInsensitive: Bool
        private let expression: CompiledExpression

        /// Compiles `pattern`, throwing ``CastLoggingError/Code/invalidPattern`` with the reason if it is invalid.
        public init(_ pattern: String, caseInsensitive: Bool = false) throws(CastLoggingError) {
            let regex: Regex<AnyRegexOutput>
            do {
                regex = try Regex(pattern)
            } catch {
                throw CastLoggingError(code: .invalidPattern, message: "invalid message pattern '\(pattern)': \(error)")
            }
            expression = CompiledExpression(regex.ignoresCase(caseInsensitive).matchingSemantics(.unicodeScalar))
            self.pattern = pattern
            self.caseInsensitive = caseInsensitive
        }

        /// Whether the expression matches anywhere in `message` (a search, not a whole-string match).
        public func matches(_ message: String) -> Bool {
            (try? expression.regex.firstMatch(in: message)) != nil
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

        /// The compiled `Regex`, shared across threads: `Regex` is immutable once built and lowers its program
        /// once, atomically, but is not declared `Sendable`.
        private final class CompiledExpression: @unchecked Sendable {
            let regex: Regex<AnyRegexOutput>

            init(_ regex: Regex<AnyRegexOutput>) {
                self.regex = regex
            }
        }
    }
}
