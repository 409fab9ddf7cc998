import CastDiscovery
import Testing

@testable import CastService

@Suite("The event log: numbered events, a bounded window, slow subscribers dropped")
struct EventLogTests {
    private func device(_ name: String) -> CastDevice { CastDevice.staticDevice(host: "127.0.0.1", name: name) }

    @Test func eventsAreNumberedFromOneAndReplayedAfterALastID() async {
        let log = EventLog(window: 3, subscriberBuffer: 10)
        for name in ["a", "b", "c", "d", "e"] { log.append(.deviceAdded(device(name))) }
        #expect(log.nextID == 6)
        // Ids 3, 4 and 5 are in the window; a client that saw 3 gets 4 and 5, then new ones.
        var replay = log.subscribe(after: 3).makeAsyncIterator()
        log.append(.deviceRemoved(device("a")))
        var ids: [Int] = []
        for _ in 0..<3 { if let event = await replay.next() { ids.append(event.id) } }
        #expect(ids == [4, 5, 6])
    }

    /// castd numbers from the time in microseconds, so a restarted castd's ids are above the ones before: a
    /// client reconnecting with its last id gets what the new process has (ids restarted at 1, and it got nothing).
    @Test func idsGoOnGrowingAcrossRestarts() async {
        let before = EventLog(window: 3, subscriberBuffer: 10, firstID: DeviceHub.firstEventID())
        before.append(.deviceAdded(device("a")))
        let lastSeen = before.nextID - 1
        let after = EventLog(window: 3, subscriberBuffer: 10, firstID: DeviceHub.firstEventID())
        #expect(after.nextID > lastSeen)
        #expect(after.nextID < 1 << 53, "an exact integer in JavaScript")
        after.append(.deviceAdded(device("b")))
        var replay = after.subscribe(after: lastSeen).makeAsyncIterator()
        #expect(await replay.next()?.device.friendlyName == "b")
    }

    @Test func aClientBehindTheWindowGetsWhatIsLeft() async {
        let log = EventLog(window: 2, subscriberBuffer: 10)
        for name in ["a", "b", "c", "d"] { log.append(.deviceAdded(device(name))) }
        var replay = log.subscribe(after: 0).makeAsyncIterator()
        #expect(await replay.next()?.id == 3)
        #expect(await replay.next()?.id == 4)
    }

    @Test func aNewSubscriberStartsFromNow() async {
        let log = EventLog(window: 5, subscriberBuffer: 10)
        log.append(.deviceAdded(device("old")))
        var events = log.subscribe(after: nil).makeAsyncIterator()
        log.append(.deviceAdded(device("new")))
        #expect(await events.next()?.device.friendlyName == "new")
    }

    @Test func aSubscriberThatFallsBehindIsEndedNotBufferedWithoutBound() async {
        let log = EventLog(window: 4, subscriberBuffer: 4)
        let stalled = log.subscribe(after: nil)
        let reading = log.subscribe(after: nil)
        var live = reading.makeAsyncIterator()
        for index in 0..<20 {
            log.append(.deviceUpdated(device("\(index)")))
            #expect(await live.next()?.id == index + 1)  // a reading client gets every event
        }
        // The stalled one holds at most its buffer (window + subscriberBuffer) and then its stream ended.
        var received = 0
        for await _ in stalled { received += 1 }
        #expect(received == 8)
    }

    @Test func finishingEndsEverySubscriber() async {
        let log = EventLog(window: 4, subscriberBuffer: 4)
        let events = log.subscribe(after: nil)
        log.finish()
        var count = 0
        for await _ in events { count += 1 }
        #expect(count == 0)
        log.append(.deviceAdded(device("late")))
        #expect(log.nextID == 1)
    }
}
