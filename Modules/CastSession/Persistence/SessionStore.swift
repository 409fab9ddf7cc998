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
    public var deviceID: String
    public var deviceName: String
    public var host: String
    public var port: Int
    public var applicationID: String
    public var sessionID: String
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

    /// The device as a static entry (what the next process connects to).
    var device: CastDevice {
        var device = CastDevice.staticDevice(host: host, port: port, name: deviceName)
        device.id = deviceID
        return device
    }
}

/// Stores the current session in `<directory>/session.json` with an atomic write (temporary file + rename),
/// so a crash never leaves half a file and a later process can resume the session.
struct SessionStore: Sendable {
    let directory: String

    /// `$XDG_STATE_HOME/cast`, or `~/.local/state/cast`.
    static func defaultDirectory() -> String {
        if let state = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), !state.isEmpty {
            return state + "/cast"
        }
        let home = getenv("HOME").map { String(cString: $0) } ?? "/tmp"
        return home + "/.local/state/cast"
    }

    var path: String { directory + "/session.json" }

    func save(_ session: SavedSession) throws {
        guard LocalFiles.makeDirectories(directory) else { throw failure("cannot create \(directory)") }
        let temporary = path + ".tmp-\(getpid())"
        let bytes = Array((session.json.jsonString + "\n").utf8)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot write \(temporary)") }
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor)
        close(descriptor)
        guard written == bytes.count, synced == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw failure("cannot store the session in \(path)")
        }
    }

    func load() throws -> SavedSession? {
        guard access(path, F_OK) == 0 else { return nil }
        guard let bytes = LocalFiles.read(path, limit: 65_536) else {
            throw failure("cannot read \(path), or it is too large to be a saved session")
        }
        guard let json = try? JSONValue(parsing: String(decoding: bytes, as: UTF8.self)),
            let saved = SavedSession(json: json)
        else { throw failure("\(path) is not a saved session") }
        return saved
    }

    func clear() {
        unlink(path)
    }

    private func failure(_ message: String) -> CastSessionError {
        CastSessionError(.persistenceFailed, "\(message) (errno \(errno))")
    }
}
