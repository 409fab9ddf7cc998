import ArgumentParser
import CastStyleConfig
import CastTransport

/// `cast config`: check and show option profiles and styles.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Validate and show option profiles and styles.",
        subcommands: [Validate.self, Show.self]
    )

    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a profile or style document against its schema.",
            discussion: "Example: cast config validate Tools/profiles/living-room.xml"
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The XML document.") var file: String

        func run() async throws {
            do {
                let kind = try CastConfigValidator.validate(contentsOfFile: file)
                let json: JSONValue = ["file": .string(file), "valid": true, "kind": .string("\(kind)")]
                say(global.json ? json.jsonString : "\(file): valid \(kind)")
            } catch {
                let json: JSONValue = ["file": .string(file), "valid": false, "error": .string("\(error)")]
                if global.json { say(json.jsonString) } else { FileHandleOutput.standardError("cast: \(error)") }
                throw CastExit.failed
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the effective settings and where each came from (with --style, the resolved style).",
            discussion: """
                The style shown is the one the profile (style.path) or CAST_STYLE names; --style-file overrides it.
                Examples: cast config show, cast config show --profile Tools/profiles/living-room.xml --style
                """
        )
        @Option(help: "An XML option profile.") var profile: String?
        @Option(help: "A style document to show instead of the profile's.") var styleFile: String?
        @Flag(help: "Show the resolved style of every view.") var style = false
        @Flag(help: "Machine-readable JSON output.") var json = false

        func run() async throws {
            var arguments: [String] = []
            if let profile { arguments += ["--profile", profile] }
            if let styleFile { arguments += ["--style", styleFile] }
            if json { arguments.append("--json") }
            let global = try GlobalOptions.parse(arguments)
            let runtime: CLIRuntime
            do {
                runtime = try CLIRuntime(global)
            } catch {
                FileHandleOutput.standardError("cast: \(error)")
                throw CastExit.usage
            }
            if style {
                runtime.say(runtime.profile.style.dump())
            } else if json {
                let rows: [JSONValue] = runtime.profile.provenance.map {
                    ["key": .string($0.key), "value": .string($0.value), "source": .string("\($0.source)")]
                }
                runtime.say(JSONValue.object(["settings": .array(rows)]).jsonString)
            } else {
                runtime.say(runtime.profile.formattedProvenance())
            }
        }
    }
}

func say(_ text: String) {
    LocalFiles.write(text.hasSuffix("\n") ? text : text + "\n", to: 1)
}

#if canImport(Glibc)
import Glibc
#endif
