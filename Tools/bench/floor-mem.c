// floor-mem: floor.c's --idle mode with memory accounting and OpenSSL knobs (how Tools/bench/README.md measured
// OpenSSL's share of an idle connection).
//
//   cc -O2 -o .build/bench/floor-mem Tools/bench/floor-mem.c -lssl -lcrypto
//   floor-mem HOST FIRST_PORT COUNT IDLE_SECONDS
//
// Knobs (environment, 1 = on):
//   FM_TRACK          count every OpenSSL allocation (CRYPTO_set_mem_functions) by file:line and phase
//   FM_MOVING=1       SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER (TLSContext sets it; default on)
//   FM_RELEASE=1      SSL_MODE_RELEASE_BUFFERS (default on)
//   FM_MIN12=1        SSL_CTX_set_min_proto_version(TLS1_2) (default on, as TLSContext)
//   FM_NO_TICKET=1    SSL_OP_NO_TICKET (default on, as TLSContext)
//   FM_CACHE_OFF      SSL_CTX_set_session_cache_mode(SSL_SESS_CACHE_OFF)
//   FM_FREE_BUFFERS   SSL_free_buffers after the handshake, the session start and on every tick
//   FM_CIPHERSUITES   SSL_CTX_set_ciphersuites (TLS 1.3), e.g. TLS_AES_128_GCM_SHA256
//   FM_CIPHERLIST     SSL_CTX_set_cipher_list (TLS 1.2), e.g. ECDHE-RSA-AES128-GCM-SHA256
//   FM_MAX12          SSL_CTX_set_max_proto_version(TLS1_2)
//   FM_CTX_PER_CONN   a new SSL_CTX per connection (each SSL holds a reference)
//   FM_NO_CONFIG      OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG) first
//   FM_VERIFY_CB      SSL_CTX_set_cert_verify_callback returning 1: no X509_verify_cert, no verified chain
//   FM_READ_CERT=1    read the peer certificate once after the handshake (SSL_get1_peer_certificate, i2d; default on)
//   FM_TRIM           malloc_trim(0) after the sessions started
#define main floor_main
#include "floor.c"
#undef main
#include <malloc.h>
#include <openssl/crypto.h>
#include <openssl/x509.h>
#include <sys/mman.h>

static int knob(const char *name, int fallback) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

// MARK: - Allocation tracking

#define SLOTS (1u << 22)
#define MAX_SITES 8192
typedef struct { void *p; unsigned size; unsigned short site; unsigned char phase; } slot;
typedef struct { const char *file; int line; } site_t;
static slot *slots;
static site_t sites[MAX_SITES];
static int site_count, tracking, phase;
#define PHASES 72
static const char *phase_names[PHASES] = {"process", "SSL_new", "handshake", "after-hs", "session", "idle"};
// During SSL_connect, an allocation's phase is 8 + the handshake state being processed (SSL_get_state).
static void name_states(void) {
    static const struct { int state; const char *name; } names[] = {
        {TLS_ST_BEFORE, "hs:before"}, {TLS_ST_OK, "hs:ok"}, {TLS_ST_CW_CLNT_HELLO, "hs:CW_CLNT_HELLO"},
        {TLS_ST_CR_SRVR_HELLO, "hs:CR_SRVR_HELLO"}, {TLS_ST_CR_ENCRYPTED_EXTENSIONS, "hs:CR_ENC_EXT"},
        {TLS_ST_CR_CERT, "hs:CR_CERT"}, {TLS_ST_CR_CERT_VRFY, "hs:CR_CERT_VRFY"}, {TLS_ST_CR_FINISHED, "hs:CR_FINISHED"},
        {TLS_ST_CW_CHANGE, "hs:CW_CHANGE"}, {TLS_ST_CW_FINISHED, "hs:CW_FINISHED"}, {TLS_ST_CR_KEY_EXCH, "hs:CR_KEY_EXCH"},
        {TLS_ST_CR_SRVR_DONE, "hs:CR_SRVR_DONE"}, {TLS_ST_CW_KEY_EXCH, "hs:CW_KEY_EXCH"}, {TLS_ST_CR_CHANGE, "hs:CR_CHANGE"},
        {TLS_ST_CR_SESSION_TICKET, "hs:CR_SESS_TICKET"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) phase_names[8 + names[i].state] = names[i].name;
    for (int i = 0; i < PHASES; i++) if (!phase_names[i]) phase_names[i] = "?";
}

static unsigned site_of(const char *file, int line) {
    for (int i = 0; i < site_count; i++) if (sites[i].file == file && sites[i].line == line) return i;
    if (site_count == MAX_SITES) return MAX_SITES - 1;
    sites[site_count] = (site_t){file, line};
    return site_count++;
}
static size_t hash(void *p) { return ((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 42; }
static void put(void *p, size_t size, const char *file, int line) {
    if (!p) return;
    size_t i = hash(p) & (SLOTS - 1);
    while (slots[i].p && slots[i].p != (void *)1) i = (i + 1) & (SLOTS - 1);
    slots[i] = (slot){p, (unsigned)size, (unsigned short)site_of(file, line), (unsigned char)(phase == 2 && ssl ? 8 + SSL_get_state(ssl) : phase)};
}
static void drop(void *p) {
    if (!p) return;
    size_t i = hash(p) & (SLOTS - 1);
    while (slots[i].p) {
        if (slots[i].p == p) { slots[i].p = (void *)1; return; }  // tombstone
        i = (i + 1) & (SLOTS - 1);
    }
}
static void *t_malloc(size_t n, const char *file, int line) { void *p = malloc(n); put(p, n, file, line); return p; }
static void *t_realloc(void *old, size_t n, const char *file, int line) {
    drop(old);
    void *p = realloc(old, n);
    put(p, n, file, line);
    return p;
}
static void t_free(void *p, const char *file, int line) { (void)file, (void)line; drop(p); free(p); }

typedef struct { size_t bytes, chunk, count; } tally;
// Live OpenSSL bytes per session by phase and site; sessions = COUNT.
static void report_tracked(int count) {
    static tally by[PHASES][MAX_SITES];
    memset(by, 0, sizeof by);
    for (size_t i = 0; i < SLOTS; i++) {
        if (slots[i].p <= (void *)1) continue;
        tally *t = &by[slots[i].phase][slots[i].site];
        t->bytes += slots[i].size;
        t->chunk += malloc_usable_size(slots[i].p) + 8;
        t->count++;
    }
    for (int ph = 0; ph < PHASES; ph++) {
        size_t bytes = 0, chunk = 0, n = 0;
        for (int s = 0; s < site_count; s++) bytes += by[ph][s].bytes, chunk += by[ph][s].chunk, n += by[ph][s].count;
        if (n == 0) continue;
        printf("phase %-9s requested %9.1f B/session  chunks %9.1f B/session  allocations %6.2f/session\n",
               phase_names[ph], (double)bytes / count, (double)chunk / count, (double)n / count);
        if (ph == 0) continue;
        for (int s = 0; s < site_count; s++) {
            tally *t = &by[ph][s];
            if (t->count * 10 < (size_t)count) continue;  // fewer than 0.1 per session
            printf("  %-16s %-55s:%-5d %8.1f B %8.1f chunk %5.2f allocs\n", phase_names[ph], sites[s].file,
                   sites[s].line, (double)t->bytes / count, (double)t->chunk / count, (double)t->count / count);
        }
    }
}

// MARK: - Sessions

static SSL_CTX *make_context(void) {
    SSL_CTX *context = SSL_CTX_new(TLS_client_method());
    if (knob("FM_MIN12", 1)) SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    if (knob("FM_MAX12", 0)) SSL_CTX_set_max_proto_version(context, TLS1_2_VERSION);
    long mode = 0;
    if (knob("FM_MOVING", 1)) mode |= SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
    if (knob("FM_RELEASE", 1)) mode |= SSL_MODE_RELEASE_BUFFERS;
    SSL_CTX_set_mode(context, mode);
    SSL_CTX_set_verify(context, SSL_VERIFY_NONE, NULL);
    if (knob("FM_NO_TICKET", 1)) SSL_CTX_set_options(context, SSL_OP_NO_TICKET);
    if (knob("FM_CACHE_OFF", 0)) SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_OFF);
    const char *suites = getenv("FM_CIPHERSUITES"), *list = getenv("FM_CIPHERLIST");
    if (suites && !SSL_CTX_set_ciphersuites(context, suites)) die("bad FM_CIPHERSUITES");
    if (list && !SSL_CTX_set_cipher_list(context, list)) die("bad FM_CIPHERLIST");
    return context;
}

static int accept_any(X509_STORE_CTX *store, void *arg) { (void)store, (void)arg; return 1; }

static long long heap_used(void) {
    struct mallinfo2 mi = mallinfo2();
    return (long long)mi.uordblks + (long long)mi.hblkhd;
}

int main(int argc, char **argv) {
    if (argc != 5) die("usage: floor-mem HOST FIRST_PORT COUNT IDLE_SECONDS");
    const char *host = argv[1];
    int first_port = atoi(argv[2]), count = atoi(argv[3]), idle_seconds = atoi(argv[4]);
    tracking = knob("FM_TRACK", 0);
    name_states();
    if (tracking) {
        slots = mmap(NULL, SLOTS * sizeof(slot), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (!CRYPTO_set_mem_functions(t_malloc, t_realloc, t_free)) die("CRYPTO_set_mem_functions failed");
    }
    if (knob("FM_NO_CONFIG", 0)) OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
    else OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, NULL);
    int per_conn = knob("FM_CTX_PER_CONN", 0), free_buffers = knob("FM_FREE_BUFFERS", 0);
    int verify_cb = knob("FM_VERIFY_CB", 0), read_cert = knob("FM_READ_CERT", 1);
    SSL_CTX *shared = make_context();
    if (verify_cb) SSL_CTX_set_cert_verify_callback(shared, accept_any, NULL);
    signal(SIGPIPE, SIG_IGN);
    idle_sessions = calloc((size_t)count, sizeof *idle_sessions);
    memset(idle_sessions, 0, (size_t)count * sizeof *idle_sessions);  // touched now, not counted per session
    idle_count = count;
    idle_loop = epoll_create1(0);
    static message m;
    char port[16], transport[128], session[128];
    long process_rss = rss_kib();
    // One warm-up connection before the baseline, so lazily made process-wide state (provider caches, method
    // fetches) is not counted per session; it stays open as session 0 but is excluded from the per-session figures.
    long rss_before = 0;
    long long heap_before = 0;
    double start = now_us();
    next_tick = ((long long)(start / 250e3) + 1) * 250e3;
    double hs_us = 0;
    for (int i = 0; i < count; i++) {
        if (i == 1) {
            rss_before = rss_kib(), heap_before = heap_used(), phase = 0;
            if (tracking)  // what the warm-up session and the process hold so far counts as the process's
                for (size_t k = 0; k < SLOTS; k++) slots[k].phase = 0;
        }
        snprintf(port, sizeof port, "%d", first_port + i);
        SSL_CTX *context = shared;
        if (per_conn) {
            context = make_context();
            if (verify_cb) SSL_CTX_set_cert_verify_callback(context, accept_any, NULL);
        }
        int fd = open_socket(host, port);
        phase = 1;
        ssl = SSL_new(context);
        if (per_conn) SSL_CTX_free(context);  // the SSL keeps its reference
        SSL_set_fd(ssl, fd);
        phase = 2;
        double t0 = now_us();
        if (SSL_connect(ssl) != 1) die("TLS failed");
        hs_us += now_us() - t0;
        phase = 3;
        if (read_cert) {  // device authentication reads the certificate once
            X509 *peer = SSL_get1_peer_certificate(ssl);
            unsigned char *der = NULL;
            int length = peer ? i2d_X509(peer, &der) : -1;
            if (length <= 0) die("no peer certificate");
            OPENSSL_free(der);
            X509_free(peer);
        }
        if (free_buffers) SSL_free_buffers(ssl);
        if (knob("FM_SWAP_SESSION", 0)) {  // unsupported experiment: a fresh session without the peer certificate
            SSL_SESSION *old = SSL_get_session(ssl), *fresh = SSL_SESSION_new();
            unsigned char key[64];
            size_t length = SSL_SESSION_get_master_key(old, key, sizeof key);
            SSL_SESSION_set_protocol_version(fresh, SSL_SESSION_get_protocol_version(old));
            SSL_SESSION_set_cipher(fresh, SSL_SESSION_get0_cipher(old));
            SSL_SESSION_set1_master_key(fresh, key, length);
            if (!SSL_set_session(ssl, fresh)) die("SSL_set_session failed");
            SSL_SESSION_free(fresh);
        }
        phase = 4;
        send_message("receiver-0", NS_CONNECTION, connect_payload);
        request("receiver-0", NS_RECEIVER, "{\"type\":\"LAUNCH\",\"appId\":\"%s\"}", "CC1AD845", &m);
        json_string(m.payload, "transportId", transport, 128);
        json_string(m.payload, "sessionId", session, 128);
        if (!transport[0]) die("LAUNCH answered without a transportId");
        send_message(transport, NS_CONNECTION, connect_payload);
        if (free_buffers) SSL_free_buffers(ssl);
        phase = 5;
        idle_sessions[i].ssl = ssl;
        idle_sessions[i].last_inbound = now_us();
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (epoll_ctl(idle_loop, EPOLL_CTL_ADD, fd, &event) != 0) die("epoll_ctl failed");
        idle_readable(&idle_sessions[i], now_us());
        idle_turn(0);
    }
    int n = count - 1;
    double started = now_us();
    if (knob("FM_TRIM", 0)) malloc_trim(0);
    long rss_started = rss_kib();
    long long heap_started = heap_used();
    printf("process rss before sessions %ld KiB, after first session %ld KiB\n", process_rss, rss_before);
    printf("started %d sessions in %.2f s; handshake mean %.0f us\n", count, (started - start) / 1e6, hs_us / count);
    printf("at-start rss %.2f KiB/session  heap %.2f KiB/session\n", (double)(rss_started - rss_before) / n,
           (double)(heap_started - heap_before) / 1024 / n);
    double idle_start = now_us();
    while (now_us() < idle_start + idle_seconds * 1e6) {
        idle_turn(1);
        if (free_buffers) for (int i = 0; i < count; i++) SSL_free_buffers(idle_sessions[i].ssl);
    }
    struct mallinfo2 mi = mallinfo2();
    long rss_end = rss_kib();
    printf("after-idle rss %.2f KiB/session  heap %.2f KiB/session  (arena %zu KiB, in use %zu KiB, free %zu KiB, "
           "mmapped %zu KiB, top-releasable %zu KiB)\n",
           (double)(rss_end - rss_before) / n, (double)(heap_used() - heap_before) / 1024 / n, mi.arena / 1024,
           mi.uordblks / 1024, mi.fordblks / 1024, mi.hblkhd / 1024, mi.keepcost / 1024);
    const SSL_CIPHER *cipher = SSL_get_current_cipher(idle_sessions[1].ssl);
    X509 *peer = SSL_get0_peer_certificate(idle_sessions[1].ssl);
    EVP_PKEY *key = peer ? X509_get0_pubkey(peer) : NULL;
    printf("negotiated %s %s; peer key %s %d bits; verified chain %d\n", SSL_get_version(idle_sessions[1].ssl),
           SSL_CIPHER_get_name(cipher), key ? EVP_PKEY_get0_type_name(key) : "none", key ? EVP_PKEY_get_bits(key) : 0,
           SSL_get0_verified_chain(idle_sessions[1].ssl) ? sk_X509_num(SSL_get0_verified_chain(idle_sessions[1].ssl)) : -1);
    if (tracking) report_tracked(n);
    if (knob("FM_TRIM_END", 0)) {
        malloc_trim(0);
        printf("after malloc_trim rss %.2f KiB/session\n", (double)(rss_kib() - rss_before) / n);
    }
    fflush(stdout);
    return 0;
}
