import CastTransport
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// Ending a program that serves (an emulator, a media server) cleanly: SIGINT and SIGTERM are caught and
/// reported instead of killing the process, so it can close connections and end its child processes first.
///
/// Make it before announcing that the program is ready: from then on no signal is lost, and one that arrives
/// before ``wait()`` is kept for it.
public final class TerminationSignal: Sendable {
    private let received = NIOLockedValueBox<Int32?>(nil)

    /// Catches SIGINT and SIGTERM from now on.
    public init() {
        ProcessSignals.shared.catch([SIGINT, SIGTERM])
    }

    /// Suspends until SIGINT or SIGTERM has arrived and returns which, or 0 when the task is cancelled first.
    /// Once a signal has arrived, every later call returns it at once.
    public func wait() async -> Int32 {
        if let number = received.withLockedValue({ $0 }) { return number }
        guard let number = await ProcessSignals.shared.next(among: [SIGINT, SIGTERM]) else { return 0 }
        received.withLockedValue { $0 = number }
        return number
    }
}
