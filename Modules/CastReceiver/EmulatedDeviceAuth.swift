import CastTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How an emulated device answers device-authentication challenges (`tp.deviceauth`): with a certificate chain
/// of its own, so that senders given ``trustAnchorPEM`` verify it, or with one deliberate fault.
///
/// A device without it answers every challenge with `INTERNAL_ERROR`, as a device without credentials does.
public struct EmulatedDeviceAuth: Sendable {
    /// A deliberate failure, one per step a sender checks.
    public enum Fault: String, Sendable, Hashable, CaseIterable {
        /// The signature is corrupted.
        case wrongSignature = "wrong-signature"
        /// The device key signs another certificate than the TLS one (as a relay would).
        case wrongCertificate = "wrong-certificate"
        /// The device certificate expired.
        case expiredDeviceCertificate = "expired-device-cert"
        /// The chain ends at another root than ``trustAnchorPEM``.
        case unknownRoot = "unknown-root"
        /// The answer leaves out the intermediate.
        case intermediateMissing = "intermediate-missing"
        /// The answer does not echo the nonce.
        case noNonceEcho = "no-nonce"
        /// The device signs with SHA-1 whatever is asked.
        case sha1Only = "sha1-only"
        /// The TLS certificate is valid for 30 days.
        case longLivedTLSCertificate = "long-lived-tls-cert"
        /// The answer is an `INTERNAL_ERROR`.
        case errorReply = "error-reply"
        /// No answer at all.
        case noReply = "no-reply"
        /// The answer is not a protobuf.
        case malformedReply = "malformed"
        /// The device certificate is audio-only (and the device advertises video out).
        case audioOnlyCertificate = "audio-only"
        /// The CRL sent with the answer revokes the device certificate.
        case revoked = "revoked"

        /// Whether the fault is in the chain itself, so that only a chain made for it (not one loaded) has it.
        public var shapesChain: Bool {
            [.expiredDeviceCertificate, .unknownRoot, .audioOnlyCertificate, .revoked].contains(self)
        }
    }

    /// The device's chain and key.
    public var credentials: CastDeviceCredentials
    /// The certificate senders should trust (PEM): the chain's root, or another one for ``Fault/unknownRoot``.
    public var trustAnchorPEM: String
    /// The TLS certificate the device presents: 2 days (30 for ``Fault/longLivedTLSCertificate``).
    public var tlsIdentity: TLSIdentity
    /// The fault, or `nil` for correct answers.
    public var fault: Fault?

    /// Uses existing credentials (loaded from files) and presents `tlsIdentity`.
    public init(credentials: CastDeviceCredentials, tlsIdentity: TLSIdentity, fault: Fault? = nil) {
        self.credentials = credentials
        self.trustAnchorPEM = credentials.rootCertificatePEM
        self.tlsIdentity = tlsIdentity
        self.fault = fault
    }

    /// Uses existing credentials and makes the TLS certificate: 2 days, 30 for
    /// ``Fault/longLivedTLSCertificate`` (always 2048 bits, the least TLS accepts).
    public init(
        credentials: CastDeviceCredentials,
        fault: Fault? = nil,
        commonName: String = "swift-cast emulated device"
    )
        throws
    {
        let days = fault == .longLivedTLSCertificate ? 30 : 2
        self.init(
            credentials: credentials,
            tlsIdentity: try TLSIdentity.makeSelfSigned(commonName: commonName, validity: .seconds(days * 86_400)),
            fault: fault
        )
    }

    /// Makes a test chain (root → intermediate → device) of `keyBits` RSA keys shaped for `fault`, and a TLS
    /// certificate as above.
    public init(fault: Fault? = nil, commonName: String = "swift-cast emulated device", keyBits: Int = 2048) throws {
        var options = CastDeviceCredentials.ChainOptions()
        options.commonName = commonName
        options.keyBits = keyBits
        options.isAudioOnly = fault == .audioOnlyCertificate
        options.revokesDevice = fault == .revoked
        if fault == .expiredDeviceCertificate {
            options.deviceValidity = .seconds(-20 * 86_400) ... .seconds(-10 * 86_400)
        }
        try self.init(
            credentials: try CastDeviceCredentials.makeTestChain(options),
            fault: fault,
            commonName: commonName
        )
        if fault == .unknownRoot {
            trustAnchorPEM = try CastDeviceCredentials.makeTestChain(options).rootCertificatePEM
        }
    }

    /// The answer to `challenge` on a connection that presented `tlsCertificate` (DER), or `nil` for none.
    func answer(to challenge: CastMessage, tlsCertificate: [UInt8]) -> CastMessage? {
        guard case .binary(let bytes) = challenge.payload,
            let message = try? ProtoDeviceAuthMessage(serializedBytes: bytes), message.hasChallenge
        else { return Self.errorAnswer(.internalError, to: challenge) }
        let asked = message.challenge
        switch fault {
        case .noReply: return nil
        case .errorReply: return Self.errorAnswer(.internalError, to: challenge)
        case .malformedReply: return Self.answer([0xFF, 0x01, 0x02], to: challenge)
        default: break
        }
        guard asked.signatureAlgorithm != .rsassaPss else {
            return Self.errorAnswer(.signatureAlgorithmUnavailable, to: challenge)
        }
        do {
            let sha1 = fault == .sha1Only || asked.hashAlgorithm == .sha1
            let device = try credentials.deviceCertificateDER()
            let signed = Array(asked.senderNonce) + (fault == .wrongCertificate ? device : tlsCertificate)
            var signature = try credentials.sign(signed, sha1: sha1)
            if fault == .wrongSignature { signature[signature.count / 2] ^= 0xFF }
            var answer = ProtoDeviceAuthMessage()
            answer.response.signature = Data(signature)
            answer.response.clientAuthCertificate = Data(device)
            if fault != .intermediateMissing {
                answer.response.intermediateCertificate = try credentials.intermediateCertificatesDER().map { Data($0) }
            }
            answer.response.signatureAlgorithm = .rsassaPkcs1V15
            if fault != .noNonceEcho { answer.response.senderNonce = asked.senderNonce }
            answer.response.hashAlgorithm = sha1 ? .sha1 : .sha256
            if let crl = credentials.crlBundle { answer.response.crl = Data(crl) }
            return Self.answer(try answer.serializedBytes(), to: challenge)
        } catch {
            return Self.errorAnswer(.internalError, to: challenge)
        }
    }

    /// The `error` answer of a device that cannot (or will not) sign.
    static func errorAnswer(_ type: ProtoAuthError.ErrorType, to challenge: CastMessage) -> CastMessage {
        var error = ProtoDeviceAuthMessage()
        error.error.errorType = type
        return answer((try? error.serializedBytes()) ?? [], to: challenge)
    }

    private static func answer(_ bytes: [UInt8], to challenge: CastMessage) -> CastMessage {
        CastMessage(
            sourceID: CastEndpoint.receiver,
            destinationID: challenge.sourceID,
            namespace: CastNamespace.deviceAuth,
            payload: .binary(bytes)
        )
    }
}
