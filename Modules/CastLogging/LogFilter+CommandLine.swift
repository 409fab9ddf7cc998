// swift-cast — Apache-2.0

import Logging

extension LogFilter {
    /// Builds a filter from the `--log-level LEVEL` and `--log-filter SPEC` options every app shares.
    ///
    /// `level` is a swift-log level name (`trace`, `debug`, `info`, `notice`, `warning`, `error`, `critical`) or
    /// `off`, case-insensitive; `nil` keeps the `.info` default. `filterSpec` is a comma-separated list of items:
    ///
    /// - `PATTERN=LEVEL` sets the level for the categories a ``CategoryPattern`` matches,
    ///   e.g. `CastSession*=debug,Cast*Channel=trace`;
    /// - `/REGEX/` or `/REGEX/i` (case-insensitive) adds a message pattern. Commas inside the slashes belong to the
    ///   expression, and `\/` writes a slash within it.
    ///
    /// Errors name the offending item: ``CastLoggingError/Code/invalidLevel`` for an unknown level name (including
    /// `off` in a category rule, where "off" has no swift-log equivalent), ``CastLoggingError/Code/invalidFilter``
    /// for a malformed or empty item, ``CastLoggingError/Code/invalidPattern`` for an unusable pattern.
    public init(level: String?, filterSpec: String?) throws(CastLoggingError) {
        self.init()
        if let level {
            let name = level.trimmingWhitespace().lowercased()
            if name == "off" {
                isDisabled = true
            } else {
                minimumLevel = try Self.parseLevel(name, item: "--log-level \(level)", orOff: true)
            }
        }
        if let filterSpec {
            try parseFilterSpec(filterSpec)
        }
    }

    private mutating func parseFilterSpec(_ spec: String) throws(CastLoggingError) {
        if spec.trimmingWhitespace().isEmpty {
            return
        }
        var index = spec.startIndex
        while true {
            while index < spec.endIndex, spec[index].isWhitespace {
                index = spec.index(after: index)
            }
            if index < spec.endIndex, spec[index] == "/" {
                index = try parseMessagePattern(in: spec, from: index)
            } else {
                index = try parseCategoryRule(in: spec, from: index)
            }
            // `index` is now at the end or at the comma that ends the item.
            guard index < spec.endIndex else {
                return
            }
            index = spec.index(after: index)
            if index == spec.endIndex {
                throw CastLoggingError(code: .invalidFilter, message: "empty item at the end of --log-filter '\(spec)'")
            }
        }
    }

    /// Parses `/REGEX/` or `/REGEX/i` starting at the opening slash; returns the index of the next comma or the end.
    private mutating func parseMessagePattern(
        in spec: String,
        from start: String.Index
    ) throws(CastLoggingError) -> String.Index {
        let patternStart = spec.index(after: start)
        var index = patternStart
        var patternEnd: String.Index? = nil
        while index < spec.endIndex {
            if spec[index] == "\\" {
                index = spec.index(after: index)
                if index < spec.endIndex {
                    index = spec.index(after: index)
                }
            } else if spec[index] == "/" {
                patternEnd = index
                break
            } else {
                index = spec.index(after: index)
            }
        }
        guard let patternEnd else {
            throw CastLoggingError(
                code: .invalidFilter,
                message: "unterminated message pattern '\(spec[start...])' (expected /REGEX/ or /REGEX/i)"
            )
        }
        let flagsStart = spec.index(after: patternEnd)
        let itemEnd = spec[flagsStart...].firstIndex(of: ",") ?? spec.endIndex
        let item = spec[start..<itemEnd].trimmingWhitespace()
        let flags = spec[flagsStart..<itemEnd].trimmingWhitespace()
        guard flags.isEmpty || flags == "i" else {
            throw CastLoggingError(
                code: .invalidFilter,
                message: "unknown flags '\(flags)' in '\(item)' (only /REGEX/i is supported)"
            )
        }
        let pattern = String(spec[patternStart..<patternEnd])
        guard !pattern.isEmpty else {
            throw CastLoggingError(code: .invalidPattern, message: "empty message pattern '\(item)'")
        }
        do {
            messagePatterns.append(try MessagePattern(pattern, caseInsensitive: flags == "i"))
        } catch {
            throw CastLoggingError(code: error.code, message: "\(error.message) (item '\(item)')")
        }
        return itemEnd
    }

    /// Parses `PATTERN=LEVEL` up to the next comma; returns the index of that comma or the end.
    private mutating func parseCategoryRule(
        in spec: String,
        from start: String.Index
    ) throws(CastLoggingError) -> String.Index {
        let itemEnd = spec[start...].firstIndex(of: ",") ?? spec.endIndex
        let item = spec[start..<itemEnd].trimmingWhitespace()
        guard !item.isEmpty else {
            throw CastLoggingError(code: .invalidFilter, message: "empty item in --log-filter '\(spec)'")
        }
        guard let equals = item.firstIndex(of: "=") else {
            throw CastLoggingError(
                code: .invalidFilter,
                message: "'\(item)' is neither PATTERN=LEVEL nor /REGEX/"
            )
        }
        let pattern = item[..<equals].trimmingWhitespace()
        let levelName = item[item.index(after: equals)...].trimmingWhitespace().lowercased()
        guard !pattern.isEmpty else {
            throw CastLoggingError(code: .invalidFilter, message: "'\(item)' has no category pattern before '='")
        }
        guard !pattern.contains(where: \.isWhitespace) else {
            throw CastLoggingError(code: .invalidPattern, message: "category pattern '\(pattern)' contains whitespace")
        }
        guard levelName != "off" else {
            throw CastLoggingError(
                code: .invalidLevel,
                message: "level 'off' in '\(item)' is only valid for --log-level; use 'critical' to quiet a category"
            )
        }
        setLevel(try Self.parseLevel(levelName, item: String(item)), forCategory: CategoryPattern(String(pattern)))
        return itemEnd
    }

    private static func parseLevel(
        _ name: String,
        item: String,
        orOff: Bool = false
    ) throws(CastLoggingError) -> Logger.Level {
        guard let level = Logger.Level(rawValue: name) else {
            let names = (Logger.Level.allCases.map(\.rawValue) + (orOff ? ["off"] : [])).joined(separator: ", ")
            throw CastLoggingError(
                code: .invalidLevel,
                message: "unknown level '\(name)' in '\(item)' (expected one of \(names))"
            )
        }
        return level
    }
}
