import Synchronization

/// A request in flight (GCKRequest): `await` its ``response()``, or register GCKRequestDelegate-style callbacks.
///
/// Exactly one outcome happens: completion (with the resulting status, if the reply carried one), failure (a
/// ``CastMediaError``), or abort (cancelled by the caller, or replaced by a newer request of the same kind).
/// Callbacks registered after the outcome run at once.
public final class MediaRequest: Sendable {
    /// Why a request was abandoned without an answer.
    public enum AbortReason: Sendable, Hashable {
        /// ``cancel()`` was called.
        case cancelled
        /// A newer request of the same kind superseded it (for example a second load).
        case replaced
    }

    /// The outcome of a request.
    public enum Outcome: Sendable {
        case completed(MediaStatus?)
        case failed(CastMediaError)
        case aborted(AbortReason)
    }

    private struct State {
        var outcome: Outcome?
        /// Who awaits ``response()``: the first inline (most requests have one waiter at most), the rest after it.
        /// Unsafe continuations: each is resumed exactly once, by `finish`, under the lock's rule that the outcome
        /// is set once (a checked one costs an allocation per await).
        var firstWaiter: UnsafeContinuation<Outcome, Never>?
        var otherWaiters: [UnsafeContinuation<Outcome, Never>] = []
        var completionHandlers: [@Sendable (MediaStatus?) -> Void] = []
        var failureHandlers: [@Sendable (CastMediaError) -> Void] = []
        var abortHandlers: [@Sendable (AbortReason) -> Void] = []
        var replacement: MediaRequest?
    }

    /// A local, increasing id for logs and correlation in tests (not the wire `requestId`).
    public let id: Int
    /// What kind of command this is, for example `PLAY` or `QUEUE_INSERT`.
    public let kind: String
    private let state = Mutex(State())

    init(id: Int, kind: String) {
        self.id = id
        self.kind = kind
    }

    /// Waits for the outcome.
    ///
    /// - Returns: The media status the reply carried (`nil` when the media session ended, or for replies
    ///   without status).
    /// - Throws: ``CastMediaError`` on failure; `CancellationError` when aborted.
    @discardableResult
    public func response() async throws -> MediaStatus? {
        let outcome = await withUnsafeContinuation { continuation in
            let done: Outcome? = state.withLock { state in
                if let outcome = state.outcome { return outcome }
                if state.firstWaiter == nil {
                    state.firstWaiter = continuation
                } else {
                    state.otherWaiters.append(continuation)
                }
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
        switch outcome {
        case .completed(let status): return status
        case .failed(let error): throw error
        case .aborted: throw CancellationError()
        }
    }

    /// The outcome, if the request has finished.
    public var outcome: Outcome? { state.withLock { $0.outcome } }

    /// Calls `handler` when the request completes (GCKRequestDelegate's didComplete).
    public func onCompletion(_ handler: @escaping @Sendable (MediaStatus?) -> Void) {
        let outcome = state.withLock { state -> Outcome? in
            if state.outcome == nil { state.completionHandlers.append(handler) }
            return state.outcome
        }
        if case .completed(let status) = outcome { handler(status) }
    }

    /// Calls `handler` when the request fails (didFailWithError).
    public func onFailure(_ handler: @escaping @Sendable (CastMediaError) -> Void) {
        let outcome = state.withLock { state -> Outcome? in
            if state.outcome == nil { state.failureHandlers.append(handler) }
            return state.outcome
        }
        if case .failed(let error) = outcome { handler(error) }
    }

    /// Calls `handler` when the request is aborted (didAbortWithReason).
    public func onAbort(_ handler: @escaping @Sendable (AbortReason) -> Void) {
        let outcome = state.withLock { state -> Outcome? in
            if state.outcome == nil { state.abortHandlers.append(handler) }
            return state.outcome
        }
        if case .aborted(let reason) = outcome { handler(reason) }
    }

    /// Abandons the request: callers stop waiting; the receiver may still act on it.
    public func cancel() { finish(.aborted(.cancelled)) }

    /// The newer request of the same kind that replaced this one (``AbortReason/replaced``): the receiver had
    /// this one too, and the newer one's outcome is the state they lead to.
    public var replacement: MediaRequest? { state.withLock { $0.replacement } }

    /// Aborts the request as replaced by `newer`.
    func replace(by newer: MediaRequest) {
        let unfinished = state.withLock { state in
            if state.outcome == nil { state.replacement = newer }
            return state.outcome == nil
        }
        if unfinished { finish(.aborted(.replaced)) }
    }

    /// Records the outcome once; later calls are ignored.
    func finish(_ outcome: Outcome) {
        let state = self.state.withLock { state -> State? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            let snapshot = state
            state.firstWaiter = nil
            state.otherWaiters = []
            state.completionHandlers = []
            state.failureHandlers = []
            state.abortHandlers = []
            return snapshot
        }
        guard let state else { return }
        // Callbacks first: whoever awaits `response()` then sees them done.
        switch outcome {
        case .completed(let status): state.completionHandlers.forEach { $0(status) }
        case .failed(let error): state.failureHandlers.forEach { $0(error) }
        case .aborted(let reason): state.abortHandlers.forEach { $0(reason) }
        }
        state.firstWaiter?.resume(returning: outcome)
        for waiter in state.otherWaiters { waiter.resume(returning: outcome) }
    }

    /// Whether the request has an outcome.
    public var isFinished: Bool { state.withLock { $0.outcome != nil } }

    /// How many callers await ``response()`` now (for tests).
    package var waitingCount: Int { state.withLock { ($0.firstWaiter == nil ? 0 : 1) + $0.otherWaiters.count } }
}
