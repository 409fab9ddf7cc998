import CastLogging
@_spi(CastInternal) import CastTransport
import Logging
import Synchronization

/// What changed in a ``RemoteMediaClient`` (GCKRemoteMediaClientListener's callbacks, as values).
public enum RemoteMediaClientEvent: Sendable {
    /// A new status arrived (`nil`: the media session ended).
    case statusUpdated(MediaStatus?)
    /// The media's metadata changed (a new item, or new metadata).
    case metadataUpdated(MediaMetadata?)
    /// The queue changed (items, order or current item).
    case queueUpdated
    /// The preloaded item changed.
    case preloadStatusUpdated(itemID: Int?)
    /// The receiver announced a queue change (QUEUE_CHANGE).
    case queueChanged(QueueChange)
}

/// Controls media on the receiver app (GCKRemoteMediaClient): load, transport controls, seek, rate, tracks,
/// queue, ad skipping; and follows its status.
///
/// Every command returns a ``MediaRequest`` at once: `try await client.pause().response()`. Commands that the
/// current status does not support (``MediaStatus/supportedMediaCommands``) or that need a media session when
/// there is none fail locally, without a round trip.
public final class RemoteMediaClient: Sendable {
    private struct State {
        /// One word (``MediaStatus`` is copy-on-write), so the thousands of idle sessions with no media pay nothing.
        var status: MediaStatus?
        /// The newest reply whose status was applied, and the newest reply ``receive(_:)`` has seen (with
        /// ``MediaChannel/deliversRepliesInOrder``): together they put statuses in arrival order.
        var appliedReplyID = 0
        var receivedReplyID = 0
        /// The lowest and highest `requestId` this client's requests went out with: a reply outside them is
        /// another sender's (our connection starts its ids at a random one, other senders usually at 1).
        var lowestOwnRequestID = Int.max
        var highestOwnRequestID = 0
        /// The last reply read in order as another sender's (see ``apply(statusMessage:inArrivalOrder:)``).
        var lastReplyReadAsOthers = 0
        var statusTime: Double = 0
        /// The `media` and `items` last seen in this media session, which the next status may repeat; one word
        /// like `status`.
        var decodedParts: CopyOnWrite<MediaStatus.DecodedParts>?
        var nextRequestID = 1
        var inFlight: [String: MediaRequest] = [:]
        /// The GET_STATUS in flight, and how the last one failed and when (``readStatusIfUnknown()``).
        var statusReading: MediaRequest?
        var statusReadingFailure: (error: CastMediaError, at: Double)?
        /// Sent requests a broadcast status may answer, oldest first.
        var awaitingBroadcast: [AwaitedBroadcast] = []
        var nextAwaitedBroadcast = 0
        /// The live media ``togglePlayback()`` stopped, which its next toggle loads again, and its media session.
        var stoppedLive: (media: MediaInformation, session: Int)?
        /// Whether a reply carrying a request's id has come: the receiver replies, and does not only broadcast.
        var hasRepliedWithIDs = false

        mutating func forgetBroadcastAnswer(to request: MediaRequest) {
            guard !awaitingBroadcast.isEmpty else { return }
            awaitingBroadcast.removeAll { $0.request === request }
            // No buffer kept by an idle client.
            if awaitingBroadcast.isEmpty { awaitingBroadcast = [] }
        }
    }

    /// A sent request a broadcast status may answer (``BroadcastAnswer``), for receivers that report a command only by
    /// broadcasting the new status: the request ends with the first that shows what it asked for, or with its reply,
    /// whichever comes first.
    private struct AwaitedBroadcast {
        let request: MediaRequest
        let answer: BroadcastAnswer
        /// Its place in the order requests were sent.
        let sequence: Int
    }

    private let channel: any MediaChannel
    private let now: @Sendable () -> Double
    private let logger: Logger
    private let state = Mutex(State())
    private let statusBroadcaster = EventBroadcaster<MediaStatus?>()
    private let eventBroadcaster = EventBroadcaster<RemoteMediaClientEvent>()
    /// Per-request reply timeout; `nil` uses the channel's default.
    public let requestTimeout: Duration?

    /// The queue, fetched lazily in pages.
    public let queue: MediaQueue

    /// Creates a client on `channel`.
    ///
    /// - Parameters:
    ///   - channel: Where requests go.
    ///   - requestTimeout: The reply timeout for each request; `nil` for the channel's default.
    ///   - now: Monotonic seconds, for ``approximateStreamPosition``; injectable for tests.
    ///   - logger: Silent by default.
    public init(
        channel: any MediaChannel,
        requestTimeout: Duration? = nil,
        now: @escaping @Sendable () -> Double = RemoteMediaClient.monotonicSeconds,
        logger: Logger = .castDisabled
    ) {
        self.channel = channel
        self.requestTimeout = requestTimeout
        self.now = now
        self.logger = logger.withCategory(CastLogCategory.media)
        self.queue = MediaQueue(channel: channel, requestTimeout: requestTimeout, logger: logger)
    }

    /// Seconds on the continuous clock since the first call.
    public static let monotonicSeconds: @Sendable () -> Double = {
        let origin = ContinuousClock.now
        return {
            (ContinuousClock.now - origin).inSeconds
        }
    }()

    // MARK: - Status

    /// The latest status; `nil` when there is no media session.
    public var mediaStatus: MediaStatus? { state.withLock { $0.status } }

    /// Status updates, latest wins: a slow consumer sees the newest status, not a backlog.
    public func statusUpdates() -> CastEventStream<MediaStatus?> {
        statusBroadcaster.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Calls `handler` synchronously with each status as it is applied (no task per status; it must be quick):
    /// for a sibling module mirroring this client's status. Answers the id ``removeStatusHandler(_:)`` takes.
    package func addStatusHandler(_ handler: @escaping @Sendable (MediaStatus?) -> Void) -> Int {
        statusBroadcaster.addHandler(handler)
    }

    /// Stops calling a handler of ``addStatusHandler(_:)``.
    package func removeStatusHandler(_ id: Int) { statusBroadcaster.removeHandler(id) }

    /// Every event, in order.
    public func events() -> CastEventStream<RemoteMediaClientEvent> { eventBroadcaster.makeStream() }

    /// The position now, extrapolated from the last status and the playback rate while playing
    /// (GCKUIMediaController's lastKnownStreamPosition); clamped to the duration.
    public var approximateStreamPosition: Double {
        let time = now()
        return state.withLock { state in
            guard let status = state.status else { return 0 }
            var position = status.currentTime
            if status.playerState == .playing, status.adBreakStatus == nil {
                position += (time - state.statusTime) * status.playbackRate
            }
            if let duration = status.media?.duration, duration > 0 { position = min(position, duration) }
            return max(0, position)
        }
    }

    /// The ad break playing, its clip and break times extrapolated from the last status while playing (a device
    /// reports them when something changes, not as the clip plays): so ``AdBreakStatus/isSkippable`` turns true
    /// when the clip reaches `whenSkippable`, without a new status.
    public var approximateAdBreakStatus: AdBreakStatus? {
        let time = now()
        return state.withLock { state in
            guard let status = state.status, var ad = status.adBreakStatus else { return nil }
            if status.playerState == .playing {
                let elapsed = max(0, time - state.statusTime)
                ad.currentBreakClipTime = ad.currentBreakClipTime.map { $0 + elapsed }
                ad.currentBreakTime = ad.currentBreakTime.map { $0 + elapsed }
            }
            return ad
        }
    }

    /// The last known player state (``PlayerState/loading`` while a load runs).
    public var playerState: PlayerState {
        state.withLock { state in
            guard let status = state.status else { return .idle }
            return status.shownPlayerState
        }
    }

    /// Feeds one inbound media-namespace message (MEDIA_STATUS, QUEUE_CHANGE, …) to the client. The session
    /// calls this for every message from the app; replies to this client's requests may come through here too.
    public func receive(_ message: JSONValue) {
        switch message["type"]?.stringValue {
        case "MEDIA_STATUS":
            guard (message["requestId"]?.intValue ?? 0) == 0 else {
                apply(statusMessage: message, inArrivalOrder: true)
                return
            }
            // Only requests sent before this broadcast was read may take it as their answer (one sent while it
            // is being applied, by a caller that saw its events, came after it).
            let sentBefore = state.withLock { $0.nextAwaitedBroadcast }
            let status = apply(statusMessage: message, inArrivalOrder: true)
            answerByBroadcast(status, empty: message["status"]?.arrayValue?.isEmpty == true, sentBefore: sentBefore)
        case "QUEUE_CHANGE":
            let sentBefore = state.withLock { $0.nextAwaitedBroadcast }
            let change = QueueChange(json: message)
            queue.apply(change)
            eventBroadcaster.yield(.queueChanged(change))
            eventBroadcaster.yield(.queueUpdated)
            answerByQueueChange(change, sentBefore: sentBefore)
        default:
            break
        }
    }

    /// Forgets the status (the session ended or the app went away).
    public func reset() {
        let had = state.withLock { state -> Bool in
            defer {
                state.status = nil
                state.decodedParts = nil
            }
            return state.status != nil
        }
        queue.invalidate(mediaSessionID: nil)
        if had {
            statusBroadcaster.yield(nil)
            eventBroadcaster.yield(.statusUpdated(nil))
        }
    }

    @discardableResult
    private func apply(statusMessage message: JSONValue, inArrivalOrder: Bool = false) -> MediaStatus? {
        let ordered = channel.deliversRepliesInOrder
        var replyID = message["requestId"]?.intValue ?? 0
        if ordered, replyID > 0 {
            let applied = state.withLock { state -> Bool in
                // Another sender's reply, shown to us by a device that addresses replies to `*`: a status like any
                // unsolicited one. Counted as ours, its id would put our own replies' statuses behind it.
                guard replyID >= state.lowestOwnRequestID, replyID <= state.highestOwnRequestID else {
                    if inArrivalOrder { state.lastReplyReadAsOthers = replyID }
                    replyID = 0
                    return false
                }
                // Ours, read in order before its id was noted (the reply beat `startMediaRequest`'s return): it
                // arrived all the same.
                if inArrivalOrder || state.lastReplyReadAsOthers == replyID {
                    state.receivedReplyID = max(state.receivedReplyID, replyID)
                }
                // A reply its request already applied: only its arrival is noted; it is not decoded again.
                return inArrivalOrder && replyID <= state.appliedReplyID
            }
            if applied { return nil }
        }
        let entries = message["status"]?.arrayValue ?? []
        let time = now()
        let (previousParts, known) = state.withLock { ($0.decodedParts?.value, $0.status?.mediaSessionID) }
        // Each entry records into parts of its own: only the one taken becomes the record. Of several media
        // sessions, the one ``MediaStatus/prefers(_:over:known:)`` picks.
        var parsed: MediaStatus?
        var parts = MediaStatus.DecodedParts()
        for entry in entries {
            var entryParts = MediaStatus.DecodedParts()
            guard let status = try? MediaStatus(json: entry, reusing: previousParts, recording: &entryParts) else {
                continue
            }
            if let current = parsed, !MediaStatus.prefers(status, over: current, known: known) { continue }
            parsed = status
            parts = entryParts
        }
        let outcome = state.withLock { state -> (previous: MediaStatus?, current: MediaStatus?)? in
            if ordered {
                // A reply is applied once, by whichever path sees it first, and never after a newer reply; an
                // unsolicited status only once the in-order stream has caught up with every applied reply.
                if inArrivalOrder, replyID > 0 { state.receivedReplyID = max(state.receivedReplyID, replyID) }
                if replyID > 0 {
                    guard replyID > state.appliedReplyID else { return nil }
                    state.appliedReplyID = replyID
                } else if state.appliedReplyID > state.receivedReplyID {
                    return nil
                }
            }
            let previous = state.status
            if var status = parsed {
                // Another session playing: the stopped stream's own statuses (sent before the STOP) do not count.
                if let stopped = state.stoppedLive, status.playerState != .idle,
                    status.mediaSessionID != stopped.session
                {
                    state.stoppedLive = nil
                }
                // Receivers may omit `media` and `items` when they have not changed: both are carried forward
                // within a media session, with their record.
                if let previous, previous.mediaSessionID == status.mediaSessionID {
                    if status.media == nil {
                        status.media = previous.media
                        parts.media = parts.media ?? state.decodedParts?.value.media
                    }
                    if status.items == nil {
                        status.items = previous.items
                        parts.items = parts.items ?? state.decodedParts?.value.items
                    }
                }
                parsed = status
            }
            state.status = parsed
            state.statusTime = time
            state.decodedParts = parsed == nil ? nil : CopyOnWrite(parts)
            return (previous, parsed)
        }
        // Superseded: the request still answers with its own status, which changes nothing here.
        guard let (previous, current) = outcome else { return parsed }
        if previous?.mediaSessionID != current?.mediaSessionID {
            queue.invalidate(mediaSessionID: current?.mediaSessionID)
        }
        let queueChanged = previous?.items != current?.items || previous?.currentItemID != current?.currentItemID
        if let current, current.items != nil, queueChanged {
            queue.noteStatus(current)
        }
        statusBroadcaster.yield(current)
        eventBroadcaster.yield(.statusUpdated(current))
        if previous?.media?.metadata != current?.media?.metadata || previous?.mediaSessionID != current?.mediaSessionID
        {
            eventBroadcaster.yield(.metadataUpdated(current?.media?.metadata))
        }
        if queueChanged {
            eventBroadcaster.yield(.queueUpdated)
        }
        if previous?.preloadedItemID != current?.preloadedItemID {
            eventBroadcaster.yield(.preloadStatusUpdated(itemID: current?.preloadedItemID))
        }
        return current
    }

    /// Ends the requests a broadcast status answers (see ``AwaitedBroadcast``).
    private func answerByBroadcast(_ status: MediaStatus?, empty: Bool, sentBefore: Int) {
        // A status message whose entries did not decode says nothing; one with no entries says there is no session.
        guard status != nil || empty else { return }
        let (answered, failed) = takeAwaitingBroadcast(sentBefore: sentBefore) { $0.verdict(on: status) }
        for request in answered {
            logger.debug(
                "a broadcast status answered a request",
                metadata: ["cast.type": "\(request.kind)", CastLogMetadataKey.requestID: "\(request.id)"]
            )
            request.finish(.completed(status))
        }
        guard !failed.isEmpty else { return }
        let failure = CastMediaError(.loadFailed, "the receiver could not load the media (it went idle with an error)")
        guard state.withLock({ $0.hasRepliedWithIDs }) else {
            for request in failed { request.finish(.failed(failure)) }
            return
        }
        // A device that has answered a request with its id sends its LOAD_FAILED, with the reason, right after this
        // broadcast, and that reply ends the request; some never send it. A status read sent now is answered after
        // that reply would be: whatever it did not end, the read's answer ends (no timer, no second timeout).
        let reading = requestStatus()
        let fail: @Sendable () -> Void = { for request in failed { request.finish(.failed(failure)) } }
        reading.onCompletion { _ in fail() }
        reading.onFailure { _ in fail() }
        reading.onAbort { _ in fail() }
    }

    /// Ends the queue edits a QUEUE_CHANGE announces, with the current status, on a device that has never replied
    /// with a request's id. One that replies sends its reply after the change and the status that shows it.
    private func answerByQueueChange(_ change: QueueChange, sentBefore: Int) {
        guard !state.withLock({ $0.hasRepliedWithIDs }) else { return }
        let (answered, _) = takeAwaitingBroadcast(sentBefore: sentBefore) {
            $0.isAnswered(by: change) ? .answered : .neither
        }
        guard !answered.isEmpty else { return }
        let status = mediaStatus
        for request in answered { request.finish(.completed(status)) }
    }

    /// Takes out of the awaited requests sent before `sentBefore` those `verdict` answers or fails (and those
    /// already finished otherwise).
    private func takeAwaitingBroadcast(
        sentBefore: Int,
        _ verdict: (BroadcastAnswer) -> BroadcastAnswer.Verdict
    ) -> (answered: [MediaRequest], failed: [MediaRequest]) {
        state.withLock { state in
            guard !state.awaitingBroadcast.isEmpty else { return ([], []) }
            var answered: [MediaRequest] = []
            var failed: [MediaRequest] = []
            state.awaitingBroadcast.removeAll { waiting in
                if waiting.request.isFinished { return true }
                guard waiting.sequence < sentBefore else { return false }
                switch verdict(waiting.answer) {
                case .answered: answered.append(waiting.request)
                case .failed: failed.append(waiting.request)
                case .neither: return false
                }
                return true
            }
            // No buffer kept by an idle client.
            if state.awaitingBroadcast.isEmpty { state.awaitingBroadcast = [] }
            return (answered, failed)
        }
    }

    // MARK: - Sending

    private func makeRequest(_ kind: String) -> MediaRequest {
        let id = state.withLock { state in
            defer { state.nextRequestID += 1 }
            return state.nextRequestID
        }
        return MediaRequest(id: id, kind: kind)
    }

    private func failed(_ kind: String, _ error: CastMediaError) -> MediaRequest {
        let request = makeRequest(kind)
        request.finish(.failed(error))
        return request
    }

    /// Sends `payload` of `type`, after checking the session and command support locally.
    ///
    /// - Parameters:
    ///   - needsSession: Whether a media session must exist; its id is added as `mediaSessionId`.
    ///   - requires: A command bit the status must advertise.
    ///   - replaces: Requests of the same replacement group still in flight are aborted as replaced.
    private func send(
        _ type: String,
        _ payload: JSONValue = [:],
        needsSession: Bool = true,
        requires command: MediaCommands? = nil,
        replaces group: String? = nil
    ) -> MediaRequest {
        // Room for `type` and `mediaSessionId` made at once (adding them one at a time grew the dictionary twice).
        assert(payload.objectValue != nil, "a media request's payload is a JSON object")
        var members = payload.objectValue ?? [:]
        members.reserveCapacity(members.count + 2)
        members["type"] = .string(type)
        let before = mediaStatus
        if needsSession {
            guard let status = before else {
                return failed(type, CastMediaError(.noMediaSession, "\(type) needs a media session; load media first"))
            }
            if let command, !status.supportedMediaCommands.contains(command) {
                return failed(type, CastMediaError(.notSupported, "the receiver does not support \(type) now"))
            }
            members["mediaSessionId"] = .number(Double(status.mediaSessionID))
        }
        let request = makeRequest(type)
        if let group {
            let replaced = state.withLock { state -> MediaRequest? in
                defer { state.inFlight[group] = request }
                return state.inFlight[group]
            }
            replaced?.replace(by: request)
        }
        if logger.logLevel <= .debug {
            var logger = self.logger
            logger[metadataKey: CastLogMetadataKey.requestID] = "\(request.id)"
            logger.debug("sending media request", metadata: ["cast.type": "\(type)"])
        }
        // Awaiting a broadcast answer before it is sent: the answer may be read before `startMediaRequest` returns.
        let answer = BroadcastAnswer(
            to: type,
            members,
            before: before,
            position: type == "SEEK" ? approximateStreamPosition : 0
        )
        if let answer {
            state.withLock { state in
                state.awaitingBroadcast.append(
                    AwaitedBroadcast(request: request, answer: answer, sequence: state.nextAwaitedBroadcast)
                )
                state.nextAwaitedBroadcast += 1
            }
        }
        // Sent here, synchronously, so commands reach the receiver in the order they were issued.
        let reply: MediaReply
        do {
            reply = try channel.startMediaRequest(.object(members), timeout: requestTimeout)
        } catch {
            if answer != nil { state.withLock { $0.forgetBroadcastAnswer(to: request) } }
            request.finish(.failed(Self.mediaError(from: error, for: type)))
            return request
        }
        if let id = reply.requestID {
            state.withLock {
                $0.lowestOwnRequestID = min($0.lowestOwnRequestID, id)
                $0.highestOwnRequestID = max($0.highestOwnRequestID, id)
            }
        }
        // Finished where the reply is read (the connection's event loop), in the same turn: no task per request.
        // Holds the client until the reply or its timeout; a weak capture would give the client a side table, and
        // make every retain of it a slow one.
        reply.whenComplete(executor: channel.replyExecutor) { result in
            let outcome: MediaRequest.Outcome
            switch result {
            case .success(let json):
                // A status in reply (errors carry the id even on devices that report statuses only by broadcast).
                if json["type"]?.stringValue == "MEDIA_STATUS" { self.state.withLock { $0.hasRepliedWithIDs = true } }
                outcome = self.interpret(json, for: type)
            case .failure(let error) where error is CancellationError:
                outcome = .aborted(.cancelled)
            case .failure(let error):
                outcome = .failed(Self.mediaError(from: error, for: type))
            }
            if group != nil || answer != nil {
                self.state.withLock { state in
                    if let group, state.inFlight[group] === request { state.inFlight[group] = nil }
                    state.forgetBroadcastAnswer(to: request)
                }
            }
            request.finish(outcome)
        }
        return request
    }

    static func mediaError(from error: any Error, for type: String) -> CastMediaError {
        switch error {
        case let error as CastMediaError: return error
        case let error as CastTransportError: return mediaError(for: error)
        default: return CastMediaError(.receiverError, "\(type) failed: \(error)", cause: error)
        }
    }

    static func mediaError(for error: CastTransportError) -> CastMediaError {
        switch error.code {
        case .requestTimedOut: return CastMediaError(.timedOut, error.message, cause: error)
        case .connectionClosed: return CastMediaError(.connectionLost, error.message, cause: error)
        // Refused before it was sent: the request itself is at fault, not the connection.
        case .messageTooLarge, .invalidPayload: return CastMediaError(.invalidRequest, error.message, cause: error)
        default: return CastMediaError(.notConnected, error.message, cause: error)
        }
    }

    /// Turns a reply into an outcome and applies any status it carries.
    func interpret(_ reply: JSONValue, for type: String) -> MediaRequest.Outcome {
        switch reply["type"]?.stringValue {
        case "MEDIA_STATUS":
            let status = apply(statusMessage: reply)
            // A load answered with its session already idle with an error did not load.
            if type == "LOAD" || type == "QUEUE_LOAD", let status, status.playerState == .idle,
                status.idleReason == .error
            {
                let message = "the receiver could not load the media (it answered idle with an error)"
                return .failed(CastMediaError(.loadFailed, message))
            }
            return .completed(status)
        case "QUEUE_ITEM_IDS", "QUEUE_ITEMS", "SESSION_STATE":
            return .completed(mediaStatus)
        default:
            return .failed(
                Self.receiverError(in: reply, for: type)
                    ?? CastMediaError(
                        .invalidResponse,
                        "unexpected reply to \(type): \(reply["type"]?.stringValue ?? "no type")"
                    )
            )
        }
    }

    /// The error a reply reports (LOAD_FAILED, LOAD_CANCELLED, INVALID_PLAYER_STATE, INVALID_REQUEST, ERROR), or
    /// `nil` for any other reply.
    static func receiverError(in reply: JSONValue, for type: String) -> CastMediaError? {
        let reason = reply["reason"]?.stringValue
        let code = reply["detailedErrorCode"]?.intValue
        switch reply["type"]?.stringValue {
        case "LOAD_FAILED":
            return CastMediaError(
                .loadFailed,
                "the receiver could not load the media",
                receiverReason: reason,
                detailedErrorCode: code
            )
        case "LOAD_CANCELLED":
            return CastMediaError(.loadCancelled, "a newer load replaced this one", receiverReason: reason)
        case "INVALID_PLAYER_STATE":
            return CastMediaError(
                .invalidPlayerState,
                "\(type) is not valid in the player's state",
                receiverReason: reason
            )
        case "INVALID_REQUEST":
            // The reasons a person can act on, said in words.
            let message =
                switch reason {
                case "END_OF_QUEUE": "there is no item there: the queue ends (the receiver rejected \(type))"
                case "INVALID_MEDIA_SESSION_ID":
                    "the media changed meanwhile (the receiver rejected \(type) for an old media session)"
                default: "the receiver rejected \(type)"
                }
            return CastMediaError(.invalidRequest, message, receiverReason: reason, detailedErrorCode: code)
        case "ERROR":
            return CastMediaError(
                .receiverError,
                "the receiver reported an error for \(type)",
                receiverReason: reason,
                detailedErrorCode: code
            )
        default:
            return nil
        }
    }

    private func custom(_ payload: JSONValue, _ customData: JSONValue?) -> JSONValue {
        var payload = payload
        if let customData { payload["customData"] = customData }
        return payload
    }

    // MARK: - Commands

    /// Loads media or a queue (LOAD). A load still in flight is aborted as replaced.
    @discardableResult
    public func load(_ request: LoadRequestData) -> MediaRequest {
        if request.media == nil, request.queueData?.items.isEmpty ?? true {
            return failed("LOAD", CastMediaError(.invalidRequest, "a load needs media or a non-empty queue"))
        }
        if let queue = request.queueData, !queue.items.isEmpty, !queue.items.indices.contains(queue.startIndex ?? 0) {
            return failed(
                "LOAD",
                CastMediaError(.invalidRequest, "the queue's start index \(queue.startIndex ?? 0) is out of range")
            )
        }
        return send("LOAD", request.payload, needsSession: false, replaces: "LOAD")
    }

    /// Loads one media item.
    @discardableResult
    public func loadMedia(_ media: MediaInformation, autoplay: Bool = true, currentTime: Double? = nil) -> MediaRequest
    {
        var request = LoadRequestData(media: media)
        request.autoplay = autoplay
        request.currentTime = currentTime
        return load(request)
    }

    /// Resumes playback (PLAY).
    @discardableResult
    public func play(customData: JSONValue? = nil) -> MediaRequest { send("PLAY", custom([:], customData)) }

    /// Pauses (PAUSE); fails locally with ``CastMediaError/Code/notSupported`` for live streams.
    @discardableResult
    public func pause(customData: JSONValue? = nil) -> MediaRequest {
        send("PAUSE", custom([:], customData), requires: .pause)
    }

    /// Stops playback and ends the media session (STOP).
    @discardableResult
    public func stop(customData: JSONValue? = nil) -> MediaRequest { send("STOP", custom([:], customData)) }

    /// Pauses what plays and plays what does not: a play/pause button. Media that cannot pause now (a live stream
    /// whose status lacks the pause command) stops instead, and the next toggle loads it again, at the live edge,
    /// unless other media played meanwhile (``stoppedLiveMedia``).
    @discardableResult
    public func togglePlayback() -> MediaRequest {
        let status = mediaStatus
        switch status?.playerState {
        case .playing?, .buffering?:
            guard let status, status.isLiveStream, !status.supportedMediaCommands.contains(.pause) else {
                return pause()
            }
            let request = stop()
            if let media = status.media { state.withLock { $0.stoppedLive = (media, status.mediaSessionID) } }
            return request
        case nil, .idle?:
            if let media = stoppedLiveMedia { return loadMedia(media) }
            return play()
        default:
            return play()
        }
    }

    /// The live media the last ``togglePlayback()`` stopped, which the next toggle loads again while the receiver
    /// plays nothing else; set it to carry a toggle across processes (as `cast toggle` does), `nil` to forget it.
    public var stoppedLiveMedia: MediaInformation? {
        get { state.withLock { $0.stoppedLive?.media } }
        // Set from outside (another process's toggle): any session playing later replaces it.
        set { state.withLock { $0.stoppedLive = newValue.map { ($0, -1) } } }
    }

    /// Seeks (SEEK). A seek still in flight is aborted as replaced.
    @discardableResult
    public func seek(_ options: SeekOptions) -> MediaRequest {
        var payload: JSONValue =
            options.isRelative
            ? ["relativeTime": .number(options.interval)] : ["currentTime": .number(options.interval)]
        if options.resumeState != .unchanged { payload["resumeState"] = .string(options.resumeState.rawValue) }
        return send("SEEK", custom(payload, options.customData), requires: .seek, replaces: "SEEK")
    }

    /// Sets the playback rate (SET_PLAYBACK_RATE); rates outside 0.5…2 fail locally.
    @discardableResult
    public func setPlaybackRate(_ rate: Double, customData: JSONValue? = nil) -> MediaRequest {
        guard (0.5...2.0).contains(rate) else {
            return failed(
                "SET_PLAYBACK_RATE",
                CastMediaError(.invalidRequest, "playback rate \(rate) is outside 0.5…2")
            )
        }
        return send("SET_PLAYBACK_RATE", custom(["playbackRate": .number(rate)], customData), requires: .playbackRate)
    }

    /// Sets the stream volume (SET_VOLUME on the media namespace), 0…1.
    @discardableResult
    public func setStreamVolume(_ level: Double, customData: JSONValue? = nil) -> MediaRequest {
        guard (0...1).contains(level) else {
            return failed("SET_VOLUME", CastMediaError(.invalidRequest, "volume \(level) is outside 0…1"))
        }
        return send("SET_VOLUME", custom(["volume": ["level": .number(level)]], customData), requires: .streamVolume)
    }

    /// Mutes or unmutes the stream.
    @discardableResult
    public func setStreamMuted(_ muted: Bool, customData: JSONValue? = nil) -> MediaRequest {
        send("SET_VOLUME", custom(["volume": ["muted": .bool(muted)]], customData), requires: .streamMute)
    }

    /// Chooses the active tracks (EDIT_TRACKS_INFO); `[]` turns every track off.
    @discardableResult
    public func setActiveTrackIDs(_ ids: [Int]) -> MediaRequest {
        send("EDIT_TRACKS_INFO", ["activeTrackIds": .array(ids.map { .number(Double($0)) })], requires: .editTracks)
    }

    /// Sets how text tracks look (EDIT_TRACKS_INFO with `textTrackStyle`).
    @discardableResult
    public func setTextTrackStyle(_ style: TextTrackStyle) -> MediaRequest {
        send("EDIT_TRACKS_INFO", ["textTrackStyle": style.json], requires: .editTracks)
    }

    /// Skips the ad clip that is playing (SKIP_AD); fails locally before the clip is skippable.
    @discardableResult
    public func skipAd() -> MediaRequest {
        let ad = approximateAdBreakStatus
        if mediaStatus != nil, !(mediaStatus?.supportedMediaCommands.contains(.skipAd) ?? false),
            ad?.isSkippable != true
        {
            let reason =
                ad == nil
                ? "no ad is playing"
                : ad?.secondsUntilSkippable.map { "the ad can be skipped in \(Int($0.rounded(.up))) s" }
                    ?? "this ad cannot be skipped"
            return failed("SKIP_AD", CastMediaError(.notSupported, reason))
        }
        // Skippable by now even when the last status, from before, did not offer SKIP_AD yet.
        return send("SKIP_AD", requires: ad?.isSkippable == true ? nil : .skipAd)
    }

    /// Asks for a fresh status (GET_STATUS).
    @discardableResult
    public func requestStatus() -> MediaRequest {
        let request = send("GET_STATUS", needsSession: false)
        guard !request.isFinished else { return request }
        state.withLock { $0.statusReading = request }
        request.onFailure { error in self.noteStatusReading(request, failure: error) }
        request.onCompletion { _ in self.noteStatusReading(request, failure: nil) }
        request.onAbort { _ in self.noteStatusReading(request, failure: nil) }
        return request
    }

    /// Notes how a GET_STATUS ended, for ``readStatusIfUnknown()``.
    private func noteStatusReading(_ request: MediaRequest, failure: CastMediaError?) {
        let time = now()
        state.withLock { state in
            if state.statusReading === request { state.statusReading = nil }
            state.statusReadingFailure = failure.map { ($0, time) }
        }
    }

    /// How long a failed GET_STATUS stands for the status read (``readStatusIfUnknown()``).
    static let statusReadingFailureLifetime = 1.0

    /// Reads the status when none is known. A join reads it before it returns, so this asks only when that read
    /// failed, and then throws the error the app meets (a command would otherwise fail as `noMediaSession`). A
    /// GET_STATUS in flight is waited for, and one that failed a moment ago is the answer: a join's read that timed
    /// out would otherwise make a command wait a second timeout.
    package func readStatusIfUnknown() async throws {
        guard mediaStatus == nil else { return }
        let (reading, failure) = state.withLock { ($0.statusReading, $0.statusReadingFailure) }
        if let reading {
            try await reading.response()
        } else if let failure, now() - failure.at <= Self.statusReadingFailureLifetime {
            throw failure.error
        } else {
            try await requestStatus().response()
        }
    }

    // MARK: - Queue commands

    /// Loads a queue (QUEUE_LOAD).
    @discardableResult
    public func queueLoad(
        _ items: [QueueItem],
        startIndex: Int = 0,
        repeatMode: RepeatMode = .off,
        currentTime: Double? = nil,
        customData: JSONValue? = nil
    ) -> MediaRequest {
        guard !items.isEmpty, items.indices.contains(startIndex) else {
            return failed("QUEUE_LOAD", CastMediaError(.invalidRequest, "a queue needs items and a valid start index"))
        }
        var payload: JSONValue = [
            "items": .array(
                items.map {
                    var item = $0; item.itemID = nil; return item.json
                }
            ),
            "startIndex": .number(Double(startIndex)),
            "repeatMode": .string(repeatMode.rawValue),
        ]
        if let currentTime { payload["currentTime"] = .number(currentTime) }
        return send("QUEUE_LOAD", custom(payload, customData), needsSession: false, replaces: "LOAD")
    }

    /// Inserts items before `itemID` (QUEUE_INSERT), or appends them when `itemID` is `nil`.
    @discardableResult
    public func queueInsert(_ items: [QueueItem], before itemID: Int? = nil, customData: JSONValue? = nil)
        -> MediaRequest
    {
        guard !items.isEmpty else {
            return failed("QUEUE_INSERT", CastMediaError(.invalidRequest, "nothing to insert"))
        }
        var payload: JSONValue = [
            "items": .array(
                items.map {
                    var item = $0; item.itemID = nil; return item.json
                }
            )
        ]
        if let itemID { payload["insertBefore"] = .number(Double(itemID)) }
        return send("QUEUE_INSERT", custom(payload, customData))
    }

    /// Inserts one item before `itemID` (or appends it) and plays it at once.
    @discardableResult
    public func queueInsertAndPlay(_ item: QueueItem, before itemID: Int? = nil) -> MediaRequest {
        var entry = item
        entry.itemID = nil
        var payload: JSONValue = ["items": [entry.json], "currentItemIndex": 0]
        if let itemID { payload["insertBefore"] = .number(Double(itemID)) }
        return send("QUEUE_INSERT", payload)
    }

    /// Removes items (QUEUE_REMOVE).
    @discardableResult
    public func queueRemove(_ itemIDs: [Int]) -> MediaRequest {
        guard !itemIDs.isEmpty else {
            return failed("QUEUE_REMOVE", CastMediaError(.invalidRequest, "nothing to remove"))
        }
        return send("QUEUE_REMOVE", ["itemIds": .array(itemIDs.map { .number(Double($0)) })])
    }

    /// Moves items, in the given order, before `itemID` or to the end (QUEUE_REORDER).
    @discardableResult
    public func queueReorder(_ itemIDs: [Int], before itemID: Int? = nil) -> MediaRequest {
        guard !itemIDs.isEmpty else {
            return failed("QUEUE_REORDER", CastMediaError(.invalidRequest, "nothing to move"))
        }
        var payload: JSONValue = ["itemIds": .array(itemIDs.map { .number(Double($0)) })]
        if let itemID { payload["insertBefore"] = .number(Double(itemID)) }
        return send("QUEUE_REORDER", payload)
    }

    /// Moves one item before another (or to the end).
    @discardableResult
    public func queueMove(itemID: Int, before other: Int?) -> MediaRequest { queueReorder([itemID], before: other) }

    /// Plays the item with `itemID` (QUEUE_UPDATE `currentItemId`).
    @discardableResult
    public func queueJump(toItemID itemID: Int, playPosition: Double? = nil) -> MediaRequest {
        var payload: JSONValue = ["currentItemId": .number(Double(itemID))]
        if let playPosition { payload["currentTime"] = .number(playPosition) }
        return send("QUEUE_UPDATE", payload)
    }

    /// Plays the next item (QUEUE_UPDATE `jump: 1`); fails locally when the status offers no next item.
    @discardableResult
    public func queueNext() -> MediaRequest {
        if let status = mediaStatus, !status.supportedMediaCommands.contains(.queueNext) {
            return failed("QUEUE_UPDATE", CastMediaError(.notSupported, "there is no next item in the queue"))
        }
        return send("QUEUE_UPDATE", ["jump": 1], requires: .queueNext)
    }

    /// Plays the previous item (QUEUE_UPDATE `jump: -1`).
    @discardableResult
    public func queuePrevious() -> MediaRequest {
        if let status = mediaStatus, !status.supportedMediaCommands.contains(.queuePrevious) {
            return failed("QUEUE_UPDATE", CastMediaError(.notSupported, "there is no previous item in the queue"))
        }
        return send("QUEUE_UPDATE", ["jump": -1], requires: .queuePrevious)
    }

    /// Sets the repeat mode (QUEUE_UPDATE `repeatMode`).
    @discardableResult
    public func queueSetRepeatMode(_ mode: RepeatMode) -> MediaRequest {
        send("QUEUE_UPDATE", ["repeatMode": .string(mode.rawValue)])
    }

    /// Updates items in place (QUEUE_UPDATE `items`); each item needs its ``QueueItem/itemID``.
    @discardableResult
    public func queueUpdate(_ items: [QueueItem]) -> MediaRequest {
        guard !items.isEmpty, items.allSatisfy({ $0.itemID != nil }) else {
            return failed("QUEUE_UPDATE", CastMediaError(.invalidRequest, "items to update need their item ids"))
        }
        return send("QUEUE_UPDATE", ["items": .array(items.map(\.json))])
    }
}
