import CastDiscovery
@_spi(CastInternal) import CastTransport
import Synchronization

/// A session on a speaker group follows the group's membership on `urn:x-cast:com.google.cast.multizone` (GCK's
/// `GCKCastDeviceStatusListener` multizone callbacks) and sets a member's own volume.
extension CastSession {
    /// The group's membership as last told; `nil` on a device that is no group, or before the group answered.
    public var multizoneStatus: MultizoneStatus? { state.withLock { $0.multizoneStatus } }

    /// A new stream of the group's membership events: the whole status, and members added, updated (their
    /// volume) and removed.
    public func multizoneUpdates() -> CastEventStream<MultizoneEvent> { multizoneBroadcaster.makeStream() }

    /// Asks the group for its members now (GET_STATUS on the multizone namespace).
    ///
    /// - Throws: ``CastSessionError/Code/notConnected`` or ``CastSessionError/Code/suspended`` without a
    ///   connection, ``CastSessionError/Code/timedOut``, or ``CastSessionError/Code/invalidResponse`` when the
    ///   device answers with something else (it is no group).
    @discardableResult
    public func requestMultizoneStatus() async throws -> MultizoneStatus {
        try requireConnected()
        let status: MultizoneStatus
        do {
            status = try await MultizoneStatus.ask(connection, timeout: options.requestTimeout)
        } catch let error as CastTransportError where error.code == .invalidPayload {
            throw CastSessionError(.invalidResponse, error.message, cause: error)
        } catch {
            throw SessionManager.sessionError(error)
        }
        applyMultizone(.status(status))
        return status
    }

    /// Sets one member's own volume, 0…1 (SET_DEVICE_VOLUME); the group's volume stays. Returns once the group
    /// reports the member at that level.
    ///
    /// - Throws: ``CastSessionError/Code/invalidArgument`` for a level outside 0…1 or an id that is no member,
    ///   ``CastSessionError/Code/timedOut`` when the group does not confirm, or a connection error.
    public func setDeviceVolume(_ level: Double, forMultizoneMember memberID: String) async throws {
        guard (0...1).contains(level) else {
            throw CastSessionError(.invalidArgument, "volume \(level) is outside 0…1")
        }
        try await memberVolumeCommand(memberID, ["level": .number(level)]) { $0.volumeLevel == level }
    }

    /// Mutes or unmutes one member (SET_DEVICE_VOLUME with `muted`).
    ///
    /// - Throws: as ``setDeviceVolume(_:forMultizoneMember:)``.
    public func setDeviceMuted(_ muted: Bool, forMultizoneMember memberID: String) async throws {
        try await memberVolumeCommand(memberID, ["muted": .bool(muted)]) { $0.isMuted == muted }
    }

    /// Sends SET_DEVICE_VOLUME and waits for the group to show `confirmed` for the member: in the reply (devices
    /// answer with the member's DEVICE_UPDATED or the whole status) or in an event to everyone, whichever comes.
    private func memberVolumeCommand(
        _ memberID: String,
        _ volume: JSONValue,
        confirmed: @escaping @Sendable (MultizoneMember) -> Bool
    ) async throws {
        try requireConnected()
        let id = CastDeviceID.normalized(memberID)
        if let status = multizoneStatus, status.member(withID: id) == nil {
            throw CastSessionError(.invalidArgument, "\(memberID) is no member of \(device.friendlyName)")
        }
        let updates = multizoneUpdates()
        let request: PendingReply
        do {
            request = try connection.startRequest(
                namespace: CastNamespace.multizone,
                to: CastEndpoint.receiver,
                payload: [
                    "type": "SET_DEVICE_VOLUME", "deviceId": .string(CastDeviceID.hyphenated(id)),
                    "volume": volume,
                ],
                timeout: options.requestTimeout
            )
        } catch {
            throw SessionManager.sessionError(error)
        }
        let deadline = ContinuousClock.now + options.requestTimeout
        let done = await withTaskGroup(of: Bool.self) { group in
            group.addTask { [weak self] in
                guard let reply = try? await request.response().json() else { return false }
                if let event = MultizoneEvent(json: reply) { self?.applyMultizone(event) }
                return self?.multizoneStatus?.member(withID: id).map(confirmed) ?? false
            }
            group.addTask {
                for await _ in updates {
                    if self.multizoneStatus?.member(withID: id).map(confirmed) == true { return true }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(until: deadline)
                return false
            }
            defer { group.cancelAll() }
            for await result in group where result { return true }
            return false
        }
        guard done else {
            throw CastSessionError(.timedOut, "\(device.friendlyName) did not confirm the volume of \(memberID)")
        }
    }

    /// Handles a message of `receiver-0` on the multizone namespace.
    func receiveMultizone(_ message: CastMessage) {
        guard let json = try? message.json(), let event = MultizoneEvent(json: json) else { return }
        applyMultizone(event)
    }

    func applyMultizone(_ event: MultizoneEvent) {
        state.withLock { state in
            var status = state.multizoneStatus ?? MultizoneStatus(members: [])
            status.apply(event)
            state.multizoneStatus = status
        }
        multizoneBroadcaster.yield(event)
    }

    /// Asks a group for its members in the background (at attach and after a resume); a device that is no
    /// group is not asked.
    func refreshMultizoneStatus() {
        guard device.isGroup else { return }
        startInBackground(.refreshMultizone)
    }
}
