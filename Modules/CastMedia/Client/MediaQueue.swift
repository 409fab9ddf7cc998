import CastLogging
import CastTransport
import Logging
import Synchronization

/// The receiver's queue as a lazily filled list (GCKMediaQueue): item ids come from QUEUE_GET_ITEM_IDS, items
/// are fetched in pages with QUEUE_GET_ITEMS when asked for and cached until a QUEUE_CHANGE or a new media
/// session invalidates them.
public final class MediaQueue: Sendable {
    private struct State {
        var itemIDs: [Int]?
        var items: [Int: QueueItem] = [:]
        var generation = 0
        /// The client's media session, kept here by the client: the queue needs no reference back to it.
        var mediaSessionID: Int?
    }

    /// How many items one QUEUE_GET_ITEMS asks for. Defaults to 20.
    public let pageSize: Int
    private let channel: any MediaChannel
    private let requestTimeout: Duration?
    private let logger: Logger
    private let state = Mutex(State())

    init(channel: any MediaChannel, requestTimeout: Duration?, pageSize: Int = 20, logger: Logger) {
        self.channel = channel
        self.requestTimeout = requestTimeout
        self.pageSize = pageSize
        self.logger = logger.withCategory(CastLogCategory.mediaQueue)
    }

    /// The item ids in queue order, if fetched.
    public var itemIDs: [Int]? { state.withLock { $0.itemIDs } }

    /// The number of items, if the ids were fetched.
    public var itemCount: Int? { state.withLock { $0.itemIDs?.count } }

    /// The cached item with `itemID`, without fetching.
    public func cachedItem(withID itemID: Int) -> QueueItem? { state.withLock { $0.items[itemID] } }

    /// The position of `itemID`, if known.
    public func index(ofItemID itemID: Int) -> Int? { state.withLock { $0.itemIDs?.firstIndex(of: itemID) } }

    /// Fetches the item ids again (QUEUE_GET_ITEM_IDS) and returns them.
    @discardableResult
    public func reload() async throws -> [Int] {
        let generation = state.withLock { $0.generation }
        let reply = try await request(["type": "QUEUE_GET_ITEM_IDS"])
        guard reply["type"]?.stringValue == "QUEUE_ITEM_IDS",
            let ids = reply["itemIds"]?.arrayValue?.compactMap(\.intValue)
        else {
            throw CastMediaError(
                .invalidResponse,
                "expected QUEUE_ITEM_IDS, got \(reply["type"]?.stringValue ?? "nothing")"
            )
        }
        state.withLock { state in
            guard state.generation == generation else { return }
            state.itemIDs = ids
            let known = Set(ids)
            state.items = state.items.filter { known.contains($0.key) }
        }
        return ids
    }

    /// The item at `index`, fetching its page when it is not cached.
    ///
    /// - Throws: ``CastMediaError`` — ``CastMediaError/Code/invalidRequest`` for an index out of range.
    public func item(at index: Int) async throws -> QueueItem {
        var ids = itemIDs
        if ids == nil { ids = try await reload() }
        guard let ids, ids.indices.contains(index) else {
            throw CastMediaError(.invalidRequest, "queue index \(index) is out of range")
        }
        if let cached = cachedItem(withID: ids[index]) { return cached }
        let page = Array(ids[index..<min(ids.count, index + pageSize)]).filter { cachedItem(withID: $0) == nil }
        let reply = try await request(["type": "QUEUE_GET_ITEMS", "itemIds": .array(page.map { .number(Double($0)) })])
        guard reply["type"]?.stringValue == "QUEUE_ITEMS" else {
            throw CastMediaError(
                .invalidResponse,
                "expected QUEUE_ITEMS, got \(reply["type"]?.stringValue ?? "nothing")"
            )
        }
        let items = (reply["items"]?.arrayValue ?? []).compactMap { try? QueueItem(json: $0) }
        state.withLock { state in
            for item in items { if let id = item.itemID { state.items[id] = item } }
        }
        guard let item = cachedItem(withID: ids[index]) else {
            throw CastMediaError(.invalidResponse, "the receiver did not return item \(ids[index])")
        }
        return item
    }

    /// Sends a queue request for the current media session (its `mediaSessionId` added, as §7.2 requires) and
    /// maps the receiver's error replies to the same errors commands get.
    private func request(_ payload: JSONValue) async throws -> JSONValue {
        var payload = payload
        guard let sessionID = state.withLock({ $0.mediaSessionID }) else {
            throw CastMediaError(.noMediaSession, "the queue needs a media session; load media first")
        }
        payload["mediaSessionId"] = .number(Double(sessionID))
        let type = payload["type"]?.stringValue ?? "QUEUE"
        let reply: JSONValue
        do {
            reply = try await channel.sendMediaRequest(payload, timeout: requestTimeout)
        } catch {
            throw RemoteMediaClient.mediaError(from: error, for: type)
        }
        if let error = RemoteMediaClient.receiverError(in: reply, for: type) { throw error }
        return reply
    }

    /// Drops everything: a new media session (`nil` when there is none).
    func invalidate(mediaSessionID: Int?) {
        state.withLock { state in
            state.mediaSessionID = mediaSessionID
            state.itemIDs = nil
            state.items = [:]
            state.generation += 1
        }
    }

    /// Applies a QUEUE_CHANGE: inserts and removals update the ids in place; anything else refetches later.
    func apply(_ change: QueueChange) {
        state.withLock { state in
            state.generation += 1
            switch change.changeType {
            case "INSERT" where state.itemIDs != nil:
                let position = change.insertBefore.flatMap { state.itemIDs!.firstIndex(of: $0) } ?? state.itemIDs!.count
                state.itemIDs!.insert(contentsOf: change.itemIDs, at: position)
            case "REMOVE" where state.itemIDs != nil:
                state.itemIDs!.removeAll { change.itemIDs.contains($0) }
                for id in change.itemIDs { state.items[id] = nil }
            case "ITEMS_CHANGE":
                for id in change.itemIDs { state.items[id] = nil }
            case "NO_CHANGE":
                break
            default:
                state.itemIDs = nil
            }
        }
    }

    /// Caches the items a status carried whole: some receivers list items by their content id alone, which
    /// QUEUE_GET_ITEMS then tells in full (their titles, images).
    func noteStatus(_ status: MediaStatus) {
        state.withLock { state in
            for item in status.items ?? [] {
                guard let id = item.itemID, item.media.metadata != nil else { continue }
                state.items[id] = item
            }
        }
    }
}

/// The playback rate as a control (GCKUIPlaybackRateController): the current rate and whether the receiver
/// accepts a new one now.
public struct PlaybackRateController: Sendable {
    private let client: RemoteMediaClient

    /// A controller over `client`.
    public init(client: RemoteMediaClient) { self.client = client }

    /// The current rate (1 without a media session).
    public var playbackRate: Double { client.mediaStatus?.playbackRate ?? 1 }

    /// Whether changing the rate is possible now: a media session exists and advertises PLAYBACK_RATE.
    public var isInputEnabled: Bool { client.mediaStatus?.supportedMediaCommands.contains(.playbackRate) ?? false }

    /// Asks for a new rate.
    @discardableResult
    public func setPlaybackRate(_ rate: Double) -> MediaRequest { client.setPlaybackRate(rate) }
}
