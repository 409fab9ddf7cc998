import NIOCore
import NIOPosix

/// The heartbeat timers of the connections on one event loop, kept in slots by deadline: one SwiftNIO timer per
/// slot fires every timer in it.
///
/// Heartbeat deadlines are rounded to the slack grid (``HeartbeatConfiguration/timerSlack``), so thousands of
/// connections share a few dozen deadlines. With a SwiftNIO timer each, the loop's timer heap held one entry per
/// connection and sifted it on every tick (about 11 % of the idle CPU of 10,000 sessions). Here a timer joins its
/// slot in constant time and leaves it without searching the heap (cancelling a SwiftNIO timer searches all of
/// them). A connection makes its ``Timer`` once and schedules it again and again: scheduling allocates nothing
/// but a slot's first place (a slot per deadline, shared by the hundreds of connections due then). With a closure
/// and a dictionary entry per scheduling, the timers were 5 of the 17 allocations of each idle connection's
/// PING and PONG.
///
/// Used on its event loop only. Each event-loop thread keeps the instances of the loops that run on it (an
/// `EmbeddedEventLoop` runs on its test's thread); an instance is dropped once it holds no timer.
final class HeartbeatTimers {
    /// One connection's timer: made once, scheduled any number of times, in at most one slot at a time.
    final class Timer {
        fileprivate let fire: () -> Void
        /// Where it waits while scheduled.
        fileprivate var slot: Slot?
        fileprivate var index = 0

        /// A timer that calls `fire` each time it is due.
        init(_ fire: @escaping () -> Void) {
            self.fire = fire
        }

        /// Whether it waits in a slot.
        var isScheduled: Bool { slot != nil }
    }

    /// The timers of one deadline, in the order they were scheduled; a cancelled one leaves a hole.
    fileprivate final class Slot {
        let deadline: NIODeadline
        unowned let owner: HeartbeatTimers
        var timers: ContiguousArray<Timer?> = []
        var waiting = 0

        init(deadline: NIODeadline, owner: HeartbeatTimers) {
            self.deadline = deadline
            self.owner = owner
        }
    }

    private let eventLoop: any EventLoop
    private var slots: [NIODeadline: Slot] = [:]
    /// The slot last added to: the timers that fire together are scheduled again together, for one later deadline.
    private var lastSlot: Slot?

    private init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Puts `timer` in the slot of `deadline` on `eventLoop` (out of the one it was in): it fires then, with every
    /// other timer of that deadline, unless cancelled.
    static func schedule(_ timer: Timer, on eventLoop: any EventLoop, at deadline: NIODeadline) {
        cancel(timer)
        let registry = Registry.current
        let key = ObjectIdentifier(eventLoop)
        let timers: HeartbeatTimers
        if let existing = registry.timers[key] {
            timers = existing
        } else {
            timers = HeartbeatTimers(eventLoop: eventLoop)
            registry.timers[key] = timers
        }
        timers.add(timer, at: deadline)
    }

    /// Takes `timer` out of its slot, if it is in one; it will not fire.
    static func cancel(_ timer: Timer) {
        guard let slot = timer.slot else { return }
        slot.timers[timer.index] = nil
        timer.slot = nil
        slot.waiting -= 1
        let timers = slot.owner
        if slot.waiting == 0, timers.slots[slot.deadline] === slot {
            timers.slots[slot.deadline] = nil
            if timers.lastSlot === slot { timers.lastSlot = nil }
        }
        timers.dropIfEmpty()
    }

    private func add(_ timer: Timer, at deadline: NIODeadline) {
        let slot: Slot
        if let last = lastSlot, last.deadline == deadline {
            slot = last
        } else if let existing = slots[deadline] {
            slot = existing
        } else {
            slot = Slot(deadline: deadline, owner: self)
            slots[deadline] = slot
            // The slot itself, not its deadline: a slot emptied by cancels and made again for the same deadline
            // is fired once, by its own task.
            eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in fire(slot) }
        }
        lastSlot = slot
        timer.slot = slot
        timer.index = slot.timers.count
        slot.timers.append(timer)
        slot.waiting += 1
    }

    private func fire(_ slot: Slot) {
        // Taken out of the slot one at a time, so that a timer another one's callback cancels (by closing its
        // connection) does not fire, and one it adds for this deadline does (appended, it comes up in this loop).
        var index = 0
        while index < slot.timers.count {
            if let timer = slot.timers[index] {
                slot.timers[index] = nil
                timer.slot = nil
                slot.waiting -= 1
                timer.fire()
            }
            index += 1
        }
        if slots[slot.deadline] === slot { slots[slot.deadline] = nil }
        if lastSlot === slot { lastSlot = nil }
        dropIfEmpty()
    }

    /// Leaves this thread's registry once no timer waits. Only the current thread's: an `EmbeddedEventLoop` may be
    /// advanced from another thread than the one that scheduled on it, and each registry belongs to its thread.
    private func dropIfEmpty() {
        guard slots.isEmpty else { return }
        let registry = Registry.current
        let key = ObjectIdentifier(eventLoop)
        if registry.timers[key] === self { registry.timers[key] = nil }
    }

    /// The instances of the loops that run on one thread.
    // @unchecked: each registry is reached from its own thread only (thread-specific storage).
    private final class Registry: @unchecked Sendable {
        var timers: [ObjectIdentifier: HeartbeatTimers] = [:]

        private static let perThread = ThreadSpecificVariable<Registry>()

        static var current: Registry { perThread.current(orMake: Registry.init) }
    }
}
