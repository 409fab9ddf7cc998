import CastTransport
import NIOConcurrencyHelpers
import Testing

@Suite("ManualCastClock")
struct ManualCastClockTests {
    /// Records which timers fired and what `now` each saw.
    final class Recorder: Sendable {
        private let entries = NIOLockedValueBox<[(String, Duration)]>([])
        func record(_ name: String, at time: Duration) { entries.withLockedValue { $0.append((name, time)) } }
        var names: [String] { entries.withLockedValue { $0.map(\.0) } }
        var times: [Duration] { entries.withLockedValue { $0.map(\.1) } }
    }

    @Test func startsAtZeroAndMovesOnlyWhenAdvanced() {
        let clock = ManualCastClock()
        #expect(clock.now == .zero)
        #expect(clock.now == .zero)
        clock.advance(by: .seconds(2.5))
        #expect(clock.now == .seconds(2.5))
        clock.advance(by: .zero)
        #expect(clock.now == .seconds(2.5))
    }

    @Test func firesTimersInDeadlineOrderEachAtItsOwnTime() {
        let clock = ManualCastClock()
        let recorder = Recorder()
        clock.schedule(after: .seconds(3)) { recorder.record("c", at: clock.now) }
        clock.schedule(after: .seconds(1)) { recorder.record("a", at: clock.now) }
        clock.schedule(after: .seconds(2)) { recorder.record("b", at: clock.now) }
        clock.schedule(after: .seconds(10)) { recorder.record("late", at: clock.now) }
        #expect(clock.pendingTimerCount == 4)

        clock.advance(by: .seconds(0.5))
        #expect(recorder.names.isEmpty)

        clock.advance(by: .seconds(2.5))
        #expect(recorder.names == ["a", "b", "c"])
        #expect(recorder.times == [.seconds(1), .seconds(2), .seconds(3)], "each action sees now at its own deadline")
        #expect(clock.now == .seconds(3))
        #expect(clock.pendingTimerCount == 1)

        clock.advance(by: .seconds(7))
        #expect(recorder.names == ["a", "b", "c", "late"])
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func equalDeadlinesFireInSchedulingOrder() {
        let clock = ManualCastClock()
        let recorder = Recorder()
        for name in ["first", "second", "third"] {
            clock.schedule(after: .seconds(1)) { recorder.record(name, at: clock.now) }
        }
        clock.schedule(after: .seconds(0)) { recorder.record("zero", at: clock.now) }
        clock.schedule(after: .seconds(-5)) { recorder.record("negative", at: clock.now) }
        clock.advance(by: .seconds(1))
        #expect(recorder.names == ["zero", "negative", "first", "second", "third"])
        #expect(recorder.times == [.seconds(0), .seconds(0), .seconds(1), .seconds(1), .seconds(1)])
    }

    @Test func cancelledTimersNeverFire() {
        let clock = ManualCastClock()
        let recorder = Recorder()
        let cancelled = clock.schedule(after: .seconds(1)) { recorder.record("cancelled", at: clock.now) }
        clock.schedule(after: .seconds(2)) { recorder.record("kept", at: clock.now) }
        cancelled.cancel()
        #expect(clock.pendingTimerCount == 1)
        clock.advance(by: .seconds(5))
        #expect(recorder.names == ["kept"])

        // Cancelling after firing is harmless.
        let fired = clock.schedule(after: .seconds(1)) { recorder.record("fired", at: clock.now) }
        clock.advance(by: .seconds(1))
        fired.cancel()
        #expect(recorder.names == ["kept", "fired"])
    }

    @Test func timersScheduledDuringAdvanceFireWithinTheSameAdvance() {
        let clock = ManualCastClock()
        let recorder = Recorder()
        clock.schedule(after: .seconds(1)) {
            recorder.record("one", at: clock.now)
            clock.schedule(after: .seconds(1)) {
                recorder.record("two", at: clock.now)
                clock.schedule(after: .seconds(1)) { recorder.record("three", at: clock.now) }
                clock.schedule(after: .seconds(5)) { recorder.record("beyond", at: clock.now) }
            }
        }
        clock.advance(by: .seconds(3.5))
        #expect(recorder.names == ["one", "two", "three"])
        #expect(recorder.times == [.seconds(1), .seconds(2), .seconds(3)])
        #expect(clock.now == .seconds(3.5))
        #expect(clock.pendingTimerCount == 1)
        clock.advance(by: .seconds(3.5))
        #expect(recorder.names == ["one", "two", "three", "beyond"])
        #expect(recorder.times.last == .seconds(7))
    }

    @Test func aTimerCanCancelALaterOne() {
        let clock = ManualCastClock()
        let recorder = Recorder()
        let victim = NIOLockedValueBox<CastTimer?>(nil)
        clock.schedule(after: .seconds(1)) {
            recorder.record("canceller", at: clock.now)
            victim.withLockedValue { $0?.cancel() }
        }
        let timer = clock.schedule(after: .seconds(2)) { recorder.record("victim", at: clock.now) }
        victim.withLockedValue { $0 = timer }
        clock.advance(by: .seconds(5))
        #expect(recorder.names == ["canceller"])
    }

    @Test("fires due timers in order, skips cancelled ones, and wakes waiters when timers are armed")
    func firesInOrder() async {
        let clock = ManualCastClock()
        let fired = Recorder()
        let waiting = Task { await clock.waitForTimers(count: 2) }
        clock.schedule(after: .seconds(2)) { fired.record("2", at: clock.now) }
        let cancelled = clock.schedule(after: .seconds(1)) { fired.record("99", at: clock.now) }
        clock.schedule(after: .seconds(1)) { fired.record("1", at: clock.now) }
        await waiting.value
        cancelled.cancel()
        #expect(clock.pendingDelays == [.seconds(1), .seconds(2)])
        clock.advance(by: .milliseconds(1500))
        #expect(fired.names == ["1"])
        clock.advance(by: .seconds(1))
        #expect(fired.names == ["1", "2"])
        #expect(clock.now == .milliseconds(2500))
        #expect(clock.pendingTimerCount == 0)
    }
}
