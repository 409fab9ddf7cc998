import CMosquitto
import CastTransport
import NIOConcurrencyHelpers

/// Where and how castd reaches its MQTT broker.
public struct MQTTBrokerOptions: Sendable, Equatable {
    /// TLS to the broker.
    public struct TLS: Sendable, Equatable {
        /// A PEM file of the certificate authorities to trust; `nil` uses ``caDirectory`` or none.
        public var caFile: String?
        /// A directory of trusted CA certificates (hashed names, as `c_rehash` makes). Defaults to
        /// `/etc/ssl/certs`.
        public var caDirectory: String? = "/etc/ssl/certs"
        /// A client certificate and its key (PEM), for brokers that authenticate clients by certificate.
        public var certificateFile: String?
        /// The private key of ``certificateFile`` (PEM).
        public var keyFile: String?
        /// Whether the broker's certificate must name its host. Defaults to `true`; turn off only for a test
        /// broker.
        public var verifiesHostname = true

        /// TLS trusting the system's CAs.
        public init() {}
    }

    /// The broker's host name or address; with ``port`` 0, the path of its Unix socket.
    public var host: String
    /// The broker's port. Defaults to 1883 (8883 is usual with TLS).
    public var port: Int
    /// The MQTT client id; brokers disconnect an older client with the same id. Defaults to `castd-` and the
    /// site.
    public var clientID: String
    /// Credentials for brokers that ask for them.
    public var username: String?
    /// The password for ``username``; keep it in a file the profile names, not in the profile.
    public var password: String?
    /// TLS; `nil` (the default) for plain TCP.
    public var tls: TLS?
    /// How often the broker must hear from castd. Defaults to 30 s.
    public var keepAlive: Duration = .seconds(30)
    /// The first delay before connecting again after the broker was lost; doubled after each failure up to
    /// ``maximumReconnectDelay``. Defaults to 1 s and 30 s.
    public var reconnectDelay: Duration = .seconds(1)
    /// The longest delay between reconnection attempts.
    public var maximumReconnectDelay: Duration = .seconds(30)

    /// A broker at `host`:`port`.
    public init(host: String, port: Int = 1883, clientID: String) {
        self.host = host
        self.port = port
        self.clientID = clientID
    }

    /// The broker named by a URL: `mqtt://host[:port]`, `mqtts://host[:port]` (TLS, port 8883 by default) or
    /// `unix:///path/to/socket`; `user:password@` in the URL sets the credentials.
    ///
    /// - Throws: ``CastServiceError/Code/invalidConfiguration`` for any other form.
    public init(url: String, clientID: String) throws(CastServiceError) {
        let invalid = CastServiceError(
            .invalidConfiguration,
            "'\(url)' is not a broker URL (mqtt://host:port, mqtts://host:port or unix:///path)",
            httpStatus: 500,
            field: "broker"
        )
        guard let schemeEnd = url.firstRange(of: "://") else { throw invalid }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        var rest = Substring(url[schemeEnd.upperBound...])
        if scheme == "unix" {
            guard rest.hasPrefix("/") else { throw invalid }
            self.init(host: String(rest), port: 0, clientID: clientID)
            return
        }
        guard scheme == "mqtt" || scheme == "mqtts" else { throw invalid }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            username = parts.first.map(String.init)
            password = parts.count > 1 ? String(parts[1]) : nil
        }
        var host = rest
        var port = scheme == "mqtts" ? 8883 : 1883
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let number = Int(rest[rest.index(after: colon)...]), (1...65535).contains(number) else {
                throw invalid
            }
            host = rest[..<colon]
            port = number
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty, !host.contains("/") else { throw invalid }
        self.init(host: String(host), port: port, clientID: clientID)
        self.username = username
        self.password = password
        if scheme == "mqtts" { tls = TLS() }
    }
}

/// What the broker connection reports.
enum MQTTEvent: Sendable {
    /// Connected (again): subscriptions and retained state must be sent anew.
    case connected
    /// The connection was refused or lost; libmosquitto connects again with the backoff.
    case disconnected(reason: String)
    /// A message on a subscribed topic.
    case message(topic: String, payload: [UInt8])
}

/// One connection to an MQTT broker through libmosquitto: its network thread (one per broker, not per device)
/// connects, keeps alive and reconnects with backoff; this class turns its callbacks into ``events``.
final class MQTTClient: @unchecked Sendable {
    // @unchecked: `handle` is used only through libmosquitto's thread-safe calls (publish, subscribe, disconnect
    // and the loop functions are safe alongside its threaded loop); `isRunning` is behind a lock.

    /// Connection changes and messages, in the order libmosquitto's thread reports them.
    let events: AsyncStream<MQTTEvent>
    private let continuation: AsyncStream<MQTTEvent>.Continuation
    private let handle: OpaquePointer
    private let options: MQTTBrokerOptions
    private let isRunning = NIOLockedValueBox(false)

    private static let libraryReady: Void = { _ = mosquitto_lib_init() }()

    /// A client that will connect with `options`; the broker publishes `will` (retained) when it loses castd.
    init(options: MQTTBrokerOptions, will: (topic: String, payload: String)?) throws(CastServiceError) {
        Self.libraryReady
        guard let handle = mosquitto_new(options.clientID, true, nil) else {
            throw CastServiceError(.invalidConfiguration, "libmosquitto could not make a client", httpStatus: 500)
        }
        self.handle = handle
        self.options = options
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_callback_set(handle) { _, object, code in
            guard let object else { return }
            Unmanaged<MQTTClient>.fromOpaque(object).takeUnretainedValue().didConnect(code)
        }
        mosquitto_disconnect_callback_set(handle) { _, object, code in
            guard let object else { return }
            Unmanaged<MQTTClient>.fromOpaque(object).takeUnretainedValue().didDisconnect(code)
        }
        mosquitto_message_callback_set(handle) { _, object, message in
            guard let object, let message, let topic = message.pointee.topic else { return }
            let count = Int(message.pointee.payloadlen)
            let payload =
                count > 0 && message.pointee.payload != nil
                ? Array(UnsafeRawBufferPointer(start: message.pointee.payload, count: count)) : []
            Unmanaged<MQTTClient>.fromOpaque(object).takeUnretainedValue()
                .continuation.yield(.message(topic: String(cString: topic), payload: payload))
        }
        do {
            try configure(will: will)
        } catch {
            mosquitto_destroy(handle)
            throw error
        }
    }

    deinit {
        mosquitto_destroy(handle)
        continuation.finish()
    }

    private func configure(will: (topic: String, payload: String)?) throws(CastServiceError) {
        _ = mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V311))
        if let username = options.username {
            try check(mosquitto_username_pw_set(handle, username, options.password), "the broker credentials")
        }
        if let tls = options.tls {
            try check(
                mosquitto_tls_set(
                    handle,
                    tls.caFile,
                    tls.caFile == nil ? tls.caDirectory : nil,
                    tls.certificateFile,
                    tls.keyFile,
                    nil
                ),
                "the broker TLS files"
            )
            if !tls.verifiesHostname { _ = mosquitto_tls_insecure_set(handle, true) }
        }
        if let will {
            let bytes = Array(will.payload.utf8)
            try check(
                mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes, 1, true),
                "the last will on \(will.topic)"
            )
        }
        try check(
            mosquitto_reconnect_delay_set(
                handle,
                UInt32(max(1, options.reconnectDelay.components.seconds)),
                UInt32(max(1, options.maximumReconnectDelay.components.seconds)),
                true
            ),
            "the reconnect delay"
        )
    }

    /// Starts the network thread, which connects and keeps connecting. A broker that is down at start is not an
    /// error: the thread retries with the backoff.
    func start() throws(CastServiceError) {
        let code = mosquitto_connect_async(
            handle,
            options.host,
            Int32(options.port),
            Int32(max(5, options.keepAlive.components.seconds))
        )
        // Refused or unreachable now: the loop connects again later. Bad arguments are the caller's.
        if code == MOSQ_ERR_INVAL.rawValue {
            throw CastServiceError(
                .invalidConfiguration,
                "the broker address is invalid",
                httpStatus: 500,
                field: "broker"
            )
        }
        try check(mosquitto_loop_start(handle), "the MQTT network thread")
        isRunning.withLockedValue { $0 = true }
    }

    /// Disconnects cleanly (no last will) and stops the network thread.
    func stop() {
        guard
            isRunning.withLockedValue({ running in
                defer { running = false }; return running
            })
        else { return }
        _ = mosquitto_disconnect(handle)
        _ = mosquitto_loop_stop(handle, false)
        continuation.finish()
    }

    /// Publishes `payload` at QoS 1; queued by libmosquitto while the broker is away (retained state is sent
    /// again on each connect anyway).
    func publish(_ topic: String, _ payload: String, retain: Bool) {
        let bytes = Array(payload.utf8)
        _ = mosquitto_publish(handle, nil, topic, Int32(bytes.count), bytes, 1, retain)
    }

    /// Subscribes to `pattern` at QoS 1 (subscriptions are made again after each connect by the caller).
    func subscribe(_ pattern: String) {
        _ = mosquitto_subscribe(handle, nil, pattern, 1)
    }

    private func didConnect(_ code: Int32) {
        if code == 0 {
            continuation.yield(.connected)
        } else {
            continuation.yield(.disconnected(reason: String(cString: mosquitto_connack_string(code))))
        }
    }

    private func didDisconnect(_ code: Int32) {
        continuation.yield(
            .disconnected(reason: code == 0 ? "disconnected" : String(cString: mosquitto_strerror(code)))
        )
    }

    private func check(_ code: Int32, _ what: String) throws(CastServiceError) {
        guard code != MOSQ_ERR_SUCCESS.rawValue else { return }
        throw CastServiceError(
            .invalidConfiguration,
            "\(what): \(String(cString: mosquitto_strerror(code)))",
            httpStatus: 500,
            field: "broker"
        )
    }
}
