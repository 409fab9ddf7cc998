import CastDiscovery
import CastMedia
import CastMediaServer
import CastSession
import Foundation
import OpenAPIRuntime

/// The operations of `openapi.yaml`, answered by a ``DeviceHub``. Every failure is answered as an RFC 9457
/// problem document carrying the failing module's error code.
struct ServiceAPI: APIProtocol {
    let hub: DeviceHub

    func listDevices(_ input: Operations.ListDevices.Input) async throws -> Operations.ListDevices.Output {
        let devices = hub.devices.map { APIModel.device($0.device, activity: $0.activity) }
        return .ok(.init(body: .json(.init(devices: devices))))
    }

    func getDevice(_ input: Operations.GetDevice.Input) async throws -> Operations.GetDevice.Output {
        do {
            return .ok(.init(body: .json(APIModel.state(try await hub.activity(of: input.path.deviceId)))))
        } catch {
            return .answering(error)
        }
    }

    func setVolume(_ input: Operations.SetVolume.Input) async throws -> Operations.SetVolume.Output {
        guard case .json(let change) = input.body else { throw APIModel.unsupportedBody }
        do {
            guard change.level != nil || change.muted != nil else {
                throw CastServiceError(.invalidRequest, "give level, muted or both", httpStatus: 400, field: "level")
            }
            let activity = try await hub.setVolume(of: input.path.deviceId, level: change.level, muted: change.muted)
            return .ok(.init(body: .json(APIModel.state(activity))))
        } catch {
            return .answering(error)
        }
    }

    func stopApp(_ input: Operations.StopApp.Input) async throws -> Operations.StopApp.Output {
        do {
            return .ok(.init(body: .json(APIModel.state(try await hub.stopApplication(on: input.path.deviceId)))))
        } catch {
            return .answering(error)
        }
    }

    func loadMedia(_ input: Operations.LoadMedia.Input) async throws -> Operations.LoadMedia.Output {
        guard case .json(let request) = input.body else { throw APIModel.unsupportedBody }
        do {
            let source = try APIModel.source(of: request)
            if let start = request.startTime, !(start >= 0) {
                throw CastServiceError(
                    .invalidRequest,
                    "startTime must be 0 or more",
                    httpStatus: 400,
                    field: "startTime"
                )
            }
            let activity: DeviceActivity
            switch source {
            case .url(let media):
                activity = try await hub.load(
                    media,
                    on: input.path.deviceId,
                    autoplay: request.autoplay ?? true,
                    startTime: request.startTime
                )
            case .file(let path):
                activity = try await hub.load(
                    file: path,
                    on: input.path.deviceId,
                    title: request.title,
                    autoplay: request.autoplay ?? true,
                    startTime: request.startTime
                )
            }
            return .ok(.init(body: .json(APIModel.state(activity))))
        } catch {
            return .answering(error)
        }
    }

    func controlMedia(_ input: Operations.ControlMedia.Input) async throws -> Operations.ControlMedia.Output {
        do {
            let query = input.query
            let command = try APIModel.command(
                input.path.command,
                position: query.position,
                relative: query.relative,
                rate: query.rate
            )
            let activity = try await hub.control(command, on: input.path.deviceId)
            return .ok(.init(body: .json(APIModel.state(activity))))
        } catch {
            return .answering(error)
        }
    }

    func streamEvents(_ input: Operations.StreamEvents.Input) async throws -> Operations.StreamEvents.Output {
        let lastID = input.headers.lastEventID.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let events = hub.events(after: lastID)
        let stream = AsyncStream<ArraySlice<UInt8>> { continuation in
            // The reconnect delay a dropped client should use, then every event as it comes.
            continuation.yield(ArraySlice("retry: 2000\n\n".utf8))
            let task = Task {
                for await event in events { continuation.yield(ArraySlice(APIModel.serverSentEvent(event).utf8)) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return .ok(.init(body: .textEventStream(HTTPBody(stream, length: .unknown, iterationBehavior: .single))))
    }
}
