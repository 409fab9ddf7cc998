import CastDiscovery
import CastLogging
import CastMedia
import CastMediaServer
import CastSession
import CastTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// What `cast play` was given: URLs stay URLs; files, folders, playlists and `-` are served from this computer.
enum PlaySource: Equatable {
    case url(String, title: String?)
    /// A file; `listed` when a folder or a playlist named it, where one bad entry is skipped with a warning
    /// rather than failing the whole play.
    case file(path: String, title: String?, listed: Bool = false)
    case standardInput

    var isLocal: Bool {
        if case .url = self { return false }
        return true
    }

    /// Expands the arguments in order: a folder becomes its media files (sorted as people sort, 2 before 10),
    /// a playlist its entries (an HLS playlist stays one stream), `file://` URLs become paths, and `-` standard
    /// input (a file redirected there is served as that file).
    ///
    /// - Throws: ``CLIError`` (usage) for what cannot be played: a missing or unreadable file or folder, a named
    ///   pipe or device (with the way to play it), an empty or closed standard input.
    static func expand(_ arguments: [String]) throws -> [PlaySource] {
        try arguments.flatMap { argument -> [PlaySource] in
            if argument == "-" { return try standardInput() }
            if argument.lowercased().hasPrefix("file://"),
                let path = URL(string: "file://" + argument.dropFirst(7))?.path
            {
                return try expand([path])
            }
            if argument.contains("://") {
                try MediaTypes.checkFetchable(argument, localHint: "")
                return [.url(argument, title: nil)]
            }
            try checkReadable(argument)
            if FileManager.default.isDirectory(argument) { return try folder(argument) }
            if PlaylistFile.isPlaylist(path: argument) {
                let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: argument)))
                if PlaylistFile.isHLSMediaPlaylist(bytes) { return [.file(path: argument, title: nil)] }
                return try PlaylistFile.entries(in: bytes, playlistPath: argument).map { entry in
                    switch entry.location {
                    case .file(let path): return .file(path: path, title: entry.title, listed: true)
                    case .url(let url): return .url(url, title: entry.title)
                    }
                }
            }
            return [.file(path: argument, title: nil)]
        }
    }

    /// Why `path` cannot be read, as a usage error: missing, not permitted, or a named pipe or device (which
    /// would block or never end: standard input plays those).
    static func checkReadable(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == EACCES {
                throw CLIError(.usage, "\(path): permission denied (a folder on its way cannot be searched)")
            }
            throw CLIError(.usage, "\(path): no such file, and not a URL")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG, S_IFDIR:
            let mode = (info.st_mode & S_IFMT) == S_IFDIR ? R_OK | X_OK : R_OK
            guard access(path, mode) == 0 else { throw CLIError(.usage, "\(path): permission denied") }
        case S_IFIFO:
            throw CLIError(.usage, "\(path) is a named pipe: play what it carries with 'cast play - < \(path)'")
        default:
            throw CLIError(.usage, "\(path) is not a regular file (a device or socket); 'cast play -' reads a stream")
        }
    }

    /// Standard input: a pipe or a socket is a live stream; a file redirected there is that file (seekable); an
    /// empty file, `/dev/null` or a closed descriptor is refused.
    private static func standardInput() throws -> [PlaySource] {
        var info = stat()
        guard fstat(STDIN_FILENO, &info) == 0 else {
            throw CLIError(.usage, "standard input is closed: pipe media into 'cast play -'")
        }
        switch info.st_mode & S_IFMT {
        case S_IFIFO, S_IFSOCK:
            return [.standardInput]
        case S_IFREG:
            guard info.st_size > 0 else { throw CLIError(.usage, "standard input is empty") }
            // The file itself, served like any file (ranges, seeking) rather than read once.
            guard let path = LocalFiles.resolvedLink("/proc/self/fd/0"), path.hasPrefix("/"),
                FileManager.default.isReadableFile(atPath: path)
            else {
                throw CLIError(.usage, "standard input is a file that cannot be opened again: give its path instead")
            }
            return [.file(path: path, title: nil)]
        case S_IFCHR where isatty(STDIN_FILENO) != 0:
            return [.standardInput]
        default:
            throw CLIError(
                .usage,
                "standard input is a device (such as /dev/null), not a stream: pipe media into 'cast play -'"
            )
        }
    }

    private static func folder(_ path: String) throws -> [PlaySource] {
        let all: [String]
        do {
            all = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw CLIError(.usage, "\(path): this folder cannot be read (permission denied?)")
        }
        let names =
            all
            .filter { name in
                guard !name.hasPrefix("."), let dot = name.lastIndex(of: ".") else { return false }
                let type = MediaSniffer.mimeType(forExtension: String(name[name.index(after: dot)...])) ?? ""
                return type.hasPrefix("video/") || type.hasPrefix("audio/")
            }
            .map { ($0.naturalSortKey, $0) }.sorted(by: <).map(\.1)  // each name folded once
        guard !names.isEmpty else { throw CLIError(.usage, "\(path): no media files in this folder") }
        return names.map { .file(path: path + "/" + $0, title: nil, listed: true) }
    }
}

/// The media server of one `cast play`, and the media it made from local sources.
struct LocalServing {
    let server: MediaServer
    /// What the device plays, for deciding what to transcode.
    let support: DeviceMediaSupport
    let transcode: TranscodeMode
    /// The first item's main media, for the reachability check.
    private(set) var watched: [SharedMedia] = []
    /// Problems met converting subtitles, for the user.
    private(set) var warnings: [String] = []
    /// The files transcoded as they play, by name.
    private(set) var transcoding: [(name: String, transcoder: HLSTranscoder)] = []
    /// What is served, for `cast status`: names, with the work done on them.
    private(set) var descriptions: [String] = []

    static func start(
        reaching device: CastDevice,
        address: String?,
        ports: ClosedRange<Int>?,
        transcode: TranscodeMode
    ) async throws -> LocalServing {
        LocalServing(
            server: try await MediaServer.start(
                reaching: device.host,
                options: MediaServerOptions(address: address, ports: ports)
            ),
            support: support(for: device),
            transcode: transcode
        )
    }

    /// The device's row in the support table: its model, and whether it has a screen (unknown counts as yes).
    static func support(for device: CastDevice) -> DeviceMediaSupport {
        .forModel(device.modelName, playsVideo: device.mayPlayVideo)
    }

    /// Media for a local file (``MediaServer/castableFile(_:device:mode:contentType:title:extraSubtitles:)``), with
    /// what it served and transcodes kept for the reachability check, progress reports and `cast status`.
    mutating func media(
        forFile path: String,
        title: String?,
        contentType: String?,
        extraSubtitles: [MediaTrack]
    ) async throws -> (MediaInformation, activeTrackIDs: [Int]?) {
        let file = try await server.castableFile(
            path,
            device: support,
            mode: transcode,
            contentType: contentType,
            title: title,
            extraSubtitles: extraSubtitles
        )
        watched.append(file.served)
        warnings += file.warnings
        descriptions.append(file.description)
        if let transcoder = file.transcoder {
            transcoding.append((LocalFiles.lastComponent(of: path), transcoder))
        }
        return (file.media, file.activeTrackIDs)
    }

    /// Reports the transcoders' progress through `report` until they stop: each jump (a seek) and every tenth
    /// segment.
    func reportProgress(_ report: @escaping @Sendable (String) -> Void) {
        for (name, transcoder) in transcoding {
            Task {
                for await step in transcoder.progress
                where step.segment == step.runStart || (step.segment + 1) % 10 == 0 {
                    report(
                        "transcoding \(name): segment \(step.segment + 1) of \(step.segments)"
                            + String(printf: " (%.1f× real time)", step.speed)
                    )
                }
            }
        }
    }

    /// Notes a problem for the user (a listed file skipped, say).
    mutating func warn(_ warning: String) { warnings.append(warning) }

    /// Media for standard input: a live stream, typed from its first bytes.
    mutating func mediaForStandardInput(title: String?, contentType: String?) async throws -> MediaInformation {
        let shared = try await server.share(pipe: 0, name: "stdin", contentType: contentType)
        watched.append(shared)
        descriptions.append("standard input")
        var media = MediaInformation(contentID: shared.url, contentType: shared.contentType, streamType: .live)
        media.metadata = .generic(title: title ?? "Standard input")
        return media
    }

    /// A WebVTT track for a subtitle file given with `--subtitles`.
    mutating func subtitleTrack(file: String, id: Int, language: String?, name: String?) throws -> MediaTrack {
        guard SubtitleFormat(fileExtension: LocalFiles.fileExtension(of: file)) != nil else {
            throw CLIError(.usage, "\(file): subtitles must be .vtt, .srt, .ass or .ssa")
        }
        let (track, problems) = try server.subtitleTrack(file: file, id: id, language: language, name: name)
        warnings += problems
        return track
    }

    /// The error for a device that did not fetch what was served (`loadError` when LOAD failed), with the diagnosis.
    func unreachable(after loadError: CastMediaError?, device: CastDevice) -> CastMediaServerError {
        let address = device.addresses.first?.ip
        guard let first = watched.first else {
            return CastMediaServerError(.unreachable, loadError.map { "\($0)" } ?? "the device fetched nothing")
        }
        let diagnosis = server.diagnose(
            first,
            deviceAddress: address,
            detailedErrorCode: loadError?.detailedErrorCode
        )
        let what: String
        switch diagnosis.cause {
        case .noConnection: what = "\(device.friendlyName) never connected to this computer to fetch \(first.name)"
        case .otherPeersOnly: what = "\(device.friendlyName) did not fetch \(first.name); only other peers connected"
        case .requestFailed: what = "\(device.friendlyName) asked for \(first.name) and was refused"
        case .fetchedButRejected where diagnosis.isTextTrackFailure:
            what = "\(device.friendlyName) fetched \(first.name) but could not load its subtitles"
        case .fetchedButRejected: what = "\(device.friendlyName) fetched \(first.name) but could not play it"
        }
        let reason = loadError.map { " (LOAD failed: \($0))" } ?? ""
        return CastMediaServerError(.unreachable, what + reason + "\n" + diagnosis.text, diagnosis: diagnosis)
    }

    /// Waits until the media session ends (finished, stopped, failed, replaced by another LOAD) or the session
    /// does, serving meanwhile.
    static func untilPlaybackEnds(_ session: CastSession) async {
        guard let client = session.remoteMediaClient else { return }
        let updates = client.statusUpdates()
        let states = session.connectionStateUpdates()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // Ours is the media session playing when serving starts; another LOAD (here or from another
                // sender) replaces it, and nothing served is fetched any more.
                var ours = client.mediaStatus?.mediaSessionID
                for await status in updates {
                    guard let status else {
                        if ours != nil { return }
                        continue
                    }
                    if let ours, status.mediaSessionID != ours { return }
                    ours = status.mediaSessionID
                    if status.hasEnded || (status.playerState == .idle && status.idleReason == .interrupted) { return }
                }
            }
            group.addTask {
                for await state in states where state == .disconnected { return }
            }
            await group.next()
            group.cancelAll()
        }
    }
}

extension FileManager {
    fileprivate func isDirectory(_ path: String) -> Bool {
        var isDirectory = false
        return fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory
    }
}

extension ReachabilityDiagnosis {
    /// The diagnosis for people: what was served where, what arrived, what to do.
    var text: String {
        var lines = ["served at http://\(address.contains(":") ? "[\(address)]" : address):\(port) (\(addressReason))"]
        let device = deviceAddress ?? "the device"
        lines.append(
            "connections seen: \(connections); requests from \(device): \(deviceRequests)"
                + (statuses.isEmpty ? "" : " (answered \(statuses.map(String.init).joined(separator: ", ")))")
        )
        lines += advice.map { "try: " + $0 }
        return lines.map { "  " + $0 }.joined(separator: "\n")
    }

    var json: JSONValue {
        [
            "address": .string(address), "port": .number(Double(port)), "addressReason": .string(addressReason),
            "deviceAddress": deviceAddress.map(JSONValue.string) ?? .null,
            "connections": .number(Double(connections)), "deviceRequests": .number(Double(deviceRequests)),
            "statuses": .array(statuses.map { .number(Double($0)) }), "cause": .string(cause.rawValue),
            "advice": .array(advice.map(JSONValue.string)),
            "detailedErrorCode": detailedErrorCode.map { .number(Double($0)) } ?? .null,
            "textTrackFailure": .bool(isTextTrackFailure),
        ]
    }
}
