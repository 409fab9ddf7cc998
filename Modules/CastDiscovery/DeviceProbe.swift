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
        let connection = try await connect(device)
        do {
            try await connection.openVirtualConnection(to: CastEndpoint.receiver)
            let result = try await DeviceInfo.ask(connection)
            await connection.close()
            return result
        } catch {
            await connection.close()
            throw CastDiscoveryError(
                .deviceUnreachable,
                "\(device.host):\(device.port) did not answer GET_STATUS",
                cause: error
            )
        }
    }

    /// Whether `applicationID` is available on `device` (`GET_APP_AVAILABILITY` answers `APP_AVAILABLE`).
    ///
    /// - Throws: ``CastDiscoveryError/Code/deviceUnreachable`` when the question could not be asked.
    func isAvailable(_ applicationID: String, on device: CastDevice) async throws(CastDiscoveryError) -> Bool {
        let reply = try await ask(device, ["type": "GET_APP_AVAILABILITY", "appId": [.string(applicationID)]])
        return reply["availability"]?[applicationID]?.stringValue == "APP_AVAILABLE"
    }

    private func connect(_ device: CastDevice) async throws(CastDiscoveryError) -> CastConnection {
        var configuration = CastConnection.Configuration()
        configuration.connectTimeout = timeout
        configuration.requestTimeout = timeout
        let host = device.host
        let connection: CastConnection
        do {
            connection = try await CastConnection.connect(
                host: host,
                port: device.port,
                configuration: configuration,
                eventLoopGroup: eventLoopGroup,
                logger: logger
            )
        } catch {
            throw CastDiscoveryError(.deviceUnreachable, "cannot connect to \(host):\(device.port)", cause: error)
        }
        return connection
    }

    private func ask(_ device: CastDevice, _ payload: JSONValue) async throws(CastDiscoveryError) -> JSONValue {
        let host = device.host
        let connection = try await connect(device)
        do {
            try await connection.openVirtualConnection(to: CastEndpoint.receiver)
            let reply = try await connection.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: payload
            )
            await connection.close()
            return try reply.json()
        } catch {
            await connection.close()
            let type = payload["type"]?.stringValue ?? "request"
            throw CastDiscoveryError(.deviceUnreachable, "\(host):\(device.port) did not answer \(type)", cause: error)
        }
    }
}
