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
        let entries = (0..<1000).map { index in
            HeartbeatTimers.schedule(on: loop, at: deadline) { fired.record(index) }
        }
        for index in stride(from: 0, to: 1000, by: 2) { HeartbeatTimers.cancel(entries[index]) }
        loop.advanceTime(by: .milliseconds(4999))
        #expect(fired.counts.isEmpty)
        loop.advanceTime(by: .milliseconds(1))
        #expect(fired.counts.count == 500)
        #expect(fired.counts.keys.allSatisfy { $0 % 2 == 1 })
        #expect(fired.counts.values.allSatisfy { $0 == 1 })
        // Cancelling after the fire is harmless, and nothing fires again.
        HeartbeatTimers.cancel(entries[1])
        loop.advanceTime(by: .seconds(60))
        #expect(fired.counts.values.allSatisfy { $0 == 1 })
    }

    @Test func aTimerScheduledWhileItsSlotFiresWaitsForItsOwnDeadline() {
        let loop = EmbeddedEventLoop()
        let fired = Fired()
        let first = loop.now + .seconds(1)
        _ = HeartbeatTimers.schedule(on: loop, at: first) {
            fired.record(0)
            // What a heartbeat does when it fires: the next one, later.
            _ = HeartbeatTimers.schedule(on: loop, at: first + .seconds(1)) { fired.record(1) }
        }
        loop.advanceTime(by: .seconds(1))
        #expect(fired.counts == [0: 1])
        loop.advanceTime(by: .seconds(1))
        #expect(fired.counts == [0: 1, 1: 1])
    }

    @Test func aTimerCancelledByAnotherOfItsSlotDoesNotFire() {
        let loop = EmbeddedEventLoop()
        let fired = Fired()
        let deadline = loop.now + .seconds(1)
        var entries: [HeartbeatTimers.Entry] = []
        // Whichever fires first cancels the other, as a heartbeat that closes a connection would.
        for index in 0..<2 {
            entries.append(
                HeartbeatTimers.schedule(on: loop, at: deadline) {
                    fired.record(index)
                    HeartbeatTimers.cancel(entries[1 - index])
                }
            )
        }
        loop.advanceTime(by: .seconds(1))
        #expect(fired.counts.count == 1)
        #expect(fired.counts.values.allSatisfy { $0 == 1 })
    }

    @Test func loopsOnOneThreadKeepTheirTimersApart() {
        let (one, two) = (EmbeddedEventLoop(), EmbeddedEventLoop())
        let fired = Fired()
        // The same deadline value on both loops.
        let deadline =
            NIODeadline.uptimeNanoseconds(max(one.now.uptimeNanoseconds, two.now.uptimeNanoseconds))
            + .seconds(3)
        _ = HeartbeatTimers.schedule(on: one, at: deadline) { fired.record(1) }
        _ = HeartbeatTimers.schedule(on: two, at: deadline) { fired.record(2) }
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
