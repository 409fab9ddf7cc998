import Synchronization

/// Fans one source of events out to any number of independent ``CastEventStream`` subscribers.
///
/// Each call to ``makeStream(bufferingPolicy:)`` gets its own stream; ending iteration unsubscribes. Elements are
/// yielded outside the lock so a consumer's work never runs while the broadcaster is locked. A handler
/// (``addHandler(_:)``) gets them synchronously instead: no task wakes up per element, for a sibling module that
/// mirrors a state on the hot path.
///
/// The project's modules share it as SPI (`@_spi(CastInternal) import CastTransport`), not as API: public and
/// inlinable, a struct in front of a shared class, so a module that yields on a hot path gets a copy specialized
/// for its element type. (A `package` declaration's inlinable body is not specialized in other modules, nor is a
/// generic class's method; every yield then looked its generic metadata up at run time.) Copies share their
/// subscribers.
@_spi(CastInternal)
public struct EventBroadcaster<Element: Sendable>: Sendable {
    // Arrays, not dictionaries: a yield copies them by reference (no allocation, no hashing), and there are few.
    @usableFromInline
    struct State: Sendable {
        @usableFromInline var nextID = 0
        @usableFromInline var subscribers: [(id: Int, buffer: CastEventStream<Element>.Buffer)] = []
        @usableFromInline var handlers: [(id: Int, handler: @Sendable (Element) -> Void)] = []
        @usableFromInline var isFinished = false

        @usableFromInline init() {}
    }

    /// One allocation: the lock and the subscribers inline (a session has about ten broadcasters).
    @usableFromInline
    final class Storage: Sendable {
        @usableFromInline let state = Mutex(State())

        @usableFromInline init() {}
    }

    @usableFromInline let storage = Storage()

    /// A broadcaster with no subscribers.
    @inlinable
    public init() {}

    /// A new subscription.
    @inlinable
    public func makeStream(
        bufferingPolicy: CastEventStream<Element>.BufferingPolicy = .unbounded
    ) -> CastEventStream<Element> {
        let buffer = CastEventStream<Element>.Buffer(bufferingPolicy)
        let id: Int? = storage.state.withLock { state in
            guard !state.isFinished else { return nil }
            defer { state.nextID += 1 }
            state.subscribers.append((state.nextID, buffer))
            return state.nextID
        }
        if let id {
            // Strong: a weak capture would give the storage a side table. The subscription holds the storage (with its
            // other subscribers and handlers) as long as its consumer keeps the stream, even past the owner's end
            // when the owner never finishes the broadcaster; no handler may capture an owner that finishes it in its
            // deinit.
            let storage = self.storage
            buffer.state.withLock { state in
                state.onTermination = { storage.state.withLock { $0.subscribers.removeAll { $0.id == id } } }
            }
        } else {
            buffer.finish()
        }
        return CastEventStream(CastEventStream.Subscription(buffer))
    }

    /// Calls `handler` with every element from now on, synchronously in ``yield(_:)`` on the yielding thread: it
    /// must be quick and must not block. Answers the id ``removeHandler(_:)`` takes.
    @inlinable
    public func addHandler(_ handler: @escaping @Sendable (Element) -> Void) -> Int {
        storage.state.withLock { state in
            defer { state.nextID += 1 }
            if !state.isFinished { state.handlers.append((state.nextID, handler)) }
            return state.nextID
        }
    }

    /// Stops calling the handler ``addHandler(_:)`` answered `id` for.
    @inlinable
    public func removeHandler(_ id: Int) {
        storage.state.withLock { $0.handlers.removeAll { $0.id == id } }
    }

    /// Delivers `element` to every current subscriber and handler; with none, `element` is not even made.
    @inlinable
    public func yield(_ element: @autoclosure () -> Element) {
        let (subscribers, handlers) = storage.state.withLock { ($0.subscribers, $0.handlers) }
        guard !subscribers.isEmpty || !handlers.isEmpty else { return }
        let element = element()
        for entry in handlers { entry.handler(element) }
        for entry in subscribers { entry.buffer.yield(element) }
    }

    /// Ends every subscription; later subscribers get a finished stream.
    @inlinable
    public func finish() {
        let subscribers = storage.state.withLock { state in
            state.isFinished = true
            state.handlers = []
            defer { state.subscribers = [] }
            return state.subscribers
        }
        for entry in subscribers { entry.buffer.finish() }
    }

    /// The number of live subscriptions.
    @inlinable
    public var subscriberCount: Int { storage.state.withLock { $0.subscribers.count } }
}
