internal import COpenSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
        guard let key = COpenSSL_RSA_generate(UInt32(keyBits)) else {
            throw OpenSSLErrorQueue.error(.tlsFailure, "RSA key generation failed")
        }
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw OpenSSLErrorQueue.error(.tlsFailure, "X509_new failed") }
        defer { X509_free(certificate) }

        X509_set_version(certificate, 2)
        var serial = [UInt8](repeating: 0, count: 16)
        RAND_bytes(&serial, Int32(serial.count))
        serial[0] &= 0x7F  // a positive serial number
        if let number = BN_bin2bn(serial, Int32(serial.count), nil) {
            BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate))
            BN_free(number)
        }
        let seconds = validity.components.seconds
        X509_gmtime_adj(X509_getm_notBefore(certificate), 0)
        X509_gmtime_adj(X509_getm_notAfter(certificate), Int(seconds))
        X509_set_pubkey(certificate, key)
        let name = X509_get_subject_name(certificate)
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, commonName, -1, -1, 0)
        X509_set_issuer_name(certificate, name)
        if !subjectAlternativeNames.isEmpty {
            var extensionContext = X509V3_CTX()
            X509V3_set_ctx(&extensionContext, certificate, certificate, nil, nil, 0)
            guard
                let names = X509V3_EXT_conf_nid(
                    nil,
                    &extensionContext,
                    NID_subject_alt_name,
                    subjectAlternativeNames.joined(separator: ",")
                )
            else { throw OpenSSLErrorQueue.error(.tlsFailure, "invalid subject alternative names") }
            X509_add_ext(certificate, names, -1)
            X509_EXTENSION_free(names)
        }
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else {
            throw OpenSSLErrorQueue.error(.tlsFailure, "signing the certificate failed")
        }

        let certificatePEM = try pem { PEM_write_bio_X509($0, certificate) }
        let keyPEM = try pem { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
        return TLSIdentity(certificatePEM: certificatePEM, privateKeyPEM: keyPEM)
    }

    /// The certificate in DER form, as signed by device authentication and as a peer receives it.
    public func certificateDER() throws -> [UInt8] {
        try withCertificate { certificate in
            var output: UnsafeMutablePointer<UInt8>?
            let length = i2d_X509(certificate, &output)
            guard length > 0, let output else { throw OpenSSLErrorQueue.error(.tlsFailure, "i2d_X509 failed") }
            defer { COpenSSL_free(output) }
            return Array(UnsafeBufferPointer(start: output, count: Int(length)))
        }
    }

    /// The certificate's validity window, in seconds since the Unix epoch.
    public func validityPeriod() throws -> (notBefore: Int, notAfter: Int) {
        try withCertificate { certificate in
            func epoch(_ time: UnsafePointer<ASN1_TIME>?) throws -> Int {
                var parts = tm()
                guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else {
                    throw OpenSSLErrorQueue.error(.tlsFailure, "unreadable certificate time")
                }
                return timegm(&parts)
            }
            return (try epoch(X509_get0_notBefore(certificate)), try epoch(X509_get0_notAfter(certificate)))
        }
    }

    private func withCertificate<Result>(_ body: (OpaquePointer) throws -> Result) throws -> Result {
        try withMemoryBIO(certificatePEM) { bio in
            guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else {
                throw OpenSSLErrorQueue.error(.tlsFailure, "the certificate is not PEM")
            }
            defer { X509_free(certificate) }
            return try body(certificate)
        }
    }

    private static func pem(_ write: (OpaquePointer) -> Int32) throws -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLErrorQueue.error(.tlsFailure, "BIO_new failed") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw OpenSSLErrorQueue.error(.tlsFailure, "PEM encoding failed") }
        return String(decoding: readAll(fromMemoryBIO: bio), as: UTF8.self)
    }
}
