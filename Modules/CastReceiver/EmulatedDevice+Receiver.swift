import CastTransport

/// The `requestId` a reply carries: the request's own, whatever its JSON type (a receiver written in JavaScript echoes
/// a string, a fraction or an id beyond 2^53 as it came), and 0 for a request without one.
func echoedRequestID(_ requestID: JSONValue?) -> JSONValue {
    requestID?.present ?? 0
}

/// The change a SET_VOLUME's `volume` asks for, on either namespace: `level` a number in 0…1 (outside it is
/// refused, not clamped: §6.1), `muted` a boolean, at least one of them, an explicit null absent; `nil` when it asks
/// for nothing valid (INVALID_PARAMS).
func requestedVolume(_ volume: JSONValue?) -> (level: Double?, muted: Bool?)? {
    let volume = volume?.objectValue ?? [:]
    let level = volume["level"]?.present
    let muted = volume["muted"]?.present
    guard level != nil || muted != nil,
        level == nil || level?.doubleValue.map({ (0...1).contains($0) }) == true,
        muted == nil || muted?.boolValue != nil
    else { return nil }
    return (level?.doubleValue, muted?.boolValue)
}

/// The platform endpoint `receiver-0`: GET_STATUS, LAUNCH, STOP, SET_VOLUME, GET_APP_AVAILABILITY
/// (cast-protocol.md §6).
extension EmulatedDevice {
    func handleReceiver(_ request: JSONValue, from requester: Requester, state: inout State, now: Double) -> [Outgoing]
    {
        let requestId = echoedRequestID(request["requestId"])
        guard let type = request["type"]?.stringValue else {
            return reply(["type": "INVALID_REQUEST", "reason": "INVALID_COMMAND"], requestId, to: requester, state)
        }
        switch type {
        case "GET_STATUS":
            return reply(receiverStatus(state), requestId, to: requester, state)

        case "GET_APP_AVAILABILITY":
            let ids =
                request["appId"]?.arrayValue?.compactMap(\.stringValue) ?? request["appId"]?.stringValue.map { [$0] }
                ?? []
            var availability: [String: JSONValue] = [:]
            for id in ids {
                availability[id] = configuration.apps.contains { $0.id == id } ? "APP_AVAILABLE" : "APP_UNAVAILABLE"
            }
            return reply(
                ["responseType": "GET_APP_AVAILABILITY", "availability": .object(availability)],
                requestId,
                to: requester,
                state
            )

        case "SET_VOLUME":
            guard let change = requestedVolume(request["volume"]) else {
                return reply(["type": "INVALID_REQUEST", "reason": "INVALID_PARAMS"], requestId, to: requester, state)
            }
            if state.faults.refusesVolumeChanges {
                return reply(["type": "INVALID_REQUEST", "reason": "INVALID_COMMAND"], requestId, to: requester, state)
            }
            if configuration.hasFixedVolume {
                // Nothing changes, so nobody else is told anything.
                return reply(receiverStatus(state), requestId, to: requester, state)
            }
            if let level = change.level { state.volumeLevel = level }
            if let muted = change.muted { state.isMuted = muted }
            return reply(receiverStatus(state), requestId, to: requester, state)
                + broadcastReceiverStatus(state, except: requester)

        case "LAUNCH":
            // An invisible virtual connection may not launch (cast-protocol.md §3.1): refused as a command the
            // receiver does not take from it.
            let vc = VirtualConnection(senderID: requester.senderID, endpoint: CastEndpoint.receiver)
            if state.peers[requester.connectionID]?.invisibleConnections.contains(vc) == true {
                return reply(["type": "INVALID_REQUEST", "reason": "INVALID_COMMAND"], requestId, to: requester, state)
            }
            return launch(request, requestId: requestId, from: requester, state: &state, now: now)

        case "STOP":
            if let sessionID = request["sessionId"]?.stringValue, sessionID != state.running.sessionID {
                return reply(
                    ["type": "INVALID_REQUEST", "reason": "INVALID_SESSION_ID"],
                    requestId,
                    to: requester,
                    state
                )
            }
            var out = stopRunningApp(state: &state)
            out += statusAfterLifecycleChange(requestId: requestId, requester: requester, state: state)
            return out

        default:
            return reply(["type": "INVALID_REQUEST", "reason": "INVALID_COMMAND"], requestId, to: requester, state)
        }
    }

    private func launch(
        _ request: JSONValue,
        requestId: JSONValue,
        from requester: Requester,
        state: inout State,
        now: Double
    ) -> [Outgoing] {
        state.launchCount += 1
        let appID = request["appId"]?.stringValue ?? ""
        let appTypes = request["supportedAppTypes"]?.arrayValue?.compactMap(\.stringValue)
        var record = LaunchRecord(
            appID: appID,
            language: request["language"]?.stringValue,
            supportedAppTypes: appTypes,
            appParams: request["appParams"],
            credentials: request["credentialsData"]?["credentials"]?.stringValue,
            credentialsType: request["credentialsData"]?["credentialsType"]?.stringValue,
            succeeded: false
        )
        guard !appID.isEmpty else {
            state.launches.append(record)
            return reply(["type": "LAUNCH_ERROR", "reason": "BAD_PARAMETER"], requestId, to: requester, state)
        }
        guard let app = configuration.apps.first(where: { $0.id == appID }),
            app.kind != .androidTV || appTypes?.contains("ANDROID_TV") == true
        else {
            state.launches.append(record)
            return reply(["type": "LAUNCH_ERROR", "reason": "NOT_FOUND"], requestId, to: requester, state)
        }
        record.succeeded = true
        state.launches.append(record)

        // Launching the app that already runs joins it, as devices do.
        if state.running.app.id == appID {
            state.running.launch = record
            return statusAfterLifecycleChange(requestId: requestId, requester: requester, state: state)
        }
        var out = stopRunningApp(state: &state, replacing: true)
        let sessionID = configuration.sessionIDGenerator()
        var player: MediaPlayer<Requester>?
        if app.servesMedia {
            var settings = MediaPlayer<Requester>.Settings()
            settings.defaultDuration = configuration.defaultMediaDuration
            settings.loadDuration = configuration.loadDuration
            settings.prerollAd = configuration.prerollAd
            settings.liveStreamsCannotPause = configuration.liveStreamsCannotPause
            if let failure = configuration.contentFailure { settings.failure = failure }
            player = MediaPlayer(settings: settings)
        }
        state.running = RunningApp(
            app: app,
            sessionID: sessionID,
            transportID: state.faults.transportIDDiffersFromSessionID ? "web-\(state.launchCount)" : sessionID,
            launch: record,
            player: player
        )
        if let delay = state.faults.listsLaunchedAppWholeAfter {
            state.running.isListedWhole = false
            _ = clock.schedule(after: .emulatorSeconds(delay)) { [weak self] in self?.listWhole(sessionID) }
        }
        logger.debug("launched", metadata: ["cast.app": "\(appID)", "cast.session_id": "\(sessionID)"])
        out += statusAfterLifecycleChange(requestId: requestId, requester: requester, state: state)
        return out
    }

    /// Gives the running app a new transport id and tells every sender, as some devices do while an app runs:
    /// senders must follow it (pychromecast connects to each new one). Virtual connections to the old id end.
    public func moveAppTransport() {
        emit { state in
            guard state.running.app.kind != .idleScreen else { return [] }
            let old = state.running.transportID
            state.launchCount += 1
            state.running.transportID = "web-\(state.launchCount)"
            for (id, var peer) in state.peers {
                peer.virtualConnections = peer.virtualConnections.filter { $0.endpoint != old }
                state.peers[id] = peer
            }
            return broadcastReceiverStatus(state, except: nil)
        }
    }

    /// Lists the app of `sessionID` whole from now on, and tells every sender (the late-listing fault).
    private func listWhole(_ sessionID: String) {
        emit { state in
            guard state.running.sessionID == sessionID, !state.running.isListedWhole else { return [] }
            state.running.isListedWhole = true
            return broadcastReceiverStatus(state, except: nil)
        }
    }

    /// Ends the running app: CLOSE from its transport to every sender connected to it, then Backdrop.
    func stopRunningApp(state: inout State, replacing: Bool = false) -> [Outgoing] {
        guard state.running.app.kind != .idleScreen || replacing else { return [] }
        if let streaming = state.running.streaming {
            wireLog?.recordStreaming(streaming, device: configuration.id)
            Task { await streaming.close() }
        }
        let transportID = state.running.transportID
        var out: [Outgoing] = []
        for (id, var peer) in state.peers.sorted(by: { $0.key < $1.key }) {
            let attached = peer.virtualConnections.filter { $0.endpoint == transportID }
            for vc in attached.sorted(by: { $0.senderID < $1.senderID }) {
                out.append(
                    Outgoing(
                        connection: peer.connection,
                        message: CastMessage(
                            sourceID: transportID,
                            destinationID: vc.senderID,
                            namespace: CastNamespace.connection,
                            json: ["type": "CLOSE", "reasonCode": 5]
                        )
                    )
                )
                peer.virtualConnections.remove(vc)
            }
            state.peers[id] = peer
        }
        state.mediaTimer?.cancel()
        state.mediaTimer = nil
        state.mediaTimerDeadline = nil
        let sessionID = configuration.sessionIDGenerator()
        state.running = RunningApp(
            app: .backdrop,
            sessionID: sessionID,
            transportID: sessionID,
            launch: nil,
            player: nil
        )
        return out
    }

    /// After LAUNCH/STOP: the reply with the request's id plus a broadcast to everyone else, or (fault) only a
    /// broadcast with requestId 0 to everyone.
    private func statusAfterLifecycleChange(requestId: JSONValue, requester: Requester, state: State) -> [Outgoing] {
        if state.faults.launchRepliesOnlyByBroadcast {
            return broadcastReceiverStatus(state, except: nil)
        }
        return reply(receiverStatus(state), requestId, to: requester, state)
            + broadcastReceiverStatus(state, except: requester)
    }

    /// `DEVICE_INFO`: what the device says about itself to a sender that knows only its address.
    func deviceInfo(requestID: JSONValue) -> JSONValue {
        [
            "type": "DEVICE_INFO", "requestId": requestID, "deviceId": .string(configuration.id),
            "friendlyName": .string(configuration.friendlyName), "deviceModel": .string(configuration.model),
            "capabilities": .number(Double(configuration.capabilities)),
        ]
    }

    func receiverStatus(_ state: State) -> JSONValue {
        let running = state.running
        var app = Self.statusEntry(running.app, sessionID: running.sessionID, transportID: running.transportID)
        if !running.isListedWhole {
            app["namespaces"] = nil
            app["transportId"] = nil
        }
        var applications = [app]
        if let first = state.faults.listsAppBeforeRunningApp {
            let sessionID = state.listedFirstSessionID
            applications.insert(Self.statusEntry(first, sessionID: sessionID, transportID: sessionID), at: 0)
        }
        return [
            "type": "RECEIVER_STATUS",
            "status": [
                "applications": .array(applications),
                "isActiveInput": true,
                "isStandBy": false,
                "userEq": [:],
                "volume": [
                    "controlType": configuration.hasFixedVolume ? "fixed" : "attenuation",
                    "level": .number(state.volumeLevel),
                    "muted": .bool(state.isMuted),
                    "stepInterval": .number(configuration.volumeStepInterval),
                ],
            ],
        ]
    }

    /// An app as RECEIVER_STATUS lists it.
    private static func statusEntry(_ app: EmulatedApp, sessionID: String, transportID: String) -> JSONValue {
        [
            "appId": .string(app.id),
            "displayName": .string(app.displayName),
            "iconUrl": "",
            "isIdleScreen": .bool(app.kind == .idleScreen),
            "launchedFromCloud": false,
            "namespaces": .array(app.namespaces.map { ["name": .string($0)] }),
            "sessionId": .string(sessionID),
            "statusText": .string(app.kind == .idleScreen ? "" : app.displayName),
            "transportId": .string(transportID),
            "universalAppId": .string(app.id),
            "appType": .string(app.kind == .androidTV ? "ANDROID_TV" : "WEB"),
        ]
    }

    func reply(_ payload: JSONValue, _ requestId: JSONValue, to requester: Requester, _ state: State) -> [Outgoing] {
        guard let peer = state.peers[requester.connectionID] else { return [] }
        var payload = payload
        let asBroadcast = state.faults.statusOnlyByBroadcast && payload["type"]?.stringValue == "RECEIVER_STATUS"
        payload["requestId"] = asBroadcast ? 0 : requestId
        return [
            Outgoing(
                connection: peer.connection,
                message: CastMessage(
                    sourceID: CastEndpoint.receiver,
                    destinationID: state.faults.addressesRepliesToBroadcast || asBroadcast
                        ? CastEndpoint.broadcast : requester.senderID,
                    namespace: CastNamespace.receiver,
                    json: payload
                )
            )
        ]
    }

    /// RECEIVER_STATUS with requestId 0 to every connection holding a virtual connection to `receiver-0`.
    func broadcastReceiverStatus(_ state: State, except excluded: Requester?) -> [Outgoing] {
        var payload = receiverStatus(state)
        payload["requestId"] = 0
        var out: [Outgoing] = []
        for (id, peer) in state.peers.sorted(by: { $0.key < $1.key }) {
            let listeners = peer.virtualConnections.filter { $0.endpoint == CastEndpoint.receiver }
            guard !listeners.isEmpty else { continue }
            if let excluded, excluded.connectionID == id, listeners.count == 1 { continue }
            out.append(
                Outgoing(
                    connection: peer.connection,
                    message: CastMessage(
                        sourceID: CastEndpoint.receiver,
                        destinationID: CastEndpoint.broadcast,
                        namespace: CastNamespace.receiver,
                        json: payload
                    )
                )
            )
        }
        return out
    }
}
