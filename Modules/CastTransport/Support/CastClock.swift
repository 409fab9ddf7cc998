import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Where timers run and what time it is, for code whose timing tests want to control: the emulator's media
/// positions, ends of media, ad clips and delayed replies; discovery's removal debounce, static retries and
/// rescans.
///
/// Production code uses ``SystemCastClock``; tests pass a ``ManualCastClock`` and move time with
/// ``ManualCastClock/advance(by:)`` instead of sleeping.
public protocol CastClock: Sendable {
    /// Time since an arbitrary, fixed origin.
    var now: Duration { get }
    /// Runs `action` once `delay` has passed on this clock (a negative delay counts as zero; the action never runs
    /// inside this call). The action runs on an arbitrary thread and must be quick.
    @discardableResult
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> CastTimer
}

/// A scheduled action that can be cancelled before it fires.
public struct CastTimer: Sendable {
    private let cancelAction: @Sendable () -> Void

    /// Wraps a cancel action.
    public init(cancel: @escaping @Sendable () -> Void) { self.cancelAction = cancel }

    /// Prevents the action from running, if it has not run yet.
    public func cancel() { cancelAction() }
}

/// Real time, with timers on a SwiftNIO event loop (no thread of its own).
public struct SystemCastClock: CastClock {
    private let origin = NIODeadline.now()
    private let eventLoop: any EventLoop

    /// A clock whose timers run on `eventLoop`, at time zero now.
    public init(eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()) {
        self.eventLoop = eventLoop
    }

    /// The time since this clock was made.
    public var now: Duration { .nanoseconds((NIODeadline.now() - origin).nanoseconds) }

    /// Runs `action` on the event loop once `delay` has passed.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> CastTimer {
        let task = eventLoop.scheduleTask(in: TimeAmount(max(.zero, delay))) { action() }
        return CastTimer { task.cancel() }
    }
}

/// Time that moves only when a test says so.
///
/// ``advance(by:)`` fires every timer that falls due, in deadline order (timers with the same deadline in the
/// order they were scheduled), each seeing ``now`` at its own deadline, so cascades (an item ends, the next
/// starts, its preload fires) happen exactly as in real time. ``waitUntil(_:)`` lets a test wait until the code
/// under test has armed (or cancelled) its timers — say, the removal debounce after a goodbye packet — without
/// polling or sleeping.
public final class ManualCastClock: CastClock {
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

    /// A clock at time zero.
    public init() {}

    /// Time since creation, as far as this clock is concerned.
    public var now: Duration { state.withLockedValue { $0.now } }

    /// The number of timers waiting to fire.
    public var pendingTimerCount: Int { state.withLockedValue { $0.timers.count } }

    /// The delays, from now, of the pending timers, soonest first.
    public var pendingDelays: [Duration] {
        state.withLockedValue { state in state.timers.values.map { $0.deadline - state.now }.sorted() }
    }

    /// Runs `action` when ``advance(by:)`` reaches its deadline.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> CastTimer {
        let (id, ready) = state.withLockedValue { state -> (Int, [CheckedContinuation<Void, Never>]) in
            let id = state.nextSequence
            state.nextSequence += 1
            state.timers[id] = Timer(deadline: state.now + max(.zero, delay), sequence: id, action: action)
            return (id, state.takeReady())
        }
        for continuation in ready { continuation.resume() }
        return CastTimer { [weak self] in
            guard let self else { return }
            let ready = self.state.withLockedValue { state in
                state.timers.removeValue(forKey: id) == nil ? [] : state.takeReady()
            }
            for continuation in ready { continuation.resume() }
        }
    }

    /// Suspends until `condition` holds for the clock's timers (checked now and after every change), or the
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
