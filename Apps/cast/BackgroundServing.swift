import CastMediaServer
import CastTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `cast play --detach` of local files: a background `cast` process (its own session, no terminal) does the
/// play and serves the files until the media session ends, or nobody fetched anything for 10 minutes. It records
/// itself under the state directory, so `cast status` shows what is served and `cast stop` ends it.
enum BackgroundServing {
    /// The hidden flag that makes a `cast play` the background server.
    static let childFlag = "--serving-in-background"
    /// Printed by the background process once it loaded and detached; never shown.
    static let detachedMarker = "\u{1}cast-serving-detached"
    /// How long a background server waits without a single request before it ends.
    static let idleLimit: Duration = .seconds(600)

    /// Starts this program again with `arguments` and the child flag in a new session; relays what it prints
    /// until it detaches (success) or exits (its failure, its exit code).
    static func handOff(arguments: [String]) throws -> Int32 {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw CLIError(.failed, "cannot start the background server (pipe)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], STDOUT_FILENO)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // glibc's POSIX_SPAWN_SETSID (hidden behind _GNU_SOURCE from Swift): the child gets its own session, so the
        // terminal's Ctrl-C and hang-up do not reach it.
        let spawnSetSID: Int16 = 0x80
        posix_spawnattr_setflags(&attributes, spawnSetSID)
        let executable = "/proc/self/exe"
        // The flag goes before a `--`, after which every argument is a file.
        var arguments = arguments
        arguments.insert(childFlag, at: arguments.firstIndex(of: "--") ?? arguments.endIndex)
        let argv = [executable] + arguments
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, &cArguments, environ)
        close(pipeEnds[1])
        guard spawned == 0 else {
            close(pipeEnds[0])
            throw CLIError(.failed, "cannot start the background server: \(String(cString: strerror(spawned)))")
        }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(pipeEnds[0], &buffer, buffer.count)
            if count > 0 {
                output += buffer.prefix(count)
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        close(pipeEnds[0])
        var text = String(decoding: output, as: UTF8.self)
        if let marker = text.firstRange(of: detachedMarker) {
            text.removeSubrange(marker.lowerBound..<text.endIndex)
            LocalFiles.write(text, to: STDOUT_FILENO)
            return 0
        }
        LocalFiles.write(text, to: STDOUT_FILENO)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 1
    }

    /// In the background process, once loaded: tells the parent, then lets go of its output.
    static func detach() {
        LocalFiles.write(detachedMarker + "\n", to: STDOUT_FILENO)
        let null = open("/dev/null", O_RDWR)
        dup2(null, STDOUT_FILENO)
        dup2(null, STDERR_FILENO)
        if null > 2 { close(null) }
    }

    // MARK: - Records

    /// What a background server serves, for `cast status` and `cast stop`.
    struct Record: Codable, Equatable {
        var pid: Int32
        var deviceID: String
        var deviceName: String
        var items: [String]
        /// The process's identity (``processIdentity(_:)``) when it saved the record: the record names that process
        /// only while its pid still has it, so a pid the system has given to another process since is never
        /// signalled (records outlive crashes and reboots).
        var process: String? = nil
    }

    /// A process's boot and start time (`/proc/PID/stat`'s 22nd field), which no later process with the same pid
    /// shares; `nil` when it is gone.
    static func processIdentity(_ pid: Int32) -> String? {
        guard let stat = LocalFiles.read("/proc/\(pid)/stat"),
            let boot = LocalFiles.read("/proc/sys/kernel/random/boot_id")
        else { return nil }
        let text = String(decoding: stat, as: UTF8.self)
        // The command name (field 2) may hold spaces and parentheses: the fields after its last ")" start at 3.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 19 else { return nil }
        return String(decoding: boot.filter { $0 != UInt8(ascii: "\n") }, as: UTF8.self) + "/" + fields[19]
    }

    /// Whether `record`'s process still runs: its identity matches, or (a record from before identities were
    /// kept) its command line is a background server's.
    static func isRunning(_ record: Record) -> Bool {
        if let process = record.process { return processIdentity(record.pid) == process }
        guard let commandLine = LocalFiles.read("/proc/\(record.pid)/cmdline") else { return false }
        return commandLine.split(separator: 0).contains { String(decoding: $0, as: UTF8.self) == childFlag }
    }

    static var directory: String { StatePaths.directory + "/serving" }

    static func save(_ record: Record) {
        var record = record
        if record.process == nil { record.process = processIdentity(record.pid) }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard let data = try? JSONEncoder().encode(record) else { return }
        let path = directory + "/\(record.pid).json"
        try? data.write(to: URL(fileURLWithPath: path + ".tmp"))
        rename(path + ".tmp", path)
    }

    static func remove(pid: Int32) {
        unlink(directory + "/\(pid).json")
    }

    /// The background servers still running (records of ended processes are removed on the way).
    static func records(forDevice deviceID: String? = nil) -> [Record] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".json") }.compactMap { name in
            guard let data = FileManager.default.contents(atPath: directory + "/" + name),
                let record = try? JSONDecoder().decode(Record.self, from: data)
            else { return nil }
            guard isRunning(record) else {
                remove(pid: record.pid)
                return nil
            }
            return deviceID == nil || record.deviceID == deviceID ? record : nil
        }
    }

    /// Ends the background servers of a device (`cast stop`); returns how many.
    @discardableResult
    static func stopAll(forDevice deviceID: String) -> Int {
        let running = records(forDevice: deviceID)
        for record in running {
            kill(record.pid, SIGTERM)
            remove(pid: record.pid)
        }
        return running.count
    }

    /// Waits until `server` has answered nothing for ``idleLimit``: a timer that re-arms at each request.
    static func untilIdle(_ server: MediaServer) async {
        while !Task.isCancelled {
            let idle = server.timeSinceLastRequest
            if idle >= idleLimit { return }
            try? await Task.sleep(for: idleLimit - idle)
        }
    }
}
