import ArgumentParser
import CastControllers
import CastDiscovery
import CastMedia
import CastSession
import CastTransport

/// `cast play URL…`: start (or join) a session and load media; several URLs make a queue.
struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Cast one URL, or several as a queue.",
        discussion: """
            Without --detach the mini controller shows until playback ends: q leaves the session running \
            (so does Ctrl-C), s stops casting.

            Example: cast play https://example.com/a.mp4 --title "Big Buck Bunny" --subtitles https://example.com/a.vtt
            """
    )

    enum StreamType: String, ExpressibleByArgument, CaseIterable { case buffered, live }
    enum Repeat: String, ExpressibleByArgument, CaseIterable { case off, all, single, shuffle }

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Media URLs.") var urls: [String]
    @Option(help: "Title (first item).") var title: String?
    @Option(help: "Subtitle (first item).") var subtitle: String?
    @Option(help: "Artwork URL.") var image: String?
    @Option(help: "MIME type (guessed from the URL otherwise).") var contentType: String?
    @Option(help: "buffered or live.") var streamType: StreamType = .buffered
    @Option(help: "Start position in seconds.") var start: Double?
    @Option(help: "Playback rate (0.5…2).") var rate: Double?
    @Option(help: "A WebVTT subtitle track URL.") var subtitles: String?
    @Option(help: "Subtitle language.") var subtitlesLang = "en-US"
    @Flag(help: "Add to the running queue instead of replacing it.") var queue = false
    @Option(help: "Repeat mode: off, all, single, shuffle.") var `repeat`: Repeat = .off
    @Option(help: "Receiver app id (default: the Default Media Receiver).") var app: String?
    @Flag(help: "Accept the app's Android TV version (Cast Connect).") var androidTV = false
    @Option(help: "Launch credentials (Cast Connect).") var credentials: String?
    @Option(help: "Type of --credentials: android, ios, web, cloud.") var credentialsType: String?
    @Flag(help: "Return after loading instead of showing the mini controller.") var detach = false

    func validate() throws {
        guard !urls.isEmpty else { throw ValidationError("give at least one URL") }
        if let rate, !(0.5...2).contains(rate) { throw ValidationError("--rate must be within 0.5…2") }
        if credentialsType != nil, credentials == nil {
            throw ValidationError("--credentials-type needs --credentials")
        }
    }

    func run() async throws {
        let runtime = try CLIRuntime(global) { options in
            if let app { options.receiverApplicationID = app }
            options.launchOptions.androidReceiverCompatible = androidTV
            if let credentials {
                options.launchCredentials = CredentialsData(credentials: credentials, credentialsType: credentialsType)
            }
        }
        do {
            try await play(runtime)
        } catch {
            throw runtime.fail(error)
        }
    }

    private func items() -> [QueueItem] {
        urls.enumerated().map { index, url in
            var media = MediaTypes.media(
                for: url,
                contentType: contentType,
                streamType: streamType == .live ? .live : .buffered
            )
            if index == 0 {
                if let title { media.metadata?.title = title }
                media.metadata?.subtitle = subtitle
                if let image { media.metadata?.images = [WebImage(url: image)] }
            }
            if index == 0, let subtitles {
                media.tracks = [.subtitles(id: 1, url: subtitles, language: subtitlesLang)]
            }
            return QueueItem(media: media, activeTrackIDs: index == 0 && subtitles != nil ? [1] : nil)
        }
    }

    private func play(_ runtime: CLIRuntime) async throws {
        let context = runtime.makeContext()
        let items = self.items()
        // A named device wins over the saved session: resume only a session saved for that device.
        let named = runtime.namesDevice ? try await runtime.resolveDevice() : nil
        var session = try? await context.sessionManager.resumeSavedSession(candidates: named.map { [$0] } ?? [])
        if let current = session, !queue, current.application.applicationID != runtime.options.receiverApplicationID {
            await context.sessionManager.endSession(stopCasting: false)
            session = nil
        }
        if session == nil {
            let device: CastDevice
            if let named { device = named } else { device = try await runtime.resolveDevice() }
            if runtime.isTTY, !runtime.global.json,
                let hint = IntroductoryOverlay(stateDirectory: StatePaths.directory).consume(
                    deviceName: device.friendlyName,
                    style: runtime.overlayStyle
                )
            {
                runtime.say(hint)
            }
            session = try await context.sessionManager.startSession(with: device)
        }
        guard let session else { return }
        let client = try runtime.mediaClient(session)
        if queue, client.mediaStatus != nil {
            try await client.queueInsert(items).response()
        } else if items.count == 1 {
            var request = LoadRequestData(media: items[0].media)
            request.currentTime = start
            request.playbackRate = rate
            request.activeTrackIDs = items[0].activeTrackIDs
            request.credentials = credentials
            request.credentialsType = credentialsType
            try await client.load(request).response()
        } else {
            var data = QueueData(items: items, startIndex: 0, repeatMode: repeatMode)
            data.startTime = start
            var request = LoadRequestData(queue: data)
            request.currentTime = start
            request.playbackRate = rate
            try await client.load(request).response()
        }
        if items.count > 1 || self.repeat != .off, !queue {
            _ = try? await client.queueSetRepeatMode(repeatMode).response()
        }
        if detach || runtime.global.json {
            runtime.printStatus(session)
            await context.sessionManager.endSession(stopCasting: false)
            return
        }
        let outcome = await PlayerController(session: session, style: runtime.style, interactive: runtime.isTTY).run(
            layout: .mini
        )
        await context.sessionManager.endSession(stopCasting: outcome == .stopped)
    }

    private var repeatMode: RepeatMode {
        switch self.repeat {
        case .off: return .off
        case .all: return .all
        case .single: return .single
        case .shuffle: return .allAndShuffle
        }
    }
}

/// Content types from file extensions, and display names from URLs.
enum MediaTypes {
    /// Media for a bare URL: the given or guessed content type, generic metadata titled with the file name.
    static func media(
        for url: String,
        contentType: String? = nil,
        streamType: MediaInformation.StreamType = .buffered
    ) -> MediaInformation {
        var media = MediaInformation(contentID: url, contentType: contentType ?? guess(url), streamType: streamType)
        media.metadata = .generic(title: name(of: url))
        return media
    }

    static func guess(_ url: String) -> String {
        let path = url.split(separator: "?").first.map(String.init) ?? url
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch ext {
        case "m3u8": return "application/x-mpegURL"
        case "mpd": return "application/dash+xml"
        case "mp3": return "audio/mpeg"
        case "m4a", "aac": return "audio/mp4"
        case "flac": return "audio/flac"
        case "ogg", "oga": return "audio/ogg"
        case "wav": return "audio/wav"
        case "webm": return "video/webm"
        case "mkv": return "video/x-matroska"
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        case "gif": return "image/gif"
        default: return "video/mp4"
        }
    }

    static func name(of url: String) -> String {
        let path = url.split(separator: "?").first.map(String.init) ?? url
        return path.split(separator: "/").last.map(String.init) ?? url
    }
}

/// Where the CLI keeps state (`$XDG_STATE_HOME/cast`).
enum StatePaths {
    static var directory: String {
        if let state = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), !state.isEmpty { return state + "/cast" }
        return (getenv("HOME").map { String(cString: $0) } ?? "/tmp") + "/.local/state/cast"
    }
}

#if canImport(Glibc)
import Glibc
#endif
