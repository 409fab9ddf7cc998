import CastDiscovery
import CastMedia
import CastReceiver
import CastSession
import CastTransport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A temporary directory for session state, unique per test.
func temporaryStateDirectory() -> String {
    var template = Array("/tmp/cast-session-test-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    return String(cString: path!)
}

/// Options for tests: state in a temporary directory, no real waiting between reconnect attempts.
func testOptions(_ configure: (inout CastOptions) -> Void = { _ in }) -> CastOptions {
    var options = CastOptions()
    options.stateDirectory = temporaryStateDirectory()
    options.heartbeat.pingInterval = nil
    options.requestTimeout = .seconds(5)
    configure(&options)
    return options
}

/// Records every backoff wait instead of sleeping.
final class RecordingSleeper: Sendable {
    private let waits = Mutex<[Duration]>([])
    var recorded: [Duration] { waits.withLock { $0 } }
    var sleep: @Sendable (Duration) async throws -> Void {
        { [self] duration in
            self.waits.withLock { $0.append(duration) }
            try Task.checkCancellation()
        }
    }
}

extension EmulatedDevice {
    /// This device as a static CastDevice.
    var castDevice: CastDevice {
        var device = CastDevice.staticDevice(host: host, port: port, name: configuration.friendlyName)
        device.id = configuration.id
        return device
    }
}

/// Waits for the first event matching `predicate`, failing after `seconds` (a deadline, not a sleep).
func next<Element: Sendable>(
    _ stream: AsyncStream<Element>,
    within seconds: Double = 5,
    where predicate: @escaping @Sendable (Element) -> Bool
) async throws -> Element {
    try await withThrowingTaskGroup(of: Element?.self) { group in
        group.addTask {
            for await element in stream where predicate(element) { return element }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let element = first else {
            throw CastSessionError(.timedOut, "no matching event within \(seconds) s")
        }
        return element
    }
}

/// Media served by the tests.
func sampleMedia(title: String = "Big Buck Bunny", duration: Double = 596) -> MediaInformation {
    var media = MediaInformation(contentID: "https://example.com/bbb.mp4", contentType: "video/mp4")
    media.duration = duration
    media.metadata = .movie(title: title, studio: "Blender Foundation", images: [WebImage(url: "https://example.com/bbb.jpg", width: 480, height: 270)])
    return media
}
