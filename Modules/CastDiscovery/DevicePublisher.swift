import CastLogging
@_spi(CastInternal) import CastTransport
import Logging
import NIOConcurrencyHelpers

/// What happens to advertisements, for subscribers of ``DevicePublisher/events()``.
public enum PublisherEvent: Sendable, Hashable {
    /// The advertisement of device `id` is on the network under `name` (probing found no conflict).
    case established(id: String, name: String)
    /// Another host (or advertisement) holds `from`; device `id` is advertised as `to` instead.
    case renamed(id: String, from: String, to: String)
    /// The daemon withdrew the advertisement of device `id`, or the connection to it was lost.
    case failed(id: String?, CastDiscoveryError)
}

/// Advertises Cast devices through avahi-daemon, one entry group per device: what `cast-receiver` uses to make
/// emulated devices discoverable.
///
/// Renames on collision the way Avahi does ("Chromecast-… #2") and withdraws everything on ``close()``.
///
/// ```swift
/// let publisher = try DevicePublisher()          // throws when avahi-daemon is not reachable
/// let name = try await publisher.publish(CastAdvertisement(id: id, friendlyName: "Kitchen", port: port))
/// …
/// publisher.close()                              // goodbye packets: browsers drop the devices
/// ```
public final class DevicePublisher: Sendable {
    private struct Entry: Sendable {
        var group: Int
        var advertisement: CastAdvertisement
        var name: String
        var isEstablished = false
        var waiters: [CheckedContinuation<String, any Error>] = []
    }

    private struct State: Sendable {
        var connection: AvahiConnection?
        var entries: [String: Entry] = [:]
        var nextGroup = 0
    }

    /// The DNS-SD service type advertised.
    public let serviceType: String
    private let state: NIOLockedValueBox<State>
    private let logger: Logger
    private let broadcaster = EventBroadcaster<PublisherEvent>()
    private let input: AsyncStream<AvahiEvent>.Continuation

    /// Connects to avahi-daemon (through the D-Bus system bus, `DBUS_SYSTEM_BUS_ADDRESS`).
    ///
    /// - Parameters:
    ///   - serviceType: Defaults to `_googlecast._tcp`.
    ///   - logger: Where publishing logs; silent by default.
    /// - Throws: ``CastDiscoveryError/Code/daemonUnavailable`` at once when the daemon is not reachable; its message
    ///   says what to do.
    public init(serviceType: String = "_googlecast._tcp", logger: Logger = .castDisabled) throws {
        let (stream, input) = AsyncStream.makeStream(of: AvahiEvent.self)
        let connection = try AvahiConnection { event in input.yield(event) }
        self.serviceType = serviceType
        self.logger = logger.withCategory(CastLogCategory.discoveryAvahi)
        self.input = input
        self.state = NIOLockedValueBox(State(connection: connection))
        Task { [weak self] in
            for await event in stream {
                guard let self else { return }
                self.handle(event)
            }
        }
    }

    deinit { close() }

    /// A new, independent stream of publishing events. It ends on ``close()``.
    public func events() -> CastEventStream<PublisherEvent> { broadcaster.makeStream() }

    /// The name device `id` is currently advertised under (after any renaming), if it is published.
    public func publishedName(of id: String) -> String? { state.withLockedValue { $0.entries[id]?.name } }

    /// The ids of the devices published.
    public var publishedIDs: [String] { state.withLockedValue { $0.entries.keys.sorted() } }

    /// Advertises a device and waits until it is established on the network (after mDNS probing, about a second),
    /// renaming it if the name is taken. Publishing an id that is already published updates it.
    ///
    /// - Returns: The instance name it is advertised under.
    /// - Throws: ``CastDiscoveryError`` — ``CastDiscoveryError/Code/invalidAdvertisement``,
    ///   ``CastDiscoveryError/Code/publishFailed``, ``CastDiscoveryError/Code/notRunning`` after ``close()``.
    @discardableResult
    public func publish(_ advertisement: CastAdvertisement) async throws -> String {
        if let problem = advertisement.problem {
            throw CastDiscoveryError(
                .invalidAdvertisement,
                "cannot advertise '\(advertisement.friendlyName)': \(problem)"
            )
        }
        let fresh = try state.withLockedValue { state -> (AvahiConnection, Int)? in
            guard let connection = state.connection else { throw Self.closedError }
            guard state.entries[advertisement.id] == nil else { return nil }
            state.nextGroup += 1
            state.entries[advertisement.id] = Entry(
                group: state.nextGroup,
                advertisement: advertisement,
                name: advertisement.instanceName ?? advertisement.defaultInstanceName
            )
            return (connection, state.nextGroup)
        }
        guard let (connection, group) = fresh else {
            try await update(advertisement)
            return try await established(advertisement.id)
        }
        do {
            try register(advertisement.id, connection: connection)
        } catch {
            connection.removeGroup(group)
            state.withLockedValue { _ = $0.entries.removeValue(forKey: advertisement.id) }
            throw error
        }
        return try await established(advertisement.id)
    }

    /// Changes what device `advertisement.id` advertises. A TXT-only change (name, status, capabilities) is
    /// replaced in place at once; a new port or instance name re-registers the service (browsers see it go and
    /// come back, which discovery reports as one update).
    ///
    /// - Throws: ``CastDiscoveryError`` — ``CastDiscoveryError/Code/notRunning`` when the id is not published.
    public func update(_ advertisement: CastAdvertisement) async throws {
        if let problem = advertisement.problem {
            throw CastDiscoveryError(
                .invalidAdvertisement,
                "cannot advertise '\(advertisement.friendlyName)': \(problem)"
            )
        }
        let (connection, group, name, reRegister) = try state.withLockedValue {
            state -> (AvahiConnection, Int, String, Bool) in
            guard let connection = state.connection else { throw Self.closedError }
            guard var entry = state.entries[advertisement.id] else {
                throw CastDiscoveryError(.notRunning, "device \(advertisement.id) is not published")
            }
            let old = entry.advertisement
            let reRegister =
                old.port != advertisement.port || old.instanceName != advertisement.instanceName
                || !entry.isEstablished
            if old.instanceName != advertisement.instanceName {
                entry.name = advertisement.instanceName ?? advertisement.defaultInstanceName
            }
            entry.advertisement = advertisement
            state.entries[advertisement.id] = entry
            return (connection, entry.group, entry.name, reRegister)
        }
        if !reRegister {
            try connection.updateTXT(group: group, name: name, type: serviceType, txt: Self.txt(advertisement))
            logger.debug("TXT record updated", metadata: ["cast.service": "\(name)"])
            return
        }
        try register(advertisement.id, connection: connection)
        _ = try await established(advertisement.id)
    }

    /// Withdraws device `id` (goodbye packets go out at once). Nothing happens when it is not published.
    public func withdraw(id: String) {
        let taken = state.withLockedValue { state -> (AvahiConnection, Entry)? in
            guard let connection = state.connection, let entry = state.entries.removeValue(forKey: id) else {
                return nil
            }
            return (connection, entry)
        }
        guard let (connection, entry) = taken else { return }
        connection.removeGroup(entry.group)
        for waiter in entry.waiters {
            waiter.resume(throwing: CastDiscoveryError(.notRunning, "device \(id) was withdrawn while being published"))
        }
        logger.debug("withdrawn", metadata: ["cast.service": "\(entry.name)"])
    }

    /// Withdraws every advertisement and disconnects from the daemon. Idempotent.
    public func close() {
        let taken = state.withLockedValue { state -> (AvahiConnection, [Entry])? in
            guard let connection = state.connection else { return nil }
            defer {
                state.connection = nil
                state.entries = [:]
            }
            return (connection, Array(state.entries.values))
        }
        guard let (connection, entries) = taken else { return }
        connection.close()  // frees the entry groups: the daemon withdraws them with goodbye packets
        input.finish()
        for waiter in entries.flatMap(\.waiters) { waiter.resume(throwing: Self.closedError) }
        broadcaster.finish()
    }

    // MARK: - Internals

    private static var closedError: CastDiscoveryError {
        CastDiscoveryError(.notRunning, "the publisher is closed")
    }

    private static func txt(_ advertisement: CastAdvertisement) -> [[UInt8]] {
        advertisement.txtRecord.map { Array($0.utf8) }
    }

    /// Registers entry `id` under its current name, moving to Avahi's alternative names while the name is taken
    /// locally.
    private func register(_ id: String, connection: AvahiConnection) throws(CastDiscoveryError) {
        for _ in 0..<32 {
            guard
                let entry = state.withLockedValue({ state -> Entry? in
                    state.entries[id]?.isEstablished = false
                    return state.entries[id]
                })
            else { throw Self.closedError }
            let result = try connection.publish(
                group: entry.group,
                name: entry.name,
                type: serviceType,
                port: entry.advertisement.port,
                txt: Self.txt(entry.advertisement)
            )
            switch result {
            case .committed:
                logger.debug("registering", metadata: ["cast.service": "\(entry.name)"])
                return
            case .collision:
                rename(id, from: entry.name)
            case .failed(let reason):
                throw CastDiscoveryError(.publishFailed, "avahi-daemon refused '\(entry.name)': \(reason)")
            }
        }
        throw CastDiscoveryError(.publishFailed, "no free instance name for device \(id) after 32 attempts")
    }

    private func rename(_ id: String, from old: String) {
        let new = AvahiConnection.alternativeServiceName(old)
        state.withLockedValue { $0.entries[id]?.name = new }
        logger.notice("the name '\(old)' is taken; advertising as '\(new)'")
        broadcaster.yield(.renamed(id: id, from: old, to: new))
    }

    /// Waits until entry `id` is established; returns its name.
    private func established(_ id: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            let result = state.withLockedValue { state -> Result<String, CastDiscoveryError>? in
                guard state.connection != nil, var entry = state.entries[id] else {
                    return .failure(CastDiscoveryError(.notRunning, "device \(id) is not published"))
                }
                if entry.isEstablished { return .success(entry.name) }
                entry.waiters.append(continuation)
                state.entries[id] = entry
                return nil
            }
            if let result { continuation.resume(with: result) }
        }
    }

    private func entryID(group: Int) -> String? {
        state.withLockedValue { state in state.entries.first(where: { $0.value.group == group })?.key }
    }

    private func handle(_ event: AvahiEvent) {
        switch event {
        case .groupEstablished(let group):
            guard let id = entryID(group: group) else { return }
            let (name, waiters) = state.withLockedValue { state -> (String, [CheckedContinuation<String, any Error>]) in
                guard var entry = state.entries[id] else { return ("", []) }
                entry.isEstablished = true
                let waiters = entry.waiters
                entry.waiters = []
                state.entries[id] = entry
                return (entry.name, waiters)
            }
            logger.debug("established", metadata: ["cast.service": "\(name)"])
            for waiter in waiters { waiter.resume(returning: name) }
            broadcaster.yield(.established(id: id, name: name))
        case .groupCollision(let group):
            // Another host won the name while we probed: take the next one and register again.
            guard let id = entryID(group: group), let name = publishedName(of: id),
                let connection = state.withLockedValue({ $0.connection })
            else { return }
            rename(id, from: name)
            do {
                try register(id, connection: connection)
            } catch {
                fail(id, error)
            }
        case .groupFailed(let group, let reason):
            guard let id = entryID(group: group) else { return }
            fail(id, CastDiscoveryError(.publishFailed, "avahi-daemon withdrew device \(id): \(reason)"))
        case .clientFailed(let error):
            logger.error("lost avahi-daemon; advertisements are gone: \(error.message)")
            let waiters = state.withLockedValue { state -> [CheckedContinuation<String, any Error>] in
                defer { for id in state.entries.keys { state.entries[id]?.waiters = [] } }
                return state.entries.values.flatMap(\.waiters)
            }
            for waiter in waiters { waiter.resume(throwing: error) }
            broadcaster.yield(.failed(id: nil, error))
        case .serviceFound, .serviceRemoved, .allForNow, .browseFailed, .resolved, .resolveFailed:
            break
        }
    }

    private func fail(_ id: String, _ error: CastDiscoveryError) {
        logger.error("\(error.message)")
        let waiters = state.withLockedValue { state -> [CheckedContinuation<String, any Error>] in
            defer { state.entries[id]?.waiters = [] }
            return state.entries[id]?.waiters ?? []
        }
        for waiter in waiters { waiter.resume(throwing: error) }
        broadcaster.yield(.failed(id: id, error))
    }
}
