import CastDiscovery
import CastReceiver
import CastSession
import CastTransport
import Testing

/// Device authentication through sessions: `require` refuses to start on a device that fails, with the failed
/// step; a verified result (or, with `warn`, a failure) is on the session and comes as a session event.
@Suite struct DeviceAuthSessionTests {
    private func options(trusting auth: EmulatedDeviceAuth, _ policy: DeviceAuthPolicy) throws -> (inout CastOptions)
        -> Void
    {
        let anchors = try TrustAnchors(pem: auth.trustAnchorPEM)
        return { options in
            options.deviceAuth.policy = policy
            options.deviceAuth.trustAnchors = anchors
            options.deviceAuth.timeout = testRequestTimeout
        }
    }

    @Test func aVerifiedDeviceIsOnTheSessionAndInItsEvents() async throws {
        let auth = try EmulatedDeviceAuth(commonName: "Kitchen", keyBits: 1024)
        try await withStartedSession(
            device: { $0.deviceAuth = auth },
            options: try options(trusting: auth, .require)
        ) { fixture in
            #expect(fixture.session.deviceAuthentication.isVerified)
            let event = try await nextEvent(fixture.events, "didAuthenticateDevice")
            guard case .didAuthenticateDevice(let session, .verified(let device)) = event else {
                Issue.record("unexpected \(event)")
                return
            }
            #expect(session === fixture.session)
            #expect(device.commonName == "Kitchen")
        }
    }

    @Test func requireRefusesToStartNamingTheStep() async throws {
        let auth = try EmulatedDeviceAuth(fault: .expiredDeviceCertificate, keyBits: 1024)
        var configuration = DeviceConfiguration(friendlyName: "Old Device", port: 0)
        configuration.deviceAuth = auth
        let castOptions = testOptions(try options(trusting: auth, .require))
        try await withCastReceiverEmulator(devices: [configuration], clock: ManualCastClock()) { emulator in
            let context = CastContext(options: castOptions)
            let events = context.sessionManager.events()
            let error = await #expect(throws: CastSessionError.self) {
                try await context.sessionManager.startSession(with: emulator.devices[0].castDevice)
            }
            #expect(error?.code == .deviceAuthenticationFailed)
            #expect((error?.cause as? CastTransportError)?.code == .authCertificateExpired)
            #expect(error?.message.contains("Old Device") == true)
            let failed = try await nextEvent(events, "didFailToStart")
            #expect(failed.error?.code == .deviceAuthenticationFailed)
            #expect(emulator.devices[0].launches.isEmpty)
        }
    }

    @Test func warnStartsAndReportsTheFailure() async throws {
        let auth = try EmulatedDeviceAuth(fault: .noNonceEcho, keyBits: 1024)
        try await withStartedSession(
            device: { $0.deviceAuth = auth },
            options: try options(trusting: auth, .warn)
        ) { fixture in
            let event = try await nextEvent(fixture.events, "didAuthenticateDevice")
            guard case .didAuthenticateDevice(_, .failed(let code, _)) = event else {
                Issue.record("unexpected \(event)")
                return
            }
            #expect(code == .authNonceMismatch)
            #expect(
                fixture.session.deviceAuthentication
                    == .failed(code: code, message: "the answer does not echo the nonce")
            )
            #expect(fixture.session.connectionState == .connected)
        }
    }
}
