internal import COpenSSL
import SwiftProtobuf

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Checks a device's answer to a `tp.deviceauth` challenge, step by step as Chrome and openscreen do
/// (cast-protocol.md §5.2); the first step that fails names the error.
package struct DeviceAuthVerifier: Sendable {
    /// The policy OID of certificates for audio-only devices.
    package static let audioOnlyPolicy = "1.3.6.1.4.1.11129.2.5.2"

    package var options: DeviceAuthOptions

    package init(options: DeviceAuthOptions) {
        self.options = options
    }

    /// A fresh 16-byte nonce.
    package static func makeNonce() -> [UInt8] { SystemCrypto.randomBytes(count: 16) }

    /// The challenge message, `sender-0 → receiver-0`: the nonce, SHA-256, PKCS#1 v1.5 (the default).
    package static func challenge(nonce: [UInt8], from source: String = CastEndpoint.sender) -> CastMessage {
        var message = ProtoDeviceAuthMessage()
        message.challenge.senderNonce = Data(nonce)
        message.challenge.hashAlgorithm = .sha256
        return CastMessage(
            sourceID: source,
            destinationID: CastEndpoint.receiver,
            namespace: CastNamespace.deviceAuth,
            payload: .binary((try? message.serializedBytes()) ?? [])
        )
    }

    /// Verifies `reply` to a challenge with `nonce` on a connection whose peer presented `tlsCertificate` (DER),
    /// at `now` (seconds since the Unix epoch).
    ///
    /// - Throws: ``CastTransportError`` with the `auth…` code of the first step that fails.
    package func verify(
        reply: CastMessage,
        nonce: [UInt8],
        tlsCertificate: [UInt8],
        now: Int
    ) throws(CastTransportError) -> DeviceAuthentication.VerifiedDevice {
        guard let anchors = options.trustAnchors, !anchors.certificates.isEmpty else {
            throw CastTransportError(.authNotConfigured, "no trust anchors to verify devices against")
        }
        let response = try Self.response(in: reply)
        guard SystemCrypto.constantTimeEquals(Array(response.senderNonce), nonce) else {
            throw CastTransportError(
                .authNonceMismatch,
                response.hasSenderNonce ? "the answer echoes another nonce" : "the answer does not echo the nonce"
            )
        }
        try checkTLSCertificate(tlsCertificate, now: now)
        let device = try X509Certificate(der: Array(response.clientAuthCertificate), what: "the device certificate")
        var intermediates: [X509Certificate] = []
        for (index, der) in response.intermediateCertificate.enumerated() {
            intermediates.append(try X509Certificate(der: Array(der), what: "intermediate certificate \(index + 1)"))
        }
        let chain = try verifyChain(device, intermediates: intermediates, anchors: anchors, now: now)
        if response.hasCrl { try checkRevocation(response.crl, chain: chain, anchors: anchors, now: now) }
        let sha1 = response.hashAlgorithm == .sha1
        if sha1, !options.allowsSHA1 {
            throw CastTransportError(.authWeakHash, "the device signed with SHA-1; SHA-256 is required")
        }
        guard response.signatureAlgorithm != .rsassaPss else {
            throw CastTransportError(.authInvalidSignature, "RSASSA-PSS signatures are not supported")
        }
        let signature = Array(response.signature)
        guard device.verifies(signature: signature, over: nonce + tlsCertificate, sha1: sha1) else {
            if device.isSignatureOfItsKey(signature) {
                throw CastTransportError(
                    .authSignatureMismatch,
                    "the device key signed something other than this nonce and this connection's TLS certificate"
                )
            }
            throw CastTransportError(
                .authInvalidSignature,
                "the signature was not made with the device certificate's key"
            )
        }
        let audioOnly = device.hasPolicy(Self.audioOnlyPolicy)
        if audioOnly, options.deviceHasVideoOutput {
            throw CastTransportError(
                .authAudioOnlyDevice,
                "the device certificate is for audio-only devices, but the device advertises video output"
            )
        }
        return DeviceAuthentication.VerifiedDevice(
            commonName: device.commonName,
            chain: chain.map(\.commonName),
            hashAlgorithm: sha1 ? "SHA-1" : "SHA-256",
            isAudioOnly: audioOnly
        )
    }

    /// The response of a `DeviceAuthMessage` reply.
    private static func response(in reply: CastMessage) throws(CastTransportError) -> ProtoAuthResponse {
        guard case .binary(let bytes) = reply.payload else {
            throw CastTransportError(.authMalformedReply, "the answer is text, not a binary DeviceAuthMessage")
        }
        let message: ProtoDeviceAuthMessage
        do {
            message = try ProtoDeviceAuthMessage(serializedBytes: bytes)
        } catch {
            throw CastTransportError(.authMalformedReply, "the answer is not a DeviceAuthMessage", cause: error)
        }
        if message.hasError {
            throw CastTransportError(.authErrorReply, "the device answered with \(name(of: message.error.errorType))")
        }
        guard message.hasResponse else {
            throw CastTransportError(.authMalformedReply, "the answer has neither a response nor an error")
        }
        return message.response
    }

    private static func name(of error: ProtoAuthError.ErrorType) -> String {
        switch error {
        case .internalError: return "INTERNAL_ERROR (no device credentials)"
        case .noTls: return "NO_TLS"
        case .signatureAlgorithmUnavailable: return "SIGNATURE_ALGORITHM_UNAVAILABLE"
        }
    }

    /// The peer's TLS certificate must be valid now and short-lived, as Cast devices rotate theirs.
    private func checkTLSCertificate(_ der: [UInt8], now: Int) throws(CastTransportError) {
        let certificate = try X509Certificate(der: der, what: "the TLS certificate")
        guard let validity = certificate.validity else {
            throw CastTransportError(.authTLSCertificateExpired, "the TLS certificate's validity is unreadable")
        }
        guard validity.notBefore <= now, now <= validity.notAfter else {
            throw CastTransportError(
                .authTLSCertificateExpired,
                now < validity.notBefore ? "the TLS certificate is not valid yet" : "the TLS certificate expired"
            )
        }
        let lifetime = validity.notAfter - validity.notBefore
        let limit = Int(options.maximumTLSCertificateLifetime.components.seconds)
        guard lifetime <= limit else {
            throw CastTransportError(
                .authTLSCertificateLifetime,
                "the TLS certificate lives \(lifetime / 3600) hours, longer than the \(limit / 3600) allowed"
            )
        }
    }

    /// Builds the path from the device certificate through the intermediates to a trust anchor, valid at `now`;
    /// returns it, device first.
    private func verifyChain(
        _ device: X509Certificate,
        intermediates: [X509Certificate],
        anchors: TrustAnchors,
        now: Int
    ) throws(CastTransportError) -> [X509Certificate] {
        let roots = try anchors.certificates.map { der throws(CastTransportError) in
            try X509Certificate(der: der, code: .authNotConfigured, what: "a trust anchor of \(anchors.source)")
        }
        guard let store = X509_STORE_new(), let untrusted = COpenSSL_sk_X509_new_null(),
            let context = X509_STORE_CTX_new()
        else { throw OpenSSLErrorQueue.error(.authInvalidCertificate, "cannot allocate a certificate store") }
        defer {
            X509_STORE_CTX_free(context)
            COpenSSL_sk_X509_free(untrusted)
            X509_STORE_free(store)
        }
        for root in roots { X509_STORE_add_cert(store, root.pointer) }
        for intermediate in intermediates { _ = COpenSSL_sk_X509_push(untrusted, intermediate.pointer) }
        guard X509_STORE_CTX_init(context, store, device.pointer, untrusted) == 1 else {
            throw OpenSSLErrorQueue.error(.authInvalidCertificate, "cannot set up the chain verification")
        }
        X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(context), time_t(now))
        guard X509_verify_cert(context) == 1 else {
            let error = X509_STORE_CTX_get_error(context)
            let depth = X509_STORE_CTX_get_error_depth(context)
            let reason = String(cString: X509_verify_cert_error_string(Int(error)))
            ERR_clear_error()
            throw Self.chainError(error, depth: depth, reason: reason)
        }
        guard device.mayMakeSignatures else {
            throw CastTransportError(.authInvalidCertificate, "the device certificate's key usage forbids signatures")
        }
        var chain: [X509Certificate] = []
        for index in 0..<COpenSSL_X509_STORE_CTX_chain_count(context) {
            guard let certificate = COpenSSL_X509_STORE_CTX_chain_at(context, index) else { continue }
            X509_up_ref(certificate)
            chain.append(X509Certificate(adopting: certificate))
        }
        return chain
    }

    private static func chainError(_ error: Int32, depth: Int32, reason: String) -> CastTransportError {
        let which = depth == 0 ? "the device certificate" : "certificate \(depth) of the chain"
        switch error {
        case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID:
            return CastTransportError(.authCertificateExpired, "\(which): \(reason)")
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
            if depth == 0 {
                return CastTransportError(
                    .authIntermediateMissing,
                    "the device certificate's issuer is neither among the intermediates sent nor a trust anchor"
                )
            }
            return CastTransportError(.authUntrustedRoot, "\(which) is issued by a root that is not a trust anchor")
        case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
            return CastTransportError(.authUntrustedRoot, "the chain ends at a root that is not a trust anchor")
        default:
            return CastTransportError(.authInvalidCertificate, "\(which): \(reason)")
        }
    }

    /// Parses the device's CRL bundle; with ``DeviceAuthOptions/checksRevocation``, refuses a chain it revokes.
    /// Each CRL must be signed by a certificate that chains to a trust anchor and be valid now.
    private func checkRevocation(
        _ bytes: Data,
        chain: [X509Certificate],
        anchors: TrustAnchors,
        now: Int
    ) throws(CastTransportError) {
        let bundle: ProtoCrlBundle
        do {
            bundle = try ProtoCrlBundle(serializedBytes: Array(bytes))
        } catch {
            guard !options.checksRevocation else {
                throw CastTransportError(.authRevoked, "the device's CRL does not parse, so revocation is unknown")
            }
            return
        }
        guard options.checksRevocation else { return }
        let hashes = chain.map(\.publicKeyHash)
        for crl in bundle.crls {
            let signer = try X509Certificate(der: Array(crl.signerCert), code: .authRevoked, what: "the CRL's signer")
            _ = try verifyChain(signer, intermediates: [], anchors: anchors, now: now)
            guard signer.verifies(signature: Array(crl.signature), over: Array(crl.tbsCrl), sha1: false),
                let list = try? ProtoTbsCrl(serializedBytes: Array(crl.tbsCrl)),
                list.notBeforeSeconds <= UInt64(now), UInt64(now) <= list.notAfterSeconds
            else { throw CastTransportError(.authRevoked, "the device's CRL is not validly signed or not current") }
            for (index, hash) in hashes.enumerated() where list.revokedPublicKeyHashes.contains(Data(hash)) {
                throw CastTransportError(.authRevoked, "the CRL revokes the key of \(chain[index].commonName)")
            }
            for range in list.revokedSerialNumberRanges {
                for index in chain.indices.dropLast() where hashes[index + 1] == Array(range.issuerPublicKeyHash) {
                    guard let serial = chain[index].serialNumber,
                        (range.firstSerialNumber...max(range.firstSerialNumber, range.lastSerialNumber))
                            .contains(serial)
                    else { continue }
                    throw CastTransportError(
                        .authRevoked,
                        "the CRL revokes the serial number of \(chain[index].commonName)"
                    )
                }
            }
        }
    }
}
