// swift-cast — Apache-2.0

import CastDiscovery
import CastTransport

#if DEBUG || CAST_FUZZING
@testable import CastSession
#endif

/// Receiver-namespace payloads the sender reads: RECEIVER_STATUS and DEVICE_INFO.
enum SessionFuzz {
    /// A `GET_DEVICE_INFO` reply.
    static func deviceInfo(_ bytes: [UInt8]) {
        guard let json = FuzzInput.json(bytes), let info = DeviceInfo(json: json) else { return }
        _ = info.hashValue
        _ = info.capabilities?.contains(.videoOut)
    }

    /// A device's `GET /setup/eureka_info` answer, and the groups it reports as devices.
    static func eurekaInfo(_ bytes: [UInt8]) {
        guard let json = FuzzInput.json(bytes) else { return }
        let info = EurekaInfo(json: json)
        _ = info.hashValue
        _ = info.deviceInfo.hashValue
        for group in info.groupDevices(reportedBy: "192.0.2.1") { _ = group.isGroup && group.port > 0 }
    }

    #if DEBUG || CAST_FUZZING
    /// A `RECEIVER_STATUS` message: the device status and each application entry it lists.
    static func deviceStatus(_ bytes: [UInt8]) {
        guard let json = FuzzInput.json(bytes) else { return }
        let status = DeviceStatus(json: json)
        _ = status.hashValue
        for entry in json["status"]?["applications"]?.arrayValue ?? [] {
            guard let app = ApplicationMetadata(json: entry) else { continue }
            _ = app.hashValue
        }
    }
    #endif
}
