import CastLogging
import Logging
import NIOCore
import NIOPosix

/// Finds Cast devices that mDNS cannot see by asking every address of bounded ranges (``AddressRange``) on the
/// Cast port, a few at a time, and names what answers from the device itself: `GET_DEVICE_INFO`, then
/// `eureka_info` on its HTTP port, then its TLS certificate. Also names static hosts the same way.
///
/// The scan never leaves the ranges given, and it is gentle: at most ``Options/maximumConcurrentProbes``
/// connections at once, each given up after ``Options/connectTimeout``.
///
/// ```swift
/// let scanner = AddressScanner()
/// for device in await scanner.scan([try AddressRange("192.168.2.0/24")]) { print(device.friendlyName) }
/// ```
public struct AddressScanner: Sendable {
    /// How to scan. Every value has a documented default.
    public struct Options: Sendable {
        /// The Cast port asked on every address. Defaults to 8009, where devices listen (groups are found through
        /// their members' `eureka_info`).
        public var castPort = 8009
        /// The HTTP port of `eureka_info`; `nil` (the default) uses 8008 when the Cast port is 8009, as devices do,
        /// and does not ask otherwise.
        public var eurekaPort: Int?
        /// Whether to read `eureka_info` at all: for names and ids the device did not tell, and for the speaker
        /// groups it belongs to. Defaults to `true`.
        public var readsEurekaInfo = true
        /// How many addresses are asked at once. Defaults to 64: a /24 in four rounds.
        public var maximumConcurrentProbes = 64
        /// How long a TCP connect and TLS handshake may take: an address that holds nothing costs this much (a
        /// refused connection costs nothing). Defaults to 1 s: a LAN connects in milliseconds, but a small device's
        /// TLS handshake can take a few hundred.
        public var connectTimeout: Duration = .seconds(1)
        /// How long a device that accepted the connection gets for each answer. Defaults to 2 s.
        public var answerTimeout: Duration = .seconds(2)

        /// The defaults.
        public init() {}

        /// The `eureka_info` port for a device on `castPort`, or `nil` when it is not asked.
        func eurekaPort(forCastPort castPort: Int) -> Int? {
            guard readsEurekaInfo else { return nil }
            return eurekaPort ?? EurekaInfo.port(forCastPort: castPort)
        }
    }

    /// The settings this scanner was made with.
    public let options: Options
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger

    /// Creates a scanner.
    public init(
        options: Options = Options(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = .castDisabled
    ) {
        self.options = options
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger.withCategory(CastLogCategory.discovery)
    }

    /// Asks every address of `ranges` (each once, however the ranges overlap) and returns the devices that
    /// answered, named as they name themselves, and the speaker groups they reported, each device once (by id),
    /// sorted by name. Marked ``DeviceSources/scan``.
    public func scan(_ ranges: [AddressRange]) async -> [CastDevice] {
        var seen = Set<String>()
        let addresses = ranges.flatMap(\.addresses).filter { seen.insert($0).inserted }
        let found = await forEach(addresses) { (address: String) -> [CastDevice] in
            let device = CastDevice(
                id: DeviceProbe.placeholderID(host: address, port: options.castPort),
                friendlyName: address,
                addresses: [DeviceAddress(address)],
                port: options.castPort,
                sources: .scan
            )
            guard let identified = try? await identify(device, connectTimeout: options.connectTimeout) else {
                return []
            }
            logger.debug(
                "scan: \(address) is \(identified.device.friendlyName)",
                metadata: ["cast.device": "\(identified.device.id)"]
            )
            return [identified.device] + identified.groups
        }
        var byID: [String: CastDevice] = [:]
        for device in found.joined() where byID[device.id] == nil || byID[device.id]?.isGroup == true {
            byID[device.id] = device
        }
        return DeviceRegistry.dialogOrdered(byID.values)
    }

    /// Asks a device known by address (a static host) what it is, as ``scan(_:)`` does, keeping its id:
    /// the name, model and capabilities it tells replace what the address alone said (a name a person gave
    /// stays).
    ///
    /// - Throws: ``CastDiscoveryError/Code/deviceUnreachable`` when it does not answer `GET_STATUS`.
    public func describe(_ device: CastDevice) async throws(CastDiscoveryError) -> CastDevice {
        try await identify(device, connectTimeout: nil).device
    }

    /// ``describe(_:)`` for several devices at once (within the concurrency budget); a device that does not
    /// answer is returned as given.
    public func describe(_ devices: [CastDevice]) async -> [CastDevice] {
        let described = await forEach(Array(devices.enumerated())) { (item) -> [(Int, CastDevice)] in
            let (index, device) = item
            return [(index, (try? await describe(device)) ?? device)]
        }
        return described.joined().sorted { $0.0 < $1.0 }.map(\.1)
    }

    func identify(
        _ device: CastDevice,
        connectTimeout: Duration?
    ) async throws(CastDiscoveryError) -> DeviceProbe.Identification {
        let probe = DeviceProbe(
            timeout: options.answerTimeout,
            eventLoopGroup: eventLoopGroup,
            logger: logger,
            connectTimeout: connectTimeout
        )
        return try await probe.identify(
            device,
            eurekaPort: options.eurekaPort(forCastPort: device.port),
            readsGroups: DeviceProbe.isPlaceholderID(device.id)
        )
    }

    /// Runs `body` on every item with at most ``Options/maximumConcurrentProbes`` running at once.
    private func forEach<Item: Sendable, Output: Sendable>(
        _ items: [Item],
        _ body: @escaping @Sendable (Item) async -> [Output]
    ) async -> [[Output]] {
        await withTaskGroup(of: [Output].self) { group in
            var results: [[Output]] = []
            var next = items.makeIterator()
            for _ in 0..<max(1, options.maximumConcurrentProbes) {
                guard let item = next.next() else { break }
                group.addTask { await body(item) }
            }
            while let result = await group.next() {
                results.append(result)
                if let item = next.next() { group.addTask { await body(item) } }
            }
            return results
        }
    }
}
