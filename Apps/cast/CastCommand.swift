import ArgumentParser
import CastTransport
import CastVersion

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `cast`: find Cast devices, start and control sessions, from the command line.
struct CastCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cast",
        abstract: "A Google Cast sender for Linux.",
        discussion: """
            Exit codes: 0 ok, 1 the receiver refused (for example a load failed), 2 usage error, \
            3 no device or cannot connect, 4 timed out, 5 nothing to control (the device is idle, or its app \
            plays no media), 6 the device failed --device-auth require.

            Control commands act on the device named with --device/--host (the session saved for it, or \
            whatever it plays, joined — also what another sender started), else on the session this program \
            used last, else on the only device found.

            Examples:
              cast demo                                   a tour against a built-in emulated device
              cast devices                                list Cast devices on the network
              cast play https://example.com/movie.mp4     cast to the only device (or pick one)
              cast pause; cast seek +30; cast status      control the running session from later commands
              cast pause --host 192.168.1.20              pause whatever that device plays (a phone's cast too)
              cast remote                                 full-screen remote control
            """,
        version: CastVersion.description,
        subcommands: [
            DevicesCommand.self, PlayCommand.self, StatusCommand.self,
            PauseCommand.self, ResumeCommand.self, ToggleCommand.self, StopCommand.self, SeekCommand.self,
            RateCommand.self, VolumeCommand.self, MuteCommand.self, UnmuteCommand.self, NextCommand.self,
            PrevCommand.self, SkipAdCommand.self,
            QueueCommand.self, TracksCommand.self,
            LaunchCommand.self, AppCommand.self, LeaveCommand.self, SendCommand.self, ListenCommand.self,
            RemoteCommand.self, ScreenCommand.self, AudioCommand.self, ConfigCommand.self, DemoCommand.self,
        ]
    )

    /// Runs the command, mapping ArgumentParser's usage errors (EX_USAGE, 64) to the documented exit code 2.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as CLIError {
            // Raised before a command could report it itself (an option that does not fit the command).
            Glibc.exit(CLIRuntime.fail(error, json: wantsJSON).rawValue)
        } catch {
            let code = exitCode(for: error)
            if code.rawValue == 64 {
                // As JSON too under --json: a script gets every failure the same way.
                if wantsJSON {
                    _ = CLIRuntime.fail(CLIError(.usage, message(for: error)), json: true)
                } else {
                    FileHandleOutput.standardError(fullMessage(for: error))
                }
                Glibc.exit(CastExit.usage.rawValue)
            }
            exit(withError: error)
        }
    }

    /// Whether `--json` was given (before the arguments could be parsed).
    private static var wantsJSON: Bool {
        let arguments = CommandLine.arguments.dropFirst()
        return arguments.prefix { $0 != "--" }.contains("--json")
    }
}

/// Writes to standard error without buffering.
enum FileHandleOutput {
    static func standardError(_ text: String) {
        LocalFiles.write(text.hasSuffix("\n") ? text : text + "\n", to: 2)
    }

    /// Rewrites the terminal's current line on standard error (a live status line).
    static func standardErrorInPlace(_ text: String) {
        LocalFiles.write("\r\u{1B}[2K" + text, to: 2)
    }
}
