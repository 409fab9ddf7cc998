import ArgumentParser
import CastControllers
import CastDiscovery
import CastMedia
import CastReceiver
import CastSession
import CastTransport

/// `cast demo`: the whole feature tour against an in-process emulated device, no hardware needed.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "A scripted tour against a built-in emulated Cast device (no hardware needed).",
        discussion:
            "Starts an emulated device on 127.0.0.1, casts a two-item queue with subtitles and a skippable ad, then pauses, seeks, skips the ad, changes rate and volume, and goes to the next item."
    )
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let runtime = try CLIRuntime(global) { options in
            options.resumesSavedSessions = false  // never touch the user's saved session
        }
        do {
            try await tour(runtime)
        } catch {
            throw runtime.fail(error)
        }
    }

    private func tour(_ runtime: CLIRuntime) async throws {
        // Emulated time: the tour moves the clock instead of waiting, so it is quick and always the same.
        let clock = ManualCastClock()
        try await withCastReceiverEmulator(
            devices: [DeviceConfiguration(friendlyName: "Demo Living Room TV", port: 0)],
            clock: clock,
            logger: runtime.logger
        ) { emulator in
            let emulated = emulator.devices[0]
            var device = CastDevice.staticDevice(
                host: emulated.host,
                port: emulated.port,
                name: emulated.configuration.friendlyName
            )
            device.modelName = emulated.configuration.model
            let steps = DemoSteps(runtime: runtime)
            steps.say(
                "Emulated device \"\(device.friendlyName)\" is listening on \(device.host):\(device.port) (TLS, Cast v2)."
            )

            let context = runtime.makeContext()
            let session = try await context.sessionManager.startSession(with: device)
            steps.say(
                "Started a session: launched \(session.application.displayName) (session \(session.sessionID))."
            )
            guard let client = session.remoteMediaClient else {
                throw CLIError(.failed, "the app has no media channel")
            }
            let controller = PlayerController(session: session, style: runtime.style, interactive: false)

            var first = MediaInformation(
                contentID: "https://media.example.com/big-buck-bunny.mp4",
                contentType: "video/mp4"
            )
            first.duration = 596
            first.metadata = .movie(
                title: "Big Buck Bunny",
                subtitle: "A giant rabbit's revenge",
                studio: "Blender Foundation",
                images: [WebImage(url: "https://media.example.com/bbb-poster.jpg", width: 480, height: 720)]
            )
            first.tracks = [
                .subtitles(id: 1, url: "https://media.example.com/bbb.en.vtt", language: "en-US", name: "English")
            ]
            first.adBreakClips = [
                AdBreakClipInfo(
                    id: "clip-1",
                    contentID: "https://ads.example.com/ad.mp4",
                    contentType: "video/mp4",
                    duration: 15,
                    title: "An ad",
                    whenSkippable: 5
                )
            ]
            first.adBreaks = [AdBreakInfo(id: "preroll", breakClipIDs: ["clip-1"], position: 0)]
            var second = MediaInformation(contentID: "https://media.example.com/sintel.mp4", contentType: "video/mp4")
            second.duration = 888
            second.metadata = .movie(title: "Sintel", subtitle: "A girl and her dragon", studio: "Blender Foundation")

            var load = LoadRequestData(
                queue: QueueData(
                    items: [QueueItem(media: first, activeTrackIDs: [1]), QueueItem(media: second)],
                    startIndex: 0
                )
            )
            load.activeTrackIDs = [1]
            try await client.load(load).response()
            steps.show("Loaded a two-item queue; the first item has English subtitles and a pre-roll ad.", controller)

            clock.advance(by: .seconds(6))
            try await client.requestStatus().response()
            steps.show("6 seconds into the ad it becomes skippable (the mini controller shows it).", controller)
            try await client.skipAd().response()
            steps.show("Skipped the ad: the movie starts.", controller)

            clock.advance(by: .seconds(30))
            try await client.requestStatus().response()
            steps.show("30 seconds later the position has moved on.", controller)
            try await client.pause().response()
            steps.show("Paused.", controller)
            try await client.seek(.to(120, resumeState: .play)).response()
            steps.show("Sought to 2:00 and resumed playing.", controller)
            try await client.setPlaybackRate(1.5).response()
            clock.advance(by: .seconds(10))
            try await client.requestStatus().response()
            steps.show("Playback rate 1.5×: 10 seconds of wall time moved the position 15 seconds.", controller)
            try await session.setDeviceVolume(0.4)
            steps.show("Device volume set to 40%.", controller)
            try await client.setActiveTrackIDs([]).response()
            steps.show("Subtitles turned off.", controller)
            try await client.queueNext().response()
            steps.show("Next item in the queue.", controller)

            await context.sessionManager.endSession(stopCasting: true)
            steps.say(
                "Stopped casting; the receiver is back on its idle screen (\(emulated.runningApp.appID == EmulatedApp.backdrop.id ? "Backdrop" : emulated.runningApp.appID))."
            )
            steps.say("Demo complete. Try it on a real device: cast devices, then cast play URL.")
        }
    }
}

/// Prints numbered tour steps.
final class DemoSteps: Sendable {
    let runtime: CLIRuntime
    init(runtime: CLIRuntime) { self.runtime = runtime }

    func say(_ text: String) {
        if !runtime.global.json { runtime.say(runtime.style.paint("• ", runtime.style.button) + text) }
    }

    func show(_ text: String, _ controller: PlayerController) {
        if runtime.global.json {
            runtime.say(JSONValue.object(["step": .string(text)]).jsonString)
            return
        }
        say(text)
        for line in controller.currentLines(layout: .mini).prefix(2) { runtime.say("    " + line) }
    }
}
