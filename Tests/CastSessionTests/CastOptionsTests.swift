import CastDiscovery
import CastSession
import Testing

/// ``CastOptions`` shares its storage between copies until one changes: each copy must still act as its own value.
@Suite("CastOptions: documented defaults, copies are independent values")
struct CastOptionsTests {
    @Test func defaultsAreTheDocumentedOnes() {
        let options = CastOptions()
        #expect(options.receiverApplicationID == CastOptions.defaultMediaReceiverApplicationID)
        #expect(options.connectTimeout == .seconds(10))
        #expect(options.requestTimeout == .seconds(10))
        #expect(options.launchTimeout == .seconds(30))
        #expect(options.staticDevices.isEmpty)
        #expect(options.launchCredentials == nil)
        #expect(options.resumesSavedSessions)
        #expect(!options.stopsReceiverApplicationWhenEndingSession)
        #expect(!options.requestsWaitWhileSuspended)
        #expect(options.volumeStep == nil)
        #expect(options.stateDirectory == nil)
        #expect(!options.launchOptions.relaunchIfRunning)
        #expect(CastOptions(receiverApplicationID: "ABCD1234").receiverApplicationID == "ABCD1234")
    }

    @Test func changingACopyLeavesTheOriginalAsItWas() {
        var original = CastOptions(receiverApplicationID: "ORIGINAL")
        original.requestTimeout = .seconds(3)
        var copy = original
        copy.receiverApplicationID = "COPY"
        copy.requestTimeout = .seconds(7)
        copy.launchOptions.relaunchIfRunning = true
        copy.staticDevices.append(CastDevice.staticDevice(host: "192.0.2.1", port: 8009, name: "Den"))
        copy.stateDirectory = "/copy"

        #expect(original.receiverApplicationID == "ORIGINAL")
        #expect(original.requestTimeout == .seconds(3))
        #expect(!original.launchOptions.relaunchIfRunning)
        #expect(original.staticDevices.isEmpty)
        #expect(original.stateDirectory == nil)
        #expect(copy.receiverApplicationID == "COPY")
        #expect(copy.requestTimeout == .seconds(7))
        #expect(copy.launchOptions.relaunchIfRunning)
        #expect(copy.staticDevices.map(\.friendlyName) == ["Den"])
        #expect(copy.stateDirectory == "/copy")

        // A change to a value that still shares its storage with a copy leaves the copy as it was.
        let snapshot = original
        original.volumeStep = 0.1
        #expect(snapshot.volumeStep == nil)
        #expect(original.volumeStep == 0.1)
    }
}
