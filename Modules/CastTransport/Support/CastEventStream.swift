import NIOCore
import Synchronization

/// One subscriber's sequence of events: what every `events()`, `…Updates()` and `messages()` of the project returns.
///
/// It behaves like an `AsyncStream` that a broadcaster feeds: elements are buffered until read (all of them, or the
/// newest few, as the subscription asked), iteration ends when the source finishes, and the subscription ends when
/// the stream and its iterators are gone or the iterating task is cancelled. One task iterates at a time.
///
/// Why not `AsyncStream`: its storage is a generic class of the standard library, so every element went through
/// unspecialized code that looks its generic metadata up at run time (about 8 % of a custom channel's echo). This
/// stream's code is inlinable and is specialized for its element type where it is used.
public struct CastEventStream<Element: Sendable>: AsyncSequence, Sendable {
    /// A stream of events never fails: it ends, or the subscription does.
    public typealias Failure = Never

    /// How many unread elements a subscription keeps.
    public enum BufferingPolicy: Sendable, Hashable {
        /// Every element until it is read.
        case unbounded
        /// Only the newest `count`: for a state, where only the latest matters.
        case bufferingNewest(Int)
    }

    @usableFromInline let subscription: Subscription

    @inlinable
    init(_ subscription: Subscription) {
        self.subscription = subscription
    }

    /// The consumer's end: ends the subscription when the last copy of the stream and its iterators is gone.
    @usableFromInline
    final class Subscription: Sendable {
        @usableFromInline let buffer: Buffer

        @inlinable
        init(_ buffer: Buffer) {
            self.buffer = buffer
        }

        deinit {
            buffer.end(droppingBuffered: true)
        }
    }

    /// What the source and the consumer share: unread elements, the waiting consumer, and whether either ended.
    @usableFromInline
    final class Buffer: Sendable {
        @usableFromInline
        struct State: Sendable {
            @usableFromInline var elements = CircularBuffer<Element>(initialCapacity: 4)
            @usableFromInline var waiter: UnsafeContinuation<Element?, Never>?
            /// Nothing more is buffered (the source finished, or the consumer ended the subscription); what is
            /// buffered is still read.
            @usableFromInline var isFinished = false
            @usableFromInline var onTermination: (@Sendable () -> Void)?

            @inlinable init() {}

            /// A buffered element, `.some(nil)` once finished with nothing buffered, `nil` when the consumer must
            /// wait.
            @inlinable
            mutating func takeReady() -> Element?? {
                if let element = elements.popFirst() { return element }
                return isFinished ? .some(nil) : nil
            }
        }

        @usableFromInline let state = Mutex(State())
        @usableFromInline let limit: Int?

        @inlinable
        init(_ policy: BufferingPolicy) {
            switch policy {
            case .unbounded: limit = nil
            case .bufferingNewest(let count): limit = Swift.max(count, 0)
            }
        }

        /// Hands `element` to the waiting consumer, or buffers it. Answers false once the consumer is gone.
        @inlinable
        @discardableResult
        func yield(_ element: Element) -> Bool {
            let (accepted, waiter): (Bool, UnsafeContinuation<Element?, Never>?) = state.withLock { state in
                guard !state.isFinished else { return (false, nil) }
                if let waiter = state.waiter.take() { return (true, waiter) }
                if let limit {
                    guard limit > 0 else { return (true, nil) }
                    if state.elements.count == limit { state.elements.removeFirst() }
                }
                state.elements.append(element)
                return (true, nil)
            }
            waiter?.resume(returning: element)
            return accepted
        }

        /// Ends the sequence after what is buffered.
        @inlinable
        func finish() {
            let waiter = state.withLock { state in
                state.isFinished = true
                return state.waiter.take()
            }
            waiter?.resume(returning: nil)
        }

        /// Ends the subscription from the consumer's side, telling the source once: when its task is cancelled,
        /// iteration ends after what is already buffered, as `AsyncStream`'s does; when the consumer is gone
        /// (`droppingBuffered`), what is buffered is dropped.
        @inlinable
        func end(droppingBuffered: Bool) {
            let (waiter, onTermination) = state.withLock { state in
                state.isFinished = true
                if droppingBuffered { state.elements.removeAll() }
                defer { state.onTermination = nil }
                return (state.elements.isEmpty ? state.waiter.take() : nil, state.onTermination)
            }
            onTermination?()
            waiter?.resume(returning: nil)
        }

        /// The next element, waiting for it; `nil` once finished and read.
        @inlinable
        func next(isolation actor: isolated (any Actor)?) async -> Element? {
            // A cancelled consumer that never waits (it is behind a fast source) must still end.
            if Task.isCancelled { end(droppingBuffered: false) }
            // Fast path: an element already here needs no continuation.
            if let ready = state.withLock({ $0.takeReady() }) { return ready }
            return await withTaskCancellationHandler(
                operation: {
                    await withUnsafeContinuation(isolation: actor) {
                        (continuation: UnsafeContinuation<Element?, Never>) in
                        let ready: Element?? = state.withLock { state in
                            if let ready = state.takeReady() { return ready }
                            precondition(state.waiter == nil, "a CastEventStream is iterated by one task at a time")
                            state.waiter = continuation
                            return nil
                        }
                        if let ready { continuation.resume(returning: ready) }
                    }
                },
                onCancel: { self.end(droppingBuffered: false) },
                isolation: actor
            )
        }
    }

    /// Iterates the stream's elements.
    public struct AsyncIterator: AsyncIteratorProtocol {
        @usableFromInline let subscription: Subscription

        @inlinable
        init(_ subscription: Subscription) {
            self.subscription = subscription
        }

        /// The next element; `nil` when the source finished, the subscription ended or the task was cancelled.
        @inlinable
        public mutating func next() async -> Element? {
            await subscription.buffer.next(isolation: nil)
        }

        /// The next element, resumed on `actor`'s executor; see ``next()``.
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await subscription.buffer.next(isolation: actor)
        }
    }

    /// Whether a task is waiting for the next element: for a test that yields only once its consumer waits.
    package var hasWaitingConsumer: Bool { subscription.buffer.state.withLock { $0.waiter != nil } }

    /// An iterator over this subscription (one task iterates at a time).
    @inlinable
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(subscription)
    }
}
