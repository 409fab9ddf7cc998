import CastDiscovery
import CastTransport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What identifies a running session well enough for another process to rejoin it.
public struct SavedSession: Sendable, Hashable {
    /// The device's id (its mDNS id), which the session belongs to.
    public var deviceID: String
    /// The device's name when the session was saved, for messages.
    public var deviceName: String
    /// Where the device was.
    public var host: String
    /// The device's Cast port.
    public var port: Int
    /// The receiver app running the session.
    public var applicationID: String
    /// The receiver app's session id, which the app must still run to be resumed.
    public var sessionID: String
    /// The app's endpoint, to address its messages to.
    public var transportID: String

    var json: JSONValue {
        [
            "deviceId": .string(deviceID), "deviceName": .string(deviceName), "host": .string(host),
            "port": .number(Double(port)), "appId": .string(applicationID), "sessionId": .string(sessionID),
            "transportId": .string(transportID), "version": 1,
        ]
    }

    init(
        deviceID: String,
        deviceName: String,
        host: String,
        port: Int,
        applicationID: String,
        sessionID: String,
        transportID: String
    ) {
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.host = host
        self.port = port
        self.applicationID = applicationID
        self.sessionID = sessionID
        self.transportID = transportID
    }

    init?(json: JSONValue) {
        guard let deviceID = json["deviceId"]?.stringValue, let host = json["host"]?.stringValue,
            let port = json["port"]?.intValue, let appID = json["appId"]?.stringValue,
            let sessionID = json["sessionId"]?.stringValue
        else { return nil }
        self.init(
            deviceID: deviceID,
            deviceName: json["deviceName"]?.stringValue ?? host,
            host: host,
            port: port,
            applicationID: appID,
            sessionID: sessionID,
            transportID: json["transportId"]?.stringValue ?? sessionID
        )
    }

    /// Whether this session was saved for `device`: the same id, or the same address and port (a device named
    /// by `--host` one time and found by mDNS the next).
    public func belongs(to device: CastDevice) -> Bool {
        guard deviceID != device.id else { return true }
        return port == device.port && (device.host == host || device.addresses.contains { $0.ip == host })
    }

    /// The device as a static entry (what the next process connects to).
    var device: CastDevice {
        var device = CastDevice.staticDevice(host: host, port: port, name: deviceName)
        device.id = deviceID
        return device
    }
}

/// Stores one session per device under `<directory>/sessions/`, each with an atomic write (temporary file +
/// rename), so a crash never leaves half a file, a later process can resume a session, and a session on one
/// device never hides another device's. The most recently saved one is "the" saved session.
struct SessionStore: Sendable {
    let directory: String

    /// `$XDG_STATE_HOME/cast`, or `~/.local/state/cast`.
    static func defaultDirectory() -> String { CastOptions.defaultStateDirectory() }

    var sessionsDirectory: String { directory + "/sessions" }
    /// Where version 1 kept its single session; read (as the oldest entry) and removed when cleared.
    var legacyPath: String { directory + "/session.json" }

    /// The file of the session saved for `deviceID`: the id's letters, digits and `-._` kept, the rest as `_`.
    func path(forDevice deviceID: String) -> String {
        sessionsDirectory + "/" + LocalFiles.fileName(for: deviceID) + ".json"
    }

    func save(_ session: SavedSession) throws {
        guard LocalFiles.makeDirectories(sessionsDirectory) else {
            throw failure("cannot create \(sessionsDirectory)")
        }
        var json = session.json
        json["savedAt"] = .number(Self.wallClockSeconds())
        let path = path(forDevice: session.deviceID)
        guard LocalFiles.writeAtomically(Array((json.jsonString + "\n").utf8), to: path, mode: 0o600, synced: true)
        else { throw failure("cannot store the session in \(path)") }
    }

    /// The most recently saved session.
    func load() throws -> SavedSession? { try loadAll().first }

    /// Every saved session, the most recently saved first.
    func loadAll() throws -> [SavedSession] {
        var entries: [(SavedSession, Double)] = []
        if let directory = opendir(sessionsDirectory) {
            defer { closedir(directory) }
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                guard name.hasSuffix(".json") else { continue }
                entries.append(try read(sessionsDirectory + "/" + name))
            }
        }
        if access(legacyPath, F_OK) == 0 { entries.append(try read(legacyPath)) }
        return entries.sorted { $0.1 > $1.1 }.map(\.0)
    }

    private func read(_ path: String) throws -> (SavedSession, Double) {
        guard let bytes = LocalFiles.read(path, limit: 65_536) else {
            throw failure("cannot read \(path), or it is too large to be a saved session")
        }
        guard let json = try? JSONValue(parsing: String(decoding: bytes, as: UTF8.self)),
            let saved = SavedSession(json: json)
        else { throw failure("\(path) is not a saved session") }
        return (saved, json["savedAt"]?.doubleValue ?? 0)
    }

    /// Forgets the session saved for `deviceID` (and a version-1 file naming that device).
    func clear(deviceID: String) {
        unlink(path(forDevice: deviceID))
        if let legacy = try? read(legacyPath), legacy.0.deviceID == deviceID { unlink(legacyPath) }
    }

    private static func wallClockSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    private func failure(_ message: String) -> CastSessionError {
        CastSessionError(.persistenceFailed, "\(message) (errno \(errno))")
    }
}
