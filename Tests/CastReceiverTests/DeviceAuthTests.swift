import CastTransport
import NIOConcurrencyHelpers
import Testing

@testable import CastReceiver

/// Device authentication end to end: a sender's CastConnection challenges an emulated device that answers with a
/// chain made by OpenSSL, correctly or with one fault per verification step.
@Suite struct DeviceAuthTests {
    /// A device answering with `auth`, presenting `auth`'s TLS certificate, with capabilities `ca`.
    private func device(_ auth: EmulatedDeviceAuth?, capabilities: Int = 4101) -> DeviceConfiguration {
        testDevice("Auth Device") { configuration in
            configuration.deviceAuth = auth
            configuration.identity = auth?.tlsIdentity ?? configuration.identity
            configuration.capabilities = capabilities
        }
    }

    private func options(
        _ policy: DeviceAuthPolicy = .require,
        trusting auth: EmulatedDeviceAuth?,
        configure: (inout DeviceAuthOptions) -> Void = { _ in }
    ) throws -> CastConnection.Configuration {
        var configuration = CastConnection.Configuration()
        configuration.deviceAuth.policy = policy
        configuration.deviceAuth.trustAnchors = try auth.map { try TrustAnchors(pem: $0.trustAnchorPEM) }
        configuration.deviceAuth.deviceHasVideoOutput = true
        configuration.deviceAuth.timeout = .seconds(60)  // a busy machine; the no-reply case sets its own
        configure(&configuration.deviceAuth)
        return configuration
    }

    private func connect(_ device: EmulatedDevice, _ configuration: CastConnection.Configuration) async throws
        -> CastConnection
    {
        try await CastConnection.connect(host: "127.0.0.1", port: device.port, configuration: configuration)
    }

    @Test func aDeviceWithItsChainIsVerifiedBeforeAnythingElseIsSent() async throws {
        let auth = try EmulatedDeviceAuth(commonName: "Living Room TV", keyBits: 1024)
        try await withDevice(device(auth)) { device, _ in
            let connection = try await connect(device, options(trusting: auth))
            guard case .verified(let verified) = connection.deviceAuthentication else {
                Issue.record("not verified: \(connection.deviceAuthentication)")
                return
            }
            #expect(verified.commonName == "Living Room TV")
            #expect(
                verified.chain == ["Living Room TV", "swift-cast test Cast intermediate", "swift-cast test Cast root"]
            )
            #expect(verified.hashAlgorithm == "SHA-256")
            #expect(!verified.isAudioOnly)
            #expect(connection.deviceAuthentication.json["result"] == "verified")
            try await connection.openVirtualConnection(to: CastEndpoint.receiver)
            let status = try await connection.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "GET_STATUS"]
            )
            #expect((try? status.json())?["type"] == "RECEIVER_STATUS")
            await connection.close()
        }
    }

    /// Every fault of the emulator fails `require` with its own code, and the connection is not kept.
    @Test(arguments: [
        (EmulatedDeviceAuth.Fault.wrongSignature, CastTransportError.Code.authInvalidSignature),
        (.wrongCertificate, .authSignatureMismatch),
        (.expiredDeviceCertificate, .authCertificateExpired),
        (.unknownRoot, .authUntrustedRoot),
        (.intermediateMissing, .authIntermediateMissing),
        (.noNonceEcho, .authNonceMismatch),
        (.sha1Only, .authWeakHash),
        (.longLivedTLSCertificate, .authTLSCertificateLifetime),
        (.errorReply, .authErrorReply),
        (.noReply, .authTimedOut),
        (.malformedReply, .authMalformedReply),
        (.audioOnlyCertificate, .authAudioOnlyDevice),
    ])
    func eachFaultFailsRequireWithItsOwnCode(fault: EmulatedDeviceAuth.Fault, code: CastTransportError.Code)
        async throws
    {
        let auth = try EmulatedDeviceAuth(fault: fault, keyBits: 1024)
        try await withDevice(device(auth)) { device, _ in
            let configuration = try options(trusting: auth) { if fault == .noReply { $0.timeout = .milliseconds(300) } }
            let error = await expectTransportError(code) { try await connect(device, configuration) }
            #expect(error?.isDeviceAuthFailure == true)
            try await waitUntil("the refused connection is gone") { device.connectionCount == 0 }
        }
    }

    @Test func aDeviceWithoutCredentialsAnswersWithAnError() async throws {
        let trusted = try EmulatedDeviceAuth(keyBits: 1024)
        try await withDevice(device(nil)) { device, _ in
            let error = await expectTransportError(.authErrorReply) {
                try await connect(device, options(trusting: trusted))
            }
            #expect(error?.message.contains("INTERNAL_ERROR") == true)
        }
    }

    @Test func warnGoesOnAtOnceAndReportsTheFailureWhenItComes() async throws {
        let auth = try EmulatedDeviceAuth(fault: .wrongSignature, keyBits: 1024)
        try await withDevice(device(auth)) { device, _ in
            let connection = try await connect(device, options(.warn, trusting: auth))
            let events = connection.events()
            try await connection.openVirtualConnection(to: CastEndpoint.receiver)
            if case .pending = connection.deviceAuthentication {
                for await event in events {
                    if case .deviceAuthenticated = event { break }
                }
            }
            #expect(
                connection.deviceAuthentication
                    == .failed(
                        code: .authInvalidSignature,
                        message: "the signature was not made with the device certificate's key"
                    )
            )
            #expect(connection.isConnected)
            await connection.close()
        }
    }

    @Test func requireWithoutTrustAnchorsRefusesAndWarnOrOffDoNotChallenge() async throws {
        let auth = try EmulatedDeviceAuth(keyBits: 1024)
        try await withDevice(device(auth)) { device, _ in
            await expectTransportError(.authNotConfigured) { try await connect(device, options(trusting: nil)) }
            let warned = try await connect(device, options(.warn, trusting: nil))
            #expect(warned.deviceAuthentication == .notAttempted(reason: "no trust anchors are set"))
            await warned.close()
            let off = try await connect(device, options(.off, trusting: auth))
            #expect(off.deviceAuthentication == .notAttempted(reason: "device authentication is off"))
            await off.close()
        }
    }

    @Test func sha1IsAcceptedOnlyWhenAllowed() async throws {
        let auth = try EmulatedDeviceAuth(fault: .sha1Only, keyBits: 1024)
        try await withDevice(device(auth)) { device, _ in
            let connection = try await connect(device, options(trusting: auth) { $0.allowsSHA1 = true })
            guard case .verified(let verified) = connection.deviceAuthentication else {
                Issue.record("not verified: \(connection.deviceAuthentication)")
                return
            }
            #expect(verified.hashAlgorithm == "SHA-1")
            await connection.close()
        }
    }

    @Test func anAudioOnlyCertificateIsFineOnADeviceWithoutVideo() async throws {
        let auth = try EmulatedDeviceAuth(fault: .audioOnlyCertificate, keyBits: 1024)
        try await withDevice(device(auth, capabilities: 4)) { device, _ in
            let connection = try await connect(device, options(trusting: auth) { $0.deviceHasVideoOutput = false })
            guard case .verified(let verified) = connection.deviceAuthentication else {
                Issue.record("not verified: \(connection.deviceAuthentication)")
                return
            }
            #expect(verified.isAudioOnly)
            await connection.close()
        }
    }

    @Test func theCRLIsReadAlwaysAndEnforcedOnlyWhenAsked() async throws {
        let auth = try EmulatedDeviceAuth(fault: .revoked, keyBits: 1024)
        try await withDevice(device(auth)) { device, _ in
            let parsedOnly = try await connect(device, options(trusting: auth))
            #expect(parsedOnly.deviceAuthentication.isVerified)
            await parsedOnly.close()
            await expectTransportError(.authRevoked) {
                try await connect(device, options(trusting: auth) { $0.checksRevocation = true })
            }
        }
        let clean = try EmulatedDeviceAuth(keyBits: 1024)
        try await withDevice(device(clean)) { device, _ in
            let connection = try await connect(device, options(trusting: clean) { $0.checksRevocation = true })
            #expect(connection.deviceAuthentication.isVerified)
            await connection.close()
        }
    }

    @Test func everyReconnectChallengesAgain() async throws {
        let auth = try EmulatedDeviceAuth(keyBits: 1024)
        try await withDevice(device(auth)) { device, _ in
            let connection = try await connect(device, options(trusting: auth))
            try await connection.reconnect()
            #expect(connection.deviceAuthentication.isVerified)
            #expect(device.deviceAuthChallenges == 2)
            await connection.close()
        }
    }

    @Test func trustAnchorsRefuseTextWithoutCertificatesAndUnreadableFiles() throws {
        #expect(throws: CastTransportError.self) { try TrustAnchors(pem: "not a certificate") }
        let error = #expect(throws: CastTransportError.self) {
            try TrustAnchors(contentsOfFile: "/nonexistent/roots.pem")
        }
        #expect(error?.code == .authNotConfigured)
        #expect(error?.message.contains("/nonexistent/roots.pem") == true)
    }
}
