// swift-cast — Apache-2.0

/// A category name, or a glob over category names, used to set levels for a whole family of components at once.
///
/// `*` matches any run of characters, dots included, so `CastSession*` covers `CastSession` and every
/// `CastSession.…` sub-category; `?` matches exactly one character. There is no escape syntax, because category
/// names never contain `*` or `?`. Matching is iterative and bounded by the product of the two lengths, so a
/// user-supplied pattern cannot stall a logging call.
public struct CategoryPattern: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// How strongly a pattern claims a category, so the best rule wins regardless of the order rules were added.
    ///
    /// A literal beats every glob; among globs, the one with more non-wildcard characters is the more specific.
    public struct Specificity: Sendable, Hashable, Comparable {
        /// Whether the pattern names exactly one category.
        public let isLiteral: Bool
        /// The number of non-wildcard characters, the tie-breaker between globs.
        public let literalCharacterCount: Int

        /// Orders by specificity, least specific first: any glob before a literal, then by literal characters.
        public static func < (lhs: Specificity, rhs: Specificity) -> Bool {
            if lhs.isLiteral != rhs.isLiteral {
                return !lhs.isLiteral
            }
            return lhs.literalCharacterCount < rhs.literalCharacterCount
        }
    }

    /// The pattern as written, kept so filters can be printed back in the `--log-filter` syntax.
    public let text: String
    /// Whether the pattern has no wildcards and therefore matches only the identical category name.
    public let isLiteral: Bool
    /// The rank of this pattern against others matching the same category.
    public let specificity: Specificity
    private let characters: [Character]

    /// Creates a pattern from its textual form; every string is valid, an empty one matches only the empty name.
    public init(_ text: String) {
        let characters = Array(text)
        let literalCount = characters.count(where: { !Self.isWildcard($0) })
        self.text = text
        self.characters = characters
        self.isLiteral = literalCount == characters.count
        self.specificity = Specificity(isLiteral: isLiteral, literalCharacterCount: literalCount)
    }

    /// Lets filters be written as `["CastSession*": .debug]`-style literals.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The pattern text, as written.
    public var description: String { text }

    /// Whether `category` is selected by this pattern.
    ///
    /// Uses the classic single-backtrack glob algorithm: on a mismatch only the most recent `*` is widened, which
    /// is sufficient for `*`/`?` globs and avoids the exponential blow-up of naive recursion on inputs like
    /// `a*a*a*a*b`.
    public func matches(_ category: String) -> Bool {
        if isLiteral {
            return category == text
        }
        let pattern = characters
        let subject = Array(category)
        var patternIndex = 0
        var subjectIndex = 0
        var lastStar: (patternIndex: Int, subjectIndex: Int)? = nil

        while subjectIndex < subject.count {
            if patternIndex < pattern.count, pattern[patternIndex] == "*" {
                lastStar = (patternIndex, subjectIndex)
                patternIndex += 1
            } else if patternIndex < pattern.count,
                pattern[patternIndex] == "?" || pattern[patternIndex] == subject[subjectIndex]
            {
                patternIndex += 1
                subjectIndex += 1
            } else if let star = lastStar {
                // Let the last `*` swallow one more character and retry the rest of the pattern from there.
                lastStar = (star.patternIndex, star.subjectIndex + 1)
                patternIndex = star.patternIndex + 1
                subjectIndex = star.subjectIndex + 1
            } else {
                return false
            }
        }
        while patternIndex < pattern.count, pattern[patternIndex] == "*" {
            patternIndex += 1
        }
        return patternIndex == pattern.count
    }

    /// Patterns are equal when their text is: everything else follows from it.
    public static func == (lhs: CategoryPattern, rhs: CategoryPattern) -> Bool {
        lhs.text == rhs.text
    }

    /// Hashes the text, as ``==(_:_:)`` compares it.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(text)
    }

    private static func isWildcard(_ character: Character) -> Bool {
        character == "*" || character == "?"
    }
}
