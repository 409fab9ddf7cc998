// The system OpenSSL (libssl-dev), as CastTransport sees it.
// Function-like macros cannot be called from Swift, so each one the project needs gets a
// `static inline` wrapper here with a `COpenSSL_` prefix.
#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static inline long COpenSSL_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}

static inline long COpenSSL_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

static inline long COpenSSL_SSL_CTX_set_options(SSL_CTX *ctx, uint64_t options) {
    return SSL_CTX_set_options(ctx, options);
}

/// SSL_OP_NO_TICKET, a macro Swift does not import.
static inline uint64_t COpenSSL_SSL_OP_NO_TICKET(void) {
    return SSL_OP_NO_TICKET;
}

static inline long COpenSSL_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

static inline long COpenSSL_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

/// For a BIO that has no bytes yet: the reader should try again later, not see end of file.
static inline void COpenSSL_BIO_set_retry_read(BIO *bio) {
    BIO_set_retry_read(bio);
}

static inline void COpenSSL_BIO_clear_retry_flags(BIO *bio) {
    BIO_clear_retry_flags(bio);
}

static inline void COpenSSL_free(void *pointer) {
    OPENSSL_free(pointer);
}

static inline long COpenSSL_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

/// EVP_RSA_gen is a variadic macro in OpenSSL 3.
static inline EVP_PKEY *COpenSSL_RSA_generate(unsigned int bits) {
    return EVP_RSA_gen(bits);
}

/// STACK_OF(X509) helpers: the typed sk_X509_* functions are macro-generated.
static inline STACK_OF(X509) *COpenSSL_sk_X509_new_null(void) {
    return sk_X509_new_null();
}

/// Pushes `certificate` without taking a reference: the caller keeps it alive while the stack is used.
static inline int COpenSSL_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate) {
    return sk_X509_push(stack, certificate);
}

static inline void COpenSSL_sk_X509_free(STACK_OF(X509) *stack) {
    sk_X509_free(stack);
}

/// The number of certificates in the chain a successful X509_verify_cert built.
static inline int COpenSSL_X509_STORE_CTX_chain_count(X509_STORE_CTX *context) {
    STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(context);
    return chain == NULL ? 0 : sk_X509_num(chain);
}

/// The certificate at `index` of that chain (0 is the leaf), not owned by the caller.
static inline X509 *COpenSSL_X509_STORE_CTX_chain_at(X509_STORE_CTX *context, int index) {
    return sk_X509_value(X509_STORE_CTX_get0_chain(context), index);
}

/// Whether the certificate's certificatePolicies extension lists the policy `oid` (dotted text).
static inline int COpenSSL_X509_has_policy(X509 *certificate, const char *oid) {
    CERTIFICATEPOLICIES *policies = X509_get_ext_d2i(certificate, NID_certificate_policies, NULL, NULL);
    if (policies == NULL) return 0;
    ASN1_OBJECT *wanted = OBJ_txt2obj(oid, 1);
    int found = 0;
    for (int i = 0; wanted != NULL && i < sk_POLICYINFO_num(policies); i++) {
        if (OBJ_cmp(sk_POLICYINFO_value(policies, i)->policyid, wanted) == 0) found = 1;
    }
    ASN1_OBJECT_free(wanted);
    CERTIFICATEPOLICIES_free(policies);
    return found;
}

/// Adds a certificatePolicies extension listing the policy `oid` (dotted text); 1 on success.
static inline int COpenSSL_X509_add_policy(X509 *certificate, const char *oid) {
    CERTIFICATEPOLICIES *policies = sk_POLICYINFO_new_null();
    POLICYINFO *info = POLICYINFO_new();
    if (policies == NULL || info == NULL || (info->policyid = OBJ_txt2obj(oid, 1)) == NULL) {
        POLICYINFO_free(info);
        CERTIFICATEPOLICIES_free(policies);
        return 0;
    }
    sk_POLICYINFO_push(policies, info);
    int added = X509_add1_ext_i2d(certificate, NID_certificate_policies, policies, 0, X509V3_ADD_DEFAULT);
    CERTIFICATEPOLICIES_free(policies);
    return added;
}

/// Whether the certificate carries a keyUsage extension at all (X509_get_key_usage answers "all" without one).
static inline int COpenSSL_X509_has_key_usage(X509 *certificate) {
    return (X509_get_extension_flags(certificate) & EXFLAG_KUSAGE) != 0;
}

#endif
