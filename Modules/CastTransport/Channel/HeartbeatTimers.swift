import NIOCore
import NIOPosix

/// The heartbeat timers of the connections on one event loop, kept in slots by deadline: one SwiftNIO timer per
/// slot fires every timer in it.
///
/// Heartbeat deadlines are rounded to the slack grid (``HeartbeatConfiguration/timerSlack``), so thousands of
/// connections share a few dozen deadlines. With a SwiftNIO timer each, the loop's timer heap held one entry per
/// connection and sifted it on every tick (about 11 % of the idle CPU of 10,000 sessions). Here a timer joins its
/// slot in constant time and leaves it without searching the heap (cancelling a SwiftNIO timer searches all of
/// them).
///
/// Used on its event loop only. Each event-loop thread keeps the instances of the loops that run on it (an
/// `EmbeddedEventLoop` runs on its test's thread); an instance is dropped once it holds no timer.
final class HeartbeatTimers {
    /// A scheduled timer: where it waits, so that it can leave its slot.
    struct Entry {
        fileprivate let timers: HeartbeatTimers
        fileprivate let deadline: NIODeadline
        fileprivate let id: Int
    }

    private let eventLoop: any EventLoop
    private var slots: [NIODeadline: [Int: () -> Void]] = [:]
    private var nextID = 0

    private init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Calls `fire` on `eventLoop` at `deadline` (with every other timer of that deadline), unless cancelled.
    static func schedule(on eventLoop: any EventLoop, at deadline: NIODeadline, _ fire: @escaping () -> Void)
        -> Entry
    {
        let registry = Registry.current
        let key = ObjectIdentifier(eventLoop)
        let timers: HeartbeatTimers
        if let existing = registry.timers[key] {
            timers = existing
        } else {
            timers = HeartbeatTimers(eventLoop: eventLoop)
            registry.timers[key] = timers
        }
        return timers.add(fire, at: deadline)
    }

    /// Takes a timer out of its slot; it will not fire.
    static func cancel(_ entry: Entry) {
        let timers = entry.timers
        // In place: a copy of the slot would copy every other timer in it.
        timers.slots[entry.deadline]?[entry.id] = nil
        if timers.slots[entry.deadline]?.isEmpty == true { timers.slots[entry.deadline] = nil }
        timers.dropIfEmpty()
    }

    private func add(_ fire: @escaping () -> Void, at deadline: NIODeadline) -> Entry {
        nextID += 1
        if slots[deadline] == nil {
            slots[deadline] = [:]
            eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in fireSlot(deadline) }
        }
        slots[deadline]![nextID] = fire
        return Entry(timers: self, deadline: deadline, id: nextID)
    }

    private func fireSlot(_ deadline: NIODeadline) {
        // Taken out of the slot one at a time, so that a timer another one's callback cancels (by closing its
        // connection) does not fire, and one it adds for this deadline does.
        while let ids = slots[deadline].map({ Array($0.keys) }), !ids.isEmpty {
            for id in ids {
                guard let fire = slots[deadline]?.removeValue(forKey: id) else { continue }
                fire()
            }
        }
        slots[deadline] = nil
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
