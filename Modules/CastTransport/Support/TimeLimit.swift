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
