// swift-cast — Apache-2.0

import Testing

@testable import CastStyleConfig

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The settings table (`ProfileResolver.keys`) is what the schema, the flags and the README say.
@Suite("Settings table")
struct SettingsTableTests {
    @Test("every key is an attribute the profile schema declares")
    func keysAreSchemaAttributes() {
        let vocabulary = SchemaVocabulary(xsd: profileXSD)
        for key in ProfileResolver.keys {
            #expect(vocabulary.attributes[key.element]?.contains(key.attribute) == true, "\(key.key)")
        }
    }

    @Test("keys and environment variables are unique")
    func unique() {
        #expect(Set(ProfileResolver.keys.map(\.key)).count == ProfileResolver.keys.count)
        #expect(Set(ProfileResolver.keys.map(\.environmentVariable)).count == ProfileResolver.keys.count)
    }

    @Test("a flag sets every setting whose row names it; absent flags set nothing")
    func overridesFromFlags() {
        let overrides = ProfileResolver.overrides(flags: [
            "--timeout": "2500ms", "--log-level": "debug", "--style": nil,
        ])
        #expect(overrides == ["timeouts.connect": "2500ms", "timeouts.request": "2500ms", "logging.level": "debug"])
    }

    @Test("the README's table of settings is generated from the settings table")
    func readme() throws {
        let rows = ProfileResolver.keys.map { key in
            let flag = key.flag.map { "`\($0)`" } ?? "—"
            return "| `\(key.key)` / `\(key.environmentVariable)` | `\(key.element)@\(key.attribute)` | \(flag) | "
                + "\(key.syntax) | `\(key.defaultValue)` | \(key.summary) |"
        }
        try Self.expectReadme(rows)
    }

    @Test("the README's list rows are generated from the list table, and the lists' keys are known overrides")
    func listRows() throws {
        let rows = ProfileResolver.lists.map { list in
            let environment = list.environmentVariable.map { " / `\($0)`" } ?? ""
            return "| `\(list.key)`\(environment) | \(list.profilePath) | \(list.flag.map { "`\($0)`" } ?? "—") | "
                + "\(list.syntax) | none | \(list.summary) |"
        }
        try Self.expectReadme(rows)
        #expect(Set(ProfileResolver.lists.map(\.key)).isDisjoint(with: ProfileResolver.keys.map(\.key)))
        // Every list with an environment variable takes a command-line override under its key too.
        let samples = ["staticDevices": "192.0.2.7:8009=Lab", "logging.filter": "Cast*=debug"]
        for list in ProfileResolver.lists where list.environmentVariable != nil {
            let value = try #require(samples[list.key], "a sample value for \(list.key)")
            let resolved = try ProfileResolver(cliOverrides: [list.key: value]).resolve()
            let rowKey = list.key == "logging.filter" ? "logging.category" : "staticDevices.device"
            #expect(resolved.provenance.contains { $0.key == rowKey }, "\(list.key)")
        }
    }

    /// Expects the module README to hold `rows`, one after the other, from the line of the first row's key.
    private static func expectReadme(_ rows: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let readme = try #require(read(repositoryRoot + "/Modules/CastStyleConfig/README.md"))
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let key = rows[0].split(separator: "`")[1]
        let start = lines.firstIndex { $0.hasPrefix("| `\(key)`") } ?? lines.endIndex
        let documented = Array(lines[start..<min(start + rows.count, lines.endIndex)])
        #expect(
            documented == rows,
            "README.md's rows should be:\n\(rows.joined(separator: "\n"))",
            sourceLocation: sourceLocation
        )
    }

    private static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while case let count = fread(&buffer, 1, buffer.count, file), count > 0 {
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
