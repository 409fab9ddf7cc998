import NIOConcurrencyHelpers

/// Fans one source of events out to any number of independent `AsyncStream` subscribers.
///
/// Each call to ``makeStream(bufferingPolicy:)`` gets its own stream; ending iteration unsubscribes. Elements are
/// yielded outside the lock so a consumer's work never runs while the broadcaster is locked. A handler
/// (``addHandler(_:)``) gets them synchronously instead: no task wakes up per element, for a sibling module that
/// mirrors a state on the hot path.
package final class EventBroadcaster<Element: Sendable>: Sendable {
    // Arrays, not dictionaries: a yield copies them by reference (no allocation, no hashing), and there are few.
    private struct State {
        var nextID = 0
        var continuations: [(id: Int, continuation: AsyncStream<Element>.Continuation)] = []
        var handlers: [(id: Int, handler: @Sendable (Element) -> Void)] = []
        var isFinished = false
    }

    private let state = NIOLockedValueBox(State())

    package init() {}

    /// A new subscription.
    package func makeStream(
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
        let id: Int? = state.withLockedValue { state in
            guard !state.isFinished else { return nil }
            defer { state.nextID += 1 }
            state.continuations.append((state.nextID, continuation))
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLockedValue { $0.continuations.removeAll { $0.id == id } }
        }
        return stream
    }

    /// Calls `handler` with every element from now on, synchronously in ``yield(_:)`` on the yielding thread: it
    /// must be quick and must not block. Answers the id ``removeHandler(_:)`` takes.
    package func addHandler(_ handler: @escaping @Sendable (Element) -> Void) -> Int {
        state.withLockedValue { state in
            defer { state.nextID += 1 }
            if !state.isFinished { state.handlers.append((state.nextID, handler)) }
            return state.nextID
        }
    }

    /// Stops calling the handler ``addHandler(_:)`` answered `id` for.
    package func removeHandler(_ id: Int) {
        state.withLockedValue { $0.handlers.removeAll { $0.id == id } }
    }

    /// Delivers `element` to every current subscriber and handler.
    package func yield(_ element: Element) {
        let (continuations, handlers) = state.withLockedValue { ($0.continuations, $0.handlers) }
        for entry in handlers { entry.handler(element) }
        for entry in continuations { entry.continuation.yield(element) }
    }

    /// Ends every subscription; later subscribers get a finished stream.
    package func finish() {
        let continuations = state.withLockedValue { state in
            state.isFinished = true
            state.handlers = []
            defer { state.continuations = [] }
            return state.continuations
        }
        for entry in continuations { entry.continuation.finish() }
    }

    /// The number of live subscriptions.
    package var subscriberCount: Int { state.withLockedValue { $0.continuations.count } }
}
