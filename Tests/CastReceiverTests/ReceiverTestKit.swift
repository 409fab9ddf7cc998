import CastTransport
import NIOConcurrencyHelpers
import Testing

@testable import CastReceiver

// Shared helpers for the CastReceiver suites: a message inbox with bounded waits, a sender wrapper that speaks
// the receiver and media namespaces over real TLS, and small JSON conveniences.

/// The reply or wait did not come within its bound.
struct WaitTimedOut: Error, CustomStringConvertible {
    var what: String
    var duration: Duration
    var description: String { "\(what) did not arrive within \(duration)" }
}

/// Collects everything an `AsyncStream` yields, so tests can wait for a matching element (bounded) and also look
/// at what has arrived so far, without the pitfalls of cancelling a pending `AsyncStream.next()` (which would end
/// the stream).
final class Inbox<Element: Sendable>: Sendable {
    private struct Waiter {
        var predicate: @Sendable (Element) -> Bool
        var continuation: CheckedContinuation<Element?, Never>
    }

    private struct State {
        var unclaimed: [Element] = []
        var everything: [Element] = []
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
        var finished = false
    }

    private let state = NIOLockedValueBox(State())

    init(_ stream: CastEventStream<Element>) {
        Task { [weak self] in
            for await element in stream {
                guard let self else { return }
                self.receive(element)
            }
            self?.finish()
        }
    }

    private func receive(_ element: Element) {
        let claimed: CheckedContinuation<Element?, Never>? = state.withLockedValue { state in
            state.everything.append(element)
            for id in state.waiters.keys.sorted() where state.waiters[id]!.predicate(element) {
                return state.waiters.removeValue(forKey: id)!.continuation
            }
            state.unclaimed.append(element)
            return nil
        }
        claimed?.resume(returning: element)
    }

    private func finish() {
        let waiters = state.withLockedValue { state in
            state.finished = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    /// Every element received so far, claimed or not, in arrival order.
    var all: [Element] { state.withLockedValue { $0.everything } }

    /// Elements not yet taken by ``first(within:_:where:)``.
    var unclaimed: [Element] { state.withLockedValue { $0.unclaimed } }

    /// Whether the stream has ended.
    var isFinished: Bool { state.withLockedValue { $0.finished } }

    /// Takes the oldest unclaimed element matching `predicate`, waiting for one up to `timeout`.
    func first(
        within timeout: Duration = .seconds(60),
        _ what: String = "a matching message",
        where predicate: @escaping @Sendable (Element) -> Bool = { _ in true }
    ) async throws -> Element {
        let id = state.withLockedValue { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled, let self else { return }
            let waiter = self.state.withLockedValue { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: nil)
        }
        defer { timer.cancel() }
        let element: Element? = await withCheckedContinuation { continuation in
            let immediate: Element?? = state.withLockedValue { state in
                if let index = state.unclaimed.firstIndex(where: predicate) {
                    return .some(state.unclaimed.remove(at: index))
                }
                if state.finished { return .some(nil) }
                state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
        guard let element else { throw WaitTimedOut(what: what, duration: timeout) }
        return element
    }
}

extension Inbox where Element == CastMessage {
    /// The oldest unclaimed JSON message on `namespace` whose payload satisfies `predicate`.
    func json(
        on namespace: String? = nil,
        within timeout: Duration = .seconds(60),
        _ what: String = "a matching message",
        where predicate: @escaping @Sendable (JSONValue) -> Bool = { _ in true }
    ) async throws -> JSONValue {
        let message = try await first(within: timeout, what) { message in
            guard namespace == nil || message.namespace == namespace, let json = try? message.json() else {
                return false
            }
            return predicate(json)
        }
        return try message.json()
    }

    /// The oldest unclaimed message carrying `requestId`.
    func reply(to requestId: Int, within timeout: Duration = .seconds(60)) async throws -> CastMessage {
        try await first(within: timeout, "the reply to request \(requestId)") { message in
            (try? message.json())?["requestId"]?.intValue == requestId
        }
    }
}

extension JSONValue {
    /// `status[0]` of a MEDIA_STATUS.
    var firstStatus: JSONValue? { self["status"]?.arrayValue?.first }
    /// `status.applications[0]` of a RECEIVER_STATUS.
    var firstApplication: JSONValue? { self["status"]?["applications"]?.arrayValue?.first }
    /// The `type` string.
    var type: String? { self["type"]?.stringValue }
}

/// A quiet client configuration: no PINGs from us, never declares the device dead (tests are short), request ids
/// from 1.
func quietClientConfiguration() -> CastConnection.Configuration {
    var configuration = CastConnection.Configuration()
    configuration.heartbeat.pingInterval = nil
    configuration.heartbeat.deadAfter = nil
    // Replies the tests spell out carry the ids 1, 2, 3…
    configuration.firstRequestID = 1
    return configuration
}

/// One sender connected to an emulated device over TLS, with everything it receives collected.
struct TestSender: Sendable {
    let connection: CastConnection
    let inbox: Inbox<CastMessage>
    let events: Inbox<CastConnectionEvent>

    static func connect(
        to device: EmulatedDevice,
        configuration: CastConnection.Configuration = quietClientConfiguration(),
        openReceiver: Bool = true
    ) async throws -> TestSender {
        let connection = try await CastConnection.connect(
            host: device.host,
            port: device.port,
            configuration: configuration
        )
        let sender = TestSender(
            connection: connection,
            inbox: Inbox(connection.messages()),
            events: Inbox(connection.events())
        )
        if openReceiver { try await connection.openVirtualConnection(to: CastEndpoint.receiver) }
        return sender
    }

    /// A request to `receiver-0`; returns the reply's JSON.
    func receiver(_ payload: JSONValue, timeout: Duration = .seconds(60)) async throws -> JSONValue {
        try await connection.request(
            namespace: CastNamespace.receiver,
            to: CastEndpoint.receiver,
            payload: payload,
            timeout: timeout
        ).json()
    }

    /// LAUNCH; returns the reply's JSON.
    func launch(_ appID: String, extra: [String: JSONValue] = [:]) async throws -> JSONValue {
        var payload: [String: JSONValue] = ["type": "LAUNCH", "appId": .string(appID)]
        payload.merge(extra) { _, new in new }
        return try await receiver(.object(payload))
    }

    /// LAUNCH an app and open a virtual connection to its transport id; returns the transport id.
    func launchAndConnect(_ appID: String, extra: [String: JSONValue] = [:]) async throws -> String {
        let reply = try await launch(appID, extra: extra)
        let transportID = try #require(reply.firstApplication?["transportId"]?.stringValue, "LAUNCH reply: \(reply)")
        try await connection.openVirtualConnection(to: transportID)
        return transportID
    }

    /// A request on the media namespace to `transportID`; returns the reply's JSON.
    func media(_ payload: JSONValue, to transportID: String, timeout: Duration = .seconds(60)) async throws -> JSONValue
    {
        try await connection.request(
            namespace: CastNamespace.media,
            to: transportID,
            payload: payload,
            timeout: timeout
        )
        .json()
    }

    func close() async { await connection.close() }
}

/// One self-signed identity for the whole run: RSA key generation takes tens of milliseconds.
let sharedTestIdentity: Result<TLSIdentity, any Error> = Result {
    try TLSIdentity.makeSelfSigned(commonName: "cast-receiver-tests")
}

/// A device configuration on a free port.
func testDevice(_ name: String = "Test Device", configure: (inout DeviceConfiguration) -> Void = { _ in })
    -> DeviceConfiguration
{
    var configuration = DeviceConfiguration(friendlyName: name, port: 0)
    configuration.identity = try? sharedTestIdentity.get()
    configure(&configuration)
    return configuration
}

/// Runs `body` with one started emulated device on a manual clock.
func withDevice<Result: Sendable>(
    _ configuration: DeviceConfiguration = testDevice(),
    clock: ManualCastClock = ManualCastClock(),
    _ body: (EmulatedDevice, ManualCastClock) async throws -> Result
) async throws -> Result {
    try await withCastReceiverEmulator(devices: [configuration], clock: clock) { emulator in
        try await body(emulator.devices[0], clock)
    }
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

/// Waits (bounded) until `condition` holds; for state that I/O on another thread changes (not for time passing).
func waitUntil(
    within timeout: Duration = .seconds(60),
    _ what: String,
    _ condition: () -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while !condition() {
        guard clock.now < deadline else { throw WaitTimedOut(what: what, duration: timeout) }
        try await Task.sleep(for: .milliseconds(2))
    }
}

/// Hex text to bytes.
func bytes(fromHex text: String) -> [UInt8]? {
    let characters = Array(text.utf8)
    guard characters.count % 2 == 0 else { return nil }
    var result: [UInt8] = []
    result.reserveCapacity(characters.count / 2)
    var index = 0
    while index < characters.count {
        guard let byte = UInt8(String(decoding: characters[index..<index + 2], as: UTF8.self), radix: 16) else {
            return nil
        }
        result.append(byte)
        index += 2
    }
    return result
}
