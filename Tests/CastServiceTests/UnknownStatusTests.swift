import CastDiscovery
import CastReceiver
import CastTransport
import Foundation
import Testing

@testable import CastService
@testable import CastSession

/// What castd's API says when a device leaves part of its state untold: an unknown volume is absent rather than
/// 0, and a media status that could not be read says why rather than claiming that nothing plays.
@Suite struct UnknownStatusTests {
    @Test func aVolumeTheDeviceDidNotTellIsAbsentNotZero() throws {
        let status = DeviceStatus(json: [
            "status": [
                "volume": ["level": .null, "muted": true],
                "applications": [["appId": "CC1AD845", "sessionId": "s-1", "displayName": "Default Media Receiver"]],
            ]
        ])
        let activity = DeviceActivity(
            device: .staticDevice(host: "10.0.0.9", port: 8009),
            deviceStatus: status,
            mediaStatusError: "no reply to GET_STATUS"
        )
        let schema = APIModel.status(activity)
        #expect(schema.volume == nil)
        #expect(schema.muted == true)
        #expect(schema.media == nil)
        #expect(schema.mediaError == "no reply to GET_STATUS")

        let idle = APIModel.status(
            DeviceActivity(device: activity.device, deviceStatus: DeviceStatus(json: ["status": [:]]))
        )
        #expect(idle.mediaError == nil)
    }

    /// An app that lists the media namespace but answers its GET_STATUS with no status (it echoes the request).
    @Test func aMediaStatusThatCannotBeReadIsToldWithItsReason() async throws {
        var configuration = DeviceConfiguration(friendlyName: "Odd App", port: 0)
        configuration.apps.append(.echo(id: "E0C40002", namespaces: [CastNamespace.media]))
        try await withCastReceiverEmulator(devices: [configuration]) { emulator in
            var options = CastOptions(receiverApplicationID: "E0C40002")
            options.stateDirectory = temporaryStateDirectory()
            defer { try? FileManager.default.removeItem(atPath: options.stateDirectory!) }
            let phone = CastContext(options: options)
            _ = try await phone.sessionManager.startSession(with: emulator.devices[0].castDevice)
            let stateDirectory = temporaryStateDirectory()
            defer { try? FileManager.default.removeItem(atPath: stateDirectory) }
            let hub = try await startedHub(on: emulator, stateDirectory: stateDirectory)
            do {
                // The media status's GET_STATUS times out (the request timeout) before castd knows it is unknown.
                for await event in hub.events() {
                    if case .status(let activity) = event.change, activity.mediaStatusError != nil { break }
                }
                try await withServer(hub) { port in
                    let path = "/v1/devices/\(hub.devices[0].device.id)"
                    let status = try await TestHTTP.send(port: port, "GET", path).json?["status"]
                    #expect(status?["app"]?["id"]?.stringValue == "E0C40002")
                    #expect(status?["media"] == nil)
                    let error = status?["mediaError"]?.stringValue
                    #expect(error?.contains("GET_STATUS") == true, "\(String(describing: status))")
                }
            } catch {
                await hub.stop()
                throw error
            }
            await hub.stop()
            await phone.sessionManager.endSession(stopCasting: true)
        }
    }
}
