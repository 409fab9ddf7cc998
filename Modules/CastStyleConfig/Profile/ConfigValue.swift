// swift-cast — Apache-2.0

/// Where an effective setting came from.
public struct ConfigSource: Sendable, Hashable, CustomStringConvertible {
    /// The layer of the precedence order the value came from.
    public struct Kind: Sendable, Hashable, Comparable, CustomStringConvertible {
        private enum Base: Int, Hashable, Sendable {
            case builtInDefault, profile, environment, commandLine
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The built-in default (lowest precedence).
        public static let builtInDefault = Kind(.builtInDefault)
        /// A profile document (the user profile, or one named by `--profile` or `CAST_PROFILE`).
        public static let profile = Kind(.profile)
        /// A `CAST_*` environment variable.
        public static let environment = Kind(.environment)
        /// A command-line flag (highest precedence).
        public static let commandLine = Kind(.commandLine)

        /// Orders by precedence: a greater kind wins.
        public static func < (lhs: Kind, rhs: Kind) -> Bool {
            lhs.base.rawValue < rhs.base.rawValue
        }

        /// `default`, `profile`, `environment` or `command line`.
        public var description: String {
            switch base {
            case .builtInDefault: "default"
            case .profile: "profile"
            case .environment: "environment"
            case .commandLine: "command line"
            }
        }
    }

    /// The layer.
    public var kind: Kind
    /// The profile document's path, the environment variable's name or the command-line setting key; `nil` for
    /// defaults.
    public var name: String?
    /// For profiles, the line of the attribute that set the value.
    public var line: Int?

    /// Creates a source.
    public init(kind: Kind, name: String? = nil, line: Int? = nil) {
        self.kind = kind
        self.name = name
        self.line = line
    }

    /// The built-in default.
    public static let builtInDefault = ConfigSource(kind: .builtInDefault)

    /// `default`, `profile /home/me/.config/cast/profile.xml:12`, `environment CAST_APP_ID` or
    /// `command line receiver.applicationID`.
    public var description: String {
        guard let name else { return kind.description }
        if let line {
            return "\(kind) \(name):\(line)"
        }
        return "\(kind) \(name)"
    }
}

/// One effective setting: a row of `cast config show`.
public struct ConfigValue: Sendable, Hashable, CustomStringConvertible {
    /// The setting key, e.g. `timeouts.request` (the same key `cliOverrides` use), or a list entry's key such as
    /// `staticDevices.device`, which may repeat.
    public var key: String
    /// The effective value, written as a profile would write it (`10s`, `true`, `CC1AD845`); secrets are shown as
    /// `<redacted>`.
    public var value: String
    /// Where it came from.
    public var source: ConfigSource

    /// Creates a row.
    public init(key: String, value: String, source: ConfigSource) {
        self.key = key
        self.value = value
        self.source = source
    }

    /// `key = value  (source)`.
    public var description: String {
        "\(key) = \(value)  (\(source))"
    }
}
