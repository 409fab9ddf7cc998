/// What one device advertises as `_googlecast._tcp`: the instance name, the port and the TXT record a real
/// Chromecast publishes (cast-protocol.md §11.2).
///
/// ```swift
/// var advertisement = CastAdvertisement(id: device.id, friendlyName: "Living Room TV", port: 8009)
/// advertisement.statusText = "YouTube"
/// let name = try await publisher.publish(advertisement)
/// ```
public struct CastAdvertisement: Sendable, Hashable {
    /// The device id (`id`): 32 lowercase hex digits on real devices.
    public var id: String
    /// The friendly name (`fn`).
    public var friendlyName: String
    /// The model name (`md`). Defaults to "Chromecast".
    public var modelName = "Chromecast"
    /// The capabilities (`ca`). Defaults to video out, audio out and attenuation volume (4101), as the emulator.
    public var capabilities: DeviceCapabilities = [.videoOut, .audioOut, .attenuationOrFixedVolume]
    /// The Cast port (SRV). Defaults to 8009; speaker groups use another.
    public var port: Int
    /// The receiver status text (`rs`): the running app's name. Defaults to empty (idle).
    public var statusText = ""
    /// Whether an app runs that senders may join (`st=1`). Defaults to `false`.
    public var isBusy = false
    /// The icon path (`ic`). Defaults to `/setup/icon.png`.
    public var iconPath = "/setup/icon.png"
    /// The record version (`ve`), published as two digits. Defaults to 5 (`05`, current devices).
    public var protocolVersion = 5
    /// The `cd` value: 32 uppercase hex digits whose purpose is undocumented. Defaults to one derived from ``id``.
    public var certificateID: String?
    /// The `bs` value: a MAC-like 12-hex id (purpose undocumented). Defaults to one derived from ``id``.
    public var hardwareID: String?
    /// The `nf` value, observed as 1 or 2 (purpose undocumented). Defaults to 1.
    public var nf = 1
    /// The DNS-SD instance name; `nil` (the default) means ``defaultInstanceName``. A collision on the network
    /// renames it ("Name #2"); ``DevicePublisher`` reports the name it got.
    public var instanceName: String?

    /// An advertisement with the defaults.
    public init(id: String, friendlyName: String, port: Int = 8009) {
        self.id = id
        self.friendlyName = friendlyName
        self.port = port
    }

    /// The name real devices use: the model with spaces as dashes, a dash and the id, cut to 63 bytes.
    public var defaultInstanceName: String {
        var name = modelName.replacingSpaces() + "-" + id
        while name.utf8.count > 63 { name.removeLast() }
        return name
    }

    /// The TXT record, in the order devices publish it: `id cd rm ve md ic fn ca st bs nf rs`.
    public var txtRecord: [String] {
        let cd = certificateID ?? String(id.uppercased().reversed())
        let bs = hardwareID ?? ("FA8FCA" + String(id.uppercased().suffix(6)))
        return [
            "id=\(id)",
            "cd=\(cd)",
            "rm=",
            "ve=\(protocolVersion < 10 ? "0" : "")\(protocolVersion)",
            "md=\(modelName)",
            "ic=\(iconPath)",
            "fn=\(friendlyName)",
            "ca=\(capabilities.rawValue)",
            "st=\(isBusy ? 1 : 0)",
            "bs=\(bs)",
            "nf=\(nf)",
            "rs=\(statusText)",
        ]
    }

    /// Why this cannot be published, if it cannot.
    var problem: String? {
        if id.isEmpty { return "the id is empty" }
        if friendlyName.isEmpty { return "the friendly name is empty" }
        if !(1...65535).contains(port) { return "port \(port) is out of range" }
        let name = instanceName ?? defaultInstanceName
        if name.isEmpty || name.utf8.count > 63 { return "the instance name must be 1…63 bytes" }
        if let long = txtRecord.first(where: { $0.utf8.count > 255 }) {
            return "TXT entry '\(long.prefix(20))…' is longer than 255 bytes"
        }
        return nil
    }
}

extension String {
    fileprivate func replacingSpaces() -> String { String(map { $0 == " " ? "-" : $0 }) }
}
