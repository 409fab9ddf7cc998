@_spi(CastInternal) import CastTransport
import NIOConcurrencyHelpers
import Testing

/// ``EventBroadcaster``: streams and handlers each get every element, an element nobody listens to is never made,
/// copies share their subscribers, and finishing ends every stream.
@Suite("EventBroadcaster: fan-out to streams and handlers")
struct EventBroadcasterTests {
    @Test("an element is made only when someone listens, and then once for all")
    func elementIsMadeOnlyForListeners() async {
        let broadcaster = EventBroadcaster<Int>()
        let made = NIOLockedValueBox(0)
        func element(_ value: Int) -> Int {
            made.withLockedValue { $0 += 1 }
            return value
        }
        broadcaster.yield(element(1))
        #expect(made.withLockedValue { $0 } == 0)

        let seen = NIOLockedValueBox<[Int]>([])
        let id = broadcaster.addHandler { value in seen.withLockedValue { $0.append(value) } }
        let stream = broadcaster.makeStream()
        broadcaster.yield(element(2))
        #expect(made.withLockedValue { $0 } == 1)
        #expect(seen.withLockedValue { $0 } == [2])

        broadcaster.removeHandler(id)
        broadcaster.yield(element(3))
        broadcaster.finish()
        #expect(seen.withLockedValue { $0 } == [2])
        var streamed: [Int] = []
        for await value in stream { streamed.append(value) }
        #expect(streamed == [2, 3])
        #expect(made.withLockedValue { $0 } == 2)
    }

    @Test("copies share subscribers; a stream ended by its consumer unsubscribes; a late stream is finished")
    func copiesShareSubscribers() async {
        let broadcaster = EventBroadcaster<String>()
        let copy = broadcaster
        do {
            let stream = copy.makeStream()
            #expect(broadcaster.subscriberCount == 1)
            broadcaster.yield("a")
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next() == "a")
        }
        // The stream and its iterator are gone: the subscription ended with them.
        #expect(broadcaster.subscriberCount == 0)

        copy.finish()
        var late = broadcaster.makeStream().makeAsyncIterator()
        #expect(await late.next() == nil)
    }
}
