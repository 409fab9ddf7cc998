import CastMedia
import CastTransport
import NIOConcurrencyHelpers
import Testing

/// A media channel that records every request payload and answers from a closure, or holds requests until the
/// test releases them.
final class FakeMediaChannel: MediaChannel {
    typealias Responder = @Sendable (JSONValue) -> Result<JSONValue, any Error>

    private struct Held {
        var payload: JSONValue
        var continuation: CheckedContinuation<Result<JSONValue, any Error>, Never>
    }

    private struct State {
        var sent: [JSONValue] = []
        var timeouts: [Duration?] = []
        var responder: Responder
        var holding = false
        var held: [Held] = []
    }

    private let state: NIOLockedValueBox<State>
    private let sentContinuation: AsyncStream<JSONValue>.Continuation
    /// Every payload as it is sent (a single consumer).
    let sentStream: AsyncStream<JSONValue>
    /// As a session's channel: every reply also reaches `receive`, in order (the test delivers it), and each
    /// request tells its `requestId` (`firstRequestID`, then up by one in the order sent).
    let deliversRepliesInOrder: Bool
    let firstRequestID: Int

    init(
        responder: @escaping Responder = FakeMediaChannel.echoStatus(),
        ordered: Bool = false,
        firstRequestID: Int = 1
    ) {
        state = NIOLockedValueBox(State(responder: responder))
        (sentStream, sentContinuation) = AsyncStream.makeStream(of: JSONValue.self)
        deliversRepliesInOrder = ordered
        self.firstRequestID = firstRequestID
    }

    /// The payloads sent so far, in order.
    var sent: [JSONValue] { state.withLockedValue { $0.sent } }
    /// The timeouts requests were sent with.
    var timeouts: [Duration?] { state.withLockedValue { $0.timeouts } }

    /// Changes how requests are answered.
    func respond(with responder: @escaping Responder) { state.withLockedValue { $0.responder = responder } }

    /// Holds requests from now on until ``release(_:)``.
    func hold() { state.withLockedValue { $0.holding = true } }

    /// Answers the oldest held request (or all of them) and stops holding.
    func release(_ result: Result<JSONValue, any Error>, all: Bool = false) {
        let released = state.withLockedValue { state -> [Held] in
            state.holding = false
            guard !state.held.isEmpty else { return [] }
            if all { defer { state.held = [] }; return state.held }
            return [state.held.removeFirst()]
        }
        for held in released { held.continuation.resume(returning: result) }
    }

    /// Answers the held requests of `type`, leaving the others held.
    func release(_ result: Result<JSONValue, any Error>, type: String) {
        let released = state.withLockedValue { state -> [Held] in
            let (matching, others) = (
                state.held.filter { $0.payload["type"]?.stringValue == type },
                state.held.filter { $0.payload["type"]?.stringValue != type }
            )
            state.held = others
            return matching
        }
        for held in released { held.continuation.resume(returning: result) }
    }

    var heldCount: Int { state.withLockedValue { $0.held.count } }

    func startMediaRequest(_ payload: JSONValue, timeout: Duration?) throws -> MediaReply {
        // Recorded synchronously, in the order requests are started.
        let (holding, responder, requestID) = state.withLockedValue { state in
            state.sent.append(payload)
            state.timeouts.append(timeout)
            return (state.holding, state.responder, firstRequestID - 1 + state.sent.count)
        }
        if holding {
            let wait: @Sendable () async throws -> JSONValue = { [self] in
                let result = await withCheckedContinuation { continuation in
                    state.withLockedValue { $0.held.append(Held(payload: payload, continuation: continuation)) }
                    sentContinuation.yield(payload)
                }
                return try result.get()
            }
            return deliversRepliesInOrder ? MediaReply(requestID: requestID, wait) : MediaReply(wait)
        }
        sentContinuation.yield(payload)
        let result = responder(payload)
        let wait: @Sendable () async throws -> JSONValue = { try result.get() }
        return deliversRepliesInOrder ? MediaReply(requestID: requestID, wait) : MediaReply(wait)
    }

    /// Answers every request with a MEDIA_STATUS carrying `entry` (or an empty status).
    static func echoStatus(_ entry: JSONValue? = nil) -> Responder {
        { _ in .success(statusMessage(entry)) }
    }
}

/// A MEDIA_STATUS message with one entry, or none.
func statusMessage(_ entry: JSONValue?, requestId: Int = 0) -> JSONValue {
    ["type": "MEDIA_STATUS", "requestId": .number(Double(requestId)), "status": .array(entry.map { [$0] } ?? [])]
}

/// Every command bit.
let allCommands = MediaCommands(rawValue: (1 << 19) - 1)

/// A status entry.
func statusEntry(
    session: Int = 7,
    state: String = "PLAYING",
    time: Double = 0,
    rate: Double = 1,
    commands: MediaCommands = allCommands,
    media: JSONValue? = nil,
    extra: [String: JSONValue] = [:]
) -> JSONValue {
    var entry: [String: JSONValue] = [
        "mediaSessionId": .number(Double(session)), "playerState": .string(state), "currentTime": .number(time),
        "playbackRate": .number(rate), "supportedMediaCommands": .number(Double(commands.rawValue)),
        "volume": ["level": 1, "muted": false],
    ]
    if let media { entry["media"] = media }
    for (key, value) in extra { entry[key] = value }
    return .object(entry)
}

/// Media for the client tests.
func testMedia(_ name: String = "movie", duration: Double? = 600, title: String? = nil) -> MediaInformation {
    var media = MediaInformation(contentID: "https://example.com/\(name).mp4", contentType: "video/mp4")
    media.duration = duration
    media.metadata = .movie(title: title ?? name)
    return media
}

/// A client over a fake channel, with a seeded status (session 7, every command) unless `seeded` is false.
func makeClient(
    seeded: Bool = true,
    responder: @escaping FakeMediaChannel.Responder = FakeMediaChannel.echoStatus(statusEntry()),
    now: @escaping @Sendable () -> Double = RemoteMediaClient.monotonicSeconds
) -> (RemoteMediaClient, FakeMediaChannel) {
    let channel = FakeMediaChannel(responder: responder)
    let client = RemoteMediaClient(channel: channel, requestTimeout: .seconds(3), now: now)
    if seeded { client.receive(statusMessage(statusEntry(media: testMedia().json))) }
    return (client, channel)
}

/// A settable clock for `now:`.
final class TestTime: Sendable {
    private let value = NIOLockedValueBox<Double>(0)
    var now: Double {
        get { value.withLockedValue { $0 } }
        set { value.withLockedValue { $0 = newValue } }
    }
    var closure: @Sendable () -> Double { { [self] in self.now } }
}

/// The first `count` elements of `stream`, failing after `seconds` (a deadline, not a sleep).
func take<Stream: AsyncSequence & Sendable>(_ count: Int, from stream: Stream, within seconds: Double = 60) async throws
    -> [Stream.Element]
where Stream.Element: Sendable, Stream.Failure == Never {
    typealias Element = Stream.Element
    return try await withThrowingTaskGroup(of: [Element]?.self) { group in
        group.addTask {
            var elements: [Element] = []
            for await element in stream {
                elements.append(element)
                if elements.count == count { return elements }
            }
            return elements
        }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let elements = first, elements.count == count else {
            throw CastMediaError(.timedOut, "fewer than \(count) elements within \(seconds) s")
        }
        return elements
    }
}

/// A readable name for an event, for comparing sequences.
func describe(_ event: RemoteMediaClientEvent) -> String {
    switch event {
    case .statusUpdated(let status): "status(\(status.map { "\($0.mediaSessionID)" } ?? "nil"))"
    case .metadataUpdated(let metadata): "metadata(\(metadata?.title ?? "nil"))"
    case .queueUpdated: "queue"
    case .preloadStatusUpdated(let id): "preload(\(id.map(String.init) ?? "nil"))"
    case .queueChanged(let change): "change(\(change.changeType))"
    }
}

/// The error a request ended with.
func failure(of request: MediaRequest) async -> CastMediaError? {
    do {
        _ = try await request.response()
        return nil
    } catch {
        return error as? CastMediaError
    }
}

/// Collects values from callbacks for later checks.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = NIOLockedValueBox<[Value]>([])

    func record(_ value: Value) { storage.withLockedValue { $0.append(value) } }

    var values: [Value] { storage.withLockedValue { $0 } }
}
