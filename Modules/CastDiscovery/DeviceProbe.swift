import CastTransport
import Logging
import NIOCore

/// Short-lived connections that ask a device one question: is it there (static devices), is an app available
/// (criteria). Each opens TLS, a virtual connection to `receiver-0`, asks, and closes.
struct DeviceProbe: Sendable {
    var timeout: Duration
    var eventLoopGroup: any EventLoopGroup
    var logger: Logger

    /// `GET_STATUS` and, on the same connection, `GET_DEVICE_INFO`; the device's description is waited for at
    /// most ``DeviceInfo/answerGrace`` after the status, since not every receiver answers it.
    ///
    /// - Throws: ``CastDiscoveryError/Code/deviceUnreachable`` when the status could not be had.
    func describe(_ device: CastDevice) async throws(CastDiscoveryError) -> (status: JSONValue, info: DeviceInfo?) {
        try await onReceiver(of: device, asking: "GET_STATUS") { connection in try await DeviceInfo.ask(connection) }
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
        configuration.connectTimeout = timeout
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
