import CastTransport
import NIOConcurrencyHelpers
import Subprocess
import SystemPackage

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// An external program this module uses when it is installed: ffprobe and ffmpeg (transcoding, subtitle
/// extraction) and yt-dlp (page URLs). Run without a shell, output streamed, killed with whatever started it.
public struct ExternalTool: Sendable, Hashable {
    /// The name it was asked by (`ffmpeg`).
    public let name: String
    /// Its executable.
    public let path: String

    /// The tool, by name (searched in `PATH`) or path; nil when it is not installed.
    public static func find(_ name: String) -> ExternalTool? {
        if name.contains("/") { return access(name, X_OK) == 0 ? ExternalTool(name: name, path: name) : nil }
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin")
            .split(separator: ":")
        for directory in directories {
            let candidate = "\(directory)/\(name)"
            var info = stat()
            if access(candidate, X_OK) == 0, stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                return ExternalTool(name: name, path: candidate)
            }
        }
        return nil
    }

    /// The tool, or ``CastMediaServerError/Code/toolMissing`` saying what needs it and how to install it.
    public static func require(_ name: String, for purpose: String) throws -> ExternalTool {
        guard let tool = find(name) else {
            let base = LocalFiles.lastComponent(of: name)
            let package = ["ffprobe": "ffmpeg", "yt-dlp": "yt-dlp (pip install yt-dlp)"][base] ?? base
            throw CastMediaServerError(
                .toolMissing,
                "\(purpose) needs \(base), which is not installed: install \(package)"
            )
        }
        return tool
    }

    /// Runs the tool to its end and returns its standard output (at most `limit` bytes).
    ///
    /// - Throws: ``CastMediaServerError/Code/toolFailed`` when it cannot start, exits unsuccessfully (with the end
    ///   of its standard error) or writes more than `limit`.
    public func output(arguments: [String], limit: Int = 16 << 20) async throws -> String {
        let command = commandLine(arguments)
        do {
            let result = try await run(
                .path(FilePath(command.executable)),
                arguments: Arguments(command.arguments),
                input: .none,
                output: .string(limit: limit),
                error: .string(limit: 1 << 20)
            )
            try Task.checkCancellation()
            guard result.terminationStatus.isSuccess else {
                throw CastMediaServerError(
                    .toolFailed,
                    "\(name) failed (\(result.terminationStatus)): \(Self.tail(result.standardError))"
                )
            }
            return result.standardOutput
        } catch let error as SubprocessError {
            throw CastMediaServerError(.toolFailed, "\(name) did not run: \(error)", cause: error)
        }
    }

    /// The executable and arguments that run the tool so that it dies with this process, however this process
    /// ends (even SIGKILL): through util-linux's `setpriv --pdeathsig KILL` when it is installed.
    package func commandLine(_ arguments: [String]) -> (executable: String, arguments: [String]) {
        guard let setpriv = Self.parentDeathWrapper else { return (path, arguments) }
        return (setpriv, ["--pdeathsig", "KILL", "--", path] + arguments)
    }

    private static let parentDeathWrapper = find("setpriv")?.path

    /// The last lines of a tool's complaint, for a message.
    static func tail(_ text: String) -> String {
        let lines = text.split(whereSeparator: \.isNewline).suffix(3)
        return lines.isEmpty ? "no message" : lines.joined(separator: " / ")
    }
}

/// How a ``ToolProcess`` ended.
struct ToolExit: Sendable {
    var succeeded: Bool
    /// The status and the end of standard error, for messages.
    var summary: String
}

/// A long-running tool (ffmpeg making segments): its standard output as lines while it runs, paused and resumed
/// with signals, killed by ``kill()``.
final class ToolProcess: Sendable {
    /// Standard output, line by line, until it ends.
    let outputLines: AsyncStream<String>
    private let control = NIOLockedValueBox<(process: ProcessIdentifier?, paused: Bool)>((nil, false))
    private let running = NIOLockedValueBox<Task<ToolExit, Never>?>(nil)

    private init(outputLines: AsyncStream<String>) {
        self.outputLines = outputLines
    }

    /// Starts `tool` with `arguments`; a failure to start is reported by ``exit()``.
    static func launch(_ tool: ExternalTool, arguments: [String]) -> ToolProcess {
        let (lines, continuation) = AsyncStream<String>.makeStream()
        let process = ToolProcess(outputLines: lines)
        let command = tool.commandLine(arguments)
        let task = Task<ToolExit, Never> {
            defer { continuation.finish() }
            do {
                let result = try await run(
                    .path(FilePath(command.executable)),
                    arguments: Arguments(command.arguments),
                    input: .none,
                    output: .sequence,
                    error: .sequence
                ) { execution in
                    process.started(execution.processIdentifier)
                    defer { process.started(nil) }
                    async let complaint: String = {
                        // Bounded however much it writes: the last lines are what ExternalTool.tail shows.
                        var lines: [String] = []
                        for try await line in execution.standardError.strings() {
                            lines.append(line)
                            if lines.count > 3 { lines.removeFirst() }
                        }
                        return lines.isEmpty ? "" : ExternalTool.tail(lines.joined(separator: "\n"))
                    }()
                    for try await line in execution.standardOutput.strings() { continuation.yield(line) }
                    return (try? await complaint) ?? ""
                }
                let status = result.terminationStatus
                return ToolExit(
                    succeeded: status.isSuccess,
                    summary: "\(status)" + (result.closureResult.isEmpty ? "" : ": " + result.closureResult)
                )
            } catch {
                return ToolExit(succeeded: false, summary: "\(tool.name) did not run: \(error)")
            }
        }
        process.running.withLockedValue { $0 = task }
        return process
    }

    private func started(_ process: ProcessIdentifier?) {
        let pausedAlready = control.withLockedValue { control -> Bool in
            control.process = process
            return control.paused
        }
        if let process, pausedAlready { Glibc.kill(process.value, SIGSTOP) }
    }

    /// Stops the process where it is (SIGSTOP): it makes nothing nobody will fetch.
    func pause() { signal(SIGSTOP, paused: true) }

    /// Lets a paused process go on (SIGCONT).
    func resume() { signal(SIGCONT, paused: false) }

    /// Ends the process (SIGKILL, after SIGCONT in case it is paused); ``exit()`` then returns.
    func kill() {
        running.withLockedValue { $0 }?.cancel()
        signal(SIGCONT, paused: false)
    }

    /// Waits for the process to end.
    func exit() async -> ToolExit {
        guard let task = running.withLockedValue({ $0 }) else {
            return ToolExit(succeeded: false, summary: "not started")
        }
        return await task.value
    }

    private func signal(_ number: Int32, paused: Bool) {
        control.withLockedValue { control in
            control.paused = paused
            // Sent under the lock: the identifier is cleared (under it) before the process is reaped.
            if let process = control.process { _ = Glibc.kill(process.value, number) }
        }
    }
}
