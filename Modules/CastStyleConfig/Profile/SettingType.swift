// swift-cast — Apache-2.0

import CastDiscovery
import CastSession
import CastTransport
import Logging

/// A setting's value syntax, shared by profiles, `CAST_*` variables and command-line overrides: how text becomes a
/// value, how a value is shown (as a profile would write it), and what the text must be (the words of its errors).
/// The settings table names one per setting, so a syntax is written once however many settings use it.
struct SettingType<Value>: Sendable {
    /// What a value must be, a noun phrase: `a duration like 5s or 500ms`.
    var syntax: String
    /// A file path: relative values from a profile are resolved against the profile's directory.
    var isPath = false
    /// Shown as `<redacted>`.
    var isSecret = false
    var parse: @Sendable (String) throws(ValueProblem) -> Value
    var format: @Sendable (Value) -> String
}

extension SettingType {
    /// A syntax whose parser returns `nil` for text it refuses, which then fails with `syntax`.
    init(
        _ syntax: String,
        isPath: Bool = false,
        isSecret: Bool = false,
        format: @escaping @Sendable (Value) -> String = { "\($0)" },
        parse: @escaping @Sendable (String) -> Value?
    ) {
        self.init(
            syntax: syntax,
            isPath: isPath,
            isSecret: isSecret,
            parse: { (text) throws(ValueProblem) in
                guard let value = parse(text) else { throw ValueProblem(expectation: syntax) }
                return value
            },
            format: format
        )
    }

    /// `type`, or `word` (exactly, after trimming: `none`, `any`, `unlimited`, ...) for no value, which is shown as
    /// that word. Refused text fails with `syntax`, by default the type's with `, or <word>`.
    static func optional<Wrapped>(_ type: SettingType<Wrapped>, none word: String, syntax: String? = nil) -> Self
    where Value == Wrapped? {
        let syntax = syntax ?? "\(type.syntax), or \(word)"
        return Self(
            syntax: syntax,
            isPath: type.isPath,
            isSecret: type.isSecret,
            parse: { (text) throws(ValueProblem) in
                if text.trimmingASCIIWhitespace() == word { return nil }
                do { return try type.parse(text) } catch { throw ValueProblem(expectation: syntax) }
            },
            format: { $0.map(type.format) ?? word }
        )
    }

    /// `type` for a field that is unset until a layer sets it; unset is shown as `unset`.
    static func optional<Wrapped>(_ type: SettingType<Wrapped>, unset: String) -> Self where Value == Wrapped? {
        Self(
            syntax: type.syntax,
            isPath: type.isPath,
            isSecret: type.isSecret,
            parse: { (text) throws(ValueProblem) in
                try type.parse(text)
            },
            format: { $0.map(type.format) ?? unset }
        )
    }

    /// `none`, or a list of items separated by spaces, commas or tabs; shown space-separated.
    static func list<Item>(
        _ syntax: String,
        format: @escaping @Sendable (Item) -> String = { "\($0)" },
        item: @escaping @Sendable (String) -> Item?
    ) -> Self where Value == [Item] {
        Self(syntax, format: { $0.isEmpty ? "none" : $0.map(format).joined(separator: " ") }) { text in
            let words = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }).map(String.init)
            if words == ["none"] { return [] }
            let items = words.compactMap(item)
            return items.isEmpty || items.count < words.count ? nil : items
        }
    }

    /// A `RawRepresentable` type's raw values, e.g. `DeviceAuthPolicy`.
    static func rawValue(_ syntax: String) -> Self where Value: RawRepresentable & Sendable, Value.RawValue == String {
        Self(syntax, format: { $0.rawValue }) { Value(rawValue: $0.trimmingASCIIWhitespace()) }
    }
}

extension SettingType<Bool> {
    /// `true`/`false`/`1`/`0`, and in the environment and on the command line also `yes`/`no`/`on`/`off`.
    static var bool: Self {
        Self("true or false") { text in
            switch text.trimmingASCIIWhitespace().lowercased() {
            case "true", "1", "yes", "on": true
            case "false", "0", "no", "off": false
            default: nil
            }
        }
    }
}

extension SettingType<Duration> {
    /// A number and a unit, ``ConfigDuration``.
    static var duration: Self {
        Self("a duration like 5s or 500ms", format: { ConfigDuration.format($0) }) { ConfigDuration.parse($0) }
    }
}

extension SettingType<Double> {
    /// A plain decimal number (digits and a point) in `range`, above its lower bound when `above` is set.
    static func decimal(_ range: ClosedRange<Double>, above: Bool = false, _ syntax: String) -> Self {
        Self(syntax, format: { $0 == $0.rounded() && abs($0) < 1e15 ? String(Int64($0)) : String($0) }) { text in
            let value = text.trimmingASCIIWhitespace()
            guard value.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let number = Double(value),
                range.contains(number), !above || number > range.lowerBound
            else { return nil }
            return number
        }
    }
}

extension SettingType<Double?> {
    /// `volume.step`: a fraction in (0, 1], or `receiver` (`nil`).
    static var volumeStep: Self {
        .optional(.decimal(0...1, above: true, "a volume fraction above 0 and at most 1, like 0.05"), none: "receiver")
    }

    /// `daemon.requestsPerSecond`: a positive rate, or `none` (`nil`).
    static var requestRate: Self {
        .optional(.decimal(0...1_000_000, above: true, "requests per second like 50 or 0.5"), none: "none")
    }
}

extension SettingType<[String]> {
    /// `discovery.requiredCapabilities`: capability names.
    static var capabilities: Self {
        .list("a list of videoOut, videoIn, audioOut, audioIn, developerMode, multizoneGroup (or none)") {
            ProfileTarget.capabilities[$0] == nil ? nil : $0
        }
    }
}

extension SettingType<[AddressRange]> {
    /// `discovery.scanRanges`: IPv4 ranges.
    static var scanRanges: Self {
        .list("none or a list of IPv4 ranges A.B.C.D/N of at most \(AddressRange.maximumAddressCount) addresses each") {
            try? AddressRange($0)
        }
    }
}

extension SettingType<Int> {
    /// A whole number of at least 1, written in at most 9 characters.
    static var count: Self {
        Self("a whole number of at least 1") { text in
            let value = text.trimmingASCIIWhitespace()
            guard value.count <= 9, value.allSatisfy(\.isASCII), let number = Int(value), number >= 1 else {
                return nil
            }
            return number
        }
    }
}

extension SettingType<Logger.Level?> {
    /// A log level by name, any case, or `off` (`nil`).
    static var minimumLevel: Self {
        let names = Logger.Level.allCases.map(\.rawValue) + ["off"]
        return Self("one of " + names.joined(separator: ", "), format: { $0?.rawValue ?? "off" }) { text in
            let name = text.trimmingASCIIWhitespace().lowercased()
            if name == "off" { return .some(nil) }
            guard let level = Logger.Level(rawValue: name) else { return nil }
            return level
        }
    }
}

extension SettingType<Logger.Level> {
    /// A log level by name, any case: a category rule's level.
    static var level: Self {
        let names = Logger.Level.allCases.map(\.rawValue)
        return Self("one of " + names.joined(separator: ", "), format: { $0.rawValue }) {
            Logger.Level(rawValue: $0.trimmingASCIIWhitespace().lowercased())
        }
    }
}

extension SettingType<String> {
    /// `default-media-receiver` (→ `CC1AD845`) or 8 upper-case hex digits.
    static var applicationID: Self {
        Self("default-media-receiver or an application id of 8 hex digits like CC1AD845") { text in
            let value = text.trimmingASCIIWhitespace()
            if value == "default-media-receiver" { return CastOptions.defaultMediaReceiverApplicationID }
            return value.count == 8 && value.allSatisfy({ $0.isHexDigit && !$0.isLowercase }) ? value : nil
        }
    }

    /// A local file path (resolved against a profile's folder by the resolver): anything but empty.
    static var path: Self {
        Self("a local file path", isPath: true) { $0.isEmpty ? nil : $0 }
    }

    /// One MQTT topic level: 1 to 64 letters, digits, `-` or `_`.
    static var topicLevel: Self {
        Self("1 to 64 letters, digits, - or _") { text in
            let value = text.trimmingASCIIWhitespace()
            let allowed = value.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
            return (1...64).contains(value.count) && allowed ? value : nil
        }
    }

    /// One of `names`, exactly.
    static func oneOf(_ names: String...) -> Self {
        Self("one of " + names.joined(separator: ", ")) { text in
            let value = text.trimmingASCIIWhitespace()
            return names.contains(value) ? value : nil
        }
    }

    /// A BCP-47 language tag: a 1–8 letter primary subtag, then 1–8 letter-or-digit subtags.
    static var language: Self {
        Self("a BCP-47 language tag like en-US") { text in
            let value = text.trimmingASCIIWhitespace()
            let parts = value.split(separator: "-", omittingEmptySubsequences: false)
            guard let first = parts.first, (1...8).contains(first.count), first.allSatisfy(\.isASCII),
                first.allSatisfy(\.isLetter),
                parts.dropFirst().allSatisfy({ (1...8).contains($0.count) && $0.allSatisfy(\.isASCII) }),
                parts.dropFirst().allSatisfy({ $0.allSatisfy { $0.isLetter || $0.isNumber } })
            else { return nil }
            return value
        }
    }

    /// `HOST:PORT`, `[v6]:PORT`.
    static var listenAddress: Self {
        Self("HOST:PORT like 127.0.0.1:8765 or [::1]:8765") { text in
            let value = text.trimmingASCIIWhitespace()
            guard let colon = value.lastIndex(of: ":"), colon != value.startIndex,
                let port = Int(value[value.index(after: colon)...]), (0...65535).contains(port)
            else { return nil }
            return value
        }
    }

    /// A user name of 1 to 256 bytes.
    static var userName: Self {
        Self("a user name of 1 to 256 bytes") { text in
            let value = text.trimmingASCIIWhitespace()
            return !value.isEmpty && value.utf8.count <= 256 ? value : nil
        }
    }
}

extension SettingType<String?> {
    /// `discovery.applicationID`: `any` (`nil`) or an application id.
    static var discoveryApplicationID: Self {
        .optional(.applicationID, none: "any", syntax: "any, " + SettingType<String>.applicationID.syntax)
    }

    /// `style.path`: a path, or `built-in` (`nil`).
    static var stylePath: Self {
        .optional(.path, none: "built-in", syntax: SettingType<String>.path.syntax)
    }

    /// An MQTT broker URL, or `none`.
    static var brokerURL: Self {
        let url = SettingType<String>("mqtt://host[:port], mqtts://host[:port] or unix:///path") {
            let value = $0.trimmingASCIIWhitespace()
            let known = ["mqtt://", "mqtts://", "unix:///"].contains { value.hasPrefix($0) && value.count > $0.count }
            return known && !value.contains(" ") ? value : nil
        }
        return .optional(url, none: "none", syntax: "mqtt://host[:port], mqtts://host[:port], unix:///path or none")
    }

    /// Non-empty text, shown as `<redacted>`.
    static var secret: Self {
        Self("non-empty text", isSecret: true, format: { $0 == nil ? "none" : "<redacted>" }) { $0.isEmpty ? nil : $0 }
    }
}

extension SettingType<TrustAnchors?> {
    /// A readable PEM file of certificates, loaded as the value is applied.
    static var trustAnchors: Self {
        Self(
            syntax: "a readable PEM file of certificates",
            isPath: true,
            parse: { (text) throws(ValueProblem) in
                let path = try SettingType<String>.path.parse(text)
                do throws(CastTransportError) {
                    return try TrustAnchors(contentsOfFile: path)
                } catch {
                    throw ValueProblem(expectation: "a readable PEM file of certificates (\(error.message))")
                }
            },
            format: { $0?.source ?? "none" }
        )
    }
}
