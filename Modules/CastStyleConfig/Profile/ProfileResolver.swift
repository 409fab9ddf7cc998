// swift-cast — Apache-2.0

import CastDiscovery
import CastLogging
import CastSession
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The effective configuration: options, discovery criteria, log filter and style, and where every value came from.
public struct ResolvedProfile: Sendable {
    /// The session options (GCKCastOptions).
    public var options: CastOptions
    /// Which devices discovery lists (GCKDiscoveryCriteria).
    public var discoveryCriteria: DiscoveryCriteria
    /// The address ranges discovery scans besides browsing mDNS (`discovery.scanRanges`); none by default.
    public var discoveryScanRanges: [AddressRange] = []
    /// The logging filter (GCKLoggerFilter).
    public var logFilter: LogFilter
    /// The terminal controllers' style; ``ResolvedStyle/builtIn`` unless a style document is named.
    public var style: ResolvedStyle
    /// What the `<daemon>` section configures for `castd`.
    public var daemon: DaemonSettings
    /// The profile documents used, base-most first; empty when no profile was read.
    public var profilePaths: [String]
    /// One row per setting (and per list entry), in a stable order: the effective value and its source. This is
    /// what `cast config show` prints.
    ///
    /// The first row, `profile`, names the profile document read (or `none`) and why it was chosen: `--profile`
    /// (command line), `CAST_PROFILE` (environment) or the user profile (default). Then come the scalar settings in
    /// ``ProfileResolver/keys`` order, then `staticDevices.device` (or `staticDevices = none`), `logging.category`
    /// and `logging.message` rows.
    public var provenance: [ConfigValue]

    /// The log filter of a command-line program: ``logFilter``, but quiet (`warning`) unless some layer set
    /// `logging.level`, with the category rules and message patterns of `filterSpec` (a `--log-filter` value)
    /// added last so they win.
    ///
    /// - Throws: `CastLoggingError` for a malformed `filterSpec`.
    public func commandLineLogFilter(adding filterSpec: String?) throws(CastLoggingError) -> LogFilter {
        var filter = logFilter
        if value(forKey: "logging.level")?.source.kind == .builtInDefault {
            filter.minimumLevel = .warning
        }
        if let filterSpec {
            let extra = try LogFilter(level: nil, filterSpec: filterSpec)
            filter.categoryLevels += extra.categoryLevels
            filter.messagePatterns += extra.messagePatterns
        }
        return filter
    }

    /// The first row for `key`, e.g. `timeouts.request`.
    public func value(forKey key: String) -> ConfigValue? {
        provenance.first { $0.key == key }
    }

    /// ``provenance`` as an aligned three-column table with a header: `KEY  VALUE  SOURCE`.
    public func formattedProvenance() -> String {
        let rows = [("KEY", "VALUE", "SOURCE")] + provenance.map { ($0.key, $0.value, $0.source.description) }
        let keyWidth = rows.map(\.0.count).max() ?? 0
        let valueWidth = rows.map(\.1.count).max() ?? 0
        return rows.map { $0.0.padded(to: keyWidth) + "  " + $0.1.padded(to: valueWidth) + "  " + $0.2 }
            .joined(separator: "\n")
    }
}

/// Computes the effective configuration from its four layers, highest precedence first:
///
/// 1. **command-line flags**, passed as ``cliOverrides`` keyed by setting key (`timeouts.request`);
/// 2. **environment variables** (`CAST_*`, below), from ``environment``;
/// 3. **a profile document**: ``explicitProfilePath`` (`--profile`), else `CAST_PROFILE`, else the user profile
///    ``userProfilePath`` (by default `$XDG_CONFIG_HOME/cast/profile.xml`, else `~/.config/cast/profile.xml`);
/// 4. **built-in defaults** (those of `CastOptions`, `DiscoveryCriteria`, `LogFilter` and the built-in style).
///
/// A higher layer wins setting by setting. The lists combine differently: static devices come whole from the
/// highest layer that sets any; category rules from all layers are kept, higher layers' last (so they win ties of
/// equal specificity); message patterns come from the highest layer that sets any.
///
/// An explicit or `CAST_PROFILE` profile must exist; the user profile is optional. A profile that exists but is
/// bad fails resolution with its error; nothing falls back to defaults.
///
/// ## Keys and environment variables
///
/// Every scalar setting is a row of one table, ``ProfileResolver/keys``: its key (`cliOverrides`, and the profile's
/// `element.attribute`), environment variable, command-line flag, value syntax, default and summary. Every list
/// setting is a row of a second, ``ProfileResolver/lists``: `staticDevices` (`CAST_DEVICES`), `logging.filter`
/// (`CAST_LOG_FILTER`) and the daemon's tokens, media folders and origins. Besides those, `CAST_PROFILE` names the
/// profile document to read instead of the user profile.
///
/// Values use the profile syntax (durations `5s`/`500ms`, booleans; the environment and command line also accept
/// `yes`/`no`/`on`/`off`). Empty environment variables count as unset. An unknown ``cliOverrides`` key fails with
/// ``CastConfigError/Code/invalidValue``; unknown `CAST_*` variables are ignored. Relative paths from a profile
/// are relative to the profile; from the environment or command line, to the working directory.
///
/// ```swift
/// let resolver = ProfileResolver.standard(
///     cliOverrides: ["timeouts.request": "5s"],
///     environment: ProcessInfo.processInfo.environment
/// )
/// let resolved = try resolver.resolve()
/// let context = CastContext(options: resolved.options)
/// print(resolved.formattedProvenance())          // `cast config show`
/// ```
public struct ProfileResolver: Sendable {
    /// Command-line values by setting key; the highest precedence.
    public var cliOverrides: [String: String]
    /// The process environment: `CAST_*` variables, plus `CAST_PROFILE`.
    public var environment: [String: String]
    /// The user profile, read when it exists; `nil` reads none.
    public var userProfilePath: String?
    /// A profile named on the command line (`--profile`); it must exist, and replaces the user profile.
    public var explicitProfilePath: String?
    /// Limits for every document read.
    public var limits: DocumentLimits

    /// Creates a resolver over explicit inputs (tests pass their own environment).
    public init(
        cliOverrides: [String: String] = [:],
        environment: [String: String] = [:],
        userProfilePath: String? = nil,
        explicitProfilePath: String? = nil,
        limits: DocumentLimits = DocumentLimits()
    ) {
        self.cliOverrides = cliOverrides
        self.environment = environment
        self.userProfilePath = userProfilePath
        self.explicitProfilePath = explicitProfilePath
        self.limits = limits
    }

    /// A resolver for a process: its environment (pass `ProcessInfo.processInfo.environment`) and the default user
    /// profile path derived from it.
    public static func standard(
        cliOverrides: [String: String] = [:],
        explicitProfilePath: String? = nil,
        environment: [String: String]
    ) -> ProfileResolver {
        ProfileResolver(
            cliOverrides: cliOverrides,
            environment: environment,
            userProfilePath: defaultUserProfilePath(environment: environment),
            explicitProfilePath: explicitProfilePath
        )
    }

    /// `$XDG_CONFIG_HOME/cast/profile.xml` when `XDG_CONFIG_HOME` is set to an absolute path, else
    /// `$HOME/.config/cast/profile.xml`; `nil` when neither variable helps.
    public static func defaultUserProfilePath(environment: [String: String]) -> String? {
        if let configHome = environment["XDG_CONFIG_HOME"], configHome.hasPrefix("/") {
            return configHome + (configHome.hasSuffix("/") ? "" : "/") + "cast/profile.xml"
        }
        if let home = environment["HOME"], !home.isEmpty {
            return home + (home.hasSuffix("/") ? "" : "/") + ".config/cast/profile.xml"
        }
        return nil
    }

    /// The settings table: every scalar setting's key, environment variable, flag, syntax, default and summary.
    public static var keys: [ProfileKey] {
        ProfileSetting.all.map(\.publicKey)
    }

    /// The list settings table: each list's key, environment variable, profile elements, flag, syntax and fields.
    public static var lists: [ProfileListKey] {
        ProfileList.all.map(\.publicKey)
    }

    /// ``cliOverrides`` from command-line flag values keyed by flag (`["--log-level": "debug"]`): each value sets
    /// every setting whose row in ``keys`` names that flag (`--timeout` sets both timeouts), so the programs need
    /// not know the keys. `nil` values (flags not given) are left out; a flag no row names is a programming error,
    /// caught on every run whether or not the flag is given.
    public static func overrides(flags: [String: String?]) -> [String: String] {
        var overrides: [String: String] = [:]
        for (flag, value) in flags {
            let settings = ProfileSetting.all.filter { $0.flag == flag }
            precondition(!settings.isEmpty, "no setting has the flag \(flag)")
            for setting in settings { overrides[setting.key] = value }
        }
        return overrides
    }

    /// The effective configuration.
    ///
    /// - Throws: ``CastConfigError`` from the profile (or a profile it extends, or its style), or for an invalid
    ///   environment or command-line value; never falls back to defaults.
    public func resolve() throws(CastConfigError) -> ResolvedProfile {
        var resolution = ProfileResolution()
        if let (path, source) = try selectedProfile() {
            let profile = try CastProfile(contentsOfFile: path, limits: limits)
            resolution.profile = profile.layer
            resolution.profilePaths = profile.paths
            resolution.profileRow = ConfigValue(key: "profile", value: path, source: source)
        }
        resolution.environment = try environmentLayer()
        resolution.commandLine = try commandLineLayer()
        return try resolution.run(loadsStyle: true, limits: limits)
    }

    /// The profile to read and why, or `nil` for none.
    private func selectedProfile() throws(CastConfigError) -> (String, ConfigSource)? {
        if let explicitProfilePath {
            return (explicitProfilePath, ConfigSource(kind: .commandLine, name: "--profile"))
        }
        if let path = environment["CAST_PROFILE"], !path.isEmpty {
            return (path, ConfigSource(kind: .environment, name: "CAST_PROFILE"))
        }
        var info = stat()
        if let userProfilePath, stat(userProfilePath, &info) == 0 {
            return (userProfilePath, ConfigSource(kind: .builtInDefault, name: "user profile"))
        }
        return nil
    }

    private func environmentLayer() throws(CastConfigError) -> ProfileLayer {
        var layer = ProfileLayer()
        for setting in ProfileSetting.all {
            if let value = environment[setting.environmentVariable], !value.isEmpty {
                let source = ConfigSource(kind: .environment, name: setting.environmentVariable)
                layer.scalars[setting.key] = RawSetting(value: value, source: source, location: nil)
            }
        }
        for list in ProfileList.all {
            guard let parse = list.parse, let variable = list.publicKey.environmentVariable,
                let value = environment[variable], !value.isEmpty
            else { continue }
            try parse(value, ConfigSource(kind: .environment, name: variable), &layer)
        }
        return layer
    }

    private func commandLineLayer() throws(CastConfigError) -> ProfileLayer {
        var layer = ProfileLayer()
        for (key, value) in cliOverrides.sorted(by: { $0.key < $1.key }) {
            let source = ConfigSource(kind: .commandLine, name: key)
            if ProfileSetting.named(key) != nil {
                layer.scalars[key] = RawSetting(value: value, source: source, location: nil)
            } else if let parse = ProfileList.named(key)?.parse {
                try parse(value, source, &layer)
            } else {
                let lists = ProfileList.all.filter { $0.parse != nil }.map(\.publicKey.key)
                let known = (ProfileSetting.all.map(\.key) + lists).joined(separator: ", ")
                throw CastConfigError(
                    code: .invalidValue,
                    message: "unknown setting '\(key)'; known settings: \(known)",
                    file: "command line"
                )
            }
        }
        return layer
    }

    /// Parses `host[:port][=name]` items, comma-separated; `none` or empty items give no device.
    static func devices(_ text: String, source: ConfigSource) throws(CastConfigError) -> [RawDevice] {
        var devices: [RawDevice] = []
        for item in text.split(separator: ",").map({ $0.trimmingASCIIWhitespace() }) where !item.isEmpty {
            if item == "none" { continue }
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            var address = parts[0].trimmingASCIIWhitespace()
            var port = 8009
            var host = address
            if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
                host = String(address[address.index(after: address.startIndex)..<close])
                address = String(address[address.index(after: close)...])
                if address.hasPrefix(":") {
                    guard let value = Int(address.dropFirst()), (1...65535).contains(value) else {
                        throw deviceError(item, source)
                    }
                    port = value
                } else if !address.isEmpty {
                    throw deviceError(item, source)
                }
            } else if address.filter({ $0 == ":" }).count == 1, let colon = address.firstIndex(of: ":") {
                host = String(address[..<colon])
                guard let value = Int(address[address.index(after: colon)...]), (1...65535).contains(value) else {
                    throw deviceError(item, source)
                }
                port = value
            }
            guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "/" }) else {
                throw deviceError(item, source)
            }
            // Colons left in the host: only an IPv6 address has them.
            if host.contains(":") {
                var address = in6_addr()
                guard inet_pton(AF_INET6, host, &address) == 1 else { throw deviceError(item, source) }
            }
            let name = parts.count > 1 ? parts[1].trimmingASCIIWhitespace() : nil
            devices.append(RawDevice(host: host, port: port, name: name?.isEmpty == true ? nil : name, source: source))
        }
        return devices
    }

    private static func deviceError(_ item: String, _ source: ConfigSource) -> CastConfigError {
        CastConfigError(
            code: .invalidValue,
            message: "\(source.name ?? "staticDevices") must be a comma-separated list of host[:port][=name] "
                + "(found '\(item)')",
            file: source.kind.description
        )
    }

    /// Adds a `--log-filter`-syntax specification's rules and patterns to `layer`.
    static func addFilter(_ spec: String, to layer: inout ProfileLayer, source: ConfigSource)
        throws(CastConfigError)
    {
        let filter: LogFilter
        do {
            filter = try LogFilter(level: nil, filterSpec: spec)
        } catch {
            throw CastConfigError(
                code: .invalidValue,
                message: "\(source.name ?? "logging.filter"): \(error.message)",
                file: source.kind.description
            )
        }
        layer.categoryRules += filter.categoryLevels.map {
            RawLogRule(pattern: $0.pattern.text, level: $0.level.rawValue, source: source, location: nil)
        }
        layer.messagePatterns += filter.messagePatterns.map {
            RawLogRule(pattern: $0.pattern, caseInsensitive: $0.caseInsensitive, source: source, location: nil)
        }
    }
}

/// One resolution run: the layers in, a ``ResolvedProfile`` out.
struct ProfileResolution {
    var profile: ProfileLayer?
    var profilePaths: [String] = []
    var profileRow: ConfigValue?
    var environment = ProfileLayer()
    var commandLine = ProfileLayer()

    init(profile: ProfileLayer? = nil, profilePaths: [String] = []) {
        self.profile = profile
        self.profilePaths = profilePaths
    }

    func run(loadsStyle: Bool, limits: DocumentLimits) throws(CastConfigError) -> ResolvedProfile {
        var target = ProfileTarget()
        let documentRow = profilePaths.last.map {
            ConfigValue(key: "profile", value: $0, source: ConfigSource(kind: .profile, name: $0))
        }
        var rows = [profileRow ?? documentRow ?? ConfigValue(key: "profile", value: "none", source: .builtInDefault)]
        var credentialsTypeSource: RawSetting?
        for setting in ProfileSetting.all {
            guard
                let raw = commandLine.scalars[setting.key] ?? environment.scalars[setting.key]
                    ?? profile?.scalars[setting.key]
            else {
                rows.append(ConfigValue(key: setting.key, value: setting.current(target), source: .builtInDefault))
                continue
            }
            var text = raw.value
            if setting.isPath, raw.source.kind == .profile, let file = raw.location?.file, text != "built-in" {
                text = DocumentLoader.resolve(text, relativeTo: file)
            }
            do {
                try setting.apply(&target, text)
            } catch {
                throw Self.invalid(raw, key: setting.key, environmentVariable: setting.environmentVariable, error)
            }
            if setting.key == "credentials.type" {
                credentialsTypeSource = raw
            }
            rows.append(ConfigValue(key: setting.key, value: setting.current(target), source: raw.source))
        }

        if let data = target.credentialsData {
            target.options.launchCredentials = CredentialsData(
                credentials: data,
                credentialsType: target.credentialsType
            )
        } else if let credentialsTypeSource {
            throw CastConfigError(
                .invalidValue,
                "credentials.type is set (\(credentialsTypeSource.source)) but credentials.data is not",
                at: credentialsTypeSource.location
                    ?? DocumentLocation(file: credentialsTypeSource.source.kind.description)
            )
        }

        let devices = commandLine.devices ?? environment.devices ?? profile?.devices ?? []
        target.options.staticDevices = devices.map {
            CastDevice.staticDevice(host: $0.host, port: $0.port, name: $0.name)
        }
        if devices.isEmpty {
            let source =
                commandLine.devices != nil
                ? ConfigSource(kind: .commandLine, name: "staticDevices")
                : environment.devices != nil
                    ? ConfigSource(kind: .environment, name: "CAST_DEVICES")
                    : profile?.devices != nil
                        ? ConfigSource(kind: .profile, name: profilePaths.last) : .builtInDefault
            rows.append(ConfigValue(key: "staticDevices", value: "none", source: source))
        }
        for device in devices {
            rows.append(ConfigValue(key: "staticDevices.device", value: device.description, source: device.source))
        }

        let ruleLayers = [profile?.categoryRules ?? [], environment.categoryRules, commandLine.categoryRules]
        for rule in ruleLayers.joined() {
            do {
                let level = try SettingType<Logger.Level>.level.parse(rule.level ?? "")
                target.logFilter.setLevel(level, forCategory: CategoryPattern(rule.pattern))
            } catch {
                throw Self.invalid(
                    RawSetting(value: rule.level ?? "", source: rule.source, location: rule.location),
                    key: "logging.category",
                    attribute: "level",
                    error
                )
            }
            rows.append(
                ConfigValue(key: "logging.category", value: "\(rule.pattern)=\(rule.level ?? "")", source: rule.source)
            )
        }
        let patterns =
            [commandLine.messagePatterns, environment.messagePatterns, profile?.messagePatterns ?? []]
            .first { !$0.isEmpty } ?? []
        for pattern in patterns {
            do {
                try target.logFilter.addMessagePattern(pattern.pattern, caseInsensitive: pattern.caseInsensitive)
            } catch {
                throw CastConfigError(
                    .invalidValue,
                    "element 'message': attribute 'pattern' must be a valid regular expression: \(error.message)",
                    at: pattern.location ?? DocumentLocation(file: pattern.source.kind.description)
                )
            }
            rows.append(
                ConfigValue(
                    key: "logging.message",
                    value: "/\(pattern.pattern)/\(pattern.caseInsensitive ? "i" : "")",
                    source: pattern.source
                )
            )
        }

        // The daemon's lists come from profiles only (castd's flags replace them).
        let daemonLists = profile?.daemonLists ?? [:]
        for list in ProfileList.all {
            guard let child = list.daemonChild else { continue }
            for entry in daemonLists[child.element] ?? [] {
                var value = entry.value
                if child.isPath, let file = entry.location?.file {
                    value = DocumentLoader.resolve(value, relativeTo: file)
                }
                target.daemon[keyPath: child.field].append(value)
                rows.append(ConfigValue(key: list.publicKey.key, value: value, source: entry.source))
            }
        }

        var style = ResolvedStyle.builtIn
        if loadsStyle, let path = target.stylePath {
            style = try CastStyle(contentsOfFile: path, limits: limits).resolved()
        }
        return ResolvedProfile(
            options: target.options,
            discoveryCriteria: target.makeDiscoveryCriteria(),
            discoveryScanRanges: target.discoveryScanRanges,
            logFilter: target.logFilter,
            style: style,
            daemon: target.daemon,
            profilePaths: profilePaths,
            provenance: rows
        )
    }

    /// An invalid-value error located where `raw` came from.
    private static func invalid(
        _ raw: RawSetting,
        key: String,
        environmentVariable: String? = nil,
        attribute: String? = nil,
        _ problem: ValueProblem
    ) -> CastConfigError {
        let found = " (found '\(raw.value)')"
        switch raw.source.kind {
        case .profile:
            let element = String(key.split(separator: ".")[0])
            let attribute = attribute ?? String(key.split(separator: ".").last ?? "")
            return CastConfigError(
                .invalidValue,
                "element '\(element)': attribute '\(attribute)' must be \(problem.expectation)\(found)",
                at: raw.location
            )
        case .environment:
            return CastConfigError(
                code: .invalidValue,
                message: "\(raw.source.name ?? environmentVariable ?? key) must be \(problem.expectation)\(found)",
                file: "environment"
            )
        default:
            return CastConfigError(
                code: .invalidValue,
                message: "\(raw.source.name ?? key) must be \(problem.expectation)\(found)",
                file: "command line"
            )
        }
    }
}
