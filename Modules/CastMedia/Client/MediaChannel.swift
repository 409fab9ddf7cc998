import CastTransport
import NIOCore

/// The answer to a media request that has been sent: await ``response()`` for the reply's JSON.
public struct MediaReply: Sendable {
    private enum Source: Sendable {
        case future(EventLoopFuture<JSONValue>)
        case message(EventLoopFuture<CastMessage>)
        case wait(@Sendable () async throws -> JSONValue)
    }

    private let source: Source
    /// The `requestId` the request went out with, when the channel tells it: a reply with a higher one answers
    /// another sender (devices that address replies to `*` show them to everyone).
    package let requestID: Int?

    /// Wraps how to wait for the reply.
    public init(_ wait: @escaping @Sendable () async throws -> JSONValue) {
        source = .wait(wait)
        requestID = nil
    }

    /// Wraps how to wait for the reply of the request sent with `requestID`.
    package init(requestID: Int, _ wait: @escaping @Sendable () async throws -> JSONValue) {
        source = .wait(wait)
        self.requestID = requestID
    }

    /// A reply completed on an event loop: the client finishes its request there, as the reply is read, without
    /// a task.
    public init(_ future: EventLoopFuture<JSONValue>) {
        source = .future(future)
        requestID = nil
    }

    /// A reply message completed on an event loop, its JSON read when it is used (the connection parsed it once
    /// already, for its `requestId`): no second future per request.
    package init(message future: EventLoopFuture<CastMessage>, requestID: Int) {
        source = .message(future)
        self.requestID = requestID
    }

    /// The reply's JSON.
    public func response() async throws -> JSONValue {
        switch source {
        case .future(let future): try await future.get()
        case .message(let future): try await future.get().json()
        case .wait(let wait): try await wait()
        }
    }

    /// Calls `body` with the reply or the error: on the future's loop, or from a task on `executor`.
    func whenComplete(
        executor: (any TaskExecutor)?,
        _ body: @escaping @Sendable (Result<JSONValue, any Error>) -> Void
    ) {
        switch source {
        case .future(let future):
            future.whenComplete(body)
        case .message(let future):
            future.whenComplete { result in body(result.flatMap { message in Result { try message.json() } }) }
        case .wait(let wait):
            Task(executorPreference: executor) {
                do { body(.success(try await wait())) } catch { body(.failure(error)) }
            }
        }
    }
}

/// What a ``RemoteMediaClient`` sends through: the media namespace of the running receiver app.
///
/// CastSession provides the real one (a virtual connection to the app's transport id); tests can provide
/// their own. Inbound messages reach the client through ``RemoteMediaClient/receive(_:)``.
public protocol MediaChannel: Sendable {
    /// Sends one media-namespace request (a JSON object with `type`; the channel adds `requestId`) before
    /// returning, so requests reach the receiver in the order they were started, and returns a handle for the
    /// reply.
    ///
    /// - Throws: `CastTransportError` or ``CastMediaError`` when the request cannot be sent at all.
    func startMediaRequest(_ payload: JSONValue, timeout: Duration?) throws -> MediaReply

    /// Whether every inbound media message — replies included — also reaches ``RemoteMediaClient/receive(_:)``,
    /// in the order it arrived. The client then applies statuses in arrival order, so a reply whose request
    /// finishes late never overwrites a newer status. CastSession's channel does; the default is `false`.
    var deliversRepliesInOrder: Bool { get }

    /// Where the client waits for a request's reply: the executor of the loop that reads it, so nothing stands
    /// between the reply's arrival and the request's end but that loop (on the global executor, each reply wakes
    /// one of its threads, then the loop again for a caller running there, such as castd's handlers). The
    /// default, `nil`, waits on the global executor.
    var replyExecutor: (any TaskExecutor)? { get }
}

extension MediaChannel {
    /// `false` by default: only a channel that knows its replies arrive in order says so.
    public var deliversRepliesInOrder: Bool { false }

    /// `nil` by default: replies are awaited on the global executor.
    public var replyExecutor: (any TaskExecutor)? { nil }

    /// Sends a request and waits for its reply.
    public func sendMediaRequest(_ payload: JSONValue, timeout: Duration?) async throws -> JSONValue {
        try await startMediaRequest(payload, timeout: timeout).response()
    }
}
