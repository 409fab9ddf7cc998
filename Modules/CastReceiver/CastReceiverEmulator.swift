import CastLogging
import CastTransport
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Many emulated devices in one process, sharing event loops, a clock and one TLS identity.
///
/// Devices are event driven and own no threads, so a thousand of them fit on a two-core machine. Use it from
/// tests through ``withCastReceiverEmulator(devices:group:clock:logger:_:)``.
public final class CastReceiverEmulator: Sendable {
    /// The devices, in the order configured.
    public let devices: [EmulatedDevice]
    /// The speaker group the devices make, when one was configured.
    public let group: EmulatedGroup?
    /// The clock every device uses.
    public let clock: any CastClock

    /// Creates the devices (not yet listening).
    ///
    /// Devices without an ``DeviceConfiguration/identity`` share the process's emulator certificate: RSA key
    /// generation costs tens of milliseconds, which adds up over a thousand devices (or a test suite).
    ///
    /// - Parameters:
    ///   - configurations: One per device, in order (``configurations(count:host:basePort:namePrefix:)`` makes them).
    ///   - group: The record of a speaker group all the devices are members of (see ``EmulatedGroup``); `nil` (the
    ///     default) makes none.
    ///   - clock: The time every device plays by; a `ManualCastClock` lets a test move it.
    ///   - eventLoopGroup: Where the devices' connections run.
    ///   - wireLog: Where every frame is recorded; `nil` records none.
    ///   - logger: Where the devices log; silent by default.
    public init(
        devices configurations: [DeviceConfiguration],
        group: DeviceConfiguration? = nil,
        clock: any CastClock = SystemCastClock(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        wireLog: WireLog? = nil,
        logger: Logger = .castDisabled
    ) throws {
        var prepared: [DeviceConfiguration] = []
        for var configuration in configurations {
            if configuration.identity == nil { configuration.identity = try EmulatorIdentity.current() }
            prepared.append(configuration)
        }
        self.clock = clock
        let devices = prepared.map {
            EmulatedDevice(
                configuration: $0,
                clock: clock,
                eventLoopGroup: eventLoopGroup,
                wireLog: wireLog,
                logger: logger
            )
        }
        self.devices = devices
        self.group = try group.map {
            try EmulatedGroup(
                configuration: $0,
                members: devices,
                clock: clock,
                eventLoopGroup: eventLoopGroup,
                wireLog: wireLog,
                logger: logger
            )
        }
    }

    /// Configurations for `count` devices named "`namePrefix` 1" … with distinct ids, on consecutive ports from
    /// `basePort` (or each on a free port when `basePort` is 0).
    public static func configurations(
        count: Int,
        host: String = "127.0.0.1",
        basePort: Int = 8009,
        namePrefix: String = "Emulated Chromecast"
    ) -> [DeviceConfiguration] {
        (0..<count).map { index in
            var configuration = DeviceConfiguration()
            configuration.host = host
            configuration.port = basePort == 0 ? 0 : basePort + index
            configuration.friendlyName = count == 1 ? namePrefix : "\(namePrefix) \(index + 1)"
            return configuration
        }
    }

    /// Starts every device; if one cannot listen, the ones already started are stopped again.
    public func start() async throws {
        var started: [EmulatedDevice] = []
        do {
            for device in devices {
                try await device.start()
                started.append(device)
            }
            if let group {
                try await group.start()
                started.append(group.endpoint)
            }
        } catch {
            for device in started { await device.stop() }
            throw error
        }
    }

    /// Stops every device.
    public func stop() async {
        await group?.stop()
        for device in devices { await device.stop() }
    }
}

/// Runs `body` with started emulated devices and stops them afterwards, whether `body` returns or throws.
public func withCastReceiverEmulator<Result: Sendable>(
    devices: [DeviceConfiguration] = [DeviceConfiguration(friendlyName: "Emulated Chromecast", port: 0)],
    group: DeviceConfiguration? = nil,
    clock: any CastClock = SystemCastClock(),
    logger: Logger = .castDisabled,
    _ body: (CastReceiverEmulator) async throws -> Result
) async throws -> Result {
    let emulator = try CastReceiverEmulator(devices: devices, group: group, clock: clock, logger: logger)
    try await emulator.start()
    do {
        let result = try await body(emulator)
        await emulator.stop()
        return result
    } catch {
        await emulator.stop()
        throw error
    }
}

/// The certificate emulated devices present unless configured otherwise: one per process, made on first use
/// and renewed once a day (it is valid for three), since generating an RSA key costs tens of milliseconds.
enum EmulatorIdentity {
    private static let cache = NIOLockedValueBox<(identity: TLSIdentity, made: ContinuousClock.Instant)?>(nil)

    static func current() throws -> TLSIdentity {
        try cache.withLockedValue { cache in
            if let cache, ContinuousClock.now - cache.made < .seconds(86_400) { return cache.identity }
            let identity = try TLSIdentity.makeSelfSigned(commonName: "swift-cast emulator")
            cache = (identity, .now)
            return identity
        }
    }
}
