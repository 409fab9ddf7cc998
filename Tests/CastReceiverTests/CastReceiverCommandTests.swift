import ArgumentParser
import Testing

@testable import cast_receiver

// `cast-receiver`'s command line: a value it cannot use is a usage error (exit 64), never a trap or a silently
// odd device.

@Suite("cast-receiver: command line")
struct CastReceiverCommandTests {
    @Test(
        arguments: [
            ["--chunk-interval", "nan"], ["--chunk-interval", "inf"], ["--chunk-interval", "-1"],
            ["--default-duration", "inf"], ["--default-duration", "nan"], ["--default-duration", "-1"],
            ["--default-duration", "0"], ["--load-duration", "-1"], ["--load-duration", "inf"],
            ["--reply-delay", "-1"], ["--reply-delay", "nan"], ["--close-after", "0"], ["--chunk-size", "0"],
            ["--chunk-size", "-3"], ["--status-flood", "-1"], ["--stop-pongs-after", "-1"],
            ["--app-listed-late", "-1"], ["--malformed-after", "-1"], ["--drop-limit", "-1"],
            ["--idle-timeout", "inf"], ["--handshake-timeout", "nan"], ["--stream-jitter", "inf"],
            ["--group", "G", "--group-leader-moves-after", "inf"], ["--preroll-ad", "inf"], ["--log-level", "nope"],
            ["--log-filter", "x=nope"],
        ]
    )
    func unusableValuesAreUsageErrors(arguments: [String]) {
        #expect(CastReceiverCommand.exitCode(for: parseError(arguments)) == .validationFailure, "\(arguments)")
    }

    @Test func usableValuesParse() throws {
        let command = try CastReceiverCommand.parse([
            "--chunk-interval", "0.5", "--chunk-size", "1", "--default-duration", "30", "--load-duration", "0",
            "--reply-delay", "0", "--close-after", "1", "--status-flood", "0", "--stop-pongs-after", "0",
            "--drop-limit", "0", "--log-level", "debug", "--live-cannot-pause",
        ])
        #expect(command.chunkInterval == 0.5)
        #expect(command.liveCannotPause)
    }

    private func parseError(_ arguments: [String]) -> any Error {
        do {
            _ = try CastReceiverCommand.parse(arguments)
            return CancellationError()
        } catch {
            return error
        }
    }
}
