import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing

@testable import CastTransport

/// Shared helpers for the framing, heartbeat, correlation and TLS interop suites.
enum TransportTestKit {
    /// A logger that discards everything (the test target cannot see CastLogging's `.castDisabled`).
    static let silentLogger = Logger(label: "cast.tests", factory: { _ in SwiftLogNoOpLogHandler() })

    /// One self-signed identity for the whole run: RSA key generation takes tens of milliseconds.
    static let identity: Result<TLSIdentity, any Error> = Result {
        try TLSIdentity.makeSelfSigned(commonName: "transport-test-kit")
    }

    /// A server context presenting ``identity``.
    static func serverContext() throws -> TLSContext {
        try TLSContext.makeServerContext(identity: identity.get())
    }

    /// A client configuration with no heartbeat, so nothing but the test's own traffic is on the wire.
    static func quietClientConfiguration() -> CastConnection.Configuration {
        var configuration = CastConnection.Configuration()
        configuration.heartbeat = HeartbeatConfiguration(pingInterval: nil, deadAfter: nil)
        return configuration
    }

    /// A server configuration with no heartbeat.
    static func quietServerConfiguration() -> CastServer.Configuration {
        var configuration = CastServer.Configuration()
        configuration.connection.heartbeat = HeartbeatConfiguration(pingInterval: nil, deadAfter: nil)
        return configuration
    }

    /// `body` prefixed with its 4-byte big-endian length.
    static func frame(_ body: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt32(body.count), endianness: .big)
        buffer.writeBytes(body)
        return buffer
    }

    /// Just a 4-byte length header.
    static func header(_ length: UInt32) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(length, endianness: .big)
        return buffer
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    static func bytes(fromHex text: some StringProtocol) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(characters.count / 2)
        var index = 0
        while index < characters.count {
            guard let pair = UInt8(String(decoding: characters[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            result.append(pair)
            index += 2
        }
        return result
    }
}

/// Asserts that `body` throws a ``CastTransportError`` with exactly `code`.
@discardableResult
func expectTransportError<R>(
    _ code: CastTransportError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    performing body: () throws -> R
) -> CastTransportError? {
    let error = #expect(throws: CastTransportError.self, sourceLocation: sourceLocation) {
        _ = try body()
    }
    #expect(error?.code == code, "got \(String(describing: error))", sourceLocation: sourceLocation)
    return error
}

/// Asserts that `body` throws a ``CastTransportError`` with exactly `code`.
@discardableResult
func expectTransportError<R>(
    _ code: CastTransportError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    performing body: () async throws -> R
) async -> CastTransportError? {
    let error = await #expect(throws: CastTransportError.self, sourceLocation: sourceLocation) {
        _ = try await body()
    }
    #expect(error?.code == code, "got \(String(describing: error))", sourceLocation: sourceLocation)
    return error
}

/// Records the outcome of an `EventLoopFuture` on an `EmbeddedEventLoop`, where callbacks run inline.
final class FutureProbe<Value> {
    private(set) var result: Result<Value, any Error>?

    init(_ future: EventLoopFuture<Value>) {
        future.assumeIsolated().whenComplete { [self] in self.result = $0 }
    }

    var isPending: Bool { result == nil }

    var value: Value? {
        if case .success(let value) = result { return value }
        return nil
    }

    var error: (any Error)? {
        if case .failure(let error) = result { return error }
        return nil
    }

    var transportError: CastTransportError? { error as? CastTransportError }
}

/// A thread-safe append-only log, for callbacks that run on event loops.
final class LockedLog<Element: Sendable>: Sendable {
    private let storage = NIOLockedValueBox<[Element]>([])

    init() {}

    func append(_ element: Element) { storage.withLockedValue { $0.append(element) } }

    var all: [Element] { storage.withLockedValue { $0 } }

    var count: Int { storage.withLockedValue { $0.count } }
}

/// Races `body` against a deadline, so a missing event fails the test instead of hanging it.
func withDeadline<T: Sendable>(
    _ duration: Duration = .seconds(60),
    _ what: String = "operation",
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: duration)
            throw DeadlineExceeded(what: what, duration: duration)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

struct DeadlineExceeded: Error, CustomStringConvertible {
    var what: String
    var duration: Duration
    var description: String { "\(what) did not finish within \(duration)" }
}

/// Pulls elements from a stream (a `CastEventStream` or an `AsyncStream`) from any task, with a deadline on each
/// wait.
///
/// Both keep their buffer in shared storage, so a fresh iterator per call continues where the previous one stopped;
/// calls must not overlap.
struct StreamReader<Stream: AsyncSequence & Sendable>: Sendable
where Stream.Element: Sendable, Stream.Failure == Never {
    typealias Element = Stream.Element
    let stream: Stream

    init(_ stream: Stream) { self.stream = stream }

    /// The next element, `nil` when the stream finished; fails when nothing comes within `timeout`.
    func next(within timeout: Duration = .seconds(60), _ what: String = "stream element") async throws -> Element? {
        let stream = self.stream
        return try await withDeadline(timeout, what) {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next(isolation: nil)
        }
    }

    /// The first element matching `predicate`, skipping others; fails on the stream's end or the deadline.
    func first(
        within timeout: Duration = .seconds(60),
        _ what: String = "matching stream element",
        where predicate: @escaping @Sendable (Element) -> Bool
    ) async throws -> Element {
        let stream = self.stream
        return try await withDeadline(timeout, what) {
            var iterator = stream.makeAsyncIterator()
            while let element = await iterator.next(isolation: nil) {
                if predicate(element) { return element }
            }
            throw StreamEnded(what: what)
        }
    }

    /// Waits until the stream finishes and returns what it yielded meanwhile; fails at the deadline.
    func remainingUntilEnd(within timeout: Duration = .seconds(60), _ what: String = "stream end") async throws
        -> [Element]
    {
        let stream = self.stream
        return try await withDeadline(timeout, what) {
            var iterator = stream.makeAsyncIterator()
            var seen: [Element] = []
            while let element = await iterator.next(isolation: nil) { seen.append(element) }
            return seen
        }
    }
}

struct StreamEnded: Error, CustomStringConvertible {
    var what: String
    var description: String { "the stream ended before \(what)" }
}
