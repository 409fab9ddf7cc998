import CastReceiver
import NIOConcurrencyHelpers
import Testing

@Suite("ManualEmulatorClock")
struct ManualClockTests {
    /// Records which timers fired and what `now` each saw.
    final class Recorder: Sendable {
        private let entries = NIOLockedValueBox<[(String, Double)]>([])
        func record(_ name: String, at time: Double) { entries.withLockedValue { $0.append((name, time)) } }
        var names: [String] { entries.withLockedValue { $0.map(\.0) } }
        var times: [Double] { entries.withLockedValue { $0.map(\.1) } }
    }

    @Test func startsAtZeroAndMovesOnlyWhenAdvanced() {
        let clock = ManualEmulatorClock()
        #expect(clock.now == 0)
        #expect(clock.now == 0)
        clock.advance(by: 2.5)
        #expect(clock.now == 2.5)
        clock.advance(by: 0)
        #expect(clock.now == 2.5)
    }

    @Test func firesTimersInDeadlineOrderEachAtItsOwnTime() {
        let clock = ManualEmulatorClock()
        let recorder = Recorder()
        clock.schedule(after: 3) { recorder.record("c", at: clock.now) }
        clock.schedule(after: 1) { recorder.record("a", at: clock.now) }
        clock.schedule(after: 2) { recorder.record("b", at: clock.now) }
        clock.schedule(after: 10) { recorder.record("late", at: clock.now) }
        #expect(clock.pendingTimerCount == 4)

        clock.advance(by: 0.5)
        #expect(recorder.names.isEmpty)

        clock.advance(by: 2.5)
        #expect(recorder.names == ["a", "b", "c"])
        #expect(recorder.times == [1, 2, 3], "each action sees now at its own deadline")
        #expect(clock.now == 3)
        #expect(clock.pendingTimerCount == 1)

        clock.advance(by: 7)
        #expect(recorder.names == ["a", "b", "c", "late"])
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func equalDeadlinesFireInSchedulingOrder() {
        let clock = ManualEmulatorClock()
        let recorder = Recorder()
        for name in ["first", "second", "third"] {
            clock.schedule(after: 1) { recorder.record(name, at: clock.now) }
        }
        clock.schedule(after: 0) { recorder.record("zero", at: clock.now) }
        clock.schedule(after: -5) { recorder.record("negative", at: clock.now) }
        clock.advance(by: 1)
        #expect(recorder.names == ["zero", "negative", "first", "second", "third"])
        #expect(recorder.times == [0, 0, 1, 1, 1])
    }

    @Test func cancelledTimersNeverFire() {
        let clock = ManualEmulatorClock()
        let recorder = Recorder()
        let cancelled = clock.schedule(after: 1) { recorder.record("cancelled", at: clock.now) }
        clock.schedule(after: 2) { recorder.record("kept", at: clock.now) }
        cancelled.cancel()
        #expect(clock.pendingTimerCount == 1)
        clock.advance(by: 5)
        #expect(recorder.names == ["kept"])

        // Cancelling after firing is harmless.
        let fired = clock.schedule(after: 1) { recorder.record("fired", at: clock.now) }
        clock.advance(by: 1)
        fired.cancel()
        #expect(recorder.names == ["kept", "fired"])
    }

    @Test func timersScheduledDuringAdvanceFireWithinTheSameAdvance() {
        let clock = ManualEmulatorClock()
        let recorder = Recorder()
        clock.schedule(after: 1) {
            recorder.record("one", at: clock.now)
            clock.schedule(after: 1) {
                recorder.record("two", at: clock.now)
                clock.schedule(after: 1) { recorder.record("three", at: clock.now) }
                clock.schedule(after: 5) { recorder.record("beyond", at: clock.now) }
            }
        }
        clock.advance(by: 3.5)
        #expect(recorder.names == ["one", "two", "three"])
        #expect(recorder.times == [1, 2, 3])
        #expect(clock.now == 3.5)
        #expect(clock.pendingTimerCount == 1)
        clock.advance(by: 3.5)
        #expect(recorder.names == ["one", "two", "three", "beyond"])
        #expect(recorder.times.last == 7)
    }

    @Test func aTimerCanCancelALaterOne() {
        let clock = ManualEmulatorClock()
        let recorder = Recorder()
        let victim = NIOLockedValueBox<EmulatorTimer?>(nil)
        clock.schedule(after: 1) {
            recorder.record("canceller", at: clock.now)
            victim.withLockedValue { $0?.cancel() }
        }
        let timer = clock.schedule(after: 2) { recorder.record("victim", at: clock.now) }
        victim.withLockedValue { $0 = timer }
        clock.advance(by: 5)
        #expect(recorder.names == ["canceller"])
    }
}
