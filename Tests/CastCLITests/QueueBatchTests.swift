import CastMedia
import Testing

@testable import cast

/// A long queue goes to the device in parts that each fit a 64 KiB message (a folder of 250 files was refused
/// whole: "a 86777-byte message exceeds the 65536-byte limit").
@Suite struct QueueBatchTests {
    private func item(_ index: Int) -> QueueItem {
        var media = MediaInformation(
            contentID: "http://192.168.1.5:40123/1f2e3d4c5b6a/track%20with%20a%20longish%20name%20\(index).mp3",
            contentType: "audio/mpeg",
            streamType: .buffered
        )
        media.metadata = .generic(title: "track with a longish name \(index)")
        return QueueItem(media: media)
    }

    @Test func aLongQueueIsSplitIntoPartsThatFitAndKeepTheirOrder() {
        let items = (1...600).map(item)
        let parts = PlayCommand.batches(items)
        #expect(parts.count > 1)
        #expect(parts.flatMap { $0 } == items)
        for part in parts {
            let payload = part.map { $0.json.jsonString }.joined(separator: ",")
            #expect(payload.utf8.count <= 40_000)
        }
    }

    @Test func aShortQueueIsOnePart() {
        let items = (1...5).map(item)
        #expect(PlayCommand.batches(items) == [items])
    }

    @Test func anItemLargerThanAPartIsAPartOfItsOwn() {
        let items = (1...3).map(item)
        let parts = PlayCommand.batches(items, limit: 10)
        #expect(parts == items.map { [$0] })
    }
}
