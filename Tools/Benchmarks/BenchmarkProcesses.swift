import CastTransport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// The other processes of the castd benchmark: the emulated devices run in their own process so that their memory
// and CPU are not counted as castd's, and the `cast` CLI is timed as a user runs it, a whole process per command.

/// A problem that stops the castd benchmark, said plainly.
struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The executable `name` of the same build configuration as this benchmark: next to this executable, else under
/// `.build/release` or `.build/debug` of the current directory.
func siblingExecutable(_ name: String) throws -> String {
    let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    let candidates = [
        URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent(name).path,
        ".build/release/\(name)", ".build/debug/\(name)",
    ]
    guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        throw BenchmarkFailure(
            "\(name) not found next to the benchmark; build it: swift build -c release --product \(name)"
        )
    }
    return found
}

/// A temporary directory, removed by the caller.
func temporaryDirectory(_ prefix: String) -> String {
    var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    return String(cString: path!)
}

/// `cast-receiver --devices N` in its own process, with the port of each device. Its output goes to a file read
/// by polling, so a chatty emulator can never block on a full pipe nobody reads.
final class ReceiverProcess {
    let ports: [Int]
    private let process: Process
    private let folder: String

    private init(ports: [Int], process: Process, folder: String) {
        self.ports = ports
        self.process = process
        self.folder = folder
    }

    /// The emulator's process id, for its CPU time.
    var processID: Int32 { process.processIdentifier }

    /// Starts the emulator and waits for its `ready` line (at most two minutes).
    static func start(devices: Int) async throws -> ReceiverProcess {
        let folder = temporaryDirectory("cast-bench-receiver")
        let logPath = folder + "/output.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try siblingExecutable("cast-receiver"))
        process.arguments = ["--no-mdns", "--port", "0", "--devices", "\(devices)", "--log-level", "warning"]
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if text.contains("cast-receiver: ready") {
                let ports = text.split(separator: "\n").compactMap { line -> Int? in
                    guard line.contains("\" id="), let colon = line.lastIndex(of: ":") else { return nil }
                    return Int(line[line.index(after: colon)...])
                }
                return ReceiverProcess(ports: ports, process: process, folder: folder)
            }
            guard process.isRunning else { throw BenchmarkFailure("cast-receiver exited: \(text)") }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        throw BenchmarkFailure("cast-receiver was not ready within two minutes")
    }

    /// Stops the emulator (SIGTERM) and removes its folder.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// User plus system CPU seconds of this process.
func ownCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Context switches of this process so far (voluntary plus involuntary, all threads): each one is a thread that
/// slept and was woken, the main cost of a hop between threads on a loopback round trip.
func ownContextSwitches() -> Int {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_nvcsw + usage.ru_nivcsw
}

/// User plus system CPU seconds of another process of ours, from /proc/PID/stat (fields 14 and 15, in ticks).
func cpuSeconds(ofProcess id: Int32) -> Double {
    guard let stat = procFile("/proc/\(id)/stat"),
        let close = stat.lastIndex(of: ")")
    else { return .nan }
    // After the command name in parentheses: state is field 3, so utime (14) and stime (15) are at 11 and 12.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return .nan }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Runs `executable arguments` to its end with `environment` added, output discarded, and answers its wall time
/// in seconds and exit status. Waits without blocking a thread of the cooperative pool, which castd needs.
func timedRun(_ executable: String, _ arguments: [String], environment: [String: String]) async throws
    -> (seconds: Double, status: Int32)
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    let start = ContinuousClock.now
    let status = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do { try process.run() } catch { continuation.resume(throwing: error) }
    }
    return (seconds(ContinuousClock.now - start), status)
}

/// The bytes queued in the kernel for one loopback TCP connection, seen from its end at `localPort`: written but not
/// yet acknowledged (Send-Q) and received but not yet read (Recv-Q), from /proc/net/tcp.
func socketQueues(localPort: Int, remotePort: Int) -> (send: Int, receive: Int)? {
    guard let table = procFile("/proc/net/tcp") else { return nil }
    func port(_ address: Substring) -> Int? { address.split(separator: ":").last.flatMap { Int($0, radix: 16) } }
    for line in table.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ")
        guard fields.count > 4, port(fields[1]) == localPort, port(fields[2]) == remotePort else { continue }
        let queues = fields[4].split(separator: ":").compactMap { Int($0, radix: 16) }
        guard queues.count == 2 else { return nil }
        return (queues[0], queues[1])
    }
    return nil
}

/// A file of /proc as text, read to its end (they report a size of 0, so readers that trust the size read
/// nothing; LocalFiles.read does not).
func procFile(_ path: String) -> String? {
    LocalFiles.read(path).map { String(decoding: $0, as: UTF8.self) }
}
