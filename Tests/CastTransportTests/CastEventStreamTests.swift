@_spi(CastInternal) import CastTransport
import Testing

/// ``CastEventStream``: what a subscriber of a broadcaster reads, how much it buffers, and how its subscription ends.
@Suite("CastEventStream: one subscriber's buffered events")
struct CastEventStreamTests {
    @Test("elements come in order, buffered or awaited, and the source's finish ends the stream after them")
    func elementsInOrderThenFinish() async throws {
        let broadcaster = EventBroadcaster<Int>()
        let stream = broadcaster.makeStream()
        broadcaster.yield(1)
        broadcaster.yield(2)
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == 1)
        #expect(await iterator.next() == 2)

        // Nothing buffered: the consumer waits until the source yields.
        async let third = { () async -> Int? in
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }()
        try await waitForConsumer(of: stream)
        broadcaster.yield(3)
        #expect(await third == 3)

        broadcaster.yield(4)
        broadcaster.finish()
        broadcaster.yield(5)
        #expect(await iterator.next() == 4)
        #expect(await iterator.next() == nil)
        #expect(await iterator.next() == nil)
    }

    @Test("bufferingNewest keeps only the newest unread elements")
    func bufferingNewestKeepsTheLatest() async {
        let broadcaster = EventBroadcaster<Int>()
        let latest = broadcaster.makeStream(bufferingPolicy: .bufferingNewest(1))
        let two = broadcaster.makeStream(bufferingPolicy: .bufferingNewest(2))
        for value in 1...5 { broadcaster.yield(value) }
        broadcaster.finish()
        var seen: [Int] = []
        for await value in latest { seen.append(value) }
        #expect(seen == [5])
        seen = []
        for await value in two { seen.append(value) }
        #expect(seen == [4, 5])
    }

    @Test("cancelling the waiting task ends its iteration with nil and unsubscribes")
    func cancellationEndsTheSubscription() async throws {
        let broadcaster = EventBroadcaster<Int>()
        let stream = broadcaster.makeStream()
        let reader = Task {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
        try await waitForConsumer(of: stream)
        reader.cancel()
        #expect(await reader.value == nil)
        #expect(broadcaster.subscriberCount == 0)
        broadcaster.yield(1)
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == nil, "a cancelled subscription stays ended")
    }

    @Test("a task already cancelled reads what is buffered, then nil")
    func cancelledTaskReadsNothingNew() async {
        let broadcaster = EventBroadcaster<Int>()
        let stream = broadcaster.makeStream()
        broadcaster.yield(1)
        let values = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var iterator = stream.makeAsyncIterator()
            return [await iterator.next(), await iterator.next()]
        }.value
        #expect(values == [1, nil])
        #expect(broadcaster.subscriberCount == 0)
    }

    @Test("a cancelled consumer behind its source reads the backlog, then nil, and takes nothing new")
    func cancelledConsumerBehindItsSourceEnds() async {
        let broadcaster = EventBroadcaster<Int>()
        let stream = broadcaster.makeStream()
        for value in 1...3 { broadcaster.yield(value) }
        let seen = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var iterator = stream.makeAsyncIterator()
            var seen: [Int] = []
            // The source keeps up: every read finds an element, so the consumer never waits.
            while seen.count < 100, let value = await iterator.next() {
                seen.append(value)
                broadcaster.yield(value + 10)
            }
            return seen
        }.value
        #expect(seen == [1, 2, 3])
        #expect(broadcaster.subscriberCount == 0)
    }

    @Test("the subscription ends when the last copy of the stream and its iterators is gone")
    func droppingTheStreamUnsubscribes() async {
        let broadcaster = EventBroadcaster<Int>()
        var iterator: CastEventStream<Int>.AsyncIterator?
        do {
            let stream = broadcaster.makeStream()
            let copy = stream
            iterator = copy.makeAsyncIterator()
            #expect(broadcaster.subscriberCount == 1)
        }
        #expect(broadcaster.subscriberCount == 1, "an iterator keeps the subscription")
        broadcaster.yield(7)
        #expect(await iterator?.next() == 7)
        iterator = nil
        #expect(broadcaster.subscriberCount == 0)
    }

    /// Waits (bounded) until a task waits for `stream`'s next element.
    private func waitForConsumer(of stream: CastEventStream<Int>) async throws {
        try await withDeadline(.seconds(30), "a consumer waiting on the stream") {
            while !stream.hasWaitingConsumer { await Task.yield() }
        }
    }
}
