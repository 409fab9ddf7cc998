import CastMedia
import CastTransport
import NIOConcurrencyHelpers
import Testing

/// MediaQueue against a fake receiver queue: ids, lazy pages, caching and invalidation.
@Suite struct MediaQueueTests {
    /// A fake receiver with a queue of `ids`; answers QUEUE_GET_ITEM_IDS and QUEUE_GET_ITEMS.
    final class FakeQueue: Sendable {
        let ids: NIOLockedValueBox<[Int]>
        let titles = NIOLockedValueBox<[Int: String]>([:])
        init(_ ids: [Int]) { self.ids = NIOLockedValueBox(ids) }

        var responder: FakeMediaChannel.Responder {
            { [self] payload in
                switch payload["type"]?.stringValue {
                case "QUEUE_GET_ITEM_IDS":
                    let ids = self.ids.withLockedValue { $0 }
                    return .success(["type": "QUEUE_ITEM_IDS", "itemIds": .array(ids.map { .number(Double($0)) })])
                case "QUEUE_GET_ITEMS":
                    let wanted = payload["itemIds"]?.arrayValue?.compactMap(\.intValue) ?? []
                    let titles = self.titles.withLockedValue { $0 }
                    let items: [JSONValue] = wanted.map { id in
                        var item = QueueItem(media: testMedia("item\(id)", title: titles[id] ?? "Item \(id)"))
                        item.itemID = id
                        return item.json
                    }
                    return .success(["type": "QUEUE_ITEMS", "items": .array(items)])
                default:
                    return .success(statusMessage(statusEntry()))
                }
            }
        }
    }

    static func itemIDs(in payload: JSONValue) -> [Int] { payload["itemIds"]?.arrayValue?.compactMap(\.intValue) ?? [] }

    @Test func idsAndPagesAreFetchedLazilyAndCached() async throws {
        let fake = FakeQueue(Array(1...45))
        let (client, channel) = makeClient(responder: fake.responder)
        let queue = client.queue
        #expect(queue.pageSize == 20)
        #expect(queue.itemIDs == nil)
        #expect(queue.itemCount == nil)

        // The first item fetches the ids, then a page of 20.
        let first = try await queue.item(at: 0)
        #expect(first.itemID == 1)
        #expect(first.media.metadata?.title == "Item 1")
        #expect(channel.sent.map { $0["type"] } == ["QUEUE_GET_ITEM_IDS", "QUEUE_GET_ITEMS"])
        #expect(Self.itemIDs(in: channel.sent[1]) == Array(1...20))
        #expect(queue.itemCount == 45)
        #expect(queue.index(ofItemID: 45) == 44)

        // Cached: no round trip.
        #expect(try await queue.item(at: 19).itemID == 20)
        #expect(queue.cachedItem(withID: 7)?.itemID == 7)
        #expect(channel.sent.count == 2)

        // The next page starts at the asked index and skips what is cached.
        #expect(try await queue.item(at: 30).itemID == 31)
        #expect(Self.itemIDs(in: channel.sent[2]) == Array(31...45))
        #expect(try await queue.item(at: 25).itemID == 26)
        #expect(Self.itemIDs(in: channel.sent[3]) == Array(26...30), "cached ids are not asked for again")

        await #expect {
            try await queue.item(at: 45)
        } throws: { ($0 as? CastMediaError)?.code == .invalidRequest }
        await #expect {
            try await queue.item(at: -1)
        } throws: { ($0 as? CastMediaError)?.code == .invalidRequest }
    }

    @Test func queueChangesUpdateTheCache() async throws {
        let fake = FakeQueue([1, 2, 3, 4])
        let (client, channel) = makeClient(responder: fake.responder)
        let queue = client.queue
        #expect(try await queue.reload() == [1, 2, 3, 4])
        _ = try await queue.item(at: 0)
        #expect(queue.cachedItem(withID: 2) != nil)

        client.receive([
            "type": "QUEUE_CHANGE", "changeType": "INSERT", "itemIds": [10, 11], "insertBefore": 3, "sequenceNumber": 1,
        ])
        #expect(queue.itemIDs == [1, 2, 10, 11, 3, 4])
        client.receive(["type": "QUEUE_CHANGE", "changeType": "INSERT", "itemIds": [12], "sequenceNumber": 2])
        #expect(queue.itemIDs == [1, 2, 10, 11, 3, 4, 12], "no insertBefore appends")
        client.receive(["type": "QUEUE_CHANGE", "changeType": "REMOVE", "itemIds": [1, 11], "sequenceNumber": 3])
        #expect(queue.itemIDs == [2, 10, 3, 4, 12])
        #expect(queue.cachedItem(withID: 1) == nil)

        // ITEMS_CHANGE drops the cached item; the next read refetches it.
        fake.titles.withLockedValue { $0[2] = "Renamed" }
        client.receive(["type": "QUEUE_CHANGE", "changeType": "ITEMS_CHANGE", "itemIds": [2], "sequenceNumber": 4])
        #expect(queue.cachedItem(withID: 2) == nil)
        #expect(queue.cachedItem(withID: 3) != nil)
        let sentBefore = channel.sent.count
        #expect(try await queue.item(at: 0).media.metadata?.title == "Renamed")
        #expect(channel.sent.count == sentBefore + 1)

        client.receive(["type": "QUEUE_CHANGE", "changeType": "NO_CHANGE", "itemIds": [], "sequenceNumber": 5])
        #expect(queue.itemIDs == [2, 10, 3, 4, 12])

        // A reorder (UPDATE) makes the ids unknown; the next read reloads them.
        fake.ids.withLockedValue { $0 = [4, 3, 2] }
        client.receive([
            "type": "QUEUE_CHANGE", "changeType": "UPDATE", "itemIds": [4, 3], "reorderItemIds": [4, 3],
            "sequenceNumber": 6,
        ])
        #expect(queue.itemIDs == nil)
        #expect(try await queue.item(at: 0).itemID == 4)
        #expect(queue.itemIDs == [4, 3, 2])

        // A new media session drops everything.
        client.receive(statusMessage(statusEntry(session: 8)))
        #expect(queue.itemIDs == nil)
        #expect(queue.cachedItem(withID: 4) == nil)
    }

    @Test func statusItemsFillTheCache() {
        let (client, channel) = makeClient(seeded: false)
        var item = QueueItem(media: testMedia("five", title: "Five"))
        item.itemID = 5
        client.receive(statusMessage(statusEntry(extra: ["items": [item.json], "currentItemId": 5])))
        #expect(client.queue.cachedItem(withID: 5) == item)
        #expect(client.mediaStatus?.currentItem == item)
        #expect(channel.sent.isEmpty)
    }

    /// Items a status lists by their content id alone are not cached: QUEUE_GET_ITEMS tells them in full.
    @Test func statusItemsWithoutMetadataAreFetched() async throws {
        let fake = FakeQueue([5])
        let (client, channel) = makeClient(seeded: false, responder: fake.responder)
        let bare: JSONValue = ["itemId": 5, "media": ["contentId": "https://example.com/item5.mp4"]]
        client.receive(statusMessage(statusEntry(extra: ["items": [bare], "currentItemId": 5])))
        #expect(client.queue.cachedItem(withID: 5) == nil)
        _ = try await client.queue.reload()
        #expect(try await client.queue.item(at: 0).media.metadata?.title == "Item 5")
        #expect(channel.sent.map { $0["type"] } == ["QUEUE_GET_ITEM_IDS", "QUEUE_GET_ITEMS"])
    }

    @Test func queueRequestsCarryTheMediaSessionID() async throws {
        let fake = FakeQueue([1, 2])
        let (client, channel) = makeClient(responder: fake.responder)
        _ = try await client.queue.item(at: 0)
        for payload in channel.sent {
            #expect(payload["mediaSessionId"] == 7, "\(payload["type"]?.stringValue ?? "?")")
        }
    }

    @Test func queueRequestsFollowTheClientsMediaSession() async throws {
        let fake = FakeQueue([1, 2])
        let (client, channel) = makeClient(seeded: false, responder: fake.responder)
        await #expect {
            try await client.queue.reload()
        } throws: { ($0 as? CastMediaError)?.code == .noMediaSession }
        #expect(channel.sent.isEmpty)

        client.receive(statusMessage(statusEntry(session: 8, media: testMedia().json)))
        _ = try await client.queue.reload()
        #expect(channel.sent.last?["mediaSessionId"] == 8)

        client.receive(statusMessage(statusEntry(session: 9)))
        _ = try await client.queue.reload()
        #expect(channel.sent.last?["mediaSessionId"] == 9)

        client.reset()
        let sent = channel.sent.count
        await #expect {
            try await client.queue.reload()
        } throws: { ($0 as? CastMediaError)?.code == .noMediaSession }
        #expect(channel.sent.count == sent)
    }

    @Test func receiverErrorsKeepTheirCodes() async {
        let (client, _) = makeClient(responder: { _ in .success(["type": "INVALID_PLAYER_STATE"]) })
        var caught: CastMediaError?
        do {
            _ = try await client.queue.reload()
        } catch {
            caught = error as? CastMediaError
        }
        #expect(caught != nil)
        #expect(caught?.code == .invalidPlayerState)

        let (timedOut, _) = makeClient(responder: { _ in .failure(CastTransportError(.requestTimedOut, "slow")) })
        await #expect {
            try await timedOut.queue.reload()
        } throws: { ($0 as? CastMediaError)?.code == .timedOut }
    }
}
