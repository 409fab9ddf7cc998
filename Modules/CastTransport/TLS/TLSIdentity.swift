internal import COpenSSL

/// A certificate and its private key, as PEM text: what a receiver presents in the TLS handshake.
public struct TLSIdentity: Sendable, Hashable {
    /// The certificate, PEM encoded.
    public var certificatePEM: String
    /// The private key, PEM encoded (PKCS#8 or traditional).
    public var privateKeyPEM: String

    /// Wraps existing PEM text (for example files a user supplied to the emulator).
    public init(certificatePEM: String, privateKeyPEM: String) {
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
    }

    /// Creates a self-signed RSA certificate, as Cast devices present.
    ///
    /// Official senders refuse certificates that live longer than 4 days, so the default matches the
    /// openscreen reference receiver: valid from now for 3 days.
    ///
    /// - Parameters:
    ///   - commonName: The subject and issuer common name.
    ///   - validity: How long the certificate is valid, starting now.
    ///   - keyBits: RSA modulus size.
    ///   - subjectAlternativeNames: Names for host-name verification, such as `DNS:localhost` or
    ///     `IP:127.0.0.1` (Cast devices use none; a local HTTPS server for tests does).
    public static func makeSelfSigned(
        commonName: String = "swift-cast emulated device",
        validity: Duration = .seconds(3 * 24 * 3600),
        keyBits: Int = 2048,
        subjectAlternativeNames: [String] = []
    ) throws -> TLSIdentity {
        let key = try PrivateKey.generate(bits: UInt32(keyBits))
        let names = subjectAlternativeNames.joined(separator: ",")
        let certificate = try X509Certificate.issue(
            commonName: commonName,
            key: key,
            issuer: nil,
            validity: .zero...validity,
            extensions: names.isEmpty ? [] : [(NID_subject_alt_name, names)]
        )
        return TLSIdentity(certificatePEM: try certificate.pem(), privateKeyPEM: try key.pem())
    }

    /// The certificate in DER form, as signed by device authentication and as a peer receives it.
    public func certificateDER() throws -> [UInt8] { try certificate().der }

    /// The certificate's validity window, in seconds since the Unix epoch.
    public func validityPeriod() throws -> (notBefore: Int, notAfter: Int) {
        guard let validity = try certificate().validity else {
            throw OpenSSLErrorQueue.error(.tlsFailure, "unreadable certificate time")
        }
        return validity
    }

    /// The certificate, parsed.
    func certificate() throws -> X509Certificate {
        try withMemoryBIO(certificatePEM) { bio in
            guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else {
                throw OpenSSLErrorQueue.error(.tlsFailure, "the certificate is not PEM")
            }
            return X509Certificate(adopting: certificate)
        }
    }
}
