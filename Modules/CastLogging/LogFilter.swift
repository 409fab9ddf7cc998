// swift-cast — Apache-2.0

import Logging

/// Decides which log messages reach the sink: per-category levels plus optional message patterns.
///
/// The equivalent of `GCKLoggerFilter`. Levels are resolved per category by the most specific matching rule, so a
/// broad rule (`Cast*=debug`) and a narrow exception (`CastTransport.Heartbeat=warning`) compose regardless of
/// order. Message patterns are a second, more expensive stage applied only to messages that passed the level
/// check. A value type, so an app can build one from its command line and hand copies to every handler.
public struct LogFilter: Sendable, Hashable {
    /// Sets the level for every category that `pattern` matches.
    public struct CategoryRule: Sendable, Hashable {
        /// Which categories the rule applies to.
        public var pattern: CategoryPattern
        /// The least severe level that passes for those categories.
        public var level: Logger.Level

        /// Creates a rule; see ``LogFilter/level(forCategory:)`` for how overlapping rules are resolved.
        public init(_ pattern: CategoryPattern, level: Logger.Level) {
            self.pattern = pattern
            self.level = level
        }
    }

    /// The level for categories no rule matches.
    public var minimumLevel: Logger.Level
    /// When `true`, nothing passes, whatever the levels say; what `--log-level off` produces.
    ///
    /// swift-log has no level above `.critical`, so a separate switch is the only way to express "off".
    public var isDisabled: Bool
    /// Per-category levels; the most specific match wins, and among equally specific ones the later rule.
    public var categoryLevels: [CategoryRule]
    /// When non-empty, a message passes only if it matches at least one of these (as `addMessagePattern:`).
    public var messagePatterns: [MessagePattern]

    /// Creates a filter; the defaults pass `.info` and above for every category.
    public init(
        minimumLevel: Logger.Level = .info,
        categoryLevels: [CategoryRule] = [],
        messagePatterns: [MessagePattern] = [],
        isDisabled: Bool = false
    ) {
        self.minimumLevel = minimumLevel
        self.categoryLevels = categoryLevels
        self.messagePatterns = messagePatterns
        self.isDisabled = isDisabled
    }

    /// A filter that lets nothing through, for apps that want to silence logging entirely.
    public static var disabled: LogFilter {
        LogFilter(isDisabled: true)
    }

    /// Adds a category rule; being the latest, it wins ties against existing rules of equal specificity.
    public mutating func setLevel(_ level: Logger.Level, forCategory pattern: CategoryPattern) {
        categoryLevels.append(CategoryRule(pattern, level: level))
    }

    /// Adds a message pattern, validating it first so a bad pattern fails here rather than silently never matching.
    public mutating func addMessagePattern(_ pattern: String, caseInsensitive: Bool = false) throws(CastLoggingError) {
        messagePatterns.append(try MessagePattern(pattern, caseInsensitive: caseInsensitive))
    }

    /// The least severe level that passes for `category`, ignoring ``isDisabled``.
    ///
    /// Picks the rule whose pattern matches most specifically (a literal beats any glob; a glob with more
    /// non-wildcard characters beats one with fewer); on a tie the rule added later wins, so appending a rule
    /// overrides an equivalent earlier one. Falls back to ``minimumLevel`` when no rule matches.
    public func level(forCategory category: String) -> Logger.Level {
        var best: CategoryRule? = nil
        for rule in categoryLevels where rule.pattern.matches(category) {
            if let current = best, rule.pattern.specificity < current.pattern.specificity {
                continue
            }
            best = rule
        }
        return best?.level ?? minimumLevel
    }

    /// Whether `message` passes the message patterns: always when there are none, else when any one matches.
    public func allowsMessage(_ message: String) -> Bool {
        messagePatterns.isEmpty || messagePatterns.contains { $0.matches(message) }
    }

    /// The complete decision for one message: not disabled, severe enough for its category, and matching.
    public func allows(_ level: Logger.Level, category: String, message: String) -> Bool {
        !isDisabled && level >= self.level(forCategory: category) && allowsMessage(message)
    }
}
