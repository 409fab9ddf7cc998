import ArgumentParser
import CastLogging
import Logging

/// `cast`: find, start and control Google Cast sessions from the command line.
@main
struct CastCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cast",
        abstract: "A Google Cast sender for Linux.",
        subcommands: [SmokeCommand.self]
    )
}

/// Options every command shares.
struct GlobalOptions: ParsableArguments {
    @Option(help: "Minimum log level (trace, debug, info, notice, warning, error, critical, off).")
    var logLevel: String?
    @Option(help: "Log filter: CATEGORY-GLOB=LEVEL or /REGEX/[i], comma separated.")
    var logFilter: String?

    /// Bootstraps logging for the process (apps only; libraries never do this).
    func bootstrapLogging() throws -> Logger {
        let filter = try LogFilter(level: logLevel ?? "warning", filterSpec: logFilter)
        CastLoggingSystem.bootstrap(filter: filter)
        return Logger(label: CastLogCategory.app)
    }
}
