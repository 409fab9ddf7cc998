import NIOConcurrencyHelpers

/// Runs `body` against a clock: its value when it returns one within `timeout`, else `timedOut()` is thrown (also
/// when `body` returns `nil`, say a stream that ended). The loser is cancelled either way.
package func withTimeLimit<Value: Sendable>(
    _ timeout: Duration,
    timedOut: @escaping @Sendable () -> any Error,
    _ body: @escaping @Sendable () async throws -> Value?
) async throws -> Value {
    try await withThrowingTaskGroup(of: Value?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw timedOut() }
        return value
    }
}

/// Returns once the calling task is cancelled (at once if it already is): what a `run()` method awaits between
/// starting its work and stopping it. Suspends on a continuation, no timer.
package func waitUntilCancelled() async {
    let waiter = NIOLockedValueBox<(continuation: CheckedContinuation<Void, Never>?, cancelled: Bool)>((nil, false))
    await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            let now = waiter.withLockedValue { waiter -> Bool in
                if waiter.cancelled { return true }
                waiter.continuation = continuation
                return false
            }
            if now { continuation.resume() }
        }
    } onCancel: {
        let continuation = waiter.withLockedValue { waiter in
            defer { waiter = (nil, true) }
            return waiter.continuation
        }
        continuation?.resume()
    }
}
