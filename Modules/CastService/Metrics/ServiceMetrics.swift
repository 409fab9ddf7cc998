import NIOConcurrencyHelpers
import Prometheus

/// What `GET /metrics` reports, in Prometheus' text format: the devices and sessions castd holds, each command's
/// latency, reconnects, errors by code, and event-stream subscribers.
///
/// Counters and histograms are recorded as things happen; the gauges are read from the hub when scraped, so they
/// are never stale. One registry per hub: no process-wide metrics state, so several hubs (tests) stay apart.
final class ServiceMetrics: Sendable {
    /// What the gauges show, read from the hub at scrape time.
    struct Snapshot {
        var devices: Int
        var followedDevices: Int
        var connectedSessions: Int
        var eventSubscribers: Int
        /// All the followed devices' reconnects so far.
        var deviceReconnects: Int
    }

    private let registry = PrometheusCollectorRegistry()
    /// The device reconnects already counted: the observers keep totals, the counter takes increments.
    private let countedDeviceReconnects = NIOLockedValueBox(0)

    /// Command latencies from 1 ms (a loopback emulator) to 30 s (a load that waits for a slow device).
    private static let latencyBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5),
        .seconds(5), .seconds(10), .seconds(30),
    ]

    init() {
        // Registered up front so that a scrape shows both counters at 0 before anything happened (the gauges are
        // set at every scrape).
        for kind in ["device", "session"] { _ = reconnects(kind) }
    }

    /// Records one performed command's latency, whether it succeeded or failed (failures are counted where they
    /// are answered, by ``recordError(_:)``).
    func recordCommand(_ name: String, duration: Duration) {
        registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "castd",
                metricName: "command_duration",
                unitName: "seconds",
                helpText: "Time from a command's arrival to the receiver's answer, per command."
            ),
            labels: [("command", name)],
            buckets: Self.latencyBuckets
        ).record(duration)
    }

    /// Counts a failure answered to a client (HTTP or MQTT) by its error code.
    func recordError(_ error: CastServiceError) {
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "castd",
                metricName: "errors",
                unitName: "total",
                helpText: "Failures answered to clients, by error code."
            ),
            labels: [("code", error.code.description)]
        ).increment()
    }

    /// Counts a connection re-established: a followed device's (`device`) or a session's (`session`).
    func recordReconnect(_ kind: String) { reconnects(kind).increment() }

    /// The metrics in Prometheus' text exposition format, with the gauges set from `snapshot`.
    func exposition(_ snapshot: Snapshot) -> [UInt8] {
        gauge("devices", "Devices castd knows (mDNS and static hosts).").set(to: Double(snapshot.devices))
        gauge("followed_devices", "Devices castd holds a connection to.").set(to: Double(snapshot.followedDevices))
        gauge("sessions_connected", "Sessions castd holds with a receiver app.").set(
            to: Double(snapshot.connectedSessions)
        )
        gauge("event_subscribers", "Subscribers to the event stream (HTTP clients and the MQTT bridge).")
            .set(to: Double(snapshot.eventSubscribers))
        let newReconnects = countedDeviceReconnects.withLockedValue { counted in
            defer { counted = max(counted, snapshot.deviceReconnects) }
            return max(0, snapshot.deviceReconnects - counted)
        }
        if newReconnects > 0 { reconnects("device").increment(by: Int64(newReconnects)) }
        return registry.emitToBuffer()
    }

    private func reconnects(_ kind: String) -> Counter {
        registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "castd",
                metricName: "reconnects",
                unitName: "total",
                helpText: "Connections re-established after a drop: a followed device's or a session's."
            ),
            labels: [("kind", kind)]
        )
    }

    private func gauge(_ name: String, _ help: String) -> Gauge {
        registry.makeGauge(
            descriptor: MetricNameDescriptor(namespace: "castd", metricName: name, unitName: "", helpText: help)
        )
    }
}
