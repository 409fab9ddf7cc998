internal import COpenSSL
import SwiftProtobuf

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a device proves itself with: its certificate and key, the intermediates up to a root, and optionally a
/// CRL bundle. Google puts these in real devices; ``makeTestChain(_:)`` makes a chain of your own, so that the
/// emulator (and devices of an organisation that trusts its own root) can answer challenges.
public struct CastDeviceCredentials: Sendable, Hashable {
    /// The root the chain ends at (PEM): give it to senders as their trust anchor.
    public var rootCertificatePEM: String
    /// The intermediates, the device certificate's issuer first (PEM).
    public var intermediateCertificatePEMs: [String]
    /// The device certificate (PEM).
    public var deviceCertificatePEM: String
    /// The device certificate's private key (PEM).
    public var deviceKeyPEM: String
    /// A serialized CRL bundle sent with every answer, or `nil`.
    public var crlBundle: [UInt8]?

    /// Wraps existing credentials (for example files in a directory).
    public init(
        rootCertificatePEM: String,
        intermediateCertificatePEMs: [String],
        deviceCertificatePEM: String,
        deviceKeyPEM: String,
        crlBundle: [UInt8]? = nil
    ) {
        self.rootCertificatePEM = rootCertificatePEM
        self.intermediateCertificatePEMs = intermediateCertificatePEMs
        self.deviceCertificatePEM = deviceCertificatePEM
        self.deviceKeyPEM = deviceKeyPEM
        self.crlBundle = crlBundle
    }

    /// How a test chain is made. The defaults make a chain that verifies.
    public struct ChainOptions: Sendable, Hashable {
        /// The device certificate's common name. Defaults to `swift-cast emulated device`.
        public var commonName = "swift-cast emulated device"
        /// The device certificate's validity, as offsets from now. Defaults to a day ago until a year from now.
        public var deviceValidity: ClosedRange<Duration> = .seconds(-86_400) ... .seconds(365 * 86_400)
        /// Mark the device certificate audio-only (policy 1.3.6.1.4.1.11129.2.5.2). Defaults to `false`.
        public var isAudioOnly = false
        /// Include a CRL bundle, signed by the intermediate, revoking the device certificate's key when
        /// `revokesDevice`. Defaults to an empty CRL.
        public var includesCRL = true
        /// Whether the CRL revokes the device certificate. Defaults to `false`.
        public var revokesDevice = false
        /// The RSA keys' size. Defaults to 2048 bits (tests use 1024: key generation is most of their time).
        public var keyBits = 2048

        /// The defaults.
        public init() {}
    }

    /// Makes a root → intermediate → device chain (RSA keys of ``ChainOptions/keyBits``, SHA-256) with fresh keys.
    ///
    /// - Throws: ``CastTransportError/Code/tlsFailure`` when OpenSSL cannot make a key or a certificate.
    public static func makeTestChain(_ options: ChainOptions = ChainOptions()) throws -> CastDeviceCredentials {
        let rootKey = try PrivateKey.generate(bits: UInt32(options.keyBits))
        let root = try X509Certificate.issue(
            commonName: "swift-cast test Cast root",
            key: rootKey,
            issuer: nil,
            validity: .seconds(-86_400) ... .seconds(20 * 365 * 86_400),
            extensions: [
                (NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign"),
                (NID_subject_key_identifier, "hash"),
            ]
        )
        let intermediateKey = try PrivateKey.generate(bits: UInt32(options.keyBits))
        let intermediate = try X509Certificate.issue(
            commonName: "swift-cast test Cast intermediate",
            key: intermediateKey,
            issuer: (root, rootKey),
            validity: .seconds(-86_400) ... .seconds(10 * 365 * 86_400),
            extensions: [
                (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
                (NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature"),
                (NID_subject_key_identifier, "hash"), (NID_authority_key_identifier, "keyid:always"),
            ]
        )
        let deviceKey = try PrivateKey.generate(bits: UInt32(options.keyBits))
        let deviceExtensions: [(Int32, String)] = [
            (NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"),
            (NID_ext_key_usage, "clientAuth"), (NID_subject_key_identifier, "hash"),
            (NID_authority_key_identifier, "keyid:always"),
        ]
        let device = try X509Certificate.issue(
            commonName: options.commonName,
            key: deviceKey,
            issuer: (intermediate, intermediateKey),
            validity: options.deviceValidity,
            extensions: deviceExtensions,
            policies: options.isAudioOnly ? [DeviceAuthVerifier.audioOnlyPolicy] : []
        )
        var crl: [UInt8]?
        if options.includesCRL {
            var list = ProtoTbsCrl()
            let now = UInt64(Date().timeIntervalSince1970)
            list.notBeforeSeconds = now - 86_400
            list.notAfterSeconds = now + 365 * 86_400
            if options.revokesDevice { list.revokedPublicKeyHashes = [Data(device.publicKeyHash)] }
            var entry = ProtoCrl()
            entry.tbsCrl = Data(try list.serializedBytes() as [UInt8])
            entry.signerCert = Data(intermediate.der)
            entry.signature = Data(try intermediateKey.sign(Array(entry.tbsCrl), sha1: false))
            var bundle = ProtoCrlBundle()
            bundle.crls = [entry]
            crl = try bundle.serializedBytes()
        }
        return CastDeviceCredentials(
            rootCertificatePEM: try root.pem(),
            intermediateCertificatePEMs: [try intermediate.pem()],
            deviceCertificatePEM: try device.pem(),
            deviceKeyPEM: try deviceKey.pem(),
            crlBundle: crl
        )
    }

    /// The device certificate, DER encoded, as an answer carries it.
    public func deviceCertificateDER() throws -> [UInt8] {
        let certificates = try X509Certificate.derCertificates(
            fromPEM: deviceCertificatePEM,
            source: "the device certificate"
        )
        guard let device = certificates.first else {
            throw CastTransportError(.authNotConfigured, "the device certificate PEM holds no certificate")
        }
        return device
    }

    /// The intermediates, DER encoded.
    public func intermediateCertificatesDER() throws -> [[UInt8]] {
        try intermediateCertificatePEMs.flatMap { pem throws(CastTransportError) in
            try X509Certificate.derCertificates(fromPEM: pem, source: "an intermediate certificate")
        }
    }

    /// Signs `data` with the device key: RSASSA-PKCS1-v1_5 with SHA-256, or SHA-1.
    public func sign(_ data: [UInt8], sha1: Bool = false) throws -> [UInt8] {
        try PrivateKey(pem: deviceKeyPEM).sign(data, sha1: sha1)
    }
}

extension X509Certificate {
    /// A new certificate for `key`, signed by `issuer` (self-signed when `nil`) with SHA-256, valid for the
    /// offsets from now in `validity`, with extensions given as OpenSSL configuration values.
    static func issue(
        commonName: String,
        key: PrivateKey,
        issuer: (certificate: X509Certificate, key: PrivateKey)?,
        validity: ClosedRange<Duration>,
        extensions: [(Int32, String)],
        policies: [String] = []
    ) throws -> X509Certificate {
        guard let pointer = X509_new() else { throw OpenSSLErrorQueue.error(.tlsFailure, "X509_new failed") }
        let certificate = X509Certificate(adopting: pointer)
        X509_set_version(pointer, 2)
        var serial = SystemCrypto.randomBytes(count: 8)
        serial[0] &= 0x7F  // a positive serial number that fits in 64 bits
        if let number = BN_bin2bn(serial, Int32(serial.count), nil) {
            BN_to_ASN1_INTEGER(number, X509_get_serialNumber(pointer))
            BN_free(number)
        }
        X509_gmtime_adj(X509_getm_notBefore(pointer), Int(validity.lowerBound.components.seconds))
        X509_gmtime_adj(X509_getm_notAfter(pointer), Int(validity.upperBound.components.seconds))
        X509_set_pubkey(pointer, key.pointer)
        let name = X509_get_subject_name(pointer)
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, commonName, -1, -1, 0)
        X509_set_issuer_name(pointer, X509_get_subject_name(issuer?.certificate.pointer ?? pointer))
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.certificate.pointer ?? pointer, pointer, nil, nil, 0)
        for (nid, value) in extensions {
            guard let created = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw OpenSSLErrorQueue.error(.tlsFailure, "invalid certificate extension \(value)")
            }
            X509_add_ext(pointer, created, -1)
            X509_EXTENSION_free(created)
        }
        for policy in policies where COpenSSL_X509_add_policy(pointer, policy) != 1 {
            throw OpenSSLErrorQueue.error(.tlsFailure, "cannot add the certificate policy \(policy)")
        }
        guard X509_sign(pointer, (issuer?.key ?? key).pointer, EVP_sha256()) > 0 else {
            throw OpenSSLErrorQueue.error(.tlsFailure, "signing the certificate failed")
        }
        return certificate
    }

    func pem() throws -> String {
        try pemText { PEM_write_bio_X509($0, pointer) }
    }
}

/// An RSA private key held by OpenSSL.
final class PrivateKey {
    let pointer: OpaquePointer

    private init(adopting pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }

    static func generate(bits: UInt32 = 2048) throws -> PrivateKey {
        guard let key = COpenSSL_RSA_generate(bits) else {
            throw OpenSSLErrorQueue.error(.tlsFailure, "RSA key generation failed")
        }
        return PrivateKey(adopting: key)
    }

    convenience init(pem: String) throws {
        let key = try withMemoryBIO(pem) { bio in
            guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else {
                throw OpenSSLErrorQueue.error(.tlsFailure, "the private key is not PEM")
            }
            return key
        }
        self.init(adopting: key)
    }

    func pem() throws -> String {
        try pemText { PEM_write_bio_PrivateKey($0, pointer, nil, nil, 0, nil, nil) }
    }

    /// RSASSA-PKCS1-v1_5 over `data`.
    func sign(_ data: [UInt8], sha1: Bool) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLErrorQueue.error(.tlsFailure, "EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestSignInit(context, &keyContext, sha1 ? EVP_sha1() : EVP_sha256(), nil, pointer) == 1,
            EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING) == 1
        else { throw OpenSSLErrorQueue.error(.tlsFailure, "cannot start signing") }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, data, data.count) == 1 else {
            throw OpenSSLErrorQueue.error(.tlsFailure, "signing failed")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, data, data.count) == 1 else {
            throw OpenSSLErrorQueue.error(.tlsFailure, "signing failed")
        }
        return Array(signature.prefix(length))
    }
}

/// Writes PEM with `write` into a memory BIO and returns the text.
func pemText(_ write: (OpaquePointer) -> Int32) throws -> String {
    guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSLErrorQueue.error(.tlsFailure, "BIO_new failed") }
    defer { BIO_free(bio) }
    guard write(bio) == 1 else { throw OpenSSLErrorQueue.error(.tlsFailure, "PEM encoding failed") }
    return String(decoding: readAll(fromMemoryBIO: bio), as: UTF8.self)
}
