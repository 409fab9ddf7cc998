// The CastVideos codelab in a terminal: pick a device, connect, load a video with its metadata, control it and
// see what plays after each command, then leave it playing (or stop it).
//
//     swift run CastVideosTerminal [--host HOST:PORT]
//     > load 1 | pause | play | seek SECONDS | stop | quit
import CastDiscovery
import CastMedia
import CastSession

/// The codelab's catalog (its `f.json`, shortened).
let catalog: [(title: String, studio: String, path: String)] = [
    ("Big Buck Bunny", "Blender Foundation", "BigBuckBunny"),
    ("Elephant Dream", "Blender Foundation", "ElephantsDream"),
    ("For Bigger Blazes", "Google", "ForBiggerBlazes"),
]
let bucket = "https://commondatastorage.googleapis.com/gtv-videos-bucket/CastVideos"

let arguments = CommandLine.arguments
let host = arguments.firstIndex(of: "--host").flatMap { arguments.dropFirst($0 + 1).first }

// The Cast button: find a device and start a session on it (the Default Media Receiver).
let device = try await DiscoveryManager.device(at: host)
let context = CastContext(options: CastOptions())
let session = try await context.sessionManager.startSession(with: device)
guard let player = session.remoteMediaClient else { fatalError("the receiver app plays no media") }
print("Connected to \(device.friendlyName). Videos:")
for (number, video) in catalog.enumerated() { print("  \(number) \(video.title) (\(video.studio))") }

commands: while let line = readLine() {
    let words = line.split(separator: " ").map(String.init)
    switch (words.first, words.dropFirst().first.flatMap(Double.init)) {
    case ("load", let number?) where catalog.indices.contains(Int(exactly: number) ?? -1):
        let video = catalog[Int(number)]
        let metadata = MediaMetadata(
            kind: .movie,
            title: video.title,
            subtitle: video.studio,
            images: [WebImage(url: "\(bucket)/images/480x270/\(video.path).jpg")]
        )
        let media = MediaInformation(
            contentID: "\(bucket)/mp4/\(video.path).mp4",
            contentType: "video/mp4",
            metadata: metadata
        )
        try await player.loadMedia(media).response()
    case ("play", _): try await player.play().response()
    case ("pause", _): try await player.pause().response()
    case ("seek", let seconds?): try await player.seek(.to(seconds)).response()
    case ("stop", _): try await player.stop().response()
    case ("quit", _): break commands
    default: print("load N | play | pause | seek SECONDS | stop | quit")
    }
    // The mini controller: what plays now.
    if let status = player.mediaStatus {
        let title = status.media?.metadata?.title ?? "-"
        print("[\(status.shownPlayerState.rawValue)] \(title) at \(Int(player.approximateStreamPosition)) s")
    }
}
await context.sessionManager.endSession()  // leaves the video playing, as the codelab's Disconnect does
