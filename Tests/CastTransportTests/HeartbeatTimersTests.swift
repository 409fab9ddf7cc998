import NIOCore
import NIOEmbedded
import Testing

@testable import CastTransport

/// `HeartbeatTimers` on `EmbeddedEventLoop`s: slots fire together, cancelled timers never fire, loops stay apart.
@Suite("Heartbeat timers: one SwiftNIO timer per deadline, shared by a loop's connections")
struct HeartbeatTimersTests {
    /// Counts fires per timer.
    final class Fired {
        var counts: [Int: Int] = [:]
        func record(_ index: Int) { counts[index, default: 0] += 1 }
    }

    @Test func timersOfOneDeadlineFireTogetherOnceAndCancelledOnesNever() {
        let loop = EmbeddedEventLoop()
        let fired = Fired()
        let deadline = loop.now + .seconds(5)
        let timers = (0..<1000).map { index in HeartbeatTimers.Timer { fired.record(index) } }
        for timer in timers { HeartbeatTimers.schedule(timer, on: loop, at: deadline) }
        for index in stride(from: 0, to: 1000, by: 2) { HeartbeatTimers.cancel(timers[index]) }
        loop.advanceTime(by: .milliseconds(4999))
        #expect(fired.counts.isEmpty)
        loop.advanceTime(by: .milliseconds(1))
        #expect(fired.counts.count == 500)
        #expect(fired.counts.keys.allSatisfy { $0 % 2 == 1 })
        #expect(fired.counts.values.allSatisfy { $0 == 1 })
        // Cancelling after the fire is harmless, and nothing fires again.
        HeartbeatTimers.cancel(timers[1])
        #expect(!timers[1].isScheduled)
        loop.advanceTime(by: .seconds(60))
        #expect(fired.counts.values.allSatisfy { $0 == 1 })
    }

    @Test func aTimerScheduledAgainMovesToItsNewSlotAndFiresOnce() {
        let loop = EmbeddedEventLoop()
        let fired = Fired()
        let timer = HeartbeatTimers.Timer { fired.record(0) }
        HeartbeatTimers.schedule(timer, on: loop, at: loop.now + .seconds(1))
        HeartbeatTimers.schedule(timer, on: loop, at: loop.now + .seconds(2))
        loop.advanceTime(by: .seconds(1))
        #expect(fired.counts.isEmpty)
        #expect(timer.isScheduled)
        loop.advanceTime(by: .seconds(1))
        #expect(fired.counts == [0: 1])
        #expect(!timer.isScheduled)
        // A slot emptied by cancels and made again for the same deadline fires its new timer once.
        let deadline = loop.now + .seconds(1)
        HeartbeatTimers.schedule(timer, on: loop, at: deadline)
        HeartbeatTimers.cancel(timer)
        HeartbeatTimers.schedule(timer, on: loop, at: deadline)
        loop.advanceTime(by: .seconds(1))
        #expect(fired.counts == [0: 2])
    }

    @Test func aTimerScheduledWhileItsSlotFiresWaitsForItsOwnDeadline() {
        let loop = EmbeddedEventLoop()
        let fired = Fired()
        let first = loop.now + .seconds(1)
        let second = HeartbeatTimers.Timer { fired.record(1) }
        let timer = HeartbeatTimers.Timer {
            fired.record(0)
            // What a heartbeat does when it fires: the next one, later.
            HeartbeatTimers.schedule(second, on: loop, at: first + .seconds(1))
        }
        HeartbeatTimers.schedule(timer, on: loop, at: first)
        loop.advanceTime(by: .seconds(1))
        #expect(fired.counts == [0: 1])
        loop.advanceTime(by: .seconds(1))
        #expect(fired.counts == [0: 1, 1: 1])
    }

    @Test func aTimerCancelledByAnotherOfItsSlotDoesNotFire() {
        let loop = EmbeddedEventLoop()
        let fired = Fired()
        let deadline = loop.now + .seconds(1)
        var timers: [HeartbeatTimers.Timer] = []
        // Whichever fires first cancels the other, as a heartbeat that closes a connection would.
        for index in 0..<2 {
            timers.append(
                HeartbeatTimers.Timer {
                    fired.record(index)
                    HeartbeatTimers.cancel(timers[1 - index])
                }
            )
        }
        for timer in timers { HeartbeatTimers.schedule(timer, on: loop, at: deadline) }
        loop.advanceTime(by: .seconds(1))
        #expect(fired.counts.count == 1)
        #expect(fired.counts.values.allSatisfy { $0 == 1 })
        timers = []  // each timer's closure holds the array that holds it
    }

    @Test func loopsOnOneThreadKeepTheirTimersApart() {
        let (one, two) = (EmbeddedEventLoop(), EmbeddedEventLoop())
        let fired = Fired()
        // The same deadline value on both loops.
        let deadline =
            NIODeadline.uptimeNanoseconds(max(one.now.uptimeNanoseconds, two.now.uptimeNanoseconds))
            + .seconds(3)
        let timers = [HeartbeatTimers.Timer { fired.record(1) }, HeartbeatTimers.Timer { fired.record(2) }]
        HeartbeatTimers.schedule(timers[0], on: one, at: deadline)
        HeartbeatTimers.schedule(timers[1], on: two, at: deadline)
        one.advanceTime(to: deadline)
        #expect(fired.counts == [1: 1])
        two.advanceTime(to: deadline)
        #expect(fired.counts == [1: 1, 2: 1])
    }

    @Test func connectionsWithSlackPingInTheSameTurn() throws {
        let loop = EmbeddedEventLoop()
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: 1)
        let channels = try (0..<3).map { _ in
            let channel = EmbeddedChannel(
                handler: HeartbeatHandler(
                    configuration: HeartbeatConfiguration(),
                    localID: "sender-0",
                    peerID: "receiver-0",
                    logger: TransportTestKit.silentLogger
                ),
                loop: loop
            )
            try channel.connect(to: address).wait()
            return channel
        }
        // Connected at once: with the default 250 ms slack their first PINGs share one deadline, at most one slack
        // after the 5 s interval.
        loop.advanceTime(by: .milliseconds(4999))
        for channel in channels { #expect(try channel.readOutbound(as: CastMessage.self) == nil) }
        loop.advanceTime(by: .milliseconds(251))
        for channel in channels {
            let ping = try #require(try channel.readOutbound(as: CastMessage.self))
            #expect(ping.namespace == CastNamespace.heartbeat)
            #expect(ping.payload == .string(#"{"type":"PING"}"#))
        }
        for channel in channels { _ = try channel.finish() }
    }
}
