import CastTransport

extension CastConnection {
    /// A request to `receiver-0`, answered by its reply or, on receivers that report a command only by
    /// broadcasting their new status, by the first RECEIVER_STATUS broadcast that `isAnsweredBy` accepts.
    func receiverRequest(
        _ payload: JSONValue,
        timeout: Duration?,
        answeredBy isAnsweredBy: @escaping @Sendable (DeviceStatus) -> Bool
    ) async throws -> JSONValue {
        try await request(
            namespace: CastNamespace.receiver,
            to: CastEndpoint.receiver,
            payload: payload,
            timeout: timeout
        ) {
            $0["type"]?.stringValue == "RECEIVER_STATUS" && isAnsweredBy(DeviceStatus(json: $0))
        }
    }
}

extension DeviceStatus {
    /// Whether a status shows what a SET_VOLUME `payload` asked for.
    static func showsVolume(of payload: JSONValue) -> @Sendable (DeviceStatus) -> Bool {
        let level = payload["volume"]?["level"]?.doubleValue
        let muted = payload["volume"]?["muted"]?.boolValue
        return { status in
            if let level, abs((status.volumeLevel ?? -1) - level) > 0.005 { return false }
            if let muted, status.isMuted != muted { return false }
            return level != nil || muted != nil
        }
    }

    /// Whether a status read after a dropped SET_VOLUME `payload` still shows what `before` showed of what the
    /// payload sets: then the device never acted on it, and sending it again is safe. (No `before`: nothing to
    /// compare, sent again as an idempotent command.)
    static func leavesVolumeAsItWas(for payload: JSONValue) -> @Sendable (DeviceStatus?, DeviceStatus) -> Bool {
        let setsLevel = payload["volume"]?["level"] != nil
        let setsMuted = payload["volume"]?["muted"] != nil
        return { before, after in
            guard let before else { return true }
            if setsLevel, abs((after.volumeLevel ?? -1) - (before.volumeLevel ?? -1)) > 0.005 { return false }
            if setsMuted, after.isMuted != before.isMuted { return false }
            return true
        }
    }
}
