import CastDiscovery
import CastMedia
import CastReceiver
import CastSession
import CastTransport
import Testing

/// Cast Connect: launching an Android TV receiver app with credentials, and LOAD credentials.
@Suite struct CastConnectTests {
    static func connectOptions(androidReceiverCompatible: Bool = true) -> CastOptions {
        testOptions { options in
            options.receiverApplicationID = "A1B2C3D4"
            options.launchOptions.androidReceiverCompatible = androidReceiverCompatible
            options.launchOptions.appParameters = ["launchHint": "resume"]
            options.launchCredentials = CredentialsData(credentials: "token-123", credentialsType: "android")
        }
    }

    @Test func launchReachesTheAndroidTVAppWithTheCredentials() async throws {
        try await withCastReceiverEmulator { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: Self.connectOptions())
            let session = try await context.sessionManager.startSession(with: device.castDevice)
            #expect(session.application.applicationID == "A1B2C3D4")
            #expect(device.runningApp.appID == "A1B2C3D4")

            let launch = try #require(device.launches.last)
            #expect(launch.succeeded)
            #expect(launch.appID == "A1B2C3D4")
            #expect(launch.supportedAppTypes?.contains("ANDROID_TV") == true)
            #expect(launch.supportedAppTypes?.contains("WEB") == true)
            #expect(launch.credentials == "token-123")
            #expect(launch.credentialsType == "android")
            #expect(launch.appParams == ["launchHint": "resume"])
            #expect(device.runningApp.launch == launch)

            // The Android TV app serves the media namespace.
            let client = try #require(session.remoteMediaClient)
            let status = try await client.loadMedia(sampleMedia()).response()
            #expect(status?.playerState == .playing)
            await context.sessionManager.endSession(stopCasting: true)
        }
    }

    @Test func withoutAndroidReceiverCompatibilityTheLaunchFails() async throws {
        try await withCastReceiverEmulator { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: Self.connectOptions(androidReceiverCompatible: false))
            let events = context.sessionManager.events()
            await #expect {
                try await context.sessionManager.startSession(with: device.castDevice)
            } throws: { error in
                let error = error as? CastSessionError
                return error?.code == .launchFailed && error?.receiverReason == "NOT_FOUND"
            }
            let failed = try await nextEvent(events, "didFailToStart")
            #expect(failed.error?.code == .launchFailed)
            let launch = try #require(device.launches.last)
            #expect(!launch.succeeded)
            #expect(launch.supportedAppTypes == ["WEB"])
            #expect(device.runningApp.isIdleScreen)
            #expect(context.sessionManager.currentSession == nil)
            #expect(
                context.sessionManager.castState == .notConnected
                    || context.sessionManager.castState == .noDevicesAvailable
            )
        }
    }

    @Test func loadCredentialsReachTheReceiver() async throws {
        try await withCastReceiverEmulator { emulator in
            let device = emulator.devices[0]
            let context = CastContext(options: Self.connectOptions())
            let session = try await context.sessionManager.startSession(with: device.castDevice)
            let client = try #require(session.remoteMediaClient)
            #expect(device.mediaCredentials == nil)

            var request = LoadRequestData(media: sampleMedia())
            request.credentials = "user-token-456"
            request.credentialsType = "android"
            try await client.load(request).response()
            #expect(device.mediaCredentials == ["credentials": "user-token-456", "credentialsType": "android"])
            await context.sessionManager.endSession(stopCasting: true)
        }
    }
}
