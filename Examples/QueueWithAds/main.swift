// A queue of three videos, each after an ad (a pre-roll break of one clip): loads the queue, reports each ad and
// item as it starts, skips every ad as soon as it may with `--skip-ads`, and exits when the queue has finished.
//
//     swift run QueueWithAds [--host HOST:PORT] [--skip-ads] [--seconds-per-item N]
import CastDiscovery
import CastMedia
import CastSession

let arguments = CommandLine.arguments
let host = arguments.firstIndex(of: "--host").flatMap { arguments.dropFirst($0 + 1).first }
let secondsPerItem = arguments.firstIndex(of: "--seconds-per-item").flatMap { arguments.dropFirst($0 + 1).first }
let skipsAds = arguments.contains("--skip-ads")
let bucket = "https://commondatastorage.googleapis.com/gtv-videos-bucket/sample"

/// A video (15 s) after a 10-second ad that may be skipped after 2 seconds.
func item(_ title: String) -> QueueItem {
    let file = title.filter { $0 != " " }
    var media = MediaInformation(
        contentID: "\(bucket)/\(file).mp4",
        contentType: "video/mp4",
        metadata: MediaMetadata(kind: .movie, title: title),
        duration: 15
    )
    media.adBreakClips = [
        AdBreakClipInfo(
            id: "ad-\(file)",
            contentID: "\(bucket)/ad-\(file).mp4",
            contentType: "video/mp4",
            duration: 10,
            title: "An ad before \(title)",
            whenSkippable: 2
        )
    ]
    media.adBreaks = [AdBreakInfo(id: "preroll-\(file)", breakClipIDs: ["ad-\(file)"], position: 0)]
    var item = QueueItem(media: media)
    item.playbackDuration = secondsPerItem.flatMap(Double.init)  // play only the start of each video
    return item
}

let device = try await DiscoveryManager.device(at: host)
let context = CastContext(options: CastOptions())
let session = try await context.sessionManager.startSession(with: device)
guard let player = session.remoteMediaClient else { fatalError("the receiver app plays no media") }
let updates = player.statusUpdates()
try await player.queueLoad(["For Bigger Blazes", "For Bigger Escapes", "For Bigger Fun"].map(item)).response()

var shown = ""
for await status in updates {
    guard let status else { continue }
    if status.hasEnded { break }
    let clipID = status.adBreakStatus?.breakClipID
    let now =
        clipID.map { id in "ad: " + (status.media?.adBreakClips?.first { $0.id == id }?.title ?? id) }
        ?? "item \(status.currentItemID ?? 0): \(status.media?.metadata?.title ?? "?")"
    guard now != shown else { continue }
    shown = now
    print(now)
    if skipsAds, let wait = status.adBreakStatus?.secondsUntilSkippable {
        try await Task.sleep(for: .seconds(wait))
        try await player.requestStatus().response()  // SKIP_AD is offered in the status once the clip is skippable
        _ = try? await player.skipAd().response()  // fails only when the ad ended meanwhile
    }
}
print("The queue has finished.")
await context.sessionManager.endSession(stopCasting: true)
