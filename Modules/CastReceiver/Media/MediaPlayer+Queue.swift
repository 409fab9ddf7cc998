import CastTransport

/// The result of a queue edit: an INVALID_REQUEST reason, success with the QUEUE_CHANGE to announce, or the
/// queue emptied (the session is IDLE/FINISHED and ends once that final status is announced).
enum QueueEditOutcome {
    case failure(String)
    case success(JSONValue?)
    case emptied(JSONValue)
}

extension MediaPlayer {
    /// QUEUE_INSERT / REMOVE / REORDER / UPDATE / NEXT / PREV / SHUFFLE on the current session.
    mutating func editQueue(_ type: String, _ request: [String: JSONValue], at now: Double) -> QueueEditOutcome {
        guard var session else { return .failure("INVALID_PARAMS") }
        let currentTime = request["currentTime"]?.seconds
        func ids(_ key: String) -> [Int]? { request[key]?.arrayValue?.compactMap(\.intValue) }
        func change(_ changeType: String, _ itemIds: [Int], insertBefore: Int? = nil) -> JSONValue {
            var change: JSONValue = [
                "changeType": .string(changeType), "itemIds": .array(itemIds.map { .number(Double($0)) }),
            ]
            if let insertBefore { change["insertBefore"] = .number(Double(insertBefore)) }
            return change
        }

        switch type {
        case "QUEUE_INSERT":
            // Each item must be new (no itemId) and playable (media with a content URL), as a LOAD's.
            guard let items = request["items"]?.arrayValue?.compactMap(\.objectValue), !items.isEmpty,
                !items.contains(where: { $0["itemId"] != nil && $0["itemId"] != .null }),
                items.allSatisfy({ item in item["media"]?.objectValue.flatMap(MediaFetcher.contentURL(of:)) != nil })
            else { return .failure("INVALID_PARAMS") }
            var position = session.queue.count
            let insertBefore = request["insertBefore"]?.intValue
            if let insertBefore {
                guard let index = session.queue.firstIndex(where: { $0.itemId == insertBefore }) else {
                    return .failure("INVALID_PARAMS")
                }
                position = index
            }
            let entries = items.map { item -> Entry in
                defer { nextItemId += 1 }
                return Entry(itemId: nextItemId, item: item)
            }
            let currentId = session.current.itemId
            session.queue.insert(contentsOf: entries, at: position)
            session.currentIndex = session.queue.firstIndex { $0.itemId == currentId } ?? 0
            session.preloadedItemId = nil
            self.session = session
            if let index = request["currentItemIndex"]?.intValue, entries.indices.contains(index) {
                jump(toItem: entries[index].itemId, at: now, startTime: currentTime)
            } else if let id = request["currentItemId"]?.intValue {
                guard session.queue.contains(where: { $0.itemId == id }) else { return .failure("INVALID_PARAMS") }
                jump(toItem: id, at: now, startTime: currentTime)
            }
            return .success(change("INSERT", entries.map(\.itemId), insertBefore: insertBefore))

        case "QUEUE_REMOVE":
            guard let named = ids("itemIds"), !named.isEmpty else { return .failure("INVALID_PARAMS") }
            // Ids no longer in the queue (another sender removed them first) are skipped, as CAF's queue does:
            // nothing changes for them, so no QUEUE_CHANGE is announced and the sequence number stays.
            let removed = named.filter { id in session.queue.contains { $0.itemId == id } }
            guard !removed.isEmpty else { return .success(nil) }
            let currentId = session.current.itemId
            let removedSet = Set(removed)
            let remaining = session.queue.filter { !removedSet.contains($0.itemId) }
            if remaining.isEmpty {
                // An empty queue ends the media session: the caller announces the final IDLE/FINISHED status.
                session.playerState = "IDLE"
                session.idleReason = "FINISHED"
                session.position = position(of: session, at: now)
                session.anchorTime = now
                session.adBreak = nil
                self.session = session
                return .emptied(change("REMOVE", removed))
            }
            let oldQueue = session.queue
            let oldIndex = session.currentIndex
            session.queue = remaining
            session.preloadedItemId = nil
            if let index = remaining.firstIndex(where: { $0.itemId == currentId }) {
                session.currentIndex = index
                self.session = session
            } else {
                // The current item went away: play the first surviving item that followed it.
                let follower = oldQueue[(oldIndex + 1)...].first { !removedSet.contains($0.itemId) }
                let next =
                    follower.flatMap { item in remaining.firstIndex { $0.itemId == item.itemId } }
                    ?? remaining.count - 1
                session.currentIndex = next
                self.session = session
                start(index: next, at: now)
            }
            if let id = request["currentItemId"]?.intValue,
                self.session?.queue.contains(where: { $0.itemId == id }) == true
            {
                jump(toItem: id, at: now, startTime: currentTime)
            }
            return .success(change("REMOVE", removed))

        case "QUEUE_REORDER":
            guard let order = ids("itemIds"), !order.isEmpty,
                Set(order).count == order.count,
                order.allSatisfy({ id in session.queue.contains { $0.itemId == id } })
            else { return .failure("INVALID_PARAMS") }
            let insertBefore = request["insertBefore"]?.intValue
            if let insertBefore,
                order.contains(insertBefore) || !session.queue.contains(where: { $0.itemId == insertBefore })
            {
                return .failure("INVALID_PARAMS")
            }
            let currentId = session.current.itemId
            let moving = order.compactMap { id in session.queue.first { $0.itemId == id } }
            var rest = session.queue.filter { !order.contains($0.itemId) }
            let position = insertBefore.flatMap { id in rest.firstIndex { $0.itemId == id } } ?? rest.count
            rest.insert(contentsOf: moving, at: position)
            session.queue = rest
            session.currentIndex = rest.firstIndex { $0.itemId == currentId } ?? 0
            session.preloadedItemId = nil
            self.session = session
            if let id = request["currentItemId"]?.intValue, id != currentId {
                jump(toItem: id, at: now, startTime: currentTime)
            }
            var announcement = change("UPDATE", order, insertBefore: insertBefore)
            announcement["reorderItemIds"] = .array(order.map { .number(Double($0)) })
            return .success(announcement)

        case "QUEUE_UPDATE", "QUEUE_NEXT", "QUEUE_PREV", "QUEUE_SHUFFLE":
            var announcement: JSONValue?
            if let mode = request["repeatMode"]?.stringValue {
                guard ["REPEAT_OFF", "REPEAT_ALL", "REPEAT_SINGLE", "REPEAT_ALL_AND_SHUFFLE"].contains(mode) else {
                    return .failure("INVALID_PARAMS")
                }
                session.repeatMode = mode
                session.preloadedItemId = nil
            }
            if let updates = request["items"]?.arrayValue?.compactMap(\.objectValue) {
                var changed: [Int] = []
                for update in updates {
                    guard let id = update["itemId"]?.intValue,
                        let index = session.queue.firstIndex(where: { $0.itemId == id })
                    else { return .failure("INVALID_PARAMS") }
                    var item = update
                    item["itemId"] = nil
                    session.queue[index].item.merge(item) { _, new in new }
                    changed.append(id)
                }
                if !changed.isEmpty { announcement = change("ITEMS_CHANGE", changed) }
            }
            if type == "QUEUE_SHUFFLE" || request["shuffle"]?.boolValue == true {
                let currentId = session.current.itemId
                session.queue.shuffle()
                session.currentIndex = session.queue.firstIndex { $0.itemId == currentId } ?? 0
                announcement = change("UPDATE", session.queue.map(\.itemId))
            }
            self.session = session
            var jumpBy = request["jump"]?.intValue
            if type == "QUEUE_NEXT" { jumpBy = 1 }
            if type == "QUEUE_PREV" { jumpBy = -1 }
            if let id = request["currentItemId"]?.intValue {
                guard session.queue.contains(where: { $0.itemId == id }) else { return .failure("INVALID_PARAMS") }
                jump(toItem: id, at: now, startTime: currentTime)
            } else if let jumpBy, jumpBy != 0 {
                var target = session.currentIndex + jumpBy
                if session.repeatMode != "REPEAT_OFF" {
                    target = ((target % session.queue.count) + session.queue.count) % session.queue.count
                }
                guard session.queue.indices.contains(target) else { return .failure("END_OF_QUEUE") }
                jump(toItem: session.queue[target].itemId, at: now, startTime: currentTime)
            } else if let currentTime, self.session?.playerState != "IDLE" {
                self.session?.position = max(0, currentTime)
                self.session?.anchorTime = now
            }
            return .success(announcement)

        default:
            return .failure("INVALID_COMMAND")
        }
    }

    private mutating func jump(toItem id: Int, at now: Double, startTime: Double?) {
        guard let index = session?.queue.firstIndex(where: { $0.itemId == id }) else { return }
        let keepPaused = session?.playerState == "PAUSED"
        start(index: index, at: now, startTime: startTime, autoplay: keepPaused ? false : true)
    }
}
