// Watches every device: lists them as discovery finds them and prints a line whenever what one of them does
// changes (app, media, volume), without starting or joining a session.
//
//     swift run DeviceWatcher [--host HOST:PORT]… [--duration SECONDS]
import CastDiscovery
import CastSession

let arguments = CommandLine.arguments
let hosts = arguments.indices.filter { arguments[$0] == "--host" }.compactMap { arguments.dropFirst($0 + 1).first }
let duration = arguments.firstIndex(of: "--duration").flatMap { arguments.dropFirst($0 + 1).first }.flatMap(Double.init)

/// One line about what a device does.
func describe(_ activity: DeviceActivity) -> String {
    let volume =
        "volume \(activity.deviceStatus.volumeLevel.map { "\(Int($0 * 100))%" } ?? "unknown")\(activity.deviceStatus.isMuted ? " muted" : "")"
    guard let app = activity.application else { return "\(activity.device.friendlyName): idle, \(volume)" }
    let media = activity.mediaStatus.map { " \($0.shownPlayerState.rawValue) \($0.media?.metadata?.title ?? "")" }
    return "\(activity.device.friendlyName): \(app.displayName)\(media ?? ""), \(volume)"
}

/// Follows one device until cancelled (reconnecting when it goes away for a while), a line per change.
func follow(_ device: CastDevice) async {
    let observer = DeviceObserver(device: device)
    let updates = observer.updates()
    do {
        try await observer.start()
        for await activity in updates { print(describe(activity)) }
    } catch {
        print("\(device.friendlyName): \(error)")
    }
    await observer.stop()
}

// Static devices when given (no mDNS then), else whatever mDNS finds.
var configuration = DiscoveryManager.Configuration()
configuration.staticDevices = hosts.map { CastDevice.staticDevice(address: $0) }
configuration.browsesMulticastDNS = hosts.isEmpty
let discovery = DiscoveryManager(configuration: configuration)
let events = discovery.events()
try discovery.start()

let watching = Task {
    var observers: [CastDevice.ID: Task<Void, Never>] = [:]
    for await event in events {
        switch event {
        case .added(let device): observers[device.id] = Task { await follow(device) }
        case .removed(let device):
            observers.removeValue(forKey: device.id)?.cancel()
            print("\(device.friendlyName): gone")
        case .failed(let error): print("discovery: \(error)")
        case .updated: break
        }
    }
    for observer in observers.values { observer.cancel() }
}
if let duration {
    try await Task.sleep(for: .seconds(duration))
    watching.cancel()
}
await watching.value
await discovery.stop()
