import CastDiscovery
import CastMedia
import CastReceiver
import CastTransport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import CastService

/// What castd shows of itself: Prometheus metrics, session events, the web remote's files, and how the event
/// stream treats a client that stops reading.
@Suite struct ObservabilityTests {
    /// A server whose API needs the bearer token `secret`.
    static let needingToken = {
        var options = CastServiceServer.Options()
        options.tokens = [BearerTokenHash(hashing: "secret")]
        return options
    }()

    @Test func metricsCountCommandsErrorsSessionsAndSubscribers() async throws {
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let id = hub.devices[0].device.id
                let load = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"url":"http://media.example/a.mp4"}"#
                )
                #expect(load.status == 200)
                _ = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media/pause")
                _ = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media/pause")
                _ = try await TestHTTP.send(port: port, "GET", "/v1/devices/no-such-device")
                _ = try await TestHTTP.send(port: port, "PUT", "/v1/devices/\(id)/volume", json: #"{"level":2}"#)

                let reply = try await TestHTTP.send(port: port, "GET", "/metrics")
                #expect(reply.status == 200)
                #expect(reply.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
                let lines = Set(reply.body.split(separator: "\n").map(String.init))
                #expect(lines.contains("castd_devices 1.0"))
                #expect(lines.contains("castd_followed_devices 1.0"))
                #expect(lines.contains("castd_sessions_connected 1.0"))
                #expect(lines.contains(#"castd_command_duration_seconds_count{command="load"} 1"#))
                #expect(lines.contains(#"castd_command_duration_seconds_count{command="pause"} 2"#))
                #expect(lines.contains(#"castd_errors_total{code="deviceNotFound"} 1"#))
                #expect(lines.contains(#"castd_errors_total{code="invalidRequest"} 1"#))
                #expect(lines.contains(#"castd_reconnects_total{kind="device"} 0"#))
                #expect(lines.contains("# TYPE castd_command_duration_seconds histogram"))

                // A subscriber to the event stream is counted while it follows.
                let subscription = hub.events()
                let followed = try await TestHTTP.send(port: port, "GET", "/metrics")
                #expect(followed.body.contains("castd_event_subscribers 1.0"))
                _ = subscription
            }
        }
    }

    @Test func metricsNeedATokenWhenTheAPIDoes() async throws {
        try await withHub { hub, _ in
            try await withServer(hub, options: Self.needingToken) { port in
                let refused = try await TestHTTP.send(port: port, "GET", "/metrics")
                #expect(refused.status == 401)
                let allowed = try await TestHTTP.send(
                    port: port,
                    "GET",
                    "/metrics",
                    headers: [("Authorization", "Bearer secret")]
                )
                #expect(allowed.status == 200)
                #expect(allowed.body.contains(#"castd_errors_total{code="unauthorized"} 1"#))
            }
        }
    }

    @Test func sessionsStartingAndEndingAreEvents() async throws {
        try await withHub { hub, _ in
            let id = hub.devices[0].device.id
            var events = hub.events().makeAsyncIterator()
            _ = try await hub.perform(
                .load(.media(MediaInformation(contentID: "http://media.example/a.mp4", contentType: "video/mp4"))),
                on: id
            )
            _ = try await hub.perform(.leave, on: id)
            var kinds: [SessionChange.Kind] = []
            while kinds.count < 2, let event = await events.next() {
                guard case .session(let device, let change) = event.change else { continue }
                #expect(device.id == id)
                #expect(change.applicationID == "CC1AD845")
                #expect(change.sessionID != nil)
                kinds.append(change.kind)
                #expect(APIModel.serverSentEvent(event).contains("event: session\n"))
            }
            #expect(kinds == [.started, .ended])
        }
    }

    @Test func theWebRemoteIsPublicAndKeepsToItself() async throws {
        try await withHub { hub, _ in
            try await withServer(hub, options: Self.needingToken) { port in
                let page = try await TestHTTP.send(port: port, "GET", "/")
                #expect(page.status == 200)
                #expect(page.header("Content-Type") == "text/html; charset=utf-8")
                #expect(page.body.contains("remote.js"))
                let policy = try #require(page.header("Content-Security-Policy"))
                #expect(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"))
                #expect(page.header("X-Content-Type-Options") == "nosniff")

                let tag = try #require(page.header("ETag"))
                let again = try await TestHTTP.send(port: port, "GET", "/", headers: [("If-None-Match", tag)])
                #expect(again.status == 304)
                #expect(again.body.isEmpty)

                let script = try await TestHTTP.send(port: port, "GET", "/remote.js")
                #expect(script.header("Content-Type") == "text/javascript; charset=utf-8")
                let style = try await TestHTTP.send(port: port, "GET", "/remote.css")
                #expect(style.header("Content-Type") == "text/css; charset=utf-8")
                #expect(try await TestHTTP.send(port: port, "GET", "/v1/devices").status == 401)
            }
        }
    }

    @Test func aClientThatStopsReadingEventsIsDroppedAndTheOthersKeepUp() async throws {
        let smallBuffers: (inout DeviceHub.Options) -> Void = { options in
            options.subscriberBuffer = 8
            options.eventWindow = 8
        }
        try await withHub(configure: smallBuffers) { hub, emulator in
            try await withServer(hub) { port in
                let stalled = try await StalledEventClient.connect(port: port)
                defer { stalled.close() }
                try await stalled.readHead()
                #expect(hub.log.subscriberCount == 1)

                // Large events, so that the sockets' buffers fill after a few hundred of them at most.
                let big = CastDevice.staticDevice(host: "127.0.0.1", port: emulator.devices[0].port)
                var named = big
                named.friendlyName = String(repeating: "x", count: 64 * 1024)
                var reader = hub.events().makeAsyncIterator()
                var appended = 0
                while hub.log.subscriberCount == 2, appended < 2000 {
                    hub.log.append(.deviceUpdated(named))
                    appended += 1
                    // The reading subscriber takes every event as it comes.
                    guard case .deviceUpdated = await reader.next()?.change else {
                        Issue.record("the reading subscriber missed an event")
                        return
                    }
                }
                #expect(hub.log.subscriberCount == 1, "the stalled client was never dropped")
                #expect(appended < 2000)

                // The dropped client's response ends (after what the sockets held) instead of waiting forever.
                let rest = try await stalled.readToEnd()
                #expect(rest.hasSuffix("0\r\n\r\n") || stalled.isClosed)
                #expect(rest.count < appended * 64 * 1024)
            }
        }
    }
}

/// An event-stream client with a tiny receive buffer that reads only when told to.
private final class StalledEventClient: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    private let received = NIOLockedValueBox<(bytes: [UInt8], waiter: CheckedContinuation<Void, Never>?)>(([], nil))
    private let closed = NIOLockedValueBox(false)
    private let channel = NIOLockedValueBox<(any Channel)?>(nil)

    static func connect(port: Int) async throws -> StalledEventClient {
        let client = StalledEventClient()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.autoRead, value: false)
            .channelOption(.socketOption(.so_rcvbuf), value: 4096)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(client) }
            }
            .connect(host: "127.0.0.1", port: port).get()
        client.channel.withLockedValue { $0 = channel }
        let request = "GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n"
        try await channel.writeAndFlush(channel.allocator.buffer(string: request))
        return client
    }

    var isClosed: Bool { closed.withLockedValue { $0 } }

    /// Reads until the response's head and the retry hint arrived, then stops reading.
    func readHead() async throws {
        while !text.contains("retry: 2000") {
            guard await readOnce() else { throw CancellationError() }
        }
    }

    /// Reads until the response ends or the connection closes; returns what arrived after the head.
    func readToEnd() async throws -> String {
        let start = received.withLockedValue { $0.bytes.count }
        while !isClosed, !text.hasSuffix("0\r\n\r\n") {
            guard await readOnce() else { break }
        }
        return received.withLockedValue { String(decoding: $0.bytes.dropFirst(start), as: UTF8.self) }
    }

    func close() { channel.withLockedValue { $0 }?.close(promise: nil) }

    private var text: String { received.withLockedValue { String(decoding: $0.bytes, as: UTF8.self) } }

    /// Asks for one read and waits for its data; false once the connection is closed.
    private func readOnce() async -> Bool {
        guard let channel = channel.withLockedValue({ $0 }), !isClosed else { return false }
        await withCheckedContinuation { continuation in
            received.withLockedValue { $0.waiter = continuation }
            channel.read()
        }
        return true
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        let waiter = received.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            state.bytes += buffer.readableBytesView
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed.withLockedValue { $0 = true }
        received.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }
}

/// The problem middleware names a malformed query or path parameter from its own table of the API's typed
/// parameters: the table must say what openapi.yaml says.
@Suite struct TypedParameterTableTests {
    @Test func theTableMatchesTheOpenAPIDocument() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Modules/CastService/openapi.yaml").standardizedFileURL.path
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        var typed: [String: ProblemMiddleware.ParameterType] = [:]
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("- name: ") else { continue }
            let name = String(trimmed.dropFirst("- name: ".count))
            let indent = line.prefix { $0 == " " }.count
            // The parameter's own lines: up to the next line indented as far as its `- name:` or less.
            let body = lines[(index + 1)...].prefix { $0.prefix { $0 == " " }.count > indent }
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard body.contains("in: query") || body.contains("in: path") else { continue }
            if body.contains("type: number") {
                typed[name] = .number
            } else if body.contains("type: integer") {
                typed[name] = .integer
            } else if body.contains("type: boolean") {
                typed[name] = .boolean
            } else if body.contains(where: { $0.hasPrefix("$ref: \"#/components/schemas/") }) {
                typed[name] = .enumeration
            }
        }
        #expect(typed == ProblemMiddleware.typedParameters)
    }
}
