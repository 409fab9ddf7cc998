import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One request the media server answered.
public struct FetchRecord: Sendable, Hashable, Codable {
    /// The token of the item asked for; `nil` when the path named none.
    public var itemID: String?
    /// The peer's address.
    public var peer: String
    /// `GET`, `HEAD`, …
    public var method: String
    /// The `Range` header, when sent.
    public var range: String?
    /// The HTTP status answered.
    public var status: Int
}

/// What the server saw: connections and requests, per item and peer. It answers "did the device ever ask?"
/// without polling: waiters are resumed by the request that satisfies them.
final class FetchLog: Sendable {
    /// One wait, resolved once by whichever comes first: the request, the timeout or the server stopping.
    private final class Waiter: Sendable {
        let itemID: String
        let peer: String?
        private let state = NIOLockedValueBox<(continuation: CheckedContinuation<Bool, Never>?, result: Bool?)>(
            (nil, nil)
        )

        init(itemID: String, peer: String?) {
            self.itemID = itemID
            self.peer = peer
        }

        func wait() async -> Bool {
            await withCheckedContinuation { continuation in
                let result = state.withLockedValue { state -> Bool? in
                    if state.result == nil { state.continuation = continuation }
                    return state.result
                }
                if let result { continuation.resume(returning: result) }
            }
        }

        func finish(_ result: Bool) {
            let continuation = state.withLockedValue { state -> CheckedContinuation<Bool, Never>? in
                guard state.result == nil else { return nil }
                state.result = result
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.resume(returning: result)
        }
    }

    private struct State {
        var connections = 0
        var connectionPeers: [String: Int] = [:]
        var records: [String: [FetchRecord]] = [:]
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
        var stopped = false
        var lastActivity = ContinuousClock.now
    }

    /// Records kept per item: enough to diagnose, bounded however long a player streams.
    static let recordsPerItem = 256

    private let state = NIOLockedValueBox(State())

    func connected(peer: String) {
        state.withLockedValue { state in
            state.connections += 1
            state.connectionPeers[peer, default: 0] += 1
        }
    }

    func record(_ record: FetchRecord) {
        let satisfied = state.withLockedValue { state -> [Waiter] in
            state.lastActivity = ContinuousClock.now
            guard let item = record.itemID else { return [] }
            var list = state.records[item, default: []]
            if list.count == Self.recordsPerItem { list.removeFirst(Self.recordsPerItem / 2) }
            list.append(record)
            state.records[item] = list
            return state.waiters.values.filter { $0.itemID == item && Self.matches($0.peer, record.peer) }
        }
        for waiter in satisfied { waiter.finish(true) }
    }

    func records(for itemID: String) -> [FetchRecord] {
        state.withLockedValue { $0.records[itemID] ?? [] }
    }

    var connectionCount: Int { state.withLockedValue { $0.connections } }

    /// When the last request was answered (or the log was created).
    var lastActivity: ContinuousClock.Instant { state.withLockedValue { $0.lastActivity } }

    func connections(from peer: String) -> Int {
        state.withLockedValue { state in
            state.connectionPeers.filter { Self.matches(peer, $0.key) }.values.reduce(0, +)
        }
    }

    /// Waits until `itemID` is asked for (by `peer`, when given), or `timeout` passes on `clock`.
    func waitForRequest<C: Clock>(
        itemID: String,
        from peer: String?,
        timeout: C.Duration,
        clock: C
    ) async -> Bool {
        let waiter = Waiter(itemID: itemID, peer: peer)
        let registration = state.withLockedValue { state -> (key: Int?, answer: Bool) in
            if (state.records[itemID] ?? []).contains(where: { Self.matches(peer, $0.peer) }) { return (nil, true) }
            if state.stopped { return (nil, false) }
            state.nextWaiter += 1
            state.waiters[state.nextWaiter] = waiter
            return (state.nextWaiter, false)
        }
        guard let key = registration.key else { return registration.answer }
        let timer = Task {
            try? await clock.sleep(for: timeout)
            waiter.finish(false)
        }
        let result = await withTaskCancellationHandler {
            await waiter.wait()
        } onCancel: {
            waiter.finish(false)
        }
        timer.cancel()
        _ = state.withLockedValue { $0.waiters.removeValue(forKey: key) }
        return result
    }

    /// Ends every wait, and every later one at once (the server stops).
    func cancelWaiters() {
        let waiters = state.withLockedValue { state in
            state.stopped = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.finish(false) }
    }

    /// Whether a recorded peer is the one asked about. The same host can arrive over another address family: an
    /// IPv4 address mapped into IPv6 (`::ffff:192.168.1.20`) is its IPv4 form, and every loopback address is this
    /// computer (a device on `127.0.0.1` fetching from a server on `::1` connects from `::1`).
    static func matches(_ wanted: String?, _ peer: String) -> Bool {
        guard let wanted = wanted.map(normalized) else { return true }
        let peer = normalized(peer)
        return wanted == peer || (isLoopback(wanted) && isLoopback(peer))
    }

    /// The address in one spelling: IPv4 mapped into IPv6 as IPv4, IPv6 canonical (lower case, zeros compressed,
    /// no zone); anything else (a host name) as given.
    static func normalized(_ address: String) -> String {
        let bare = address.split(separator: "%", maxSplits: 1).first.map(String.init) ?? address
        var bytes = in6_addr()
        guard address.contains(":"), inet_pton(AF_INET6, bare, &bytes) == 1 else { return address }
        let octets = withUnsafeBytes(of: &bytes) { Array($0) }
        if octets[..<10].allSatisfy({ $0 == 0 }), octets[10] == 0xff, octets[11] == 0xff {
            return octets[12...].map(String.init).joined(separator: ".")
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &bytes, &text, socklen_t(text.count)) != nil else { return address }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether a normalized address is a loopback one: `127.0.0.0/8` or `::1`.
    static func isLoopback(_ address: String) -> Bool {
        if address == "::1" { return true }
        var bytes = in_addr()
        return inet_pton(AF_INET, address, &bytes) == 1 && withUnsafeBytes(of: &bytes) { $0[0] } == 127
    }
}
