import Foundation
import SwiftProtobuf
import Testing

@testable import CastTransport

/// The verification steps one by one, on answers built here from chains OpenSSL makes in the test (the
/// emulator's faults are covered end to end in CastReceiverTests).
@Suite struct DeviceAuthVerifierTests {
    /// One chain and TLS certificate for the suite: key generation is the slow part.
    private static let fixture: Result<(CastDeviceCredentials, TLSIdentity), any Error> = Result {
        var options = CastDeviceCredentials.ChainOptions()
        options.keyBits = 1024
        return (try CastDeviceCredentials.makeTestChain(options), try TransportTestKit.identity.get())
    }

    private let nonce = Array(0..<16).map(UInt8.init)
    private var now: Int { Int(Date().timeIntervalSince1970) }

    private func verifier(_ credentials: CastDeviceCredentials) throws -> DeviceAuthVerifier {
        var options = DeviceAuthOptions()
        options.trustAnchors = try TrustAnchors(pem: credentials.rootCertificatePEM)
        return DeviceAuthVerifier(options: options)
    }

    /// A correct answer, changed by `change`.
    private func answer(
        _ credentials: CastDeviceCredentials,
        tlsCertificate: [UInt8],
        change: (inout ProtoDeviceAuthMessage) -> Void = { _ in }
    ) throws -> CastMessage {
        var message = ProtoDeviceAuthMessage()
        message.response.signature = Data(try credentials.sign(nonce + tlsCertificate))
        message.response.clientAuthCertificate = Data(try credentials.deviceCertificateDER())
        message.response.intermediateCertificate = try credentials.intermediateCertificatesDER().map { Data($0) }
        message.response.senderNonce = Data(nonce)
        message.response.hashAlgorithm = .sha256
        change(&message)
        return CastMessage(
            sourceID: CastEndpoint.receiver,
            destinationID: CastEndpoint.sender,
            namespace: CastNamespace.deviceAuth,
            payload: .binary(try message.serializedBytes())
        )
    }

    private func expectFailure(
        _ code: CastTransportError.Code,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ verify: () throws -> Void
    ) {
        let error = #expect(throws: CastTransportError.self, sourceLocation: sourceLocation) { try verify() }
        #expect(error?.code == code, "got \(String(describing: error))", sourceLocation: sourceLocation)
    }

    @Test func aCorrectAnswerVerifies() throws {
        let (credentials, identity) = try Self.fixture.get()
        let tls = try identity.certificateDER()
        let device = try verifier(credentials).verify(
            reply: try answer(credentials, tlsCertificate: tls),
            nonce: nonce,
            tlsCertificate: tls,
            now: now
        )
        #expect(device.chain.count == 3)
        #expect(device.hashAlgorithm == "SHA-256")
    }

    @Test func theChallengeIsANonceAndSHA256() throws {
        let challenge = DeviceAuthVerifier.challenge(nonce: nonce)
        guard case .binary(let bytes) = challenge.payload else {
            Issue.record("not binary")
            return
        }
        // DeviceAuthMessage{challenge{sender_nonce, hash_algorithm=SHA256}}, as cast-protocol.md §5.1 encodes it.
        #expect(bytes == [0x0A, 0x14, 0x12, 0x10] + nonce + [0x18, 0x01])
        #expect(challenge.destinationID == CastEndpoint.receiver)
        #expect(DeviceAuthVerifier.makeNonce().count == 16)
    }

    @Test func anEchoOfAnotherNonceIsRefused() throws {
        let (credentials, identity) = try Self.fixture.get()
        let tls = try identity.certificateDER()
        let reply = try answer(credentials, tlsCertificate: tls) {
            $0.response.senderNonce = Data(repeating: 7, count: 16)
        }
        expectFailure(.authNonceMismatch) {
            _ = try verifier(credentials).verify(reply: reply, nonce: nonce, tlsCertificate: tls, now: now)
        }
    }

    @Test func aTLSCertificateOutsideItsWindowIsRefused() throws {
        let (credentials, identity) = try Self.fixture.get()
        let tls = try identity.certificateDER()
        let reply = try answer(credentials, tlsCertificate: tls)
        let window = try identity.validityPeriod()
        expectFailure(.authTLSCertificateExpired) {
            _ = try verifier(credentials).verify(
                reply: reply,
                nonce: nonce,
                tlsCertificate: tls,
                now: window.notAfter + 1
            )
        }
        expectFailure(.authTLSCertificateExpired) {
            _ = try verifier(credentials).verify(
                reply: reply,
                nonce: nonce,
                tlsCertificate: tls,
                now: window.notBefore - 1
            )
        }
    }

    @Test func malformedAnswersAreRefused() throws {
        let (credentials, identity) = try Self.fixture.get()
        let tls = try identity.certificateDER()
        let verifier = try verifier(credentials)
        let text = CastMessage(
            sourceID: CastEndpoint.receiver,
            destinationID: CastEndpoint.sender,
            namespace: CastNamespace.deviceAuth,
            json: ["type": "AUTH"]
        )
        expectFailure(.authMalformedReply) {
            _ = try verifier.verify(reply: text, nonce: nonce, tlsCertificate: tls, now: now)
        }
        let empty = try answer(credentials, tlsCertificate: tls) { $0 = ProtoDeviceAuthMessage() }
        expectFailure(.authMalformedReply) {
            _ = try verifier.verify(reply: empty, nonce: nonce, tlsCertificate: tls, now: now)
        }
        let garbage = try answer(credentials, tlsCertificate: tls) {
            $0.response.clientAuthCertificate = Data([1, 2, 3])
        }
        expectFailure(.authMalformedReply) {
            _ = try verifier.verify(reply: garbage, nonce: nonce, tlsCertificate: tls, now: now)
        }
        let pss = try answer(credentials, tlsCertificate: tls) { $0.response.signatureAlgorithm = .rsassaPss }
        expectFailure(.authInvalidSignature) {
            _ = try verifier.verify(reply: pss, nonce: nonce, tlsCertificate: tls, now: now)
        }
    }

    @Test func withoutTrustAnchorsNothingVerifies() throws {
        let (credentials, identity) = try Self.fixture.get()
        let tls = try identity.certificateDER()
        let reply = try answer(credentials, tlsCertificate: tls)
        expectFailure(.authNotConfigured) {
            _ = try DeviceAuthVerifier(options: DeviceAuthOptions()).verify(
                reply: reply,
                nonce: nonce,
                tlsCertificate: tls,
                now: now
            )
        }
    }
}
