import CastLogging
@_spi(CastInternal) import CastTransport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Finds Cast devices: `_googlecast._tcp` through avahi-daemon, plus static devices from the options, as one
/// sorted list with change events. `GCKDiscoveryManager` on Linux.
///
/// ```swift
/// let discovery = DiscoveryManager()
/// let events = discovery.events()
/// try discovery.start()              // throws at once when avahi-daemon is not reachable
/// for await event in events {
///     if case .added(let device) = event { print(device.friendlyName, device.host, device.port) }
/// }
/// ```
///
/// Everything runs on Avahi's helper thread and SwiftNIO's event loops; one task applies changes in order, so
/// every subscriber sees the same sequence and ``devices`` always agrees with the events delivered so far.
public final class DiscoveryManager: Sendable {
    /// What to discover and how. Every value has a documented default.
    public struct Configuration: Sendable {
        /// Which devices are listed. Defaults to every device (``DiscoveryCriteria/all``).
        public var criteria = DiscoveryCriteria.all
        /// Devices that are not on mDNS (made with ``CastDevice/staticDevice(host:port:name:)``): listed, marked
        /// static, once a TLS connection and `GET_STATUS` succeed. Defaults to none.
        public var staticDevices: [CastDevice] = []
        /// Whether to browse mDNS through avahi-daemon. Turn it off to use static devices alone (no daemon needed).
        /// Defaults to `true`.
        public var browsesMulticastDNS = true
        /// The DNS-SD service type. Defaults to `_googlecast._tcp`.
        public var serviceType = "_googlecast._tcp"
        /// How long a device that left the network stays listed, so a brief flap (a Wi-Fi roam, a restarting
        /// daemon) does not remove and re-add it. Defaults to 1.5 s.
        public var removalDelay: Duration = .milliseconds(1500)
        /// Limit for each step (connect, TLS, reply) of a probe: static devices and app availability.
        /// Defaults to 5 s.
        public var probeTimeout: Duration = .seconds(5)
        /// How often static devices are probed again: an unreachable one until it answers (then it is listed), a
        /// listed one to notice that it went away (then it is removed, and listed again once it answers). `nil`
        /// probes each once, at start. Defaults to 30 s.
        public var staticRetryInterval: Duration? = .seconds(30)
        /// How long to wait before reconnecting to avahi-daemon after losing it (or after the daemon aborted the
        /// browse); the wait doubles after each failed attempt, up to ``maximumReconnectDelay``. Browsing resumes
        /// once the daemon is back. `nil` never reconnects: browsing stops for good. Defaults to 1 s.
        public var reconnectDelay: Duration? = .seconds(1)
        /// The longest wait between two attempts to reconnect to avahi-daemon. Defaults to 30 s.
        public var maximumReconnectDelay: Duration = .seconds(30)
        /// Address ranges scanned for devices mDNS cannot see (``AddressScanner``): what answers is listed under
        /// its own id, so a device also found by mDNS is listed once. Defaults to none.
        public var scanRanges: [AddressRange] = []
        /// How the ranges are scanned (and how static devices are named: `eureka_info`). Defaults to
        /// ``AddressScanner/Options/init()``.
        public var scan = AddressScanner.Options()
        /// How often the ranges are scanned again: new devices are listed, devices that stopped answering removed.
        /// `nil` scans once, at start. Defaults to 5 min.
        public var scanInterval: Duration? = .seconds(300)

        /// The defaults.
        public init() {}
    }

    /// What the single processing task consumes.
    private enum Input: Sendable {
        /// An event of the Avahi connection made by attempt `connection` (events of earlier ones are stale).
        case avahi(AvahiEvent, connection: Int)
        case expire(DeviceRegistry.RecordKey, token: Int)
        case availability(DeviceRegistry.Availability, deviceID: String, applicationID: String)
        case staticProbed(CastDevice, reachable: Bool)
        case staticRetry(CastDevice, token: Int)
        case reconnect(token: Int)
        case scanned([CastDevice])
        case rescan(token: Int)
    }

    private struct Run: Sendable {
        var generation: Int
        var connection: AvahiConnection?
        var input: AsyncStream<Input>.Continuation
        var consumer: Task<Void, Never>?
    }

    private struct State: Sendable {
        var run: Run?
        var generation = 0
        var registry: DeviceRegistry
        var timers: [Int: CastTimer] = [:]
        var nextToken = 0
        var probes: [Int: Task<Void, Never>] = [:]
        var isBrowsing = false
        /// Which Avahi connection is current: events of older ones are ignored.
        var connectionEpoch = 0
        /// Failed reconnection attempts since the daemon was lost (the backoff exponent).
        var reconnectAttempts = 0
        /// Completed scan passes of this run, and who waits for the first (``scanCompleted()``).
        var scanPasses = 0
        var scanWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The settings this manager was made with.
    public let configuration: Configuration
    private let clock: any CastClock
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let avahiLogger: Logger
    private let broadcaster = EventBroadcaster<DiscoveryEvent>()
    private let state: NIOLockedValueBox<State>

    /// Creates a stopped manager.
    ///
    /// - Parameters:
    ///   - configuration: Criteria, static devices, timing.
    ///   - clock: Where the removal debounce, static retries and rescans are timed (`ManualCastClock` in tests);
    ///     real time by default.
    ///   - eventLoopGroup: Where probes connect from.
    ///   - logger: Where discovery logs (malformed TXT records are warnings); silent by default.
    public init(
        configuration: Configuration = Configuration(),
        clock: any CastClock = SystemCastClock(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = .castDisabled
    ) {
        self.configuration = configuration
        self.clock = clock
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger.withCategory(CastLogCategory.discovery)
        self.avahiLogger = logger.withCategory(CastLogCategory.discoveryAvahi)
        self.state = NIOLockedValueBox(State(registry: DeviceRegistry(criteria: configuration.criteria)))
    }

    deinit {
        // Stopped without stop(): end the task and the helper thread (this never runs on Avahi's thread).
        state.withLockedValue { state in
            state.run?.input.finish()
            state.run?.consumer?.cancel()
            state.run?.connection?.close()
            for timer in state.timers.values { timer.cancel() }
            for probe in state.probes.values { probe.cancel() }
        }
        broadcaster.finish()
    }

    // MARK: - Lifecycle

    /// Starts browsing and probing static devices. Does nothing when already running, so whatever needs discovery
    /// can call it.
    ///
    /// Returns as soon as the browse is set up; devices arrive through ``events()`` and ``devices``.
    ///
    /// - Throws: ``CastDiscoveryError`` — ``CastDiscoveryError/Code/daemonUnavailable`` at once (no waiting, no
    ///   retry loop) when mDNS is on and avahi-daemon or the D-Bus system bus is not reachable; its message says
    ///   to start the daemon or use static devices with ``Configuration/browsesMulticastDNS`` off.
    ///   ``CastDiscoveryError/Code/browseFailed`` when the daemon refuses the browse. Losing the daemon later is
    ///   not thrown but reported as ``DiscoveryEvent/failed(_:)``, after which the manager reconnects with a
    ///   backoff (``Configuration/reconnectDelay``).
    public func start() throws {
        let (stream, input) = AsyncStream.makeStream(of: Input.self)
        let begun = state.withLockedValue { state -> Int? in
            guard state.run == nil else { return nil }
            state.generation += 1
            state.scanPasses = 0
            state.run = Run(generation: state.generation, connection: nil, input: input, consumer: nil)
            return state.generation
        }
        guard let generation = begun else { return }

        var connection: AvahiConnection?
        if configuration.browsesMulticastDNS {
            let epoch = state.withLockedValue { state in
                state.connectionEpoch += 1
                state.reconnectAttempts = 0
                return state.connectionEpoch
            }
            do {
                connection = try connectAndBrowse(input: input, epoch: epoch)
            } catch {
                state.withLockedValue { $0.run = nil }
                input.finish()
                logger.debug("discovery cannot start: \(error.message)")  // thrown: the caller says it
                throw error
            }
        }

        state.withLockedValue { state in
            state.run?.connection = connection
            state.isBrowsing = connection != nil
        }
        let consumer = Task { [weak self] in
            for await item in stream {
                guard let self else { return }
                self.process(item, generation: generation)
            }
        }
        state.withLockedValue { $0.run?.consumer = consumer }
        logger.debug(
            "discovery started",
            metadata: ["cast.mdns": "\(connection != nil)", "cast.static": "\(configuration.staticDevices.count)"]
        )
        for device in configuration.staticDevices { probeStatic(device, generation: generation) }
        if !configuration.scanRanges.isEmpty { scan(generation: generation) }
    }

    /// Discovers until the calling task is cancelled, then stops: the structured form of ``start()`` and
    /// ``stop()``, for a task group or a swift-service-lifecycle `Service` to own. Devices arrive through
    /// ``events()`` and ``devices`` meanwhile.
    ///
    /// - Throws: What ``start()`` throws.
    public func run() async throws {
        try start()
        await waitUntilCancelled()
        await stop()
    }

    /// Stops browsing and probing; every listed device is reported ``DiscoveryEvent/removed(_:)``. Discovery can be
    /// started again. Waits until Avahi's helper thread has stopped.
    public func stop() async {
        guard
            let run = state.withLockedValue({ state -> Run? in
                defer { state.run = nil; state.isBrowsing = false }
                return state.run
            })
        else { return }
        run.connection?.close()
        run.input.finish()
        run.consumer?.cancel()
        await run.consumer?.value
        let effects = state.withLockedValue { state -> [DeviceRegistry.Effect] in
            for timer in state.timers.values { timer.cancel() }
            for probe in state.probes.values { probe.cancel() }
            state.timers = [:]
            state.probes = [:]
            return state.registry.removeAll()
        }
        for case .event(let event) in effects { broadcaster.yield(event) }
        finishScanWaiters()
        logger.debug("discovery stopped")
    }

    /// Whether ``start()`` succeeded and ``stop()`` has not been called since.
    public var isRunning: Bool { state.withLockedValue { $0.run != nil } }

    /// Whether mDNS browsing is active (running, enabled, and connected to the daemon: `false` from losing
    /// avahi-daemon until a reconnection succeeds).
    public var isBrowsing: Bool { state.withLockedValue { $0.isBrowsing } }

    // MARK: - The list

    /// The listed devices, sorted by friendly name as the Cast dialog sorts them (ignoring case and diacritics,
    /// numbers by value).
    public var devices: [CastDevice] { state.withLockedValue { $0.registry.devices } }

    /// Whether any device is listed (`GCKDiscoveryManager.hasDiscoveredDevices`).
    public var hasDiscoveredDevices: Bool { state.withLockedValue { !$0.registry.isEmpty } }

    /// The listed device with `id`, if any.
    public func device(withID id: String) -> CastDevice? { state.withLockedValue { $0.registry.device(id: id) } }

    /// A new, independent stream of list changes, from now on (read ``devices`` for the current list first).
    /// Ending iteration unsubscribes.
    public func events() -> CastEventStream<DiscoveryEvent> { broadcaster.makeStream() }

    /// The list once it holds at least `count` devices: static devices are listed only after their probe
    /// answers, so a program that names its devices waits for them here. Waits until the task is cancelled, then
    /// answers the list as it is.
    public func devices(atLeast count: Int) async -> [CastDevice] {
        let changes = events()  // before the list is read: a device listed after the read is then seen
        guard devices.count < count else { return devices }
        for await _ in changes where devices.count >= count { break }
        return devices
    }

    /// Returns once the first scan of ``Configuration/scanRanges`` is listed (at once when there are no ranges,
    /// or discovery is not running), so a program that lists devices once waits for the scan, whose length the
    /// ranges and ``AddressScanner/Options`` bound, rather than a guess.
    public func scanCompleted() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLockedValue { state -> Bool in
                guard state.run != nil, !configuration.scanRanges.isEmpty, state.scanPasses == 0 else { return true }
                state.scanWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func finishScanWaiters() {
        let waiters = state.withLockedValue { state in
            defer { state.scanWaiters = [] }
            return state.scanWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: - Processing (one task at a time)

    /// A new Avahi connection (its events tagged with `epoch`) that browses the service type.
    private func connectAndBrowse(
        input: AsyncStream<Input>.Continuation,
        epoch: Int
    ) throws(CastDiscoveryError) -> AvahiConnection {
        let connection = try AvahiConnection { event in input.yield(.avahi(event, connection: epoch)) }
        do {
            try connection.browse(serviceType: configuration.serviceType)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    private func process(_ input: Input, generation: Int) {
        guard state.withLockedValue({ $0.run?.generation == generation }) else { return }
        switch input {
        case .avahi(let event, let epoch):
            guard state.withLockedValue({ $0.connectionEpoch == epoch }) else { return }
            handle(event, generation: generation)
        case .expire(let key, let token):
            apply(generation: generation) { state in
                state.timers.removeValue(forKey: token)
                return state.registry.expire(key, token: token)
            }
        case .availability(let result, let deviceID, let applicationID):
            apply(generation: generation) {
                $0.registry.setAvailability(result, deviceID: deviceID, applicationID: applicationID)
            }
        case .staticProbed(let device, let reachable):
            if reachable {
                apply(generation: generation) { $0.registry.upsert(.configured(device.id), device) }
            } else {
                // A listed static device that stopped answering is removed at once (it has no goodbye packet to
                // debounce); it is listed again when a later probe succeeds.
                apply(generation: generation) { state in
                    state.registry.removeAll { $0 == .configured(device.id) }
                }
            }
            if let interval = configuration.staticRetryInterval {
                enqueue(after: interval, generation: generation) { .staticRetry(device, token: $0) }
            }
        case .staticRetry(let device, let token):
            state.withLockedValue { _ = $0.timers.removeValue(forKey: token) }
            probeStatic(device, generation: generation)
        case .reconnect(let token):
            state.withLockedValue { _ = $0.timers.removeValue(forKey: token) }
            reconnect(generation: generation)
        case .scanned(let found):
            // A static entry is listed as configured, not a second time as scanned.
            let configured = Set(configuration.staticDevices.map { "\($0.host):\($0.port)" })
            let devices = found.filter { !configured.contains("\($0.host):\($0.port)") }
            let ids = Set(devices.map(\.id))
            apply(generation: generation) { state in
                var effects = state.registry.removeAll { key in
                    if case .scanned(let id) = key { return !ids.contains(id) }
                    return false
                }
                for device in devices { effects += state.registry.upsert(.scanned(device.id), device) }
                state.scanPasses += 1
                return effects
            }
            finishScanWaiters()
            if let interval = configuration.scanInterval {
                enqueue(after: interval, generation: generation) { .rescan(token: $0) }
            }
        case .rescan(let token):
            state.withLockedValue { _ = $0.timers.removeValue(forKey: token) }
            scan(generation: generation)
        }
    }

    /// Tries once to connect to avahi-daemon again and browse; on failure, schedules the next attempt.
    private func reconnect(generation: Int) {
        guard
            let (input, epoch) = state.withLockedValue({ state -> (AsyncStream<Input>.Continuation, Int)? in
                guard let run = state.run, run.generation == generation, run.connection == nil else { return nil }
                state.connectionEpoch += 1
                return (run.input, state.connectionEpoch)
            })
        else { return }
        do {
            let connection = try connectAndBrowse(input: input, epoch: epoch)
            let kept = state.withLockedValue { state -> Bool in
                guard state.run?.generation == generation, state.connectionEpoch == epoch else { return false }
                state.run?.connection = connection
                state.isBrowsing = true
                state.reconnectAttempts = 0
                return true
            }
            guard kept else {
                connection.close()  // stopped meanwhile
                return
            }
            logger.notice("reconnected to avahi-daemon; mDNS browsing resumed")
        } catch {
            avahiLogger.debug("avahi-daemon is still not reachable: \(error.message)")
            scheduleReconnect(generation: generation)
        }
    }

    /// Arms the next reconnection attempt: ``Configuration/reconnectDelay`` doubled per failed attempt, capped at
    /// ``Configuration/maximumReconnectDelay``.
    private func scheduleReconnect(generation: Int) {
        guard let base = configuration.reconnectDelay else { return }
        let scheduled = state.withLockedValue { state -> (token: Int, delay: Duration)? in
            guard state.run?.generation == generation else { return nil }
            var delay = base
            for _ in 0..<min(state.reconnectAttempts, 32) where delay < configuration.maximumReconnectDelay {
                delay *= 2
            }
            state.reconnectAttempts += 1
            defer { state.nextToken += 1 }
            return (state.nextToken, min(delay, max(base, configuration.maximumReconnectDelay)))
        }
        guard let scheduled else { return }
        let timer = clock.schedule(after: scheduled.delay) { [weak self] in
            self?.enqueue(.reconnect(token: scheduled.token), generation: generation)
        }
        state.withLockedValue { state in
            if state.run?.generation == generation {
                state.timers[scheduled.token] = timer
            } else {
                timer.cancel()
            }
        }
        avahiLogger.debug("reconnecting to avahi-daemon in \(scheduled.delay)")
    }

    private func handle(_ event: AvahiEvent, generation: Int) {
        let connection = state.withLockedValue { $0.run?.connection }
        switch event {
        case .serviceFound(let key):
            avahiLogger.debug("service found", metadata: ["cast.service": "\(key)"])
            connection?.resolve(key)
        case .serviceRemoved(let key):
            avahiLogger.debug("service removed", metadata: ["cast.service": "\(key)"])
            connection?.stopResolving(key)
            apply(generation: generation) { state in
                let token = state.nextToken
                state.nextToken += 1
                return state.registry.markDeparting(.service(key), token: token)
            }
        case .resolved(let service):
            let parsed = CastTXT.parse(service)
            if !parsed.warnings.isEmpty {
                logger.warning(
                    "malformed TXT record of \(service.key): \(parsed.warnings.joined(separator: "; "))",
                    metadata: ["cast.service": "\(service.key.name)"]
                )
            }
            guard let device = parsed.device else { return }
            apply(generation: generation) { $0.registry.upsert(.service(service.key), device) }
        case .resolveFailed(let key, let reason):
            avahiLogger.debug("cannot resolve \(key): \(reason)")
        case .allForNow:
            avahiLogger.debug("initial browse complete")
        case .browseFailed(let error), .clientFailed(let error):
            let retries = configuration.reconnectDelay != nil
            logger.error("mDNS browsing stopped: \(error.message)\(retries ? "; reconnecting" : "")")
            connection?.close()
            apply(generation: generation) { state in
                state.isBrowsing = false
                state.run?.connection = nil
                state.reconnectAttempts = 0
                state.connectionEpoch += 1  // the lost connection's remaining events are stale
                return state.registry.removeAll { key in
                    if case .service = key { return true }
                    return false
                } + [.event(.failed(error))]
            }
            scheduleReconnect(generation: generation)
        case .groupEstablished, .groupCollision, .groupFailed:
            break
        }
    }

    /// Changes the registry under the lock, then carries out its effects in order, outside the lock.
    private func apply(generation: Int, _ change: (inout State) -> [DeviceRegistry.Effect]) {
        let effects = state.withLockedValue { state -> [DeviceRegistry.Effect] in
            guard state.run?.generation == generation else { return [] }
            return change(&state)
        }
        for effect in effects {
            switch effect {
            case .event(let event):
                broadcaster.yield(event)
            case .scheduleExpiry(let key, let token):
                let timer = clock.schedule(after: configuration.removalDelay) { [weak self] in
                    self?.enqueue(.expire(key, token: token), generation: generation)
                }
                state.withLockedValue { $0.timers[token] = timer }
            case .cancelExpiry(let token):
                state.withLockedValue { $0.timers.removeValue(forKey: token) }?.cancel()
            case .checkAvailability(let device, let applicationID):
                checkAvailability(applicationID, on: device, generation: generation)
            }
        }
    }

    private func enqueue(_ input: Input, generation: Int) {
        state.withLockedValue { state in
            guard let run = state.run, run.generation == generation else { return }
            run.input.yield(input)
        }
    }

    /// Feeds `input` to this run after `delay`, on a timer kept under a fresh token (which `input` carries, so the
    /// input can find and forget its timer when it fires).
    private func enqueue(after delay: Duration, generation: Int, _ input: @escaping @Sendable (Int) -> Input) {
        let token = state.withLockedValue { state in
            defer { state.nextToken += 1 }
            return state.nextToken
        }
        let timer = clock.schedule(after: delay) { [weak self] in
            self?.enqueue(input(token), generation: generation)
        }
        state.withLockedValue { $0.timers[token] = timer }
    }

    // MARK: - Probes

    private var probe: DeviceProbe {
        DeviceProbe(timeout: configuration.probeTimeout, eventLoopGroup: eventLoopGroup, logger: .castDisabled)
    }

    private func track(generation: Int, _ work: @escaping @Sendable (DeviceProbe) async -> Input?) {
        let probe = self.probe
        state.withLockedValue { state in
            guard state.run?.generation == generation else { return }
            let id = state.nextToken
            state.nextToken += 1
            state.probes[id] = Task { [weak self] in
                let result = await work(probe)
                guard let self else { return }
                self.state.withLockedValue { _ = $0.probes.removeValue(forKey: id) }
                if let result { self.enqueue(result, generation: generation) }
            }
        }
    }

    /// The scanner of ``Configuration/scanRanges``, which also names static devices (one description path).
    private var scanner: AddressScanner {
        AddressScanner(options: configuration.scan, eventLoopGroup: eventLoopGroup, logger: logger)
    }

    private func scan(generation: Int) {
        let (scanner, ranges, logger) = (self.scanner, configuration.scanRanges, self.logger)
        track(generation: generation) { _ in
            let devices = await scanner.scan(ranges)
            logger.debug("scanned \(ranges.map(\.description).joined(separator: ", ")): \(devices.count) found")
            return Task.isCancelled ? nil : .scanned(devices)
        }
    }

    private func probeStatic(_ device: CastDevice, generation: Int) {
        var marked = device
        marked.isStatic = true
        let device = marked
        let logger = self.logger
        var options = configuration.scan
        options.answerTimeout = configuration.probeTimeout
        let scanner = AddressScanner(options: options, eventLoopGroup: eventLoopGroup, logger: logger)
        track(generation: generation) { _ in
            do {
                // The device's own description replaces what the address alone told (name, model, capabilities):
                // DEVICE_INFO, else eureka_info, as for scanned addresses.
                let described = try await scanner.describe(device)
                logger.debug("static device answered", metadata: ["cast.device": "\(device.host):\(device.port)"])
                return .staticProbed(described, reachable: true)
            } catch {
                logger.notice("static device \(device.host):\(device.port) is not reachable: \(error)")
                return Task.isCancelled ? nil : .staticProbed(device, reachable: false)
            }
        }
    }

    private func checkAvailability(_ applicationID: String, on device: CastDevice, generation: Int) {
        let logger = self.logger
        let endpoint = "\(device.host):\(device.port)"
        track(generation: generation) { probe in
            do {
                let available = try await probe.isAvailable(applicationID, on: device)
                logger.debug("app \(applicationID) available on \(device.id): \(available)")
                return .availability(
                    available ? .available : .unavailable,
                    deviceID: device.id,
                    applicationID: applicationID
                )
            } catch {
                logger.notice("cannot ask \(device.friendlyName) (\(endpoint)) about app \(applicationID): \(error)")
                guard !Task.isCancelled else { return nil }
                return .availability(
                    .unreachable(endpoint: endpoint),
                    deviceID: device.id,
                    applicationID: applicationID
                )
            }
        }
    }
}
