import NIOConcurrencyHelpers

/// Lets one task at a time through, in order of arrival: a device's session is joined or launched by one command
/// while the others wait, then find it and use it. (Several commands at once each started their own, and all but
/// one failed with `sessionInProgress`.)
final class SessionGate: Sendable {
    private struct State {
        var isBusy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = NIOLockedValueBox(State())

    /// Runs `body` once every task that came before has left.
    func run<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        await withCheckedContinuation { continuation in
            let enters = state.withLockedValue { state -> Bool in
                guard state.isBusy else {
                    state.isBusy = true
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if enters { continuation.resume() }
        }
        defer {
            let next = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
                guard !state.waiters.isEmpty else {
                    state.isBusy = false
                    return nil
                }
                return state.waiters.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }
}
