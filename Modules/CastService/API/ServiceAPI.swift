import CastDiscovery
import CastLogging
import CastMedia
import CastMediaServer
import CastSession
import NIOPosix
import OpenAPIRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The operations of `openapi.yaml`, answered by a ``DeviceHub``. Every failure is answered as an RFC 9457
/// problem document carrying the failing module's error code.
struct ServiceAPI: APIProtocol {
    let hub: DeviceHub

    func listDevices(_ input: Operations.ListDevices.Input) async throws -> Operations.ListDevices.Output {
        let devices = hub.devices.map { APIModel.device($0.device, activity: $0.activity) }
        return .ok(.init(body: .json(.init(devices: devices))))
    }

    func listMediaFiles(_ input: Operations.ListMediaFiles.Input) async throws -> Operations.ListMediaFiles.Output {
        let limit = input.query.limit ?? 1000
        guard (1...10000).contains(limit) else {
            let problem = CastServiceError(
                .invalidRequest,
                "limit must be from 1 to 10000",
                httpStatus: 400,
                field: "limit"
            )
            hub.metrics.recordError(problem)
            return .badRequest(APIModel.problem(problem))
        }
        let folders = hub.mediaFolders
        // A walk touches the disk: off the event loops.
        let (files, truncated) = try await NIOThreadPool.singleton.runIfActive { folders.files(limit: limit) }
        return .ok(.init(body: .json(.init(files: files.map(APIModel.mediaFile), truncated: truncated))))
    }

    func getDevice(_ input: Operations.GetDevice.Input) async throws -> Operations.GetDevice.Output {
        do {
            return .ok(.init(body: .json(APIModel.state(try await hub.activity(of: input.path.deviceId)))))
        } catch {
            return failure(error)
        }
    }

    func setVolume(_ input: Operations.SetVolume.Input) async throws -> Operations.SetVolume.Output {
        guard case .json(let change) = input.body else { throw APIModel.unsupportedBody }
        return try await answer(input.path.deviceId) { try APIModel.volume(change) }
    }

    func launchApp(_ input: Operations.LaunchApp.Input) async throws -> Operations.LaunchApp.Output {
        guard case .json(let request) = input.body else { throw APIModel.unsupportedBody }
        return try await answer(input.path.deviceId) { APIModel.launch(request) }
    }

    func stopApp(_ input: Operations.StopApp.Input) async throws -> Operations.StopApp.Output {
        try await answer(input.path.deviceId) { .stopApplication }
    }

    func joinSession(_ input: Operations.JoinSession.Input) async throws -> Operations.JoinSession.Output {
        try await answer(input.path.deviceId) { .join }
    }

    func leaveSession(_ input: Operations.LeaveSession.Input) async throws -> Operations.LeaveSession.Output {
        try await answer(input.path.deviceId) { .leave }
    }

    func loadMedia(_ input: Operations.LoadMedia.Input) async throws -> Operations.LoadMedia.Output {
        guard case .json(let request) = input.body else { throw APIModel.unsupportedBody }
        return try await answer(input.path.deviceId) { try APIModel.load(request) }
    }

    func controlMedia(_ input: Operations.ControlMedia.Input) async throws -> Operations.ControlMedia.Output {
        try await answer(input.path.deviceId) {
            let query = input.query
            return .control(
                try APIModel.command(
                    input.path.command,
                    position: query.position,
                    relative: query.relative,
                    rate: query.rate
                )
            )
        }
    }

    func setTracks(_ input: Operations.SetTracks.Input) async throws -> Operations.SetTracks.Output {
        guard case .json(let change) = input.body else { throw APIModel.unsupportedBody }
        return try await answer(input.path.deviceId) { try APIModel.tracks(change) }
    }

    func getQueue(_ input: Operations.GetQueue.Input) async throws -> Operations.GetQueue.Output {
        do {
            return .ok(.init(body: .json(APIModel.queue(try await hub.queue(of: input.path.deviceId)))))
        } catch {
            return failure(error)
        }
    }

    func loadQueue(_ input: Operations.LoadQueue.Input) async throws -> Operations.LoadQueue.Output {
        guard case .json(let request) = input.body else { throw APIModel.unsupportedBody }
        return try await answer(input.path.deviceId) { try APIModel.queueLoad(request) }
    }

    func insertQueueItems(_ input: Operations.InsertQueueItems.Input) async throws
        -> Operations.InsertQueueItems.Output
    {
        guard case .json(let request) = input.body else { throw APIModel.unsupportedBody }
        return try await answer(input.path.deviceId) { try APIModel.queueInsert(request) }
    }

    func removeQueueItem(_ input: Operations.RemoveQueueItem.Input) async throws -> Operations.RemoveQueueItem.Output {
        try await answer(input.path.deviceId) { .removeFromQueue(itemID: input.path.itemId) }
    }

    func playQueueItem(_ input: Operations.PlayQueueItem.Input) async throws -> Operations.PlayQueueItem.Output {
        try await answer(input.path.deviceId) { .playQueueItem(itemID: input.path.itemId) }
    }

    func moveQueueItem(_ input: Operations.MoveQueueItem.Input) async throws -> Operations.MoveQueueItem.Output {
        guard case .json(let move) = input.body else { throw APIModel.unsupportedBody }
        return try await answer(input.path.deviceId) { .moveQueueItem(itemID: input.path.itemId, before: move.before) }
    }

    func setRepeatMode(_ input: Operations.SetRepeatMode.Input) async throws -> Operations.SetRepeatMode.Output {
        guard case .json(let change) = input.body else { throw APIModel.unsupportedBody }
        return try await answer(input.path.deviceId) { .setRepeatMode(APIModel.repeatMode(change.mode)) }
    }

    func sendMessage(_ input: Operations.SendMessage.Input) async throws -> Operations.SendMessage.Output {
        guard case .json(let request) = input.body else { throw APIModel.unsupportedBody }
        do {
            let reply = try await hub.send(
                APIModel.messageText(request.message),
                namespace: input.path.namespace,
                on: input.path.deviceId,
                awaitingReply: request.waitForReply ?? false
            )
            return .ok(.init(body: .json(.init(sent: true, reply: reply))))
        } catch {
            return failure(error)
        }
    }

    /// The problem answering `error`, counted in the metrics.
    private func failure<Output: ProblemOutput>(_ error: any Error) -> Output {
        hub.metrics.recordError(CastServiceError(error))
        return .answering(error)
    }

    /// Performs the command `command` builds on the device, answering its state or the problem it met.
    private func answer<Output: ProblemOutput & DeviceStateOutput>(
        _ deviceID: String,
        _ command: () throws -> DeviceCommand
    ) async throws -> Output {
        do {
            return .answering(APIModel.state(try await hub.perform(try command(), on: deviceID)))
        } catch {
            return failure(error)
        }
    }

    func streamEvents(_ input: Operations.StreamEvents.Input) async throws -> Operations.StreamEvents.Output {
        let lastID = input.headers.lastEventID.flatMap { Int($0.trimmingWhitespace()) }
        let stream = ServerSentEventStream(events: hub.events(after: lastID))
        return .ok(.init(body: .textEventStream(HTTPBody(stream, length: .unknown, iterationBehavior: .single))))
    }
}

/// `GET /v1/events` as bytes: the reconnect delay a dropped client should use, then every event.
///
/// Pulled, not pushed: an event is taken from the hub only when the client's connection has taken the one before,
/// so a stalled client falls behind in the hub's bounded buffer and is dropped there (and reconnects with
/// `Last-Event-ID` after the delay), instead of events piling up here without bound.
struct ServerSentEventStream: AsyncSequence, Sendable {
    let events: AsyncStream<ServiceEvent>

    struct AsyncIterator: AsyncIteratorProtocol {
        var events: AsyncStream<ServiceEvent>.Iterator
        var sentRetryDelay = false

        mutating func next() async -> ArraySlice<UInt8>? {
            guard sentRetryDelay else {
                sentRetryDelay = true
                return ArraySlice("retry: 2000\n\n".utf8)
            }
            return await events.next().map { event in
                ArraySlice(event.serverSentText.value { APIModel.serverSentEvent(event) }.utf8)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(events: events.makeAsyncIterator()) }
}
