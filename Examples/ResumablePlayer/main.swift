// A player that survives a restart: it casts a video and reports its progress; run again after it was stopped or
// killed, it resumes the session it left on the device, and the video goes on where it is, instead of starting
// over. The session is saved under the state directory.
//
//     swift run ResumablePlayer [--host HOST:PORT] [--state-directory DIR] [--duration SECONDS]
import CastDiscovery
import CastMedia
import CastSession

let arguments = CommandLine.arguments
func option(_ name: String) -> String? { arguments.firstIndex(of: name).flatMap { arguments.dropFirst($0 + 1).first } }

var options = CastOptions()
options.stateDirectory = option("--state-directory") ?? CastOptions.defaultStateDirectory(for: "resumable-player")
let manager = CastContext(options: options).sessionManager
let device = try await DiscoveryManager.device(at: option("--host"))

let session: CastSession
do {
    session = try await manager.resumeSavedSession(candidates: [device])
    print("Resumed session \(session.sessionID) on \(device.friendlyName)")
} catch let error as CastSessionError where error.code == .sessionNotFound {
    // Nothing saved for this device, or the device no longer runs it: start afresh.
    session = try await manager.startSession(with: device)
    print("Started session \(session.sessionID) on \(device.friendlyName)")
    let media = MediaInformation(
        contentID: "https://commondatastorage.googleapis.com/gtv-videos-bucket/sample/Sintel.mp4",
        contentType: "video/mp4",
        metadata: MediaMetadata(kind: .movie, title: "Sintel"),
        duration: 888
    )
    try await session.remoteMediaClient?.loadMedia(media).response()
}
guard let player = session.remoteMediaClient else { fatalError("the receiver app plays no media") }

let end = option("--duration").flatMap(Double.init).map { ContinuousClock.now + .seconds($0) }
while end.map({ ContinuousClock.now < $0 }) ?? true, player.mediaStatus?.hasEnded != true {
    let position = Int(player.approximateStreamPosition)
    print("\(player.playerState.rawValue) at \(position) s (media session \(player.mediaStatus?.mediaSessionID ?? 0))")
    try await Task.sleep(for: .seconds(1))
}
await manager.endSession()  // leaves the video playing, for the next run to resume
