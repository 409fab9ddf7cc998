import ArgumentParser
import CastControllers
import CastDiscovery
import CastMedia
import CastMediaServer
import CastReceiver
import CastSession
import CastTransport

/// `cast play URL|FILE|FOLDER|PLAYLIST|-…`: start (or join) a session and load media; several make a queue.
/// Anything local is served to the device from this computer for as long as it plays.
struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Cast URLs, files, folders or playlists (several make a queue); - reads standard input.",
        discussion: """
            Without --detach the mini controller shows until playback ends: q leaves the session running \
            (so does Ctrl-C), s stops casting. Local files are served from this computer on the address that \
            routes to the device (--serve-address and --serve-port change it) until playback ends; subtitles \
            next to a file (movie.srt, movie.en.srt, movie.fr.vtt) become tracks, and .srt/.ass are converted \
            to WebVTT.

            A file the device cannot play (say, an MKV with AC-3 sound) is probed with ffprobe and served as HLS \
            made by ffmpeg as it plays: remuxed, or only the audio or video re-encoded, seekable anywhere \
            (--transcode). Text subtitles inside the file become tracks.

            Examples:
              cast play https://example.com/a.mp4 --title "Big Buck Bunny" --subtitles https://example.com/a.vtt
              cast play ./movie.mp4 --subtitles ./movie.srt
              yt-dlp -o - URL | cast play -
            """
    )

    enum StreamType: String, ExpressibleByArgument, CaseIterable { case buffered, live }
    enum Repeat: String, ExpressibleByArgument, CaseIterable { case off, all, single, shuffle }
    enum Resolve: String, ExpressibleByArgument, CaseIterable { case auto, ytdl, never }

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Media URLs, files, folders, .m3u/.pls playlists, or - for standard input.") var urls: [String]
    @Option(help: "Title (first item).") var title: String?
    @Option(help: "Subtitle (first item).") var subtitle: String?
    @Option(help: "Artwork URL.") var image: String?
    @Option(help: "MIME type (guessed from the URL otherwise).") var contentType: String?
    @Option(help: "buffered or live.") var streamType: StreamType = .buffered
    @Option(help: "Start position in seconds.") var start: Double?
    @Option(help: "Playback rate (0.5…2).") var rate: Double?
    @Option(help: "Subtitles for the first item: a URL (WebVTT), or a .vtt, .srt, .ass or .ssa file.") var subtitles:
        String?
    @Option(help: "Subtitle language.") var subtitlesLang = "en-US"
    @Option(help: "Serve local files on this address (default: the one that routes to the device).")
    var serveAddress: String?
    @Option(help: "Serve local files on this port, or the first free one of a range A-B (default: any free port).")
    var servePort: String?
    @Option(
        help: """
            auto: serve what the device plays as is, remux or transcode (ffmpeg) only what it does not; \
            always: re-encode everything; never: serve files as they are.
            """
    )
    var transcode: TranscodeMode = .auto
    @Option(
        help: """
            Page URLs: auto turns a URL that names no media type into its stream with yt-dlp when installed; \
            ytdl always asks yt-dlp; never sends URLs as given.
            """
    )
    var resolve: Resolve = .auto
    @Flag(help: "Add to the running queue instead of replacing it.") var queue = false
    @Option(help: "Repeat mode: off, all, single, shuffle.") var `repeat`: Repeat = .off
    @Option(help: "Receiver app id (default: the Default Media Receiver).") var app: String?
    @Flag(help: "Accept the app's Android TV version (Cast Connect).") var androidTV = false
    @Option(help: "Launch credentials (Cast Connect).") var credentials: String?
    @Option(help: "Type of --credentials: android, ios, web, cloud.") var credentialsType: String?
    @Flag(
        help:
            "Return after loading instead of showing the mini controller (local files: a background process serves them)."
    )
    var detach = false
    @Flag(name: .customLong("serving-in-background"), help: .hidden) var servingInBackground = false

    func validate() throws {
        guard !urls.isEmpty else { throw ValidationError("give at least one URL or file") }
        if let servePort, Self.ports(servePort) == nil {
            throw ValidationError("--serve-port takes a port (8000) or a range (8000-8010) within 1…65535")
        }
        if urls.filter({ $0 == "-" }).count > 1 { throw ValidationError("standard input (-) can be given once") }
        if let rate, !(0.5...2).contains(rate) { throw ValidationError("--rate must be within 0.5…2") }
        if credentialsType != nil, credentials == nil {
            throw ValidationError("--credentials-type needs --credentials")
        }
    }

    func run() async throws {
        if castdCanPlay, try await ViaService.handle(global, viaRequest) { return }
        let runtime = try CLIRuntime(global) { options in
            if let app { options.receiverApplicationID = app }
            options.launchOptions.androidReceiverCompatible = androidTV
            if let credentials {
                options.launchCredentials = CredentialsData(credentials: credentials, credentialsType: credentialsType)
            }
        }
        if detach, !servingInBackground, (try? PlaySource.expand(urls))?.contains(where: \.isLocal) == true {
            // Local files outlive this command: a background `cast` does the play and serves them.
            let code = try BackgroundServing.handOff(arguments: Array(CommandLine.arguments.dropFirst()))
            if code != 0 { throw ExitCode(code) }
            return
        }
        do {
            // The start is bounded (through the load's answer and the device's first fetch), not the playing.
            let deadline = runtime.exitAtTimeout()
            defer { deadline?.cancel() }
            try await play(runtime, deadline: deadline)
        } catch {
            throw runtime.fail(error)
        }
    }

    /// Whether castd can do this play as asked: URLs and single files with a title, type, start and repeat mode;
    /// what needs this process (standard input, subtitles, serving and transcoding choices, another app) cannot.
    private var castdCanPlay: Bool {
        !urls.contains("-") && subtitle == nil && image == nil && streamType == .buffered && rate == nil
            && subtitles == nil && serveAddress == nil && servePort == nil && transcode == .auto
            && resolve != .ytdl && app == nil && !androidTV && credentials == nil
    }

    /// This play as castd's load (or queue) request.
    private var viaRequest: ViaService.Request {
        let items = urls.enumerated().map { index, url in
            ViaService.item(url, title: index == 0 ? title : nil, contentType: index == 0 ? contentType : nil)
        }
        let modes: [Repeat: String] = [
            .all: "REPEAT_ALL", .single: "REPEAT_SINGLE", .shuffle: "REPEAT_ALL_AND_SHUFFLE",
        ]
        return .load(items, append: queue, repeatMode: modes[`repeat`], startTime: start)
    }

    /// `8000` or `8000-8010`.
    static func ports(_ text: String) -> ClosedRange<Int>? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard (1...2).contains(parts.count), let lower = parts[0], let upper = parts.last ?? nil,
            1 <= lower, lower <= upper, upper <= 65535
        else { return nil }
        return lower...upper
    }

    /// Whether anything given is on this computer (a file, a folder, a playlist, `-`, or a subtitle file).
    private func servesLocalFiles(_ sources: [PlaySource]) -> Bool {
        sources.contains(where: \.isLocal) || subtitles.map { !$0.contains("://") } == true
    }

    /// An error's message without its code (for a warning).
    private static func reason(_ error: any Error) -> String {
        switch error {
        case let error as CLIError: error.message
        case let error as CastMediaServerError: error.message
        default: "\(error)"
        }
    }

    /// The queue items for the sources; local ones are served by `serving` (present when
    /// ``servesLocalFiles(_:)``).
    private func items(_ sources: [PlaySource], serving: inout LocalServing?) async throws -> [QueueItem] {
        var items: [QueueItem] = []
        var firstSkipped: (any Error)?
        for (index, source) in sources.enumerated() {
            let first = index == 0
            var extraTracks: [MediaTrack] = []
            if first, let subtitles {
                if subtitles.contains("://") {
                    extraTracks = [.subtitles(id: 1, url: subtitles, language: subtitlesLang)]
                } else {
                    extraTracks = [
                        try serving!.subtitleTrack(file: subtitles, id: 1, language: subtitlesLang, name: nil)
                    ]
                }
            }
            var media: MediaInformation
            var activeTrackIDs: [Int]?
            switch source {
            case .url(let url, let entryTitle):
                if let page = try await resolvedPage(url) {
                    media = MediaInformation(
                        contentID: page.url,
                        contentType: page.contentType,
                        streamType: page.isLive ? .live : .buffered
                    )
                    media.metadata = .generic(title: page.title ?? MediaTypes.name(of: url))
                    if let thumbnail = page.thumbnail { media.metadata?.images = [WebImage(url: thumbnail)] }
                    media.duration = page.duration
                } else {
                    media = MediaTypes.media(
                        for: url,
                        contentType: contentType,
                        streamType: streamType == .live ? .live : .buffered
                    )
                }
                if let entryTitle { media.metadata?.title = entryTitle }
                if !extraTracks.isEmpty {
                    media.tracks = extraTracks
                    activeTrackIDs = [extraTracks[0].id]
                }
            case .file(let path, let entryTitle, let listed):
                do {
                    if listed { try PlaySource.checkReadable(path) }
                    (media, activeTrackIDs) = try await serving!.media(
                        forFile: path,
                        title: first ? (title ?? entryTitle) : entryTitle,
                        contentType: contentType,
                        extraSubtitles: extraTracks
                    )
                } catch  where listed {
                    // One bad entry of a folder or playlist is skipped, not the whole play.
                    serving!.warn("skipped \(path): \(Self.reason(error))")
                    firstSkipped = firstSkipped ?? error
                    continue
                }
            case .standardInput:
                media = try await serving!.mediaForStandardInput(title: first ? title : nil, contentType: contentType)
            }
            if first {
                if let title { media.metadata?.title = title }
                if let subtitle { media.metadata?.subtitle = subtitle }
                if let image { media.metadata?.images = [WebImage(url: image)] }
            }
            items.append(QueueItem(media: media, activeTrackIDs: activeTrackIDs))
        }
        if items.isEmpty, let firstSkipped { throw firstSkipped }
        return items
    }

    /// The stream behind a page URL (``resolve``), or nil to send the URL as given. With `auto`, a missing or
    /// failing yt-dlp is a warning; with `ytdl`, an error.
    private func resolvedPage(_ url: String) async throws -> ResolvedPage? {
        guard contentType == nil, resolve == .ytdl || (resolve == .auto && PageResolver.looksLikePage(url)) else {
            return nil
        }
        do {
            return try await PageResolver.resolve(url)
        } catch let error as CastMediaServerError where resolve == .auto {
            let advice =
                error.code == .toolMissing
                ? "it looks like a web page, which yt-dlp would turn into a stream (install it: pip install yt-dlp)"
                : "yt-dlp found no stream there (\(error.message))"
            FileHandleOutput.standardError("cast: \(url): \(advice); sending the URL as given")
            return nil
        }
    }

    private func startServing(_ device: CastDevice) async throws -> LocalServing {
        try await LocalServing.start(
            reaching: device,
            address: serveAddress,
            ports: servePort.flatMap(Self.ports),
            transcode: transcode
        )
    }

    private func play(_ runtime: CLIRuntime, deadline: Task<Void, Never>?) async throws {
        let sources = try PlaySource.expand(urls)
        let context = runtime.makeContext()
        // A named device wins over the saved session: resume only a session saved for that device.
        let named = runtime.namesDevice ? try await runtime.resolveDevice() : nil
        var session: CastSession?
        do {
            session = try await context.sessionManager.resumeSavedSession(candidates: named.map { [$0] } ?? [])
        } catch let error as CastSessionError where named != nil && error.code == .connectFailed {
            // The named device cannot be reached: starting there would fail the same way, after as long again.
            throw error
        } catch {}
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
        var serving = servesLocalFiles(sources) ? try await startServing(session.device) : nil
        do {
            try await play(sources, in: session, context: context, serving: &serving, runtime, deadline: deadline)
        } catch {
            await serving?.server.stop()
            throw error
        }
        // Ends the transcoders' ffmpeg too.
        await serving?.server.stop()
    }

    private func play(
        _ sources: [PlaySource],
        in session: CastSession,
        context: CastContext,
        serving: inout LocalServing?,
        _ runtime: CLIRuntime,
        deadline: Task<Void, Never>?
    ) async throws {
        let items = try await self.items(sources, serving: &serving)
        for warning in serving?.warnings ?? [] { runtime.warn(warning) }
        let client = try runtime.mediaClient(session)
        do {
            try await load(items, client: client)
        } catch let error as CastMediaError where serving != nil && [.loadFailed, .timedOut].contains(error.code) {
            // A device that cannot fetch fails LOAD, or stays silent until it gives up: say what the server saw.
            throw serving!.unreachable(after: error, device: session.device)
        }
        if let serving, let first = serving.watched.first, sources.first?.isLocal == true, !queue {
            // The device fetches what it starts playing; if it never asks, nothing will play, and only we can say
            // why. (Later queue items are fetched when their turn comes.)
            if await !serving.server.waitForRequest(
                for: first,
                from: session.device.addresses.first?.ip,
                timeout: .seconds(8)
            ) {
                throw serving.unreachable(after: nil, device: session.device)
            }
        }
        if items.count > 1 || self.repeat != .off, !queue {
            _ = try? await client.queueSetRepeatMode(repeatMode).response()
        }
        deadline?.cancel()
        if (detach || runtime.global.json), serving == nil {
            await runtime.printStatus(session)
            await context.sessionManager.endSession(stopCasting: false)
            return
        }
        // From here this process serves (and transcodes) local content until playback ends: `cast status`
        // shows it, `cast stop` ends it.
        let record = serving.map {
            BackgroundServing.Record(
                pid: getpid(),
                deviceID: session.device.id,
                deviceName: session.device.friendlyName,
                items: $0.descriptions
            )
        }
        defer { if let record { BackgroundServing.remove(pid: record.pid) } }
        if let serving, let record, servingInBackground {
            // The background server of `play --detach`: report, let go of the terminal, serve until playback
            // ends or nobody has fetched anything for a while (a paused player fetches nothing either).
            // `cast stop` sends SIGTERM (once the record is saved): end cleanly, so ffmpeg and its segments go too.
            let termination = TerminationSignal()
            // Saved first, so that the status printed lists this server among what is served.
            BackgroundServing.save(record)
            await runtime.printStatus(session)
            BackgroundServing.detach()
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await LocalServing.untilPlaybackEnds(session) }
                group.addTask { await BackgroundServing.untilIdle(serving.server) }
                group.addTask { _ = await termination.wait() }
                await group.next()
                group.cancelAll()
            }
            await context.sessionManager.endSession(stopCasting: false)
            return
        }
        // From here a SIGINT or SIGTERM (`cast stop`, Ctrl-C without a terminal) ends serving cleanly: the
        // transcoders' folders go, and the command says so and exits 0.
        let termination = serving.map { _ in TerminationSignal() }
        if let record { BackgroundServing.save(record) }
        for (name, transcoder) in serving?.transcoding ?? [] {
            runtime.warn("transcoding \(name) as it plays: \(transcoder.plan.reasons.joined(separator: ", "))")
        }
        if !runtime.isTTY || runtime.global.json {
            serving?.reportProgress { FileHandleOutput.standardError("cast: " + $0) }
        }
        if runtime.global.json || detach {
            await runtime.printStatus(session)
            await Self.serve(session, until: termination, runtime)
            await context.sessionManager.endSession(stopCasting: false)
            return
        }
        let controller = PlayerController(session: session, style: runtime.style, interactive: runtime.isTTY)
        guard let termination else {
            let outcome = await controller.run(layout: .mini)
            await context.sessionManager.endSession(stopCasting: outcome == .stopped)
            return
        }
        // Serving: the controller runs until our media ends or is replaced (nothing served is fetched then), or
        // a signal ends serving.
        let outcome = await withTaskGroup(of: PlayerController.Outcome?.self) { group in
            group.addTask { await controller.run(layout: .mini) }
            group.addTask {
                await LocalServing.untilPlaybackEnds(session)
                return .finished
            }
            group.addTask {
                _ = await termination.wait()
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        switch outcome {
        case nil:
            Self.reportSignalled(runtime)
        case .left?:
            runtime.warn("still serving local files until playback ends (Ctrl-C stops serving)")
            await Self.serve(session, until: termination, runtime)
        default:
            break
        }
        await context.sessionManager.endSession(stopCasting: outcome == .stopped)
    }

    /// Serves until playback ends (or is replaced) or a signal arrives, and says so when a signal ended it.
    private static func serve(_ session: CastSession, until termination: TerminationSignal?, _ runtime: CLIRuntime)
        async
    {
        guard let termination else { return await LocalServing.untilPlaybackEnds(session) }
        let signalled = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await LocalServing.untilPlaybackEnds(session)
                return false
            }
            group.addTask { await termination.wait() != 0 }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if signalled { reportSignalled(runtime) }
    }

    private static func reportSignalled(_ runtime: CLIRuntime) {
        runtime.warn("stopped serving: the device can no longer fetch what this computer served")
    }

    private func load(_ items: [QueueItem], client: RemoteMediaClient) async throws {
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
            // A message may carry 64 KiB: a long queue is loaded in parts, the first part then the rest appended.
            let parts = Self.batches(items)
            var data = QueueData(items: parts[0], startIndex: 0, repeatMode: repeatMode)
            data.startTime = start
            var request = LoadRequestData(queue: data)
            request.currentTime = start
            request.playbackRate = rate
            try await client.load(request).response()
            for part in parts.dropFirst() { try await client.queueInsert(part).response() }
        }
    }

    /// `items` in runs whose JSON fits a message with room to spare (40,000 bytes of the 65,536), in order.
    static func batches(_ items: [QueueItem], limit: Int = 40_000) -> [[QueueItem]] {
        var parts: [[QueueItem]] = [[]]
        var size = 0
        for item in items {
            let length = item.json.jsonString.utf8.count + 1
            if !parts[parts.count - 1].isEmpty, size + length > limit {
                parts.append([])
                size = 0
            }
            parts[parts.count - 1].append(item)
            size += length
        }
        return parts
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
extension TranscodeMode: ExpressibleByArgument {}

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

    /// Refuses what a device cannot fetch: anything but an `http` or `https` URL (a path, `ftp://`).
    static func checkFetchable(_ url: String, localHint: String) throws {
        let scheme = url.firstRange(of: "://").map { url[..<$0.lowerBound].lowercased() }
        guard let scheme else { throw ValidationError("\(url) is not a URL; \(localHint)") }
        guard scheme == "http" || scheme == "https" else {
            throw ValidationError("\(url): devices fetch only http and https URLs")
        }
    }

    /// The content type of a URL's extension (the media server's table), MP4 when it says nothing.
    static func guess(_ url: String) -> String { MediaSniffer.mimeType(forURL: url) ?? "video/mp4" }

    static func name(of url: String) -> String {
        let path = url.split(separator: "?").first.map(String.init) ?? url
        return path.split(separator: "/").last.map(String.init) ?? url
    }
}

/// Where the CLI keeps state (`$XDG_STATE_HOME/cast`).
enum StatePaths {
    static var directory: String { CastOptions.defaultStateDirectory() }
}

#if canImport(Glibc)
import Glibc
#endif
