import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The emulator's notion of time: media positions advance with it and timers (end of media, ad clips, preload,
/// delayed replies) fire on it.
///
/// The CLI uses ``SystemEmulatorClock``; tests use ``ManualEmulatorClock`` and move time with
/// ``ManualEmulatorClock/advance(by:)`` instead of sleeping.
public protocol EmulatorClock: Sendable {
    /// Seconds since an arbitrary, fixed origin.
    var now: Double { get }
    /// Runs `action` once `seconds` have passed on this clock. The action runs on an arbitrary thread.
    @discardableResult
    func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> EmulatorTimer
}

/// A scheduled action that can be cancelled before it fires.
public struct EmulatorTimer: Sendable {
    private let cancelAction: @Sendable () -> Void

    /// Wraps a cancel action.
    public init(cancel: @escaping @Sendable () -> Void) { self.cancelAction = cancel }

    /// Prevents the action from running, if it has not run yet.
    public func cancel() { cancelAction() }
}

/// Real time, with timers on a SwiftNIO event loop (no thread of its own).
public struct SystemEmulatorClock: EmulatorClock {
    private let origin = NIODeadline.now()
    private let eventLoop: any EventLoop

    /// A clock whose timers run on `eventLoop`.
    public init(eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()) {
        self.eventLoop = eventLoop
    }

    /// Seconds since the clock was made.
    public var now: Double { Double((NIODeadline.now() - origin).nanoseconds) / 1e9 }

    /// Runs `action` on the event loop once `seconds` have passed.
    @discardableResult
    public func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> EmulatorTimer {
        let task = eventLoop.scheduleTask(in: .nanoseconds(Int64(max(0, seconds) * 1e9))) { action() }
        return EmulatorTimer { task.cancel() }
    }
}

/// Time that moves only when a test says so.
///
/// ``advance(by:)`` fires every timer that falls due, in deadline order, each seeing ``now`` at its own
/// deadline, so cascades (an item ends, the next starts, its preload fires) happen exactly as in real time.
public final class ManualEmulatorClock: EmulatorClock {
    private struct Timer {
        var deadline: Double
        var sequence: Int
        var action: @Sendable () -> Void
    }

    private struct State {
        var now: Double = 0
        var nextSequence = 0
        var timers: [Int: Timer] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// A clock at time 0.
    public init() {}

    /// Seconds since the clock was made, as far as ``advance(by:)`` has moved it.
    public var now: Double { state.withLockedValue { $0.now } }

    /// The number of timers waiting to fire.
    public var pendingTimerCount: Int { state.withLockedValue { $0.timers.count } }

    /// Runs `action` when ``advance(by:)`` reaches its deadline.
    @discardableResult
    public func schedule(after seconds: Double, _ action: @escaping @Sendable () -> Void) -> EmulatorTimer {
        let id = state.withLockedValue { state in
            let id = state.nextSequence
            state.nextSequence += 1
            state.timers[id] = Timer(deadline: state.now + max(0, seconds), sequence: id, action: action)
            return id
        }
        return EmulatorTimer { [weak self] in _ = self?.state.withLockedValue { $0.timers.removeValue(forKey: id) } }
    }

    /// Moves time forward by `seconds`, firing due timers in order.
    public func advance(by seconds: Double) {
        let target = state.withLockedValue { $0.now + seconds }
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
        state.withLockedValue { $0.now = target }
    }
}
