import ArgumentParser
import CastControllers
import CastMedia
import CastSession
import CastTransport

#if canImport(Glibc)
import Glibc
#endif

/// Runs a media command on the session an earlier `cast` started, then prints the resulting state.
enum MediaControl {
    static func run(
        _ global: GlobalOptions,
        _ action: @escaping @Sendable (CastSession, RemoteMediaClient) async throws -> Void
    ) async throws {
        try await CLIRuntime.withControlledSession(global) { runtime, session in
            let client = try runtime.mediaClient(session)
            try await client.readStatusIfUnknown()
            do {
                try await action(session, client)
            } catch let error as CastMediaError where error.code == .invalidPlayerState {
                // Refused because nothing plays any more (stopped, finished, failed): nothing to control.
                guard let status = client.mediaStatus, status.playerState == .idle else { throw error }
                let why = status.idleReason.map { " (\($0.rawValue.lowercased()))" } ?? ""
                throw CLIError(
                    .nothingToControl,
                    "nothing plays on \(session.device.friendlyName): its media ended\(why); "
                        + "'cast play URL' starts something"
                )
            }
            await runtime.printStatus(session)
        }
    }

    /// Refuses item ids the queue does not have, before anything is sent: a receiver ignores an unknown id
    /// without a word, so the command would seem to have worked.
    /// The status's window of items answers most; a receiver that cannot list its queue is not checked.
    static func requireItems(_ ids: [Int], of client: RemoteMediaClient) async throws {
        let listed = Set(client.mediaStatus?.items?.compactMap(\.itemID) ?? [])
        guard !ids.allSatisfy(listed.contains), let items = try? await client.queue.reload() else { return }
        let missing = ids.filter { !items.contains($0) }
        guard missing.isEmpty else {
            let listed =
                items.isEmpty ? "it is empty" : "its items are " + items.map(String.init).joined(separator: ", ")
            throw CLIError(
                .failed,
                "the queue has no item \(missing.map(String.init).joined(separator: ", ")) ("
                    + listed + "; 'cast queue list' shows them)"
            )
        }
    }
}

struct PauseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause playback.",
        discussion: "Example: cast pause"
    )
    @OptionGroup var global: GlobalOptions
    func run() async throws {
        if try await ViaService.handle(global, .media("pause")) { return }
        try await MediaControl.run(global) { _, client in try await client.pause().response() }
    }
}

struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Resume playback.",
        discussion: "Example: cast resume"
    )
    @OptionGroup var global: GlobalOptions
    func run() async throws {
        if try await ViaService.handle(global, .media("play")) { return }
        try await MediaControl.run(global) { _, client in try await client.play().response() }
    }
}

struct ToggleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "toggle",
        abstract:
            "Pause when playing, play otherwise (a live stream that cannot pause stops, and the next toggle plays it again).",
        discussion: "Example: cast toggle"
    )
    @OptionGroup var global: GlobalOptions
    func run() async throws {
        if try await ViaService.handle(global, .toggle) { return }
        try await MediaControl.run(global) { session, client in
            // A live stream stopped by an earlier toggle, which is another process: kept in the state directory
            // while the app that played it runs.
            let stash = StoppedLiveMedia(deviceID: session.device.id)
            if client.mediaStatus.map({ $0.playerState == .idle }) ?? true {
                client.stoppedLiveMedia = stash.media(forSession: session.sessionID)
            }
            try await client.togglePlayback().response()
            stash.save(client.stoppedLiveMedia, session: session.sessionID)
        }
    }
}

/// The live media `cast toggle` stopped on a device, for the next `cast toggle` to load again
/// (`$XDG_STATE_HOME/cast/stopped-live/DEVICE.json`): it holds the app's session id, and counts only while that
/// session runs.
struct StoppedLiveMedia {
    let path: String

    init(deviceID: String, directory: String = StatePaths.directory) {
        path = directory + "/stopped-live/" + LocalFiles.fileName(for: deviceID) + ".json"
    }

    func media(forSession sessionID: String) -> MediaInformation? {
        guard let bytes = LocalFiles.read(path, limit: 1 << 20),
            let json = try? JSONValue(parsing: String(decoding: bytes, as: UTF8.self)),
            json["sessionId"]?.stringValue == sessionID
        else { return nil }
        return json["media"].flatMap { try? MediaInformation(json: $0) }
    }

    func save(_ media: MediaInformation?, session sessionID: String) {
        guard let media else {
            unlink(path)
            return
        }
        guard LocalFiles.makeDirectories(LocalFiles.directory(of: path)) else { return }
        let json: JSONValue = ["sessionId": .string(sessionID), "media": media.json]
        _ = LocalFiles.writeAtomically(Array((json.jsonString + "\n").utf8), to: path, mode: 0o600)
    }
}

struct StopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop playback (the app keeps running; 'cast app stop' ends it).",
        discussion: "Example: cast stop"
    )
    @OptionGroup var global: GlobalOptions
    func run() async throws {
        if try await ViaService.handle(global, .media("stop")) { return }
        try await CLIRuntime.withControlledSession(global) { runtime, session in
            let client = try runtime.mediaClient(session)
            try await client.readStatusIfUnknown()
            try await client.stop().response()
            // Nothing is left to serve: end the background `play --detach` servers of this device.
            BackgroundServing.stopAll(forDevice: session.device.id)
            if !runtime.global.json {
                let app = session.application.displayName
                runtime.say(
                    "stopped playback on \(session.device.friendlyName); \(app) keeps running ('cast app stop' ends it)"
                )
            }
            await runtime.printStatus(session)
        }
    }
}

struct SeekCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seek",
        abstract: "Seek to a position or by an offset.",
        discussion: "Examples: cast seek 90, cast seek 1:30:00, cast seek +30, cast seek -10"
    )
    @OptionGroup var global: GlobalOptions
    // Captured as "all unrecognized" so that `-10` is a position, not an option.
    @Argument(parsing: .allUnrecognized, help: "SECONDS, HH:MM:SS, or +/-SECONDS relative to now.")
    var positions: [String] = []

    var position: String { positions.first ?? "" }

    func validate() throws {
        guard positions.count == 1 else { throw ValidationError("give exactly one position") }
        guard TimeFormatting.parseSeek(position) != nil else {
            throw ValidationError("'\(position)' is not a position: use SECONDS, MM:SS, HH:MM:SS or +/-SECONDS")
        }
    }

    func run() async throws {
        let (seconds, relative) = TimeFormatting.parseSeek(position)!
        if try await ViaService.handle(global, .seek(seconds, relative: relative)) { return }
        try await MediaControl.run(global) { _, client in
            // Judged by the status before the seek: one after a seek to the end may have no media left.
            let target = relative ? client.approximateStreamPosition + seconds : seconds
            let note = Self.note(seekingTo: target, in: client.mediaStatus)
            try await client.seek(relative ? .by(seconds) : .to(seconds)).response()
            if let note { FileHandleOutput.standardError("cast: " + note) }
        }
    }

    /// What to say of a position outside the media, which a receiver clamps to its start or end without a word.
    static func note(seekingTo target: Double, in status: MediaStatus?) -> String? {
        guard let media = status?.media, media.streamType != .live, status?.liveSeekableRange == nil else { return nil }
        // Half a second of slack: a relative seek's start is the position extrapolated from the last status.
        if target < -0.5 {
            return "the position is before the start of the media: the receiver went to the start"
        }
        guard let duration = media.duration, duration > 0, target > duration + 0.5 else { return nil }
        return "\(TimeFormatting.clock(target)) is past the end of the media (\(TimeFormatting.clock(duration)) "
            + "long): the receiver went to its end"
    }
}

struct RateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rate",
        abstract: "Set the playback rate (0.5…2).",
        discussion: "Example: cast rate 1.5"
    )
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The rate.") var rate: Double
    func validate() throws {
        guard (0.5...2).contains(rate) else { throw ValidationError("the rate must be within 0.5…2") }
    }
    func run() async throws {
        if try await ViaService.handle(global, .rate(rate)) { return }
        let rate = self.rate
        try await MediaControl.run(global) { _, client in try await client.setPlaybackRate(rate).response() }
    }
}

struct VolumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "volume",
        abstract: "Set the device volume: a level (0.35 or 35%), or +N/-N volume steps.",
        discussion: "Examples: cast volume 0.4, cast volume 40%, cast volume +2"
    )
    @OptionGroup var global: GlobalOptions
    // Captured as "all unrecognized" so that `-2` is a step count, not an option.
    @Argument(parsing: .allUnrecognized, help: "LEVEL, PERCENT% or +STEPS/-STEPS.") var values: [String] = []

    var value: String { values.first ?? "" }

    enum Change { case level(Double), steps(Int) }

    static func parse(_ value: String) -> Change? {
        if value.hasPrefix("+") || value.hasPrefix("-"), let steps = Int(value) { return .steps(steps) }
        if value.hasSuffix("%"), let percent = Double(value.dropLast()), (0...100).contains(percent) {
            return .level(percent / 100)
        }
        if let level = Double(value), (0...1).contains(level) { return .level(level) }
        return nil
    }

    func validate() throws {
        guard values.count == 1 else { throw ValidationError("give exactly one volume") }
        guard Self.parse(value) != nil else {
            throw ValidationError("'\(value)' is not a volume: use 0…1, 0%…100% or +N/-N steps")
        }
    }

    func run() async throws {
        let change = Self.parse(value)!
        if try await ViaService.handle(global, .volume(change)) { return }
        try await DeviceControl.run(global) { target in
            switch change {
            case .level(let level): try await target.setVolume(level)
            case .steps(let steps): try await target.adjustVolume(bySteps: steps)
            }
        }
    }
}

/// Runs a device-volume command (volume, mute, unmute — they act on the device, like the volume keys) on the
/// session to control, or straight on an idle device (volume needs no app), then prints the resulting state.
enum DeviceControl {
    static func run(
        _ global: GlobalOptions,
        _ action: @escaping @Sendable (VolumeTarget) async throws -> Void
    ) async throws {
        let runtime = try CLIRuntime(global)
        do {
            let deadline = runtime.exitAtTimeout()
            defer { deadline?.cancel() }
            let context = runtime.makeContext()
            switch try await runtime.target(context) {
            case .session(let session):
                try await control(session, context, runtime, action)
            case .device(let device):
                let observer = DeviceObserver(device: device, options: runtime.options, logger: runtime.logger)
                let activity = try await observer.start()
                if activity.isIdle {
                    do {
                        try await action(.device(observer))
                    } catch {
                        await observer.stop()
                        throw error
                    }
                    runtime.printStatus(observer.activity ?? activity)
                    await observer.stop()
                } else {
                    await observer.stop()
                    let session = try await context.sessionManager.joinSession(on: device)
                    try await control(session, context, runtime, action)
                }
            }
        } catch {
            throw runtime.fail(error)
        }
    }

    private static func control(
        _ session: CastSession,
        _ context: CastContext,
        _ runtime: CLIRuntime,
        _ action: @Sendable (VolumeTarget) async throws -> Void
    ) async throws {
        do {
            try await action(.session(session))
            if let client = session.remoteMediaClient { _ = try? await client.requestStatus().response() }
            await runtime.printStatus(session)
        } catch {
            await context.sessionManager.endSession(stopCasting: false)
            throw error
        }
        await context.sessionManager.endSession(stopCasting: false)
    }
}

/// Where a volume command goes: a session's device, or an idle device observed directly.
enum VolumeTarget: Sendable {
    case session(CastSession)
    case device(DeviceObserver)

    func setVolume(_ level: Double) async throws {
        switch self {
        case .session(let session): try await session.setDeviceVolume(level)
        case .device(let observer): try await observer.setVolume(level)
        }
    }

    func adjustVolume(bySteps steps: Int) async throws {
        switch self {
        case .session(let session): try await session.adjustDeviceVolume(bySteps: steps)
        case .device(let observer): try await observer.adjustVolume(bySteps: steps)
        }
    }

    func setMuted(_ muted: Bool) async throws {
        switch self {
        case .session(let session): try await session.setDeviceMuted(muted)
        case .device(let observer): try await observer.setMuted(muted)
        }
    }
}

struct MuteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mute",
        abstract: "Mute the device.",
        discussion: "Example: cast mute"
    )
    @OptionGroup var global: GlobalOptions
    func run() async throws {
        if try await ViaService.handle(global, .muted(true)) { return }
        try await DeviceControl.run(global) { try await $0.setMuted(true) }
    }
}

struct UnmuteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmute",
        abstract: "Unmute the device.",
        discussion: "Example: cast unmute"
    )
    @OptionGroup var global: GlobalOptions
    func run() async throws {
        if try await ViaService.handle(global, .muted(false)) { return }
        try await DeviceControl.run(global) { try await $0.setMuted(false) }
    }
}

struct NextCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "next",
        abstract: "Play the next queue item.",
        discussion: "Example: cast next"
    )
    @OptionGroup var global: GlobalOptions
    func run() async throws {
        if try await ViaService.handle(global, .media("next")) { return }
        try await MediaControl.run(global) { _, client in try await client.queueNext().response() }
    }
}

struct PrevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prev",
        abstract: "Play the previous queue item.",
        discussion: "Example: cast prev"
    )
    @OptionGroup var global: GlobalOptions
    func run() async throws {
        if try await ViaService.handle(global, .media("previous")) { return }
        try await MediaControl.run(global) { _, client in try await client.queuePrevious().response() }
    }
}

struct SkipAdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "skip-ad",
        abstract: "Skip the playing ad once it is skippable.",
        discussion: "Example: cast skip-ad"
    )
    @OptionGroup var global: GlobalOptions
    func run() async throws {
        if try await ViaService.handle(global, .media("skipAd")) { return }
        try await MediaControl.run(global) { _, client in try await client.skipAd().response() }
    }
}
