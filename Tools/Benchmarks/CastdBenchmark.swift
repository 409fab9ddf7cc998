import CastDiscovery
import CastMedia
import CastService
import CastSession
import CastTransport
import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// 7. castd (`--castd`, its own mode; ~2–3 minutes): the service over `cast-receiver --devices N` running in a
///    separate process, so that only castd's memory and CPU are counted here. One table:
///    - N devices in one castd: time to follow them all, memory, threads, idle CPU with heartbeats running, and
///      `GET /v1/devices` listing them all;
///    - a media command's round trip through HTTP beside the library's own for the same command and device;
///    - 100 event-stream clients and one that never reads: how long after the hub each client has each event,
///      and whether the stalled one holds the others back (it must not) and is dropped (it must be);
///    - the `cast` CLI: `cast pause --host` (TLS, join, status) beside `cast pause --via` (one request to castd).
func castdBenchmark(devices count: Int, runs: (String) -> Bool) async throws {
    guard count >= 3 else { throw BenchmarkFailure("--castd needs at least 3 devices (--devices)") }
    var table = FigureTable()
    let receiver = try await ReceiverProcess.start(devices: count)
    defer { receiver.stop() }
    guard receiver.ports.count == count else {
        throw BenchmarkFailure("cast-receiver listed \(receiver.ports.count) devices, not \(count)")
    }
    let stateDirectory = temporaryDirectory("cast-bench-castd")
    defer { try? FileManager.default.removeItem(atPath: stateDirectory) }

    _ = MultiThreadedEventLoopGroup.singleton.next()  // NIO's threads start lazily: not the hub's to count
    let before = processFigures()
    let hub = try await startedHub(ports: receiver.ports, stateDirectory: stateDirectory)
    let server = try await ServedHub(hub)
    let ids = receiver.ports.map { CastDevice.staticDevice(host: "127.0.0.1", port: $0).id }

    if runs("devices") {
        try await measureDevices(hub, server, ids: ids, before: before, receiver: receiver, into: &table)
    }
    if runs("commands") {
        try await measureCommandRoundTrip(hub, server, id: ids[0], port: receiver.ports[0], into: &table)
    }
    if runs("events") { try await measureEventStreams(hub, server, ids: ids, into: &table) }
    if runs("cli") {
        try await measureCLI(server, id: ids[0], port: receiver.ports[0], stateDirectory: stateDirectory, into: &table)
    }

    server.stop()
    await hub.stop()
    table.print()
}

// MARK: - 1. N devices in one castd

/// Follows every device (at most 50 at a time), then reads memory, threads, idle CPU and the device list.
private func measureDevices(
    _ hub: DeviceHub,
    _ server: ServedHub,
    ids: [String],
    before: (rssMiB: Double, threads: Int),
    receiver: ReceiverProcess,
    into table: inout FigureTable
) async throws {
    let count = ids.count
    let (followTime, failures) = await followAll(hub, ids: ids, inFlight: 50)
    table.add("\(count) devices: follow all (≤ 50 at a time)", "\(format(followTime, "%.2f")) s, \(failures) failed")
    let after = processFigures()
    table.add(
        "\(count) devices: RSS before → after",
        "\(Int(before.rssMiB)) → \(Int(after.rssMiB)) MiB, "
            + "\(format((after.rssMiB - before.rssMiB) * 1024 / Double(count), "%.0f")) KiB per device"
    )
    table.add("\(count) devices: threads", "\(after.threads) (before the hub: \(before.threads))")

    // Idle: nothing asked, heartbeats (a PING after 5 s of silence each way) and their TLS keep running.
    let idle = Duration.seconds(10)
    let (ownStart, emulatorStart, wallStart) = (
        ownCPUSeconds(), cpuSeconds(ofProcess: receiver.processID), ContinuousClock.now
    )
    try await Task.sleep(for: idle)
    let wall = seconds(ContinuousClock.now - wallStart)
    let own = (ownCPUSeconds() - ownStart) / wall * 100
    let emulator = (cpuSeconds(ofProcess: receiver.processID) - emulatorStart) / wall * 100
    table.add(
        "\(count) devices: idle CPU over \(format(wall, "%.0f")) s (heartbeats on)",
        "\(format(own, "%.1f")) % of one core (the emulator's process: \(format(emulator, "%.1f")) %)"
    )

    let client = try await KeepAliveHTTPClient.connect(port: server.port)
    var samples: [Double] = []
    var listed = 0
    var withStatus = 0
    var bytes = 0
    for _ in 0..<20 {
        let start = ContinuousClock.now
        let reply = try await client.send(.GET, "/v1/devices")
        samples.append(seconds(ContinuousClock.now - start) * 1000)
        let devices = try JSONValue(parsing: reply.text)["devices"]?.arrayValue ?? []
        listed = devices.count
        withStatus = devices.filter { $0["status"].map { !$0.isNull } == true }.count
        bytes = reply.body.readableBytes
    }
    await client.close()
    table.add(
        "GET /v1/devices (\(listed) listed, \(withStatus) with status, \(bytes / 1024) KiB), 20×",
        "median \(format(percentile(samples, 0.5), "%.1f")) ms, max \(format(samples.max() ?? .nan, "%.1f")) ms"
    )
}

/// Follows every device, `inFlight` at a time; answers the wall time and how many could not be followed.
private func followAll(_ hub: DeviceHub, ids: [String], inFlight: Int) async -> (seconds: Double, failures: Int) {
    let start = ContinuousClock.now
    let failures = await withTaskGroup(of: Bool.self) { group in
        var pending = ids.makeIterator()
        func addNext() {
            guard let id = pending.next() else { return }
            group.addTask { (try? await hub.activity(of: id)) != nil }
        }
        for _ in 0..<inFlight { addNext() }
        var failures = 0
        for await followed in group {
            if !followed { failures += 1 }
            addNext()
        }
        return failures
    }
    return (seconds(ContinuousClock.now - start), failures)
}

// MARK: - 2. A command's round trip: HTTP beside the library

/// PAUSE and PLAY alternately on one device: through the library's own session, through the hub in this process
/// and through HTTP to the hub; p50/p99/p99.9 of each and HTTP's ratio to the library. Beside them, where HTTP's
/// extra time goes: requests that reach no device (Hummingbird alone; the API with a state's JSON) and the CPU
/// time this process spends per command each way.
private func measureCommandRoundTrip(
    _ hub: DeviceHub,
    _ server: ServedHub,
    id: String,
    port: Int,
    into table: inout FigureTable
) async throws {
    let rounds = 2_000
    let devicePath = "/v1/devices/" + escaped(id)
    func figures(_ samples: [Double]) -> String {
        [0.5, 0.99, 0.999].map { format(percentile(samples, $0), "%.3f") }.joined(separator: " / ") + " ms"
    }
    var cpu = ownCPUSeconds()
    var switches = ownContextSwitches()
    func cpuPerRound() -> String {
        let now = ownCPUSeconds()
        let switchesNow = ownContextSwitches()
        defer { (cpu, switches) = (now, switchesNow) }
        return format((now - cpu) / Double(rounds) * 1e6, "%.0f") + " µs CPU, "
            + format(Double(switchesNow - switches) / Double(rounds), "%.1f") + " context switches"
    }
    let library = try await libraryRoundTrips(port: port, rounds: rounds)
    let libraryCPU = cpuPerRound()
    let inProcess = try await hubRoundTrips(hub, id: id, rounds: rounds)
    let hubCPU = cpuPerRound()
    let http = try await httpRoundTrips(port: server.port, rounds: rounds) {
        (.POST, devicePath + "/media/" + ($0.isMultiple(of: 2) ? "pause" : "play"))
    }
    let httpCPU = cpuPerRound()
    let blocking = try await BlockingHTTPClient.roundTrips(port: server.port, rounds: rounds) {
        ("POST", devicePath + "/media/" + ($0.isMultiple(of: 2) ? "pause" : "play"))
    }
    let blockingCPU = cpuPerRound()
    let hummingbird = try await httpRoundTrips(port: server.port, rounds: rounds) { _ in (.HEAD, "/remote.css") }
    let hummingbirdCPU = cpuPerRound()
    let state = try await httpRoundTrips(port: server.port, rounds: rounds) { _ in (.GET, devicePath) }
    let stateCPU = cpuPerRound()
    table.add(
        "pause/play, library (CastSession + RemoteMediaClient), \(rounds)×",
        figures(library) + " (p50/p99/p99.9), \(libraryCPU)"
    )
    table.add("pause/play, DeviceHub.perform in-process, \(rounds)×", figures(inProcess) + ", \(hubCPU)")
    table.add(
        "pause/play, HTTP keep-alive POST …/media/{cmd}, \(rounds)×",
        figures(http.samples) + ", \(httpCPU), \(http.failures) not 200"
    )
    table.add(
        "pause/play, HTTP as above from a blocking client thread, \(rounds)×",
        figures(blocking.samples) + ", \(blockingCPU), \(blocking.failures) not 200"
    )
    func ratios(_ samples: [Double]) -> String {
        "p50 \(format(percentile(samples, 0.5) / percentile(library, 0.5), "%.2f"))×, "
            + "p99 \(format(percentile(samples, 0.99) / percentile(library, 0.99), "%.2f"))×"
    }
    table.add(
        "HTTP ÷ library (target ≤ 1.5×): NIO client, blocking client",
        ratios(http.samples) + "; " + ratios(blocking.samples)
    )
    table.add(
        "  no device: HEAD /remote.css (Hummingbird only), \(rounds)×",
        figures(hummingbird.samples) + ", \(hummingbirdCPU)"
    )
    table.add(
        "  no device: GET /v1/devices/{id} (API + state JSON), \(rounds)×",
        figures(state.samples) + ", \(stateCPU)"
    )
}

/// The library's own round trip: a session that launches the Default Media Receiver, loads media, then PAUSE and
/// PLAY answered by the receiver. The session is left with the media playing, for castd to join.
private func libraryRoundTrips(port: Int, rounds: Int) async throws -> [Double] {
    var options = CastOptions()
    options.resumesSavedSessions = false
    let context = CastContext(options: options)
    let session = try await context.sessionManager.startSession(
        with: CastDevice.staticDevice(host: "127.0.0.1", port: port)
    )
    guard let client = session.remoteMediaClient else { throw BenchmarkFailure("the session has no media client") }
    var media = MediaInformation(contentID: "https://media.example.com/movie.mp4", contentType: "video/mp4")
    media.duration = 7200
    try await client.loadMedia(media).response()
    var samples: [Double] = []
    for round in 0..<rounds {
        let start = ContinuousClock.now
        try await (round.isMultiple(of: 2) ? client.pause() : client.play()).response()
        samples.append(seconds(ContinuousClock.now - start) * 1000)
    }
    await context.sessionManager.endSession(stopCasting: false)
    return samples
}

/// The same commands through ``DeviceHub/perform(_:on:)``: castd's logic without HTTP (it joins the running app).
private func hubRoundTrips(_ hub: DeviceHub, id: String, rounds: Int) async throws -> [Double] {
    _ = try await hub.perform(.control(.play), on: id)  // joins the session outside the figures
    var samples: [Double] = []
    for round in 0..<rounds {
        let start = ContinuousClock.now
        _ = try await hub.perform(.control(round.isMultiple(of: 2) ? .pause : .play), on: id)
        samples.append(seconds(ContinuousClock.now - start) * 1000)
    }
    return samples
}

/// `rounds` requests on one keep-alive connection, the `round`th being `request(round)`; their times in
/// milliseconds and how many were not answered 200.
private func httpRoundTrips(
    port: Int,
    rounds: Int,
    _ request: (Int) -> (HTTPMethod, String)
) async throws -> (samples: [Double], failures: Int) {
    let client = try await KeepAliveHTTPClient.connect(port: port)
    let (method, path) = request(1)
    _ = try await client.send(method, path)  // warms up outside the figures (the hub joins the session)
    var samples: [Double] = []
    var failures = 0
    for round in 0..<rounds {
        let (method, path) = request(round)
        let start = ContinuousClock.now
        let reply = try await client.send(method, path)
        samples.append(seconds(ContinuousClock.now - start) * 1000)
        if reply.status != 200 { failures += 1 }
    }
    await client.close()
    return (samples, failures)
}

// MARK: - 3. 100 event-stream clients and a stalled one

/// 100 clients on `GET /v1/events` and one that never reads: 200 volume changes one after another (each event's
/// delay from the hub's own subscriber to every client), then ten batches of 100 changes at once, then batches of
/// 500 with 10 reading clients left until the stalled client is dropped, and where its events went meanwhile.
private func measureEventStreams(
    _ hub: DeviceHub,
    _ server: ServedHub,
    ids: [String],
    into table: inout FigureTable
) async throws {
    let run = try await EventStreamRun.start(hub, server, ids: ids)
    try await run.pacedChanges(into: &table)
    try await run.batchedChanges(into: &table)
    try await run.changesUntilStalledIsDropped(into: &table)
    await run.close()
}

/// The clients of the event-stream figures and what they share: the hub, its own subscriber as the reference,
/// a connection for `/metrics`, and where the stream stood when the stalled client connected.
private final class EventStreamRun: Sendable {
    let hub: DeviceHub
    let server: ServedHub
    let ids: [String]
    let metrics: KeepAliveHTTPClient
    let reference: ReferenceSubscriber
    let clients: [EventStreamClient]
    let stalled: StalledEventStreamClient
    /// `castd_event_subscribers` with every client connected.
    let subscribers: Int
    /// The first event the stalled client should have had, and what client 0 had read by then.
    let stalledFrom: (id: Int, bytes: Int)

    private init(
        hub: DeviceHub,
        server: ServedHub,
        ids: [String],
        metrics: KeepAliveHTTPClient,
        reference: ReferenceSubscriber,
        clients: [EventStreamClient],
        stalled: StalledEventStreamClient,
        subscribers: Int,
        stalledFrom: (id: Int, bytes: Int)
    ) {
        self.hub = hub
        self.server = server
        self.ids = ids
        self.metrics = metrics
        self.reference = reference
        self.clients = clients
        self.stalled = stalled
        self.subscribers = subscribers
        self.stalledFrom = stalledFrom
    }

    /// Subscribes the reference, connects 100 clients, has them all read a first change, then connects the
    /// stalled client.
    static func start(_ hub: DeviceHub, _ server: ServedHub, ids: [String]) async throws -> EventStreamRun {
        let metrics = try await KeepAliveHTTPClient.connect(port: server.port)
        let reference = ReferenceSubscriber(hub)
        let baseline = try await eventSubscribers(metrics)
        var clients: [EventStreamClient] = []
        for _ in 0..<100 { clients.append(try await EventStreamClient.connect(port: server.port)) }
        try await waitForEventSubscribers(metrics, baseline + 100)
        try await changeVolume(hub, of: [ids[1]], to: 0.35, reference: reference, clients: clients)
        let stalled = try await StalledEventStreamClient.connect(port: server.port)
        try await waitForEventSubscribers(metrics, baseline + 101)
        return EventStreamRun(
            hub: hub,
            server: server,
            ids: ids,
            metrics: metrics,
            reference: reference,
            clients: clients,
            stalled: stalled,
            subscribers: try await eventSubscribers(metrics),
            stalledFrom: (reference.arrivals.latestID + 1, clients[0].arrivals.bytes)
        )
    }

    /// 200 volume changes of one device, each answered before the next is sent, each higher than the one before
    /// (so that a status published out of order shows).
    func pacedChanges(into table: inout FigureTable) async throws {
        for change in 0..<200 {
            let level = ((0.4 + Double(change) * 0.003) * 1000).rounded() / 1000
            _ = try await hub.perform(.setVolume(level: level, muted: nil), on: ids[1])
        }
        await settle(clients, reference: reference)
        let events = stalledFrom.id...max(stalledFrom.id, reference.arrivals.latestID)
        let paced = delays(clients, reference: reference.arrivals, ids: events)
        table.add(
            "events: 100 clients + 1 stalled; 200 volume changes, paced",
            "\(paced.events) events (\(reference.repeats(in: events)) repeat the device's previous status, "
                + "\(reference.staleVolumes(in: events)) are older than one before); "
                + "delay hub → client p50 \(format(paced.p50, "%.2f")) / p99 \(format(paced.p99, "%.2f")) / "
                + "max \(format(paced.max, "%.2f")) ms"
        )
        table.add(
            "events: clients that got every one of them",
            "\(paced.complete)/100; event subscribers with the stalled one: \(subscribers) (the hub's own + 101)"
        )
    }

    /// Ten batches of 100 changes at once (one on each of 100 devices), each read by every client before the
    /// next: how long until all 100 clients have all of a batch.
    func batchedChanges(into table: inout FigureTable) async throws {
        let first = reference.arrivals.latestID + 1
        var times: [Double] = []
        for batch in 0..<10 {
            let start = ContinuousClock.now
            try await changeVolume(
                hub,
                of: Array(ids[2..<min(ids.count, 102)]),
                to: batch.isMultiple(of: 2) ? 0.5 : 0.6,
                reference: reference,
                clients: clients
            )
            times.append(seconds(ContinuousClock.now - start) * 1000)
        }
        await settle(clients, reference: reference)
        let burst = delays(clients, reference: reference.arrivals, ids: first...reference.arrivals.latestID)
        table.add(
            "events: then 10 × 100 changes at once (\(burst.events) events)",
            "\(burst.complete)/100 clients got all; a batch reached all 100 in median "
                + "\(format(percentile(times, 0.5), "%.0f")) ms, max \(format(times.max() ?? .nan, "%.0f")) ms"
        )
    }

    /// Batches of 500 changes at once, with 10 reading clients left, until the stalled client is dropped (at most
    /// 60 s); then what it was owed and where that was: the kernel's two socket buffers hold what they take, the
    /// hub at most subscriberBuffer + eventWindow events not yet pulled, and anything beyond would be in castd.
    func changesUntilStalledIsDropped(into table: inout FigureTable) async throws {
        for client in clients[10...] { await client.close() }
        let readers = Array(clients.prefix(10))
        let first = reference.arrivals.latestID + 1
        var kernel = 0
        var dropped = false
        var batch = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while !dropped, ContinuousClock.now < deadline {
            batch += 1
            try await changeVolume(
                hub,
                of: Array(ids[2..<min(ids.count, 502)]),
                to: batch.isMultiple(of: 2) ? 0.5 : 0.6,
                reference: reference,
                clients: readers
            )
            dropped = try await eventSubscribers(metrics) == subscribers - 91
            if !dropped { kernel = stalledBytesInKernel() }
        }
        await settle(readers, reference: reference)
        let events = reference.arrivals.latestID - stalledFrom.id + 1
        let owed = readers[0].arrivals.bytes - stalledFrom.bytes
        let mebibytes = format(Double(owed) / 1_048_576, "%.1f") + " MiB"
        let hubBound = hub.options.subscriberBuffer + hub.options.eventWindow
        let inCastd = owed - kernel - hubBound * owed / max(1, events)
        table.add(
            "events: stalled client dropped?",
            dropped
                ? "yes, after \(events) events (\(mebibytes)) since it connected; the kernel held \(kernel / 1024) KiB"
                : "NO, still subscribed after \(events) events (\(mebibytes)): \(kernel / 1024) KiB in the kernel, "
                    + "≤ \(hubBound) events in the hub → ≥ \(format(Double(inCastd) / 1_048_576, "%.1f")) MiB in castd"
        )
        let last = delays(readers, reference: reference.arrivals, ids: first...reference.arrivals.latestID)
        table.add("events: the 10 clients left meanwhile (\(last.events) events)", "\(last.complete)/10 got every one")
    }

    /// What the kernel holds of the stalled client's stream: castd's send queue and the client's unread bytes.
    private func stalledBytesInKernel() -> Int {
        let sent = socketQueues(localPort: server.port, remotePort: stalled.localPort)?.send ?? 0
        let unread = socketQueues(localPort: stalled.localPort, remotePort: server.port)?.receive ?? 0
        return sent + unread
    }

    func close() async {
        for client in clients { await client.close() }
        await stalled.close()
        reference.stop()
        await metrics.close()
    }
}

/// The hub's own subscriber, in this process: when it sees each event (what clients are measured from), and each
/// status event's device and what it says, to tell a change from a repeat.
private final class ReferenceSubscriber: Sendable {
    let arrivals = EventArrivals()
    private let statuses = NIOLockedValueBox<[Int: (device: String, status: String, volume: Double)]>([:])
    private let task = NIOLockedValueBox<Task<Void, Never>?>(nil)

    init(_ hub: DeviceHub) {
        let events = hub.events()
        task.withLockedValue {
            $0 = Task { [arrivals, statuses] in
                for await event in events {
                    arrivals.record(event.id, at: .now)
                    guard case .status(let activity) = event.change else { continue }
                    let status = activity.deviceStatus
                    let said =
                        "\(status.volumeLevel) \(status.isMuted) \(activity.application?.sessionID ?? "-") "
                        + "\(activity.mediaStatus.map { "\($0.playerState)" } ?? "-") \(activity.isReachable)"
                    statuses.withLockedValue { $0[event.id] = (activity.device.id, said, status.volumeLevel ?? -1) }
                }
            }
        }
    }

    /// How many status events of `ids` say what the previous status event of the same device said.
    func repeats(in ids: ClosedRange<Int>) -> Int {
        statuses.withLockedValue { statuses in
            var last: [String: String] = [:]
            var repeats = 0
            for id in ids {
                guard let (device, status, _) = statuses[id] else { continue }
                if last[device] == status { repeats += 1 }
                last[device] = status
            }
            return repeats
        }
    }

    /// How many status events of `ids` say a lower volume than an earlier one of the same device did: stale
    /// statuses, when the volume was only ever raised.
    func staleVolumes(in ids: ClosedRange<Int>) -> Int {
        statuses.withLockedValue { statuses in
            var highest: [String: Double] = [:]
            var stale = 0
            for id in ids {
                guard let (device, _, volume) = statuses[id] else { continue }
                if volume < highest[device, default: 0] { stale += 1 }
                highest[device] = max(volume, highest[device, default: 0])
            }
            return stale
        }
    }

    func stop() { task.withLockedValue { $0?.cancel() } }
}

/// Sets the volume of `devices` at once, then waits until every client has read what the hub published meanwhile.
private func changeVolume(
    _ hub: DeviceHub,
    of devices: [String],
    to level: Double,
    reference: ReferenceSubscriber,
    clients: [EventStreamClient]
) async throws {
    let before = reference.arrivals.latestID
    await withTaskGroup(of: Void.self) { group in
        for id in devices { group.addTask { _ = try? await hub.perform(.setVolume(level: level, muted: nil), on: id) } }
    }
    let deadline = ContinuousClock.now + .seconds(5)
    while reference.arrivals.latestID == before, ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(1))
    }
    await waitForCatchUp(clients, to: reference.arrivals.latestID)
}

/// `castd_event_subscribers` from `GET /metrics`: the hub's subscribers (HTTP clients and in-process ones).
private func eventSubscribers(_ client: KeepAliveHTTPClient) async throws -> Int {
    let text = try await client.send(.GET, "/metrics").text
    let line = text.split(separator: "\n").first { $0.hasPrefix("castd_event_subscribers ") }
    return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }.map { Int($0) } ?? -1
}

/// Waits (at most 10 s) until `castd_event_subscribers` is `wanted`.
private func waitForEventSubscribers(_ client: KeepAliveHTTPClient, _ wanted: Int) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while try await eventSubscribers(client) != wanted, ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Lets the hub publish what the last changes caused (its followers append events a moment after a command is
/// answered), then waits until every client has read all of it.
private func settle(_ clients: [EventStreamClient], reference: ReferenceSubscriber) async {
    try? await Task.sleep(for: .milliseconds(100))
    await waitForCatchUp(clients, to: reference.arrivals.latestID)
}

/// Waits (at most 10 s) until every client has read event `id`.
private func waitForCatchUp(_ clients: [EventStreamClient], to id: Int) async {
    let deadline = ContinuousClock.now + .seconds(10)
    while clients.contains(where: { $0.arrivals.latestID < id }), ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(2))
    }
}

/// Every (client, event) delay from the reference's arrival to the client's, in milliseconds, over the events of
/// `ids` the reference saw, and how many clients got every one of them.
private func delays(_ clients: [EventStreamClient], reference: EventArrivals, ids: ClosedRange<Int>)
    -> (events: Int, p50: Double, p99: Double, max: Double, complete: Int)
{
    let seen = ids.compactMap { id in reference.instant(of: id).map { (id, $0) } }
    var samples: [Double] = []
    var complete = 0
    for client in clients {
        var missing = 0
        for (id, instant) in seen {
            guard let arrived = client.arrivals.instant(of: id) else {
                missing += 1
                continue
            }
            samples.append(seconds(arrived - instant) * 1000)
        }
        if missing == 0 { complete += 1 }
    }
    return (seen.count, percentile(samples, 0.5), percentile(samples, 0.99), samples.max() ?? .nan, complete)
}

// MARK: - 4. The CLI: direct beside --via

/// `cast pause` 20 times each way, alternating: `--host` (a TLS connection, a join and a status read per run)
/// and `--via` castd (local HTTP only). Wall time of the whole process. Beside them, a process that sends
/// nothing (`cast --help`), and `--via` a castd that knows only this device: `cast --via` lists castd's devices
/// before each command, so its time grows with their number.
private func measureCLI(
    _ server: ServedHub,
    id: String,
    port: Int,
    stateDirectory: String,
    into table: inout FigureTable
) async throws {
    let cast = try siblingExecutable("cast")
    let state = temporaryDirectory("cast-bench-cli")
    defer { try? FileManager.default.removeItem(atPath: state) }
    let environment = ["XDG_STATE_HOME": state, "XDG_CONFIG_HOME": state, "CAST_VIA": ""]
    var failures: [String] = []
    func run(_ arguments: [String]) async throws -> Double {
        let run = try await timedRun(cast, arguments, environment: environment)
        if run.status != 0 { failures.append("cast \(arguments.joined(separator: " ")) → exit \(run.status)") }
        return run.seconds * 1000
    }
    let oneDeviceHub = try await startedHub(ports: [port], stateDirectory: stateDirectory + "/one")
    let oneDevice = try await ServedHub(oneDeviceHub)
    let direct = ["pause", "--host", "127.0.0.1:\(port)"]
    let via = ["pause", "--via", "http://127.0.0.1:\(server.port)", "--device", id]
    let viaOne = ["pause", "--via", "http://127.0.0.1:\(oneDevice.port)", "--device", id]
    _ = try await run(viaOne)  // the small castd joins the session outside the figures
    var times: [[Double]] = [[], [], [], []]
    for _ in 0..<20 {
        for (index, arguments) in [direct, via, viaOne, ["--help"]].enumerated() {
            times[index].append(try await run(arguments))
        }
    }
    oneDevice.stop()
    await oneDeviceHub.stop()
    func figures(_ samples: [Double]) -> String {
        "median \(format(percentile(samples, 0.5), "%.0f")) ms, p90 \(format(percentile(samples, 0.9), "%.0f")) ms"
    }
    table.add("cast pause --host (direct: TLS, join, status), 20 runs", figures(times[0]))
    table.add("cast pause --via castd (\(server.devices) devices) --device ID, 20 runs", figures(times[1]))
    table.add("  cast pause --via a castd of this 1 device, 20 runs", figures(times[2]))
    table.add(
        "  cast --help (process start, nothing sent), 20 runs",
        figures(times[3]) + "; \(failures.count) runs failed"
    )
    if let failure = failures.first { table.add("  first failure", failure) }
}

// MARK: - Support

/// A hub over static devices on 127.0.0.1 at `ports` (no mDNS), with castd's defaults (heartbeats on), started
/// and with every device listed.
private func startedHub(ports: [Int], stateDirectory: String) async throws -> DeviceHub {
    var discovery = DiscoveryManager.Configuration()
    discovery.browsesMulticastDNS = false
    discovery.staticDevices = ports.map { CastDevice.staticDevice(host: "127.0.0.1", port: $0) }
    var options = DeviceHub.Options()
    options.cast.stateDirectory = stateDirectory
    let hub = DeviceHub(options: options, discovery: DiscoveryManager(configuration: discovery))
    try hub.start()
    _ = await hub.discovery.devices(atLeast: ports.count)
    return hub
}

/// The hub served over HTTP on a free loopback port, as castd serves it, without a rate limit.
private final class ServedHub: Sendable {
    let port: Int
    /// How many devices the hub knows.
    let devices: Int
    private let running: Task<Void, any Error>

    init(_ hub: DeviceHub) async throws {
        var options = CastServiceServer.Options()
        options.address = ListenAddress(host: "127.0.0.1", port: 0)
        options.rateLimit = nil
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let server = try CastServiceServer(hub: hub, options: options)
        running = Task { try await server.serve { continuation.yield($0) } }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        self.port = port
        self.devices = hub.discovery.devices.count
    }

    func stop() { running.cancel() }
}

/// A device id as one path segment.
private func escaped(_ id: String) -> String {
    id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? id
}

private func format(_ value: Double, _ format: String) -> String { String(format: format, value) }

/// The castd figures, printed as one aligned table with the command that produced it; each row is also printed
/// to standard error as it is measured, so a long run shows its progress.
struct FigureTable {
    private var rows: [(figure: String, value: String)] = []

    mutating func add(_ figure: String, _ value: String) {
        rows.append((figure, value))
        FileHandle.standardError.write(Data("castd: \(figure): \(value)\n".utf8))
    }

    func print() {
        let width = rows.map(\.figure.count).max() ?? 0
        Swift.print("castd figures — \(CommandLine.arguments.joined(separator: " "))")
        Swift.print(
            "(\(ProcessInfo.processInfo.activeProcessorCount) cores; emulated devices in a separate cast-receiver process)"
        )
        for row in rows {
            Swift.print(row.figure.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + row.value)
        }
    }
}
