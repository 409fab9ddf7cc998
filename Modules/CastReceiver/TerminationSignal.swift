import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// Ending a program that serves (an emulator, a media server) cleanly: SIGINT and SIGTERM are caught and
/// reported instead of killing the process, so it can close connections and end its child processes first.
///
/// Make it before announcing that the program is ready: a signal that arrives between the two is kept for
/// ``wait()`` instead of being lost.
public final class TerminationSignal: Sendable {
    private let queue = DispatchQueue(label: "cast.termination-signals")
    private let once = SignalOnce()

    /// Catches SIGINT and SIGTERM from now on.
    public init() {
        queue.sync {
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { [once] in once.resume(number) }
                source.resume()
                once.keep(source)
            }
        }
    }

    /// Suspends until SIGINT or SIGTERM has arrived and returns which, or 0 when the task is cancelled first.
    public func wait() async -> Int32 {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                queue.async { [once] in once.wait(continuation) }
            }
        } onCancel: {
            queue.async { [once] in once.resume(0) }
        }
    }
}

/// Resumes a continuation at most once (whether the signal or the cancellation comes first) and keeps the
/// signal sources alive until then.
private final class SignalOnce: @unchecked Sendable {
    // @unchecked: all access happens on the one serial signal queue.
    private var continuation: CheckedContinuation<Int32, Never>?
    private var result: Int32?
    private var sources: [any DispatchSourceSignal] = []

    func wait(_ continuation: CheckedContinuation<Int32, Never>) {
        if let result {
            continuation.resume(returning: result)
        } else {
            self.continuation = continuation
        }
    }

    func keep(_ source: any DispatchSourceSignal) {
        if result == nil { sources.append(source) } else { source.cancel() }
    }

    func resume(_ number: Int32) {
        guard result == nil else { return }
        result = number
        continuation?.resume(returning: number)
        continuation = nil
        for source in sources { source.cancel() }
        sources = []
    }
}
