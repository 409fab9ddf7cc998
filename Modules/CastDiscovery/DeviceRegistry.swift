import CastTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The device list as a pure state machine: what the network said, per service record, in; events and the work
/// to do next (arm a timer, ask a device about an app) out. ``DiscoveryManager`` owns one and drives it from a
/// single task, so its output is always in order; tests can drive it directly.
///
/// - One device can be advertised by several records (interfaces × IP protocols, or a group moving to a new
///   instance); records are merged by device id into one listed device.
/// - A record that goes away is kept, "departing", for the removal delay; if it comes back meanwhile the flap is
///   invisible. Only when it expires does the merged device change or disappear.
/// - Criteria decide which merged devices are listed ("visible").
struct DeviceRegistry: Sendable {
    /// Where a record came from.
    enum RecordKey: Hashable, Sendable {
        case service(ServiceKey)
        case configured(String)
        /// A device a scan found (or a group a scanned device reported), by device id.
        case scanned(String)
    }

    /// What the registry asks its owner to do.
    enum Effect: Sendable, Equatable {
        case event(DiscoveryEvent)
        /// Call ``expire(_:token:)`` after the removal delay, unless cancelled.
        case scheduleExpiry(RecordKey, token: Int)
        case cancelExpiry(token: Int)
        /// Ask `device` whether `applicationID` is available; report with
        /// ``setAvailability(_:deviceID:applicationID:)``.
        case checkAvailability(CastDevice, applicationID: String)
    }

    /// What a device said about an application.
    enum Availability: Sendable, Equatable {
        case checking(endpoint: String)
        case available
        case unavailable
        /// The check could not be made (connect or request failed); asked again when the device's address or
        /// port changes.
        case unreachable(endpoint: String)
    }

    private struct Record: Sendable {
        var device: CastDevice
        var sequence: Int
        var expiryToken: Int?
        var isDeparting: Bool { expiryToken != nil }
    }

    var criteria: DiscoveryCriteria
    private var records: [RecordKey: Record] = [:]
    private var visible: [String: CastDevice] = [:]
    private var availability: [String: [String: Availability]] = [:]
    private var nextSequence = 0

    init(criteria: DiscoveryCriteria) {
        self.criteria = criteria
    }

    // MARK: - Reading

    /// The listed devices, sorted as the Cast dialog sorts them: by friendly name, ignoring case and diacritics,
    /// with numbers compared as numbers ("TV 2" before "TV 10").
    var devices: [CastDevice] { Self.dialogOrdered(visible.values) }

    /// Whether any device is listed.
    var isEmpty: Bool { visible.isEmpty }

    /// The listed device with `id`.
    func device(id: String) -> CastDevice? { visible[id] }

    /// Whether a record exists for `key` (live or departing).
    func hasRecord(_ key: RecordKey) -> Bool { records[key] != nil }

    /// The cached availability of `applicationID` on device `id`.
    func availability(deviceID: String, applicationID: String) -> Availability? {
        availability[deviceID]?[applicationID]
    }

    /// `devices` in the Cast dialog's order: by friendly name's natural sort key, then by name, then by id. Each
    /// name is folded once, not once per comparison.
    static func dialogOrdered(_ devices: some Sequence<CastDevice>) -> [CastDevice] {
        devices.map { (key: $0.friendlyName.naturalSortKey, device: $0) }
            .sorted { lhs, rhs in
                if lhs.key != rhs.key { return lhs.key < rhs.key }
                if lhs.device.friendlyName != rhs.device.friendlyName {
                    return lhs.device.friendlyName < rhs.device.friendlyName
                }
                return lhs.device.id < rhs.device.id
            }
            .map(\.device)
    }

    // MARK: - Changes

    /// A record was resolved (again): store it live, reviving it if it was departing.
    mutating func upsert(_ key: RecordKey, _ device: CastDevice) -> [Effect] {
        var effects: [Effect] = []
        let previous = records[key]
        if let token = previous?.expiryToken { effects.append(.cancelExpiry(token: token)) }
        nextSequence += 1
        records[key] = Record(device: device, sequence: nextSequence, expiryToken: nil)
        if let previousID = previous?.device.id, previousID != device.id {
            effects += refresh(previousID)
        }
        return effects + refresh(device.id)
    }

    /// The network says a record went away: keep it until ``expire(_:token:)``.
    mutating func markDeparting(_ key: RecordKey, token: Int) -> [Effect] {
        guard var record = records[key], !record.isDeparting else { return [] }
        record.expiryToken = token
        records[key] = record
        // The merged view prefers live records, so a device with another live record may change now.
        return [.scheduleExpiry(key, token: token)] + refresh(record.device.id)
    }

    /// The removal delay of a departing record passed.
    mutating func expire(_ key: RecordKey, token: Int) -> [Effect] {
        guard let record = records[key], record.expiryToken == token else { return [] }
        records.removeValue(forKey: key)
        return refresh(record.device.id)
    }

    /// Drops every record matching `predicate` at once (discovery stopped, the daemon went away).
    mutating func removeAll(where predicate: (RecordKey) -> Bool = { _ in true }) -> [Effect] {
        let keys = records.keys.filter(predicate)
        var ids = Set<String>()
        var effects: [Effect] = []
        for key in keys {
            if let record = records.removeValue(forKey: key) {
                ids.insert(record.device.id)
                if let token = record.expiryToken { effects.append(.cancelExpiry(token: token)) }
            }
        }
        for id in ids.sorted() { effects += refresh(id) }
        return effects
    }

    /// Records an answer (or a failure) to an availability check.
    mutating func setAvailability(_ result: Availability, deviceID: String, applicationID: String) -> [Effect] {
        availability[deviceID, default: [:]][applicationID] = result
        return refresh(deviceID)
    }

    /// Applies new criteria to every known device.
    mutating func setCriteria(_ criteria: DiscoveryCriteria) -> [Effect] {
        self.criteria = criteria
        let ids = Set(records.values.map(\.device.id)).union(visible.keys)
        return ids.sorted().flatMap { refresh($0) }
    }

    // MARK: - Merging and visibility

    /// The device `id` as all its records describe it: the newest live record's fields (an mDNS record's over a
    /// scan's, since mDNS tells more), how every record found it, and the addresses of all live records
    /// (departing ones only when nothing live is left), IPv4 first.
    private func merged(_ id: String) -> CastDevice? {
        let all = records.filter { $0.value.device.id == id }
        guard !all.isEmpty else { return nil }
        let live = all.filter { !$0.value.isDeparting }
        let candidates = (live.isEmpty ? all : live).map { (isService: $0.key.isService, record: $0.value) }
        guard
            var device = candidates.max(by: {
                ($0.isService ? 1 : 0, $0.record.sequence) < ($1.isService ? 1 : 0, $1.record.sequence)
            })?.record.device
        else { return nil }
        device.sources = candidates.reduce(into: []) { $0.formUnion($1.record.device.sources) }
        let pool = candidates.map(\.record)
        var addresses: [DeviceAddress] = []
        for record in pool.sorted(by: { $0.sequence < $1.sequence }) {
            for address in record.device.addresses where !addresses.contains(address) { addresses.append(address) }
        }
        device.addresses = addresses.sorted { lhs, rhs in
            if lhs.isIPv6 != rhs.isIPv6 { return !lhs.isIPv6 }
            return (lhs.ip, lhs.interfaceName ?? "") < (rhs.ip, rhs.interfaceName ?? "")
        }
        return device
    }

    private static func endpoint(_ device: CastDevice) -> String { "\(device.host):\(device.port)" }

    /// Recomputes device `id` and says what subscribers must hear about it.
    private mutating func refresh(_ id: String) -> [Effect] {
        let old = visible[id]
        guard let device = merged(id) else {
            guard let old else { return [] }
            visible.removeValue(forKey: id)
            return [.event(.removed(old))]
        }
        var effects: [Effect] = []
        var qualifies = device.isStatic || criteria.requiredCapabilities.isSubset(of: device.capabilities)
        if qualifies, let application = criteria.applicationID {
            let endpoint = Self.endpoint(device)
            switch availability[id]?[application] {
            case .available:
                break
            case .unavailable:
                qualifies = false
            case .unreachable(let probed) where probed == endpoint:
                qualifies = false
            case .checking(let probed) where probed == endpoint:
                // Keep what subscribers have while the answer is outstanding.
                if let old, old != device {
                    visible[id] = device
                    return [.event(.updated(device))]
                }
                return []
            case .checking, .unreachable, nil:
                availability[id, default: [:]][application] = .checking(endpoint: endpoint)
                effects.append(.checkAvailability(device, applicationID: application))
                if let old, old != device {
                    visible[id] = device
                    effects.append(.event(.updated(device)))
                }
                return effects
            }
        }
        guard qualifies else {
            guard let old else { return effects }
            visible.removeValue(forKey: id)
            return effects + [.event(.removed(old))]
        }
        visible[id] = device
        if let old {
            if old != device { effects.append(.event(.updated(device))) }
        } else {
            effects.append(.event(.added(device)))
        }
        return effects
    }
}

extension DeviceRegistry.RecordKey {
    var isService: Bool {
        if case .service = self { return true }
        return false
    }
}
