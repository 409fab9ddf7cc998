import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Where discovery's timers run: the removal debounce and the retry of unreachable static devices.
///
/// ``DiscoveryManager`` uses ``SystemDiscoveryScheduler`` unless told otherwise; tests pass a
/// ``ManualDiscoveryScheduler`` and move time with ``ManualDiscoveryScheduler/advance(by:)`` instead of sleeping.
public protocol DiscoveryScheduler: Sendable {
    /// Runs `action` once `delay` has passed. The action runs on an arbitrary thread and must be quick.
    @discardableResult
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> DiscoveryTimer
}

/// A scheduled action that can be cancelled before it fires.
public struct DiscoveryTimer: Sendable {
    private let cancelAction: @Sendable () -> Void

    /// Wraps a cancel action.
    public init(cancel: @escaping @Sendable () -> Void) { self.cancelAction = cancel }

    /// Prevents the action from running, if it has not run yet.
    public func cancel() { cancelAction() }
}

/// Real time, with timers on a SwiftNIO event loop (no thread of its own).
public struct SystemDiscoveryScheduler: DiscoveryScheduler {
    private let eventLoop: any EventLoop

    /// A scheduler whose timers run on `eventLoop`.
    public init(eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()) {
        self.eventLoop = eventLoop
    }

    /// Runs `action` on the event loop once `delay` has passed.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> DiscoveryTimer {
        let task = eventLoop.scheduleTask(in: TimeAmount(delay)) { action() }
        return DiscoveryTimer { task.cancel() }
    }
}

/// Time that moves only when a test says so.
///
/// ``advance(by:)`` fires every timer that falls due, in deadline order. ``waitUntil(_:)`` lets a test wait until
/// the code under test has armed (or cancelled) its timers — say, the removal debounce after a goodbye packet —
/// without polling or sleeping.
public final class ManualDiscoveryScheduler: DiscoveryScheduler {
    /// What a waiting test can look at.
    public struct Snapshot: Sendable {
        /// Timers armed and not yet fired or cancelled.
        public var pendingTimerCount: Int
        /// Timers ever armed.
        public var scheduledTimerCount: Int
    }

    private struct Timer {
        var deadline: Duration
        var sequence: Int
        var action: @Sendable () -> Void
    }

    private struct Waiter {
        var id: Int
        var condition: @Sendable (Snapshot) -> Bool
        var continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var now: Duration = .zero
        var nextSequence = 0
        var timers: [Int: Timer] = [:]
        var waiters: [Waiter] = []
        var nextWaiter = 0

        var snapshot: Snapshot { Snapshot(pendingTimerCount: timers.count, scheduledTimerCount: nextSequence) }

        mutating func takeReady() -> [CheckedContinuation<Void, Never>] {
            let snapshot = self.snapshot
            var ready: [CheckedContinuation<Void, Never>] = []
            waiters.removeAll { waiter in
                guard waiter.condition(snapshot) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
    }

    private let state = NIOLockedValueBox(State())

    /// A scheduler at time zero.
    public init() {}

    /// Time since creation, as far as this scheduler is concerned.
    public var now: Duration { state.withLockedValue { $0.now } }

    /// The number of timers waiting to fire.
    public var pendingTimerCount: Int { state.withLockedValue { $0.timers.count } }

    /// The delays, from now, of the pending timers, soonest first.
    public var pendingDelays: [Duration] {
        state.withLockedValue { state in state.timers.values.map { $0.deadline - state.now }.sorted() }
    }

    /// Runs `action` when ``advance(by:)`` reaches its deadline.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> DiscoveryTimer {
        let (id, ready) = state.withLockedValue { state -> (Int, [CheckedContinuation<Void, Never>]) in
            let id = state.nextSequence
            state.nextSequence += 1
            state.timers[id] = Timer(deadline: state.now + max(.zero, delay), sequence: id, action: action)
            return (id, state.takeReady())
        }
        for continuation in ready { continuation.resume() }
        return DiscoveryTimer { [weak self] in
            guard let self else { return }
            let ready = self.state.withLockedValue { state in
                state.timers.removeValue(forKey: id) == nil ? [] : state.takeReady()
            }
            for continuation in ready { continuation.resume() }
        }
    }

    /// Suspends until `condition` holds for the scheduler's timers (checked now and after every change), or the
    /// task is cancelled.
    public func waitUntil(_ condition: @escaping @Sendable (Snapshot) -> Bool) async {
        let id = state.withLockedValue { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLockedValue { state -> Bool in
                    if condition(state.snapshot) || Task.isCancelled { return true }
                    state.waiters.append(Waiter(id: id, condition: condition, continuation: continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLockedValue { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume()
        }
    }

    /// Suspends until at least `count` timers are pending.
    public func waitForTimers(count: Int = 1) async {
        await waitUntil { $0.pendingTimerCount >= count }
    }

    /// Moves time forward by `delay`, firing due timers in deadline order.
    public func advance(by delay: Duration) {
        let target = state.withLockedValue { $0.now + delay }
        while true {
            let due: Timer? = state.withLockedValue { state in
                guard
                    let next = state.timers.values.filter({ $0.deadline <= target })
                        .min(by: { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) })
                else { return nil }
                state.timers.removeValue(forKey: next.sequence)
                state.now = max(state.now, next.deadline)
                return next
            }
            guard let due else { break }
            due.action()
        }
        let ready = state.withLockedValue { state in
            state.now = max(state.now, target)
            return state.takeReady()
        }
        for continuation in ready { continuation.resume() }
    }
}
