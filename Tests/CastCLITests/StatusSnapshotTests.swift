import CastControllers
import CastDiscovery
import CastTransport
import Testing

@testable import CastSession
@testable import cast

/// How a status reads when the running app's media status is unknown rather than empty.
@Suite struct StatusSnapshotTests {
    private let device = CastDevice.staticDevice(host: "10.0.0.9", port: 8009)
    private let status = DeviceStatus(json: [
        "status": [
            "volume": ["level": .null, "muted": false],
            "applications": [["appId": "CC1AD845", "sessionId": "s-1", "displayName": "Default Media Receiver"]],
        ]
    ])

    @Test func anUnknownMediaStatusIsNotNone() {
        let unknown = StatusSnapshot(
            activity: DeviceActivity(device: device, deviceStatus: status, mediaStatusError: "no reply to GET_STATUS")
        )
        #expect(unknown.lines().contains("media: unknown (no reply to GET_STATUS)"))
        #expect(unknown.json["media"] == .null)
        #expect(unknown.json["mediaError"] == "no reply to GET_STATUS")
        #expect(unknown.deviceVolume == nil, "a null level is an unknown volume, not 100 %")

        let none = StatusSnapshot(activity: DeviceActivity(device: device, deviceStatus: status))
        #expect(none.lines().contains("media: none"))
        #expect(none.json["mediaError"] == nil)
    }

    /// `cast status --via` reads castd's JSON: the same "unknown" line, and no volume line for an untold level.
    @Test func castdsStateReadsTheSame() throws {
        let state = try JSONValue(
            parsing: #"""
                {"device":{"name":"Odd"},"status":{"muted":false,"app":{"id":"E0C40002","name":"Echo"},
                "mediaError":"the app answered GET_STATUS with GET_STATUS"}}
                """#
        )
        let lines = ViaService.stateText(state).split(separator: "\n").map(String.init)
        #expect(lines == ["device: Odd", "app: Echo", "media: unknown (the app answered GET_STATUS with GET_STATUS)"])
    }
}
