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

/// What `cast play` was given: URLs stay URLs; files, folders, playlists and `-` are served from this computer.
enum PlaySource: Equatable {
    case url(String, title: String?)
    case file(path: String, title: String?)
    case standardInput

    var isLocal: Bool {
        if case .url = self { return false }
        return true
    }

    /// Expands the arguments in order: a folder becomes its media files (sorted as people sort, 2 before 10),
    /// a playlist its entries (an HLS playlist stays one stream), `file://` URLs become paths.
    static func expand(_ arguments: [String]) throws -> [PlaySource] {
        try arguments.flatMap { argument -> [PlaySource] in
            if argument == "-" { return [.standardInput] }
            if argument.hasPrefix("file://"), let path = URL(string: argument)?.path { return try expand([path]) }
            if argument.contains("://") { return [.url(argument, title: nil)] }
            if FileManager.default.isDirectory(argument) { return try folder(argument) }
            guard FileManager.default.isReadableFile(atPath: argument) else {
                throw CLIError(.usage, "\(argument): no such file, and not a URL")
            }
            if PlaylistFile.isPlaylist(path: argument) {
                let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: argument)))
                if PlaylistFile.isHLSMediaPlaylist(bytes) { return [.file(path: argument, title: nil)] }
                return try PlaylistFile.entries(in: bytes, playlistPath: argument).map { entry in
                    switch entry.location {
                    case .file(let path): return .file(path: path, title: entry.title)
                    case .url(let url): return .url(url, title: entry.title)
                    }
                }
            }
            return [.file(path: argument, title: nil)]
        }
    }

    private static func folder(_ path: String) throws -> [PlaySource] {
        let names = try FileManager.default.contentsOfDirectory(atPath: path)
            .filter { name in
                guard !name.hasPrefix("."), let dot = name.lastIndex(of: ".") else { return false }
                let type = MediaSniffer.mimeType(forExtension: String(name[name.index(after: dot)...])) ?? ""
                return type.hasPrefix("video/") || type.hasPrefix("audio/")
            }
            .map { ($0.naturalSortKey, $0) }.sorted(by: <).map(\.1)  // each name folded once
        guard !names.isEmpty else { throw CLIError(.usage, "\(path): no media files in this folder") }
        return names.map { .file(path: path + "/" + $0, title: nil) }
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
        let diagnosis = server.diagnose(first, deviceAddress: address)
        let what: String
        switch diagnosis.cause {
        case .noConnection: what = "\(device.friendlyName) never connected to this computer to fetch \(first.name)"
        case .otherPeersOnly: what = "\(device.friendlyName) did not fetch \(first.name); only other peers connected"
        case .requestFailed: what = "\(device.friendlyName) asked for \(first.name) and was refused"
        case .fetchedButRejected: what = "\(device.friendlyName) fetched \(first.name) but could not play it"
        }
        let reason = loadError.map { " (LOAD failed: \($0))" } ?? ""
        return CastMediaServerError(.unreachable, what + reason + "\n" + diagnosis.text, diagnosis: diagnosis)
    }

    /// Waits until the media session ends (finished, stopped, failed) or the session does, serving meanwhile.
    static func untilPlaybackEnds(_ session: CastSession) async {
        guard let client = session.remoteMediaClient else { return }
        let updates = client.statusUpdates()
        let states = session.connectionStateUpdates()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var sawMedia = client.mediaStatus != nil
                for await status in updates {
                    guard let status else {
                        if sawMedia { return }
                        continue
                    }
                    sawMedia = true
                    if status.hasEnded { return }
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
        ]
    }
}
