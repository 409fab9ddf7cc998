internal import COpenSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An X.509 certificate held by the system OpenSSL: what device authentication reads and checks.
final class X509Certificate {
    let pointer: OpaquePointer

    /// Adopts a certificate OpenSSL allocated.
    init(adopting pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Parses DER bytes.
    ///
    /// - Throws: `code` with `what` in its message when the bytes are not one whole certificate.
    init(der: [UInt8], code: CastTransportError.Code = .authMalformedReply, what: String) throws(CastTransportError) {
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let certificate = d2i_X509(nil, &cursor, buffer.count) else { return nil }
            guard cursor == buffer.baseAddress.map({ $0 + buffer.count }) else {
                X509_free(certificate)
                return nil
            }
            return certificate
        }
        guard let parsed else {
            throw OpenSSLErrorQueue.error(code, "\(what) is not a DER certificate")
        }
        self.pointer = parsed
    }

    deinit { X509_free(pointer) }

    /// Every certificate of a PEM bundle, in order; none when the text holds none.
    static func all(fromPEM text: String) throws -> [X509Certificate] {
        try withMemoryBIO(text) { bio in
            var certificates: [X509Certificate] = []
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                certificates.append(X509Certificate(adopting: certificate))
            }
            ERR_clear_error()  // the loop ends on a "no start line" error
            return certificates
        }
    }

    /// Every certificate of a PEM bundle, as DER.
    static func derCertificates(fromPEM text: String, source: String) throws(CastTransportError) -> [[UInt8]] {
        do {
            return try all(fromPEM: text).map(\.der)
        } catch {
            throw CastTransportError(.authNotConfigured, "cannot read the certificates of \(source): \(error)")
        }
    }

    /// The certificate, DER encoded.
    var der: [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(pointer, &output)
        guard length > 0, let output else { return [] }
        defer { COpenSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// The subject's common name, or the whole subject when it has none.
    var commonName: String {
        guard let name = X509_get_subject_name(pointer) else { return "" }
        var buffer = [CChar](repeating: 0, count: 256)
        if X509_NAME_get_text_by_NID(name, NID_commonName, &buffer, Int32(buffer.count)) > 0 {
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        guard let line = X509_NAME_oneline(name, nil, 0) else { return "" }
        defer { COpenSSL_free(line) }
        return String(cString: line)
    }

    /// The validity window, in seconds since the Unix epoch.
    var validity: (notBefore: Int, notAfter: Int)? {
        func epoch(_ time: UnsafePointer<ASN1_TIME>?) -> Int? {
            var parts = tm()
            guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
            return timegm(&parts)
        }
        guard let start = epoch(X509_get0_notBefore(pointer)), let end = epoch(X509_get0_notAfter(pointer)) else {
            return nil
        }
        return (start, end)
    }

    /// Whether the certificatePolicies extension lists `oid`.
    func hasPolicy(_ oid: String) -> Bool { COpenSSL_X509_has_policy(pointer, oid) == 1 }

    /// Whether the key may make signatures: no keyUsage extension, or one with digitalSignature.
    var mayMakeSignatures: Bool {
        COpenSSL_X509_has_key_usage(pointer) == 0 || X509_get_key_usage(pointer) & UInt32(KU_DIGITAL_SIGNATURE) != 0
    }

    /// The SHA-256 digest of the subject public key info, as Cast CRLs name revoked keys.
    var publicKeyHash: [UInt8] {
        guard let key = X509_get0_pubkey(pointer) else { return [] }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(key, &output)
        guard length > 0, let output else { return [] }
        defer { COpenSSL_free(output) }
        return SystemCrypto.sha256(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// The serial number as an unsigned integer, when it fits in 64 bits.
    var serialNumber: UInt64? {
        guard let serial = X509_get0_serialNumber(pointer) else { return nil }
        var value: UInt64 = 0
        guard ASN1_INTEGER_get_uint64(&value, serial) == 1 else {
            ERR_clear_error()
            return nil
        }
        return value
    }

    /// Verifies an RSASSA-PKCS1-v1_5 signature over `data` with this certificate's key.
    func verifies(signature: [UInt8], over data: [UInt8], sha1: Bool) -> Bool {
        guard let key = X509_get0_pubkey(pointer), let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            ERR_clear_error()
        }
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(context, &keyContext, sha1 ? EVP_sha1() : EVP_sha256(), nil, key) == 1 else {
            return false
        }
        if EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA {
            EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING)
        }
        return EVP_DigestVerify(context, signature, signature.count, data, data.count) == 1
    }

    /// Whether `signature` is a well-formed RSA PKCS#1 signature made with this certificate's key, whatever it
    /// signed: it tells a signature by another key from this key's signature over other bytes.
    func isSignatureOfItsKey(_ signature: [UInt8]) -> Bool {
        guard let key = X509_get0_pubkey(pointer), EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA,
            let context = EVP_PKEY_CTX_new(key, nil)
        else { return false }
        defer {
            EVP_PKEY_CTX_free(context)
            ERR_clear_error()
        }
        guard EVP_PKEY_verify_recover_init(context) == 1,
            EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
        else { return false }
        var length = 0
        guard EVP_PKEY_verify_recover(context, nil, &length, signature, signature.count) == 1 else { return false }
        var recovered = [UInt8](repeating: 0, count: length)
        return EVP_PKEY_verify_recover(context, &recovered, &length, signature, signature.count) == 1
    }
}
