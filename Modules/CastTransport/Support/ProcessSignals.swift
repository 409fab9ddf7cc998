import Dispatch
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Catches process signals with no window in which one is lost.
///
/// A Dispatch signal source is not enough: it installs its handler later, on Dispatch's manager thread, and the
/// `SIG_IGN` set until then throws away a signal that arrives in between (measured: one start in ten under load
/// said "ready" before SIGTERM was caught). Here ``catch(_:)`` installs a handler at once; the handler writes the
/// signal's number into a pipe, which keeps it until a reader on a Dispatch queue hands it to a waiter, or keeps
/// it pending for the next one.
///
/// Signal handlers are process-wide, so there is one catcher per process.
package final class ProcessSignals: Sendable {
    /// The process's catcher.
    package static let shared = ProcessSignals()

    private struct Waiter {
        let signals: Set<Int32>
        let continuation: CheckedContinuation<Int32?, Never>
    }

    private struct State {
        var caught: Set<Int32> = []
        var pending: [Int32: Int] = [:]
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    private let state = NIOLockedValueBox(State())
    private let queue = DispatchQueue(label: "cast.process-signals")
    /// Kept for the process's life; only touched in `init`.
    nonisolated(unsafe) private let reader: any DispatchSourceRead

    private init() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { fatalError("no pipe for signals: errno \(errno)") }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        signalPipeWriteEnd = ends[1]
        let readEnd = ends[0]
        let source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: queue)
        let state = self.state
        source.setEventHandler { Self.drain(readEnd, into: state) }
        source.resume()
        reader = source
    }

    /// Catches `signals` from now on: when this returns, none of them is lost or acts by default any more.
    package func `catch`(_ signals: [Int32]) {
        let new = state.withLockedValue { state in
            signals.filter { state.caught.insert($0).inserted }
        }
        for number in new { _ = signal(number, processSignalHandler) }
    }

    /// Suspends until one of `signals` (caught with ``catch(_:)``) arrives, or takes one that arrived while nobody
    /// waited; returns its number, or `nil` when the task is cancelled first.
    package func next(among signals: Set<Int32>) async -> Int32? {
        let id = state.withLockedValue { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let taken = state.withLockedValue { state -> Int32?? in
                    if let number = state.pending.keys.sorted().first(where: signals.contains) {
                        state.pending[number]! -= 1
                        if state.pending[number] == 0 { state.pending[number] = nil }
                        return .some(number)
                    }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[id] = Waiter(signals: signals, continuation: continuation)
                    return .none
                }
                if let taken { continuation.resume(returning: taken) }
            }
        } onCancel: {
            state.withLockedValue { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
        }
    }

    /// Reads every number the handler wrote and hands each to its oldest waiter.
    private static func drain(_ readEnd: Int32, into state: NIOLockedValueBox<State>) {
        var bytes = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(readEnd, &bytes, bytes.count)
            guard count > 0 else { return }
            for byte in bytes.prefix(count) { deliver(Int32(byte), to: state) }
        }
    }

    private static func deliver(_ number: Int32, to state: NIOLockedValueBox<State>) {
        let waiter = state.withLockedValue { state -> Waiter? in
            if let id = state.waiters.filter({ $0.value.signals.contains(number) }).keys.min() {
                return state.waiters.removeValue(forKey: id)
            }
            state.pending[number, default: 0] += 1
            return nil
        }
        waiter?.continuation.resume(returning: number)
    }
}

/// Where the handler writes; set once, before any handler is installed.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// Async-signal-safe: one `write` of the number (a full pipe drops it: 64 KiB of unread signals), `errno` kept.
private let processSignalHandler: @convention(c) (Int32) -> Void = { number in
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(signalPipeWriteEnd, &byte, 1)
    errno = saved
}
