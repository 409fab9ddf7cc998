internal import COpenSSL

/// Shared TLS settings for many connections: one per process and role is enough.
///
/// Cast devices present short-lived self-signed certificates, so the client side does no certificate
/// verification and sends no SNI; device authenticity is a separate step (`tp.deviceauth`). TLS 1.2 is the
/// minimum either side negotiates.
public final class TLSContext: @unchecked Sendable {
    // @unchecked: an SSL_CTX is read-only after this initializer, and OpenSSL allows SSL_new on it from
    // any thread concurrently.
    let handle: OpaquePointer
    /// Whether connections made from this context act as the TLS client.
    public let isClient: Bool
    /// Whether peers' certificates are verified (web servers); Cast devices' are not.
    public private(set) var verifiesPeer = false

    private init(method: OpaquePointer, isClient: Bool) throws {
        guard let handle = SSL_CTX_new(method) else {
            throw OpenSSLErrorQueue.error(.tlsFailure, "SSL_CTX_new failed")
        }
        self.handle = handle
        self.isClient = isClient
        guard COpenSSL_SSL_CTX_set_min_proto_version(handle, TLS1_2_VERSION) == 1 else {
            throw OpenSSLErrorQueue.error(.tlsFailure, "cannot require TLS 1.2")
        }
        // No partial writes: SSL_write seals the whole buffer (several records for frames over 16 KiB) into the
        // outbound buffer (`ByteBufferBIO`), which never fills up. Idle connections give their record buffers
        // (about 34 KiB) back.
        _ = COpenSSL_SSL_CTX_set_mode(handle, Int(SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS))
        SSL_CTX_set_verify(handle, SSL_VERIFY_NONE, nil)
        // No session resumption on either side: a sender connects to a device once and keeps the connection. A
        // client asks for no TLS 1.2 tickets, and a server issues no TLS 1.3 tickets and caches no sessions; a
        // ticket a client is sent anyway (TLS 1.3) costs it a new session of about 1.2 KiB for the connection's
        // life.
        if isClient {
            _ = COpenSSL_SSL_CTX_set_options(handle, COpenSSL_SSL_OP_NO_TICKET())
        } else {
            _ = SSL_CTX_set_num_tickets(handle, 0)
            _ = COpenSSL_SSL_CTX_set_session_cache_mode(handle, Int(SSL_SESS_CACHE_OFF))
        }
    }

    deinit {
        SSL_CTX_free(handle)
    }

    /// A context for senders: TLS 1.2+, no certificate verification, no SNI.
    public static func makeClientContext() throws -> TLSContext {
        try TLSContext(method: TLS_client_method(), isClient: true)
    }

    /// A context for ordinary HTTPS clients (image downloads): TLS 1.2+, the peer's certificate verified against
    /// `trustRootsPEM` (PEM certificates) or, when `nil`, the system's trust store, and its host name checked.
    public static func makeVerifyingClientContext(trustRootsPEM: String? = nil) throws -> TLSContext {
        let context = try TLSContext(method: TLS_client_method(), isClient: true)
        context.verifiesPeer = true
        SSL_CTX_set_verify(context.handle, SSL_VERIFY_PEER, nil)
        if let trustRootsPEM {
            let store = SSL_CTX_get_cert_store(context.handle)
            let roots = try X509Certificate.all(fromPEM: trustRootsPEM)
            guard !roots.isEmpty else {
                throw CastTransportError(.tlsFailure, "no PEM certificate among the trust roots")
            }
            withExtendedLifetime(roots) { for root in roots { X509_STORE_add_cert(store, root.pointer) } }
        } else {
            guard SSL_CTX_set_default_verify_paths(context.handle) == 1 else {
                throw OpenSSLErrorQueue.error(.tlsFailure, "cannot load the system trust store")
            }
        }
        return context
    }

    /// A context for receivers presenting `identity`.
    ///
    /// - Throws: ``CastTransportError`` (``CastTransportError/Code/tlsFailure``) when the certificate or key
    ///   cannot be read or do not belong together.
    public static func makeServerContext(identity: TLSIdentity) throws -> TLSContext {
        let context = try TLSContext(method: TLS_server_method(), isClient: false)
        // The context takes its own references; the wrappers are kept alive until it has.
        let certificate = try identity.certificate()
        let key = try PrivateKey(pem: identity.privateKeyPEM)
        try withExtendedLifetime((certificate, key)) {
            guard SSL_CTX_use_certificate(context.handle, certificate.pointer) == 1 else {
                throw OpenSSLErrorQueue.error(.tlsFailure, "the certificate cannot be used")
            }
            guard SSL_CTX_use_PrivateKey(context.handle, key.pointer) == 1,
                SSL_CTX_check_private_key(context.handle) == 1
            else {
                throw OpenSSLErrorQueue.error(.tlsFailure, "the private key does not match the certificate")
            }
        }
        return context
    }
}
