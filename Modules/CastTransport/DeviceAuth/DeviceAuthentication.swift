#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a sender does about device authentication (`tp.deviceauth`): whether it challenges a device to prove
/// it holds a Cast device certificate, and what a failed proof means.
public enum DeviceAuthPolicy: String, Sendable, Hashable, CaseIterable {
    /// Never challenge.
    case off
    /// Challenge when trust anchors are set; report and log a failure, but keep talking to the device.
    case warn
    /// Challenge, and refuse a device that does not prove itself before anything else is sent.
    case require
}

/// How devices are authenticated. Every value has a documented default.
///
/// No trust anchors are shipped: supply Google's Cast root certificates to verify Google-certified devices, or
/// your organisation's own roots for its devices (``CastDeviceCredentials`` makes a test chain).
public struct DeviceAuthOptions: Sendable, Hashable {
    /// Whether to challenge and what a failure means. Defaults to ``DeviceAuthPolicy/warn``, which does nothing
    /// until ``trustAnchors`` are set.
    public var policy: DeviceAuthPolicy = .warn
    /// The roots a device certificate's chain must end at; `nil` (the default) means none, so no challenge is
    /// sent (and ``DeviceAuthPolicy/require`` refuses every device).
    public var trustAnchors: TrustAnchors?
    /// Accept answers signed with SHA-1 (old devices). Defaults to `false`: SHA-256 is required.
    public var allowsSHA1 = false
    /// Refuse certificates the device's own CRL revokes. Defaults to `false`: the CRL is parsed, not enforced
    /// (as Chrome does by default).
    public var checksRevocation = false
    /// How long the device has to answer the challenge. Defaults to 5 s.
    public var timeout: Duration = .seconds(5)
    /// The longest lifetime a device's TLS certificate may have. Defaults to 4 days, Chrome's limit.
    public var maximumTLSCertificateLifetime: Duration = .seconds(4 * 24 * 3600)
    /// Whether the device advertises video output (`ca` bit 0): an audio-only device certificate is then
    /// refused. Defaults to `false`; sessions set it from the discovered device.
    public var deviceHasVideoOutput = false

    /// The defaults.
    public init() {}

    /// Whether a connection made with these options sends a challenge at all.
    public var challenges: Bool { policy != .off && trustAnchors != nil }
}

/// The certificates a device's chain may end at, as DER.
public struct TrustAnchors: Sendable, Hashable {
    /// The anchors' certificates, DER encoded.
    public let certificates: [[UInt8]]
    /// Where they were read from, for messages (a file path, or `PEM text`).
    public let source: String

    /// Reads every certificate of a PEM bundle.
    ///
    /// - Throws: ``CastTransportError/Code/authNotConfigured`` when the text holds no certificate or a broken
    ///   one.
    public init(pem: String, source: String = "PEM text") throws(CastTransportError) {
        self.certificates = try X509Certificate.derCertificates(fromPEM: pem, source: source)
        self.source = source
        guard !certificates.isEmpty else {
            throw CastTransportError(.authNotConfigured, "\(source) holds no PEM certificate")
        }
    }

    /// Reads a PEM bundle file.
    ///
    /// - Throws: ``CastTransportError/Code/authNotConfigured`` naming the file when it cannot be read or holds
    ///   no certificate.
    public init(contentsOfFile path: String) throws(CastTransportError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw CastTransportError(.authNotConfigured, "cannot read the trust anchors \(path): \(error)")
        }
        try self.init(pem: text, source: path)
    }
}

/// Whether a device proved that it is a genuine Cast device, as a connection and a session report it.
public enum DeviceAuthentication: Sendable, Hashable, CustomStringConvertible {
    /// No challenge was sent; `reason` says why (policy off, no trust anchors).
    case notAttempted(reason: String)
    /// The challenge is sent; the answer is awaited (``DeviceAuthPolicy/warn`` does not wait for it).
    case pending
    /// The device proved it holds a certificate that chains to a trust anchor.
    case verified(VerifiedDevice)
    /// The proof failed at the step `code` names (an `auth…` code of ``CastTransportError``).
    case failed(code: CastTransportError.Code, message: String)

    /// What a verified device proved.
    public struct VerifiedDevice: Sendable, Hashable {
        /// The device certificate's subject common name (Google's name the device's serial or model).
        public var commonName: String
        /// The chain's subject common names, from the device certificate to the trust anchor.
        public var chain: [String]
        /// `SHA-256` or `SHA-1`.
        public var hashAlgorithm: String
        /// Whether the certificate is for audio-only devices (the policy OID 1.3.6.1.4.1.11129.2.5.2).
        public var isAudioOnly: Bool

        /// Creates a summary.
        public init(commonName: String, chain: [String], hashAlgorithm: String, isAudioOnly: Bool) {
            self.commonName = commonName
            self.chain = chain
            self.hashAlgorithm = hashAlgorithm
            self.isAudioOnly = isAudioOnly
        }
    }

    /// A failure's result.
    public init(_ error: CastTransportError) {
        self = .failed(code: error.code, message: error.message)
    }

    /// Whether a challenge was sent (the result is pending, verified or failed).
    public var wasAttempted: Bool {
        if case .notAttempted = self { return false }
        return true
    }

    /// Whether the device is verified.
    public var isVerified: Bool {
        if case .verified = self { return true }
        return false
    }

    /// As JSON, for status output: `{"result": "verified" | "failed" | "notAttempted" | "pending", …}`.
    public var json: JSONValue {
        switch self {
        case .notAttempted(let reason): return ["result": "notAttempted", "reason": .string(reason)]
        case .pending: return ["result": "pending"]
        case .verified(let device):
            return [
                "result": "verified", "commonName": .string(device.commonName),
                "chain": .array(device.chain.map(JSONValue.string)), "hashAlgorithm": .string(device.hashAlgorithm),
                "audioOnly": .bool(device.isAudioOnly),
            ]
        case .failed(let code, let message):
            return ["result": "failed", "step": .string(code.description), "message": .string(message)]
        }
    }

    /// A short phrase for logs and status output (`verified`, `pending`, `not attempted (…)`, …).
    public var description: String {
        switch self {
        case .notAttempted(let reason): return "not attempted (\(reason))"
        case .pending: return "pending"
        case .verified(let device): return "verified (\(device.commonName), \(device.chain.joined(separator: " → ")))"
        case .failed(let code, let message): return "failed at \(code): \(message)"
        }
    }
}
