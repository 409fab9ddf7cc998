import CastTransport
import Testing

@testable import CastReceiver

// What independent senders found over the wire: requests that must neither stop the device nor go unanswered.

private let dmr = "CC1AD845"

@Suite("EmulatedDevice: robustness")
struct EmulatedDeviceRobustnessTests {
    /// A delay of any size converts to a `Duration` without trapping: beyond the horizon it is the horizon.
    @Test(arguments: [1e10, 1e12, 1e300, .infinity, -.infinity, .nan, -1])
    func emulatorSecondsIsTotal(seconds: Double) {
        let duration = Duration.emulatorSeconds(seconds)
        #expect(duration >= .zero)
        #expect(duration <= .seconds(Int64(Duration.emulatorHorizon)))
    }

    /// A LOAD of media ten billion seconds long used to kill the process converting its end to a timer.
    @Test func aLoadWithAHugeDurationIsAnsweredAndTheDeviceGoesOn() async throws {
        try await withDevice { device, clock in
            let sender = try await TestSender.connect(to: device)
            let transportID = try await sender.launchAndConnect(dmr)
            for duration: Double in [1e10, 1e12, 1e300] {
                let media: JSONValue = [
                    "contentId": "http://x/a.mp4", "contentType": "video/mp4", "streamType": "BUFFERED",
                    "duration": .number(duration),
                ]
                let loaded = try await sender.media(["type": "LOAD", "media": media], to: transportID)
                #expect(loaded.firstStatus?["playerState"] == "PLAYING", "\(duration)")
            }
            #expect(clock.pendingTimerCount == 0, "an end beyond the horizon arms nothing")
            clock.advance(by: .seconds(5))
            let status = try await sender.media(["type": "GET_STATUS"], to: transportID)
            #expect(status.firstStatus?["currentTime"] == 5)
            await sender.close()
        }
    }
}
