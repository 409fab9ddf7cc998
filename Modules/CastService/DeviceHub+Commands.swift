import CastDiscovery
import CastMedia
import CastMediaServer
import CastSession
import CastTransport

extension DeviceHub {
    /// The most queue items ``queue(of:)`` reads (a queue is fetched a page at a time).
    static let queueReadLimit = 500

    /// Performs `command` on the device with `id` and answers what the device does once the receiver answered.
    ///
    /// - Throws: ``CastServiceError``: ``CastServiceError/Code/deviceNotFound`` (404), ``CastServiceError/Code/invalidRequest``
    ///   (400, naming the field), ``CastServiceError/Code/forbiddenPath`` (403) for files outside the media folders,
    ///   ``CastServiceError/Code/conflict`` (409) when the command does not fit what the device does, and the
    ///   failing module's error otherwise (502 unreachable, 504 no answer in time).
    public func perform(_ command: DeviceCommand, on id: String) async throws(CastServiceError) -> DeviceActivity {
        let clock = ContinuousClock()
        let start = clock.now
        defer { metrics.recordCommand(command.name, duration: start.duration(to: clock.now)) }
        return try await run(command, on: id)
    }

    private func run(_ command: DeviceCommand, on id: String) async throws(CastServiceError) -> DeviceActivity {
        switch command {
        case .load(.media(let media), let autoplay, let startTime):
            return try await load(media, on: id, autoplay: autoplay, startTime: startTime)
        case .load(.file(let path, let title), let autoplay, let startTime):
            return try await load(file: path, on: id, title: title, autoplay: autoplay, startTime: startTime)
        case .control(let command):
            return try await control(command, on: id)
        case .setVolume(let level, let muted):
            return try await setVolume(of: id, level: level, muted: muted)
        case .launch(let applicationID, let relaunch):
            return try await launch(applicationID, relaunch: relaunch, on: id)
        case .stopApplication:
            return try await stopApplication(on: id)
        case .join:
            let link = try link(for: id)
            do {
                _ = try await mediaSession(for: link, id: id)
            } catch { throw CastServiceError(error) }
            return try await settledActivity(of: link)
        case .leave:
            let link = try link(for: id)
            await link.context.sessionManager.endSession(stopCasting: false)
            return try await settledActivity(of: link)
        case .setTracks(let trackIDs, let style):
            return try await withMediaClient(on: id) { client in
                try await Self.settle(client.setActiveTrackIDs(trackIDs))
                if let style { try await Self.settle(client.setTextTrackStyle(style)) }
            }
        case .loadQueue(let sources, let startIndex, let repeatMode):
            guard sources.indices.contains(startIndex) else {
                throw CastServiceError(
                    .invalidRequest,
                    "startIndex must name one of the \(sources.count) items",
                    httpStatus: 400,
                    field: "startIndex"
                )
            }
            let link = try link(for: id)
            let items = try await queueItems(sources, for: link, device: try device(id), freshServer: true)
            do {
                let client = try await mediaReceiverClient(for: link, id: id)
                try await Self.settle(
                    client.queueLoad(items, startIndex: startIndex, repeatMode: repeatMode ?? .off)
                )
            } catch { throw CastServiceError(error) }
            return try await settledActivity(of: link)
        case .insertIntoQueue(let sources, let before, let play):
            if play, sources.count != 1 {
                throw CastServiceError(.invalidRequest, "play needs exactly one item", httpStatus: 400, field: "play")
            }
            let link = try link(for: id)
            let items = try await queueItems(sources, for: link, device: try device(id), freshServer: false)
            return try await withMediaClient(on: id) { client in
                if play {
                    try await Self.settle(client.queueInsertAndPlay(items[0], before: before))
                } else {
                    try await Self.settle(client.queueInsert(items, before: before))
                }
            }
        case .removeFromQueue(let itemID):
            return try await withMediaClient(on: id) { try await Self.settle($0.queueRemove([itemID])) }
        case .playQueueItem(let itemID):
            return try await withMediaClient(on: id) { try await Self.settle($0.queueJump(toItemID: itemID)) }
        case .moveQueueItem(let itemID, let before):
            return try await withMediaClient(on: id) {
                try await Self.settle($0.queueMove(itemID: itemID, before: before))
            }
        case .setRepeatMode(let mode):
            return try await withMediaClient(on: id) { try await Self.settle($0.queueSetRepeatMode(mode)) }
        }
    }

    /// Sets the device's volume level, its mute state, or both (no session needed).
    public func setVolume(of id: String, level: Double?, muted: Bool?) async throws(CastServiceError) -> DeviceActivity
    {
        if let level, !(0...1).contains(level) {
            throw CastServiceError(.invalidRequest, "level must be between 0 and 1", httpStatus: 400, field: "level")
        }
        let link = try link(for: id)
        let observed = try await follow(link)
        do {
            if let level { try await link.observer.setVolume(level) }
            if let muted { try await link.observer.setMuted(muted) }
        } catch { throw CastServiceError(error) }
        return link.observer.activity ?? observed
    }

    /// Loads `media` in the receiver app of ``Options/cast`` (launched, or joined when it already runs), with
    /// `activeTrackIDs` enabled.
    public func load(
        _ media: MediaInformation,
        on id: String,
        autoplay: Bool = true,
        startTime: Double? = nil,
        activeTrackIDs: [Int]? = nil
    ) async throws(CastServiceError) -> DeviceActivity {
        let link = try link(for: id)
        do {
            let client = try await mediaReceiverClient(for: link, id: id)
            var request = LoadRequestData(media: media)
            request.autoplay = autoplay
            request.currentTime = startTime
            request.activeTrackIDs = activeTrackIDs
            try await Self.settle(client.load(request))
        } catch { throw CastServiceError(error) }
        return try await settledActivity(of: link)
    }

    /// Casts the local file at `path` — absolute, or relative to a folder of ``Options/mediaFolders`` — served
    /// from this machine at an address the device reaches; transcoded when the device cannot play it as it is,
    /// with its subtitles as tracks (`MediaServer.castableFile(_:device:mode:contentType:title:extraSubtitles:)`).
    ///
    /// - Throws: ``CastServiceError/Code/forbiddenPath`` (403) when the path is not a regular file inside a media
    ///   folder (after resolving `..` and symbolic links), whether or not it exists elsewhere.
    public func load(
        file path: String,
        on id: String,
        title: String? = nil,
        autoplay: Bool = true,
        startTime: Double? = nil
    ) async throws(CastServiceError) -> DeviceActivity {
        let link = try link(for: id)
        let item = try await queueItems(
            [.file(path, title: title)],
            for: link,
            device: try device(id),
            freshServer: true
        )
        return try await load(
            item[0].media,
            on: id,
            autoplay: autoplay,
            startTime: startTime,
            activeTrackIDs: item[0].activeTrackIDs
        )
    }

    /// A transport command for what the device plays, through a session that joins the running app.
    public func control(_ command: MediaCommand, on id: String) async throws(CastServiceError) -> DeviceActivity {
        try await withMediaClient(on: id) { try await Self.settle(command.request(on: $0)) }
    }

    /// Launches the receiver app `applicationID`, or joins it when it runs and `relaunch` is off.
    public func launch(_ applicationID: String, relaunch: Bool = false, on id: String) async throws(CastServiceError)
        -> DeviceActivity
    {
        guard !applicationID.isEmpty, applicationID.count <= 64,
            applicationID.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." })
        else {
            throw CastServiceError(.invalidRequest, "appId is not an app id", httpStatus: 400, field: "appId")
        }
        let link = try link(for: id)
        do {
            _ = try await session(of: link, running: applicationID, relaunch: relaunch, id: id)
        } catch { throw CastServiceError(error) }
        return try await settledActivity(of: link)
    }

    /// Stops the app the device runs.
    public func stopApplication(on id: String) async throws(CastServiceError) -> DeviceActivity {
        let link = try link(for: id)
        let session: CastSession
        do {
            session = try await mediaSession(for: link, id: id)
            await link.context.sessionManager.endSession(stopCasting: true)
        } catch { throw CastServiceError(error) }
        return try await settledActivity(of: link, endedSession: session)
    }

    /// The queue the device plays, read from the receiver a page at a time (at most 500 items).
    public func queue(of id: String) async throws(CastServiceError) -> MediaQueueContents {
        let link = try link(for: id)
        do {
            let client = try await mediaClient(for: link, id: id)
            let itemIDs = try await client.queue.reload()
            var items: [QueueItem] = []
            for index in itemIDs.indices.prefix(Self.queueReadLimit) {
                items.append(try await client.queue.item(at: index))
            }
            let status = client.mediaStatus
            return MediaQueueContents(
                items: items,
                currentItemID: status?.currentItemID,
                repeatMode: status?.repeatMode
            )
        } catch { throw CastServiceError(error) }
    }

    /// Sends `message` to the running app on the custom `namespace`; with `awaitingReply`, returns the app's
    /// first message after it (within the request timeout of ``Options/cast``).
    ///
    /// - Throws: ``CastServiceError/Code/conflict`` (409) when the running app does not list the namespace.
    public func send(_ message: String, namespace: String, on id: String, awaitingReply: Bool = false)
        async throws(CastServiceError) -> String?
    {
        let link = try link(for: id)
        do {
            let session = try await mediaSession(for: link, id: id)
            let channel = try GenericChannel(namespace: namespace)
            session.add(channel)
            defer { session.remove(channel) }
            guard channel.isConnected else {
                throw CastServiceError(
                    .conflict,
                    "\(session.application.displayName) does not listen on \(namespace)",
                    httpStatus: 409,
                    field: "namespace"
                )
            }
            guard awaitingReply else {
                try await channel.sendTextMessage(message)
                return nil
            }
            return try await channel.sendTextMessage(message, awaitingReplyWithin: options.cast.requestTimeout).text
        } catch { throw CastServiceError(error) }
    }

    // MARK: - Sessions for commands

    /// Runs `body` with the media client of the running app's session, then answers the settled activity.
    private func withMediaClient(
        on id: String,
        _ body: (RemoteMediaClient) async throws -> Void
    ) async throws(CastServiceError) -> DeviceActivity {
        let link = try link(for: id)
        do {
            try await body(try await mediaClient(for: link, id: id))
        } catch { throw CastServiceError(error) }
        return try await settledActivity(of: link)
    }

    /// Waits for `request`'s answer. One that a newer command of its kind replaced after it was sent (parallel
    /// seeks, loads) waits for that one instead, whatever its outcome: the device had both, and the state they
    /// lead to is the answer (it was the state at the replacement, and before that a 500). One aborted otherwise
    /// (its session ended) answers the state as it is.
    private static func settle(_ request: CastMedia.MediaRequest) async throws {
        do {
            _ = try await request.response()
        } catch is CancellationError where !Task.isCancelled {
            var newer = request.replacement
            while let next = newer {
                _ = try? await next.response()
                newer = next.replacement
            }
        }
    }

    /// The media client of the running app; 409 when that app plays no media.
    private func mediaClient(for link: Link, id: String) async throws -> RemoteMediaClient {
        let session = try await mediaSession(for: link, id: id)
        guard let client = session.remoteMediaClient else {
            throw CastServiceError(.conflict, "\(session.application.displayName) does not play media", httpStatus: 409)
        }
        try await client.readStatusIfUnknown()
        return client
    }

    /// The media client of the receiver app of ``Options/cast``, launched or joined.
    private func mediaReceiverClient(for link: Link, id: String) async throws -> RemoteMediaClient {
        let cast = options.cast
        let session = try await session(
            of: link,
            running: cast.receiverApplicationID,
            relaunch: cast.launchOptions.relaunchIfRunning,
            id: id
        )
        guard let client = session.remoteMediaClient else {
            throw CastServiceError(.conflict, "the receiver app does not play media", httpStatus: 409)
        }
        return client
    }

    /// A connected session with `applicationID`: the current one when it is that app, else one that launches (or
    /// joins) it.
    private func session(of link: Link, running applicationID: String, relaunch: Bool, id: String) async throws
        -> CastSession
    {
        try await link.sessionGate.run {
            let context = await link.context(launching: applicationID, relaunch: relaunch, make: makeContext)
            followSessions(of: link, id: id)
            let manager = context.sessionManager
            if let session = manager.currentSession, session.connectionState == .connected,
                session.application.applicationID == applicationID, !relaunch
            {
                return session
            }
            if manager.currentSession != nil { await manager.endSession(stopCasting: false) }
            return try await manager.startSession(with: try device(id))
        }
    }

    /// Queue items for `sources`; files are checked against the media folders first, then served by the
    /// device's file server (a new one when `freshServer`, which stops the previous one).
    private func queueItems(
        _ sources: [MediaSource],
        for link: Link,
        device: CastDevice,
        freshServer: Bool
    ) async throws(CastServiceError) -> [QueueItem] {
        // Every file is checked before any is served: one path outside the folders refuses the whole request.
        var checked: [MediaSource] = []
        for source in sources {
            guard case .file(let path, let title) = source else {
                checked.append(source)
                continue
            }
            guard let real = mediaFolders.file(path) else {
                throw CastServiceError(
                    .forbiddenPath,
                    mediaFolders.isEmpty
                        ? "castd casts no local files: no media folder is configured (--media-folder)"
                        : "'\(path)' is not a readable file inside the media folders",
                    httpStatus: 403,
                    field: "file"
                )
            }
            checked.append(.file(real, title: title))
        }
        do {
            var server = freshServer ? nil : link.fileServer.withLockedValue { $0 }
            var items: [QueueItem] = []
            for source in checked {
                switch source {
                case .media(let media):
                    items.append(QueueItem(media: media))
                case .file(let real, let title):
                    let serving: MediaServer
                    if let server {
                        serving = server
                    } else {
                        serving = try await startFileServer(for: link, reaching: device.host)
                    }
                    server = serving
                    let file = try await serving.castableFile(
                        real,
                        device: .forModel(device.modelName, playsVideo: device.mayPlayVideo),
                        title: title
                    )
                    items.append(QueueItem(media: file.media, activeTrackIDs: file.activeTrackIDs))
                }
            }
            return items
        } catch { throw CastServiceError(error) }
    }

    /// A new file server for the device, which stops the one it replaces.
    private func startFileServer(for link: Link, reaching host: String) async throws -> MediaServer {
        let server = try await MediaServer.start(reaching: host)
        await link.fileServer.withLockedValue { current in
            defer { current = server }
            return current
        }?.stop()
        return server
    }
}
