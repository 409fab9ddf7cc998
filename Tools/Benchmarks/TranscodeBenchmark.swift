import CastMediaServer
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// 6. Local files on demand (needs ffmpeg): what a device waits for before PLAYING — probe, plan, share, then the
///    playlist and first segment over HTTP — for a 2-hour MKV whose AC-3 audio needs transcoding, a remux-only
///    MKV and an MP4 served as is; then seeks to far points of the 2-hour file (a new ffmpeg run each).
func transcodeBenchmark() async throws {
    guard ExternalTool.find("ffmpeg") != nil, ExternalTool.find("ffprobe") != nil else {
        print("transcode: skipped (install ffmpeg)")
        return
    }
    let folder = NSTemporaryDirectory() + "cast-bench-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let ffmpeg = try ExternalTool.require("ffmpeg", for: "the benchmark")
    func make(_ name: String, length: Int, audio: [String], container: [String] = []) async throws -> String {
        let path = folder + "/" + name
        let made = ContinuousClock.now
        _ = try await ffmpeg.output(
            arguments: [
                "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x180:rate=25",
                "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "\(length)",
                "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "50",
            ] + audio + container + [path]
        )
        print(
            "transcode: made \(name) (\(length / 60) min) in \(String(format: "%.0f", seconds(ContinuousClock.now - made))) s"
        )
        return path
    }
    let long = try await make("long.mkv", length: 7200, audio: ["-c:a", "ac3", "-ac", "6"])
    let remux = try await make("remux.mkv", length: 600, audio: ["-c:a", "aac", "-ac", "2"])
    let plain = try await make("plain.mp4", length: 600, audio: ["-c:a", "aac", "-ac", "2"])
    let server = try await MediaServer.start(reaching: "127.0.0.1")
    let device = DeviceMediaSupport.forModel("Chromecast", playsVideo: true)

    func fetch(_ url: String, range: String? = nil) async throws -> Int {
        var request = URLRequest(url: URL(string: url)!)
        if let range { request.setValue(range, forHTTPHeaderField: "Range") }
        let (data, _) = try await URLSession.shared.data(for: request)
        return data.count
    }
    /// Command to "the device has what it needs to start": probe and share, then what a player fetches first.
    func start(_ file: String) async throws -> (PlayableMedia, Double) {
        let started = ContinuousClock.now
        let playable = try await server.sharePlayable(file: file, device: device)
        if playable.transcoder != nil {
            _ = try await fetch(playable.media.url)
            _ = try await fetch(playable.media.url.replacingOccurrences(of: "index.m3u8", with: "segment-00000.ts"))
        } else {
            _ = try await fetch(playable.media.url, range: "bytes=0-1048575")
        }
        return (playable, seconds(ContinuousClock.now - started))
    }
    for (name, file) in [("2-hour MKV, AC-3 5.1 audio", long), ("remux-only MKV", remux), ("MP4 as is", plain)] {
        let (playable, elapsed) = try await start(file)
        print(
            "transcode: \(name): \(playable.plan?.work.rawValue ?? "-") — ready to play in "
                + String(format: "%.0f ms", elapsed * 1000)
        )
        if name.hasPrefix("2-hour") {
            var seeks: [Double] = []
            for segment in [1100, 300, 900, 20, 1190] {
                let started = ContinuousClock.now
                _ = try await fetch(
                    playable.media.url.replacingOccurrences(
                        of: "index.m3u8",
                        with: String(format: "segment-%05d.ts", segment)
                    )
                )
                seeks.append(seconds(ContinuousClock.now - started))
            }
            print(
                "transcode: seeks to 1:50:00, 0:30:00, 1:30:00, 0:02:00, 1:59:00 ready in "
                    + seeks.map { String(format: "%.0f ms", $0 * 1000) }.joined(separator: ", ")
            )
        }
        await server.withdraw(playable.media)
    }
    await server.stop()
}
