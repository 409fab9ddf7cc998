// floor: the smallest Cast sender we could write, as the floor the benchmarks compare against.
// Blocking sockets, OpenSSL, hand-rolled framing and protobuf, JSON read with strstr. No threads, no event loop.
//
//   cc -O2 -o floor Tools/bench/floor.c -lssl -lcrypto
//   floor HOST PORT SESSIONS ROUNDS ECHOES
//
// For each of SESSIONS sessions: connect, TLS, CONNECT, LAUNCH the Default Media Receiver, app CONNECT (printed as
// `session US`), LOAD until a PLAYING status (`load US`), then ROUNDS pairs of PAUSE and PLAY, each timed from the
// write to the reply with its requestId (`rtt US`), then STOP. With more than one session, the first is the
// process's warm-up: printed as `first-session` and `first-load`, 20 untimed pairs. Then one session with the echo app: ECHOES
// messages on its custom namespace, 64 in flight, printed as `echo MESSAGES_PER_SECOND`.
//
//   floor --idle HOST PORT COUNT IDLE_SECONDS
//
// COUNT sessions on the devices at PORT, PORT + 1, … (one each, started one after another), then idle with heartbeats
// on one epoll loop: a PING after 5 s without inbound traffic and every 5 s after (checked every 250 ms), PINGs
// answered. Prints `idle-start` 12 s after the last start, then, IDLE_SECONDS later, `concurrent COUNT START_SECONDS
// KIB_RSS_PER_SESSION IDLE_CPU_PERCENT 0`, the line `cast-benchmarks --concurrent` prints.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NS_CONNECTION "urn:x-cast:com.google.cast.tp.connection"
#define NS_HEARTBEAT "urn:x-cast:com.google.cast.tp.heartbeat"
#define NS_RECEIVER "urn:x-cast:com.google.cast.receiver"
#define NS_MEDIA "urn:x-cast:com.google.cast.media"
#define NS_ECHO "urn:x-cast:com.example.echo"

static SSL *ssl;
static int next_request = 1;

typedef struct {
    char source[128], destination[128], namespace[128];
    char payload[65537];
} message;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void die(const char *what) {
    fprintf(stderr, "floor: %s\n", what);
    exit(1);
}

static size_t put_varint(unsigned char *out, size_t value) {
    size_t n = 0;
    while (value >= 0x80) {
        out[n++] = (unsigned char)(value | 0x80);
        value >>= 7;
    }
    out[n++] = (unsigned char)value;
    return n;
}

static size_t put_string(unsigned char *out, int field, const char *text) {
    size_t length = strlen(text), n = 0;
    out[n++] = (unsigned char)(field << 3 | 2);
    n += put_varint(out + n, length);
    memcpy(out + n, text, length);
    return n + length;
}

static void send_message(const char *destination, const char *namespace, const char *payload) {
    static unsigned char frame[70000];
    size_t n = 4;
    frame[n++] = 0x08, frame[n++] = 0;  // protocol_version CASTV2_1_0
    n += put_string(frame + n, 2, "sender-0");
    n += put_string(frame + n, 3, destination);
    n += put_string(frame + n, 4, namespace);
    frame[n++] = 0x28, frame[n++] = 0;  // payload_type STRING
    n += put_string(frame + n, 6, payload);
    size_t body = n - 4;
    frame[0] = body >> 24, frame[1] = body >> 16, frame[2] = body >> 8, frame[3] = body;
    if (SSL_write(ssl, frame, (int)n) != (int)n) die("write failed");
}

static void read_exactly(unsigned char *out, size_t count) {
    size_t done = 0;
    while (done < count) {
        int n = SSL_read(ssl, out + done, (int)(count - done));
        if (n <= 0) die("connection closed");
        done += (size_t)n;
    }
}

static size_t get_varint(const unsigned char **cursor) {
    size_t value = 0;
    int shift = 0;
    while (**cursor & 0x80) value |= (size_t)(*(*cursor)++ & 0x7f) << shift, shift += 7;
    return value | (size_t)(*(*cursor)++) << shift;
}

// Reads a CastMessage body's endpoints, namespace and text payload into m (a field too long for m stays empty).
static void parse_body(const unsigned char *body, size_t length, message *m) {
    const unsigned char *cursor = body, *end = body + length;
    m->source[0] = m->destination[0] = m->namespace[0] = m->payload[0] = 0;
    while (cursor < end) {
        size_t key = get_varint(&cursor);
        if ((key & 7) == 0) {
            get_varint(&cursor);
            continue;
        }
        size_t size = get_varint(&cursor);
        char *field = NULL;
        size_t capacity = 0;
        switch (key >> 3) {
        case 2: field = m->source, capacity = sizeof m->source; break;
        case 3: field = m->destination, capacity = sizeof m->destination; break;
        case 4: field = m->namespace, capacity = sizeof m->namespace; break;
        case 6: field = m->payload, capacity = sizeof m->payload; break;
        }
        if (field && size < capacity) {
            memcpy(field, cursor, size);
            field[size] = 0;
        }
        cursor += size;
    }
}

// Reads one message; answers PINGs on the way.
static void receive(message *m) {
    static unsigned char body[65536];
    for (;;) {
        unsigned char header[4];
        read_exactly(header, 4);
        size_t length = (size_t)header[0] << 24 | header[1] << 16 | header[2] << 8 | header[3];
        if (length > sizeof body) die("frame too large");
        read_exactly(body, length);
        parse_body(body, length, m);
        if (strcmp(m->namespace, NS_HEARTBEAT) == 0) {
            if (strstr(m->payload, "\"PING\"")) send_message(m->source, NS_HEARTBEAT, "{\"type\":\"PONG\"}");
            continue;
        }
        return;
    }
}

// The integer after "key": in a JSON text, or -1.
static long json_int(const char *json, const char *key) {
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *at = strstr(json, quoted);
    if (!at) return -1;
    at += strlen(quoted);
    while (*at == ' ' || *at == ':') at++;
    return strtol(at, NULL, 10);
}

// Copies the string after "key": into out (empty when absent).
static void json_string(const char *json, const char *key, char *out, size_t capacity) {
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *at = strstr(json, quoted);
    out[0] = 0;
    if (!at) return;
    at = strchr(at + strlen(quoted), '"');
    if (!at) return;
    const char *close = strchr(++at, '"');
    size_t length = close ? (size_t)(close - at) : 0;
    if (length >= capacity) length = capacity - 1;
    memcpy(out, at, length);
    out[length] = 0;
}

// Waits for the reply carrying request `id`.
static void await_reply(int id, message *m) {
    do receive(m);
    while (json_int(m->payload, "requestId") != id);
}

static int request(const char *destination, const char *namespace, const char *format, const char *argument,
                   message *reply) {
    char payload[1024];
    int id = next_request++;
    int n = snprintf(payload, sizeof payload, format, argument);
    snprintf(payload + n - 1, sizeof payload - (size_t)n + 1, ",\"requestId\":%d}", id);
    send_message(destination, namespace, payload);
    await_reply(id, reply);
    return id;
}

static int open_socket(const char *host, const char *port) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *address;
    if (getaddrinfo(host, port, &hints, &address) != 0) die("cannot resolve the host");
    int fd = socket(address->ai_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, address->ai_addr, address->ai_addrlen) != 0) die("cannot connect");
    freeaddrinfo(address);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static const char *connect_payload = "{\"type\":\"CONNECT\",\"origin\":{},\"userAgent\":\"floor\"}";

// Connects, launches `app` and connects to it; fills transport and session ids.
static int start_session(SSL_CTX *context, const char *host, const char *port, const char *app, char *transport,
                         char *session, message *m) {
    int fd = open_socket(host, port);
    ssl = SSL_new(context);
    SSL_set_fd(ssl, fd);
    if (SSL_connect(ssl) != 1) die("TLS failed");
    send_message("receiver-0", NS_CONNECTION, connect_payload);
    request("receiver-0", NS_RECEIVER, "{\"type\":\"LAUNCH\",\"appId\":\"%s\"}", app, m);
    json_string(m->payload, "transportId", transport, 128);
    json_string(m->payload, "sessionId", session, 128);
    if (!transport[0]) die("LAUNCH answered without a transportId");
    send_message(transport, NS_CONNECTION, connect_payload);
    return fd;
}

static void end_session(int fd, const char *session, message *m) {
    request("receiver-0", NS_RECEIVER, "{\"type\":\"STOP\",\"sessionId\":\"%s\"}", session, m);
    SSL_shutdown(ssl);
    SSL_free(ssl);
    close(fd);
}


// MARK: - Idle sessions

typedef struct {
    SSL *ssl;
    double last_inbound, last_ping;
    unsigned char header[4];
    int header_have;
    size_t body_length, body_have;
    unsigned char body[192];  // enough for a heartbeat frame; longer frames are counted, not kept
} idle_session;

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

static long rss_kib(void) {
    long pages = 0, resident = 0;
    FILE *file = fopen("/proc/self/statm", "r");
    if (!file || fscanf(file, "%ld %ld", &pages, &resident) != 2) die("cannot read /proc/self/statm");
    fclose(file);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// A whole frame arrived: answers a PING.
static void idle_frame(idle_session *c) {
    if (c->body_length > sizeof c->body) return;
    static message m;
    parse_body(c->body, c->body_length, &m);
    if (strcmp(m.namespace, NS_HEARTBEAT) == 0 && strstr(m.payload, "\"PING\"")) {
        ssl = c->ssl;
        send_message(m.source, NS_HEARTBEAT, "{\"type\":\"PONG\"}");
    }
}

// Reads what the connection has, frame by frame.
static void idle_readable(idle_session *c, double now) {
    static unsigned char chunk[16384];
    for (;;) {
        int n = SSL_read(c->ssl, chunk, sizeof chunk);
        if (n <= 0) {
            int error = SSL_get_error(c->ssl, n);
            if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) return;
            die("an idle connection closed");
        }
        c->last_inbound = now;
        for (int i = 0; i < n;) {
            if (c->header_have < 4) {
                c->header[c->header_have++] = chunk[i++];
                if (c->header_have == 4)
                    c->body_length = (size_t)c->header[0] << 24 | c->header[1] << 16 | c->header[2] << 8 | c->header[3],
                    c->body_have = 0;
            } else {
                size_t take = c->body_length - c->body_have;
                if (take > (size_t)(n - i)) take = (size_t)(n - i);
                if (c->body_have + take <= sizeof c->body) memcpy(c->body + c->body_have, chunk + i, take);
                c->body_have += take, i += (int)take;
            }
            if (c->header_have == 4 && c->body_have == c->body_length) {
                idle_frame(c);
                c->header_have = 0;
            }
        }
    }
}

static idle_session *idle_sessions;
static int idle_count, idle_loop;
static double next_tick;

// One turn of the loop: reads what arrived (waiting at most until the next tick when `wait`), then on a tick PINGs
// every session 5 s past its last inbound message or PING. Ticks fall on multiples of 250 ms of the monotonic clock,
// as swift-cast's heartbeat deadlines do: a PING goes at the first tick at or after it is due.
static void idle_turn(int wait) {
    static struct epoll_event events[1024];
    double now = now_us();
    int timeout = !wait || now >= next_tick ? 0 : (int)((next_tick - now) / 1e3) + 1;
    int ready = epoll_wait(idle_loop, events, 1024, timeout);
    now = now_us();
    for (int e = 0; e < ready; e++) idle_readable(&idle_sessions[events[e].data.u32], now);
    if (now < next_tick) return;
    next_tick += 250e3;
    for (int i = 0; i < idle_count; i++) {
        idle_session *c = &idle_sessions[i];
        if (!c->ssl) continue;
        double since = c->last_ping > c->last_inbound ? c->last_ping : c->last_inbound;
        if (now - c->last_inbound >= 15e6) die("a device stopped answering");
        if (now >= since + 5e6) {
            ssl = c->ssl;
            send_message("receiver-0", NS_HEARTBEAT, "{\"type\":\"PING\"}");
            c->last_ping = now;
        }
    }
}

static int idle_main(const char *host, int first_port, int count, int idle_seconds) {
    SSL_CTX *context = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(context, SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_mode(context, SSL_MODE_RELEASE_BUFFERS);  // as swift-cast's TLSContext
    signal(SIGPIPE, SIG_IGN);  // a closed connection fails its write ("write failed") instead of killing us
    idle_sessions = calloc((size_t)count, sizeof *idle_sessions);
    idle_count = count;
    idle_loop = epoll_create1(0);
    static message m;
    char port[16], transport[128], session[128];
    long rss_before = rss_kib();
    double start = now_us();
    next_tick = ((long long)(start / 250e3) + 1) * 250e3;
    // The sessions already started keep their heartbeats between the next ones' starts.
    for (int i = 0; i < count; i++) {
        snprintf(port, sizeof port, "%d", first_port + i);
        int fd = start_session(context, host, port, "CC1AD845", transport, session, &m);
        idle_sessions[i].ssl = ssl;
        idle_sessions[i].last_inbound = now_us();
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (epoll_ctl(idle_loop, EPOLL_CTL_ADD, fd, &event) != 0) die("epoll_ctl failed");
        idle_readable(&idle_sessions[i], now_us());  // what OpenSSL already holds would wake no epoll_wait
        idle_turn(0);
    }
    double started = now_us();
    double kib = (double)(rss_kib() - rss_before) / count;
    while (now_us() < started + 12e6) idle_turn(1);
    printf("idle-start\n");
    fflush(stdout);
    double cpu_start = cpu_seconds(), idle_start = now_us();
    while (now_us() < idle_start + idle_seconds * 1e6) idle_turn(1);
    double cpu = (cpu_seconds() - cpu_start) / ((now_us() - idle_start) / 1e6) * 100;
    printf("concurrent %d %.2f %.1f %.2f 0\n", count, (started - start) / 1e6, kib, cpu);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "--idle") == 0) return idle_main(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    if (argc != 6) die("usage: floor HOST PORT SESSIONS ROUNDS ECHOES | floor --idle HOST PORT COUNT IDLE_SECONDS");
    const char *host = argv[1], *port = argv[2];
    int sessions = atoi(argv[3]), rounds = atoi(argv[4]), echoes = atoi(argv[5]);
    SSL_CTX *context = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(context, SSL_VERIFY_NONE, NULL);
    static message m;
    char transport[128], session[128], media_session[32];
    for (int s = 0; s < sessions; s++) {
        // The first session of the process is reported apart (first-session, first-load), its round trips untimed.
        const char *prefix = s == 0 && sessions > 1 ? "first-" : "";
        int timed_rounds = s == 0 && sessions > 1 ? 0 : rounds;
        double start = now_us();
        int fd = start_session(context, host, port, "CC1AD845", transport, session, &m);
        printf("%ssession %.1f\n", prefix, now_us() - start);
        start = now_us();
        request(transport, NS_MEDIA,
                "{\"type\":\"LOAD\",\"autoplay\":true,\"media\":{\"contentId\":\"%s\",\"contentType\":\"video/mp4\","
                "\"streamType\":\"BUFFERED\",\"duration\":600}}",
                "https://media.example.com/bench.mp4", &m);
        while (!strstr(m.payload, "\"PLAYING\"")) receive(&m);
        printf("%sload %.1f\n", prefix, now_us() - start);
        snprintf(media_session, sizeof media_session, "%ld", json_int(m.payload, "mediaSessionId"));
        for (int r = 0; r < 2 * (timed_rounds ? timed_rounds : 20); r++) {
            start = now_us();
            request(transport, NS_MEDIA, r % 2 ? "{\"type\":\"PLAY\",\"mediaSessionId\":%s}"
                                                : "{\"type\":\"PAUSE\",\"mediaSessionId\":%s}",
                    media_session, &m);
            if (timed_rounds) printf("rtt %.1f\n", now_us() - start);
        }
        end_session(fd, session, &m);
    }
    if (echoes > 0) {
        int fd = start_session(context, host, port, "E0C40001", transport, session, &m);
        int window = 64, sent = 0, received = 0;
        double start = now_us();
        for (; sent < window && sent < echoes; sent++) send_message(transport, NS_ECHO, "{\"n\":1}");
        while (received < echoes) {
            receive(&m);
            if (strcmp(m.namespace, NS_ECHO) != 0) continue;
            received++;
            if (sent < echoes) send_message(transport, NS_ECHO, "{\"n\":1}"), sent++;
        }
        printf("echo %.0f\n", echoes / ((now_us() - start) / 1e6));
        end_session(fd, session, &m);
    }
    SSL_CTX_free(context);
    return 0;
}
