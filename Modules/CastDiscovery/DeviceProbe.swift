import CastTransport
import Logging
import NIOCore

/// Short-lived connections that ask a device one question: is it there (static devices), is an app available
/// (criteria). Each opens TLS, a virtual connection to `receiver-0`, asks, and closes.
struct DeviceProbe: Sendable {
    var timeout: Duration
    var eventLoopGroup: any EventLoopGroup
    var logger: Logger
    /// The limit for the TCP connect and TLS handshake; ``timeout`` when `nil`. A scan keeps it short, since most
    /// addresses of a range hold nothing.
    var connectTimeout: Duration? = nil

    /// What one look at a device told: the device as it describes itself, and the speaker groups it reports.
    struct Identification: Sendable {
        var device: CastDevice
        var groups: [CastDevice]
    }

    /// The one description path of devices known by address (static hosts, scanned addresses): TLS (its
    /// certificate's common name), `GET_STATUS` (what runs) and `GET_DEVICE_INFO`, then — when `eurekaPort` is
    /// set and the device still lacks a name, id or model, or `readsGroups` — `GET /setup/eureka_info` on it.
    /// A device whose id is a placeholder (``isPlaceholderID(_:)``) takes the id it tells.
    ///
    /// - Throws: ``CastDiscoveryError/Code/deviceUnreachable`` when the status could not be had; an unanswered
    ///   `eureka_info` only leaves its fields out.
    func identify(_ device: CastDevice, eurekaPort: Int?, readsGroups: Bool) async throws(CastDiscoveryError)
        -> Identification
    {
        let (status, info, commonName) = try await onReceiver(of: device, asking: "GET_STATUS") { connection in
            let commonName = await connection.peerCertificateCommonName()
            let (status, info) = try await DeviceInfo.ask(connection)
            return (status, info, commonName)
        }
        var described = device
        if let info {
            described.apply(info)
            if Self.isPlaceholderID(described.id), let id = info.deviceID, !id.isEmpty { described.id = id }
        }
        described.statusText = Self.statusText(status)
        var groups: [CastDevice] = []
        let lacksSomething =
            described.isNamedByAddress || described.modelName == nil || Self.isPlaceholderID(described.id)
        if let eurekaPort, readsGroups || lacksSomething {
            do {
                let eureka = try await EurekaInfo.fetch(
                    host: device.host,
                    port: eurekaPort,
                    timeout: timeout,
                    eventLoopGroup: eventLoopGroup
                )
                if described.isNamedByAddress, let name = eureka.friendlyName { described.friendlyName = name }
                if described.modelName == nil { described.modelName = eureka.modelName }
                if described.capabilities.isEmpty, let capabilities = eureka.deviceInfo.capabilities {
                    described.capabilities = capabilities
                }
                if Self.isPlaceholderID(described.id), let id = eureka.deviceID { described.id = id }
                groups = eureka.groupDevices(reportedBy: device.host)
            } catch {
                logger.debug("no eureka_info from \(device.host):\(eurekaPort): \(error)")
            }
        }
        if Self.isPlaceholderID(described.id), let commonName, let id = Self.deviceID(fromCommonName: commonName) {
            described.id = id
        }
        return Identification(device: described, groups: groups)
    }

    /// The id a scanned address has until the device tells its own: `scan:HOST:PORT`.
    static func placeholderID(host: String, port: Int) -> String { "scan:\(host):\(port)" }

    static func isPlaceholderID(_ id: String) -> Bool { id.hasPrefix("scan:") }

    /// A certificate common name that is a device id (32 hex digits, hyphenated or not), in the mDNS `id` form.
    static func deviceID(fromCommonName name: String) -> String? {
        let id = CastDeviceID.normalized(name)
        guard id.count == 32, id.allSatisfy(\.isHexDigit) else { return nil }
        return id
    }

    /// The running app's status text or name from a `RECEIVER_STATUS` payload (the most relevant app it lists,
    /// ``ListedApplication``); empty when idle.
    static func statusText(_ status: JSONValue) -> String {
        guard let app = ListedApplication.mostRelevant(inStatus: status), !ListedApplication.isIdleScreen(app)
        else { return "" }
        return app["statusText"]?.stringValue ?? app["displayName"]?.stringValue ?? ""
    }

    /// Whether `applicationID` is available on `device` (`GET_APP_AVAILABILITY` answers `APP_AVAILABLE`).
    ///
    /// - Throws: ``CastDiscoveryError/Code/deviceUnreachable`` when the question could not be asked.
    func isAvailable(_ applicationID: String, on device: CastDevice) async throws(CastDiscoveryError) -> Bool {
        let reply = try await onReceiver(of: device, asking: "GET_APP_AVAILABILITY") { connection in
            try await connection.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "GET_APP_AVAILABILITY", "appId": [.string(applicationID)]]
            ).json()
        }
        return reply["availability"]?[applicationID]?.stringValue == "APP_AVAILABLE"
    }

    /// Connects, opens the virtual connection to `receiver-0`, runs `body`, and closes, whatever happened.
    private func onReceiver<Result: Sendable>(
        of device: CastDevice,
        asking question: String,
        _ body: (CastConnection) async throws -> Result
    ) async throws(CastDiscoveryError) -> Result {
        var configuration = CastConnection.Configuration()
        configuration.connectTimeout = connectTimeout ?? timeout
        configuration.requestTimeout = timeout
        let endpoint = "\(device.host):\(device.port)"
        let connection: CastConnection
        do {
            connection = try await CastConnection.connect(
                host: device.host,
                port: device.port,
                configuration: configuration,
                eventLoopGroup: eventLoopGroup,
                logger: logger
            )
        } catch {
            throw CastDiscoveryError(.deviceUnreachable, "cannot connect to \(endpoint)", cause: error)
        }
        do {
            try await connection.openVirtualConnection(to: CastEndpoint.receiver)
            let result = try await body(connection)
            await connection.close()
            return result
        } catch {
            await connection.close()
            throw CastDiscoveryError(.deviceUnreachable, "\(endpoint) did not answer \(question)", cause: error)
        }
    }
}
