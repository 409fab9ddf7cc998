import CastReceiver
import CastSession
import CastTransport
import NIOConcurrencyHelpers
import Testing

/// `withCastContext`: the scope owns what the context started, and leaving it — by returning, throwing or being
/// cancelled — leaves the session without stopping the app, which stays resumable.
@Suite struct ScopedContextTests {
    struct Stop: Error {}

    @Test func leavingTheScopeLeavesTheSessionAndKeepsTheAppRunning() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let options = testOptions()
            let session = try await withCastContext(options: options) { context in
                try await context.sessionManager.startSession(with: device.castDevice)
            }
            #expect(session.connectionState == .disconnected)
            #expect(device.runningApp.appID == "CC1AD845", "the app keeps running")
            // The next context resumes it.
            let next = CastContext(options: options)
            let resumed = try await next.sessionManager.resumeSavedSession()
            #expect(resumed.sessionID == session.sessionID)
            await next.sessionManager.endSession(stopCasting: true)
        }
    }

    @Test func aThrowingBodyLeavesTheSessionToo() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let started = NIOLockedValueBox<CastSession?>(nil)
            await #expect(throws: Stop.self) {
                try await withCastContext(options: testOptions()) { context in
                    let session = try await context.sessionManager.startSession(with: device.castDevice)
                    started.withLockedValue { $0 = session }
                    throw Stop()
                }
            }
            #expect(started.withLockedValue { $0 }?.connectionState == .disconnected)
            #expect(device.runningApp.appID == "CC1AD845")
        }
    }

    @Test func cancellingTheScopesTaskEndsWhatItStarted() async throws {
        try await withCastReceiverEmulator(clock: ManualCastClock()) { emulator in
            let device = emulator.devices[0]
            let started = NIOLockedValueBox<CastSession?>(nil)
            let (ready, signal) = AsyncStream.makeStream(of: Void.self)
            let scope = Task {
                try await withCastContext(options: testOptions()) { context in
                    let session = try await context.sessionManager.startSession(with: device.castDevice)
                    started.withLockedValue { $0 = session }
                    signal.yield()
                    // Until cancelled.
                    try await Task.sleep(for: .seconds(3600))
                }
            }
            for await _ in ready { break }
            scope.cancel()
            await #expect(throws: CancellationError.self) { try await scope.value }
            #expect(started.withLockedValue { $0 }?.connectionState == .disconnected)
            #expect(device.runningApp.appID == "CC1AD845")
        }
    }
}
