import CastMedia
import CastMediaServer
import CastTransport
import Logging

/// What a Cast device's player does on LOAD before it plays: it fetches the URL, checks the answer and the
/// bytes, follows HLS playlists to a segment, and fetches text tracks with CORS. The emulator does the same
/// (with `--fetch-media`), so a sender that serves media wrongly fails here as it would on a device.
struct MediaFetcher: Sendable {
    /// What fetching found.
    enum Outcome: Sendable, Equatable {
        /// Playable; the duration when the media tells it.
        case playable(duration: Double?)
        /// Not playable: the `detailedErrorCode` a device reports, and why, for the log.
        case failed(detailedErrorCode: Int, reason: String)
    }

    /// A player's requests look like this (the Default Media Receiver runs in Chrome on the device).
    static let userAgent =
        "Mozilla/5.0 (X11; Linux aarch64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 CrKey/1.56.500000 DeviceType/Chromecast"
    /// The origin of the receiver page; players send it, and need it allowed, for text tracks, HLS and DASH.
    static let origin = "https://www.gstatic.com"

    /// For first fetches: a player reads on as it plays, the emulator only the first 256 KiB.
    private let http: HTTPFetcher
    /// For ranges asked on purpose (an MP4's `moov` at the end of the file can be megabytes).
    private let rangeHTTP: HTTPFetcher

    init() throws {
        var http = try HTTPFetcher()
        http.maximumBodyBytes = 256 << 10
        http.timeout = .seconds(10)
        self.http = http
        var rangeHTTP = http
        rangeHTTP.maximumBodyBytes = 64 << 20
        self.rangeHTTP = rangeHTTP
    }

    /// Where a failed fetch is noted in the request handed to the player (never sent anywhere).
    static let failureKey = "x-emulator-fetch-failure"

    /// The playlist and position a SEEK moves to when the media playing is HLS (a device fetches the segment
    /// there); nil for anything else.
    static func hlsSeekTarget<Requester>(
        _ request: [String: JSONValue],
        player: MediaPlayer<Requester>,
        at now: Double
    ) -> (
        playlist: String, seconds: Double
    )? {
        guard request["type"]?.stringValue == "SEEK", let session = player.session else { return nil }
        let media = session.current.media
        guard let url = contentURL(of: media),
            media["contentType"]?.stringValue?.lowercased().contains("mpegurl") == true
                || url.lowercased().split(separator: "?").first?.hasSuffix(".m3u8") == true
        else { return nil }
        guard let target = MediaPlayer<Requester>.seekTarget(of: request, from: player.position(of: session, at: now))
        else {
            return nil
        }
        return (url, target)
    }

    /// The URL a media object names: its `contentUrl`, else its `contentId` (an empty one counts as absent).
    static func contentURL(of media: [String: JSONValue]) -> String? {
        for key in ["contentUrl", "contentId"] {
            if let url = media[key]?.stringValue, !url.isEmpty { return url }
        }
        return nil
    }

    /// Whether a media request loads media a device would fetch first.
    static func needsFetch(_ request: [String: JSONValue]) -> Bool {
        let type = request["type"]?.stringValue
        return type == "LOAD" || type == "QUEUE_LOAD" || type == "QUEUE_INSERT"
    }

    /// `request` with every item's media fetched: durations learned from the media replace declared ones;
    /// a LOAD whose (first) media cannot be played carries the device's `detailedErrorCode` for the player.
    static func fetchAll(_ request: [String: JSONValue], fetcher: MediaFetcher, logger: Logger) async -> [String:
        JSONValue]
    {
        var request = request
        if var media = request["media"]?.objectValue {
            switch await fetcher.fetch(media) {
            case .playable(let duration):
                if let duration { media["duration"] = .number(duration) }
                request["media"] = .object(media)
            case .failed(let code, let reason):
                logger.notice("LOAD fails with detailedErrorCode \(code): \(reason)")
                request[failureKey] = .number(Double(code))
            }
        }
        var container = request["queueData"]?.objectValue ?? request
        guard var items = container["items"]?.arrayValue else { return request }
        let start = request["type"]?.stringValue == "LOAD" ? container["startIndex"]?.intValue ?? 0 : -1
        for index in items.indices {
            guard var item = items[index].objectValue, var media = item["media"]?.objectValue else { continue }
            switch await fetcher.fetch(media) {
            case .playable(let duration):
                if let duration { media["duration"] = .number(duration) }
                item["media"] = .object(media)
                items[index] = .object(item)
            case .failed(let code, let reason):
                logger.notice("queue item \(index) cannot play, detailedErrorCode \(code): \(reason)")
                if index == start, request["media"] == nil { request[failureKey] = .number(Double(code)) }
            }
        }
        container["items"] = .array(items)
        if request["queueData"] != nil { request["queueData"] = .object(container) } else { request = container }
        return request
    }

    /// Fetches the media of a LOAD (or queue item) and its text tracks.
    func fetch(_ media: [String: JSONValue]) async -> Outcome {
        guard let url = Self.contentURL(of: media) else {
            return .failed(detailedErrorCode: 104, reason: "no URL")
        }
        let outcome = await fetchMedia(url, contentType: media["contentType"]?.stringValue)
        guard case .playable = outcome else { return outcome }
        for track in media["tracks"]?.arrayValue ?? [] where track["type"]?.stringValue == "TEXT" {
            guard let trackURL = track["trackContentId"]?.stringValue else { continue }
            if case .failed(let code, let reason) = await fetchText(trackURL) {
                return .failed(detailedErrorCode: code, reason: "text track \(trackURL): \(reason)")
            }
        }
        return outcome
    }

    func fetchMedia(_ url: String, contentType: String?) async -> Outcome {
        let response: HTTPFetcher.Response
        do {
            response = try await get(url, range: "bytes=0-")
        } catch {
            return .failed(detailedErrorCode: 103, reason: "cannot fetch \(url): \(error)")
        }
        guard response.status == 200 || response.status == 206 else {
            return .failed(detailedErrorCode: 104, reason: "\(url) answered HTTP \(response.status)")
        }
        let isHLS =
            contentType?.lowercased().contains("mpegurl") == true || response.body.starts(with: Array("#EXTM3U".utf8))
        if isHLS { return await fetchHLS(response) }
        guard let sniffed = MediaSniffer.sniff(Array(response.body.prefix(MediaSniffer.prefixLength))), sniffed.isMedia
        else {
            return .failed(detailedErrorCode: 104, reason: "\(url) is not media")
        }
        let size = response.totalSize ?? (response.isTruncated ? nil : UInt64(response.body.count))
        let reader = HTTPByteRangeReader(url: response.url, size: size, prefix: response.body, fetcher: self)
        let duration = try? await MediaDuration.seconds(of: sniffed.container, reader: reader)
        return .playable(duration: duration ?? nil)
    }

    /// HLS: the playlist (a master's first variant), CORS on each, and the first segment.
    private func fetchHLS(_ first: HTTPFetcher.Response) async -> Outcome {
        switch await mediaPlaylist(from: first) {
        case .failure(let failure):
            return .failed(detailedErrorCode: failure.code, reason: failure.reason)
        case .success(let (playlist, url)):
            if let failure = await fetchSegment(of: playlist, at: 0, playlistURL: url) {
                return .failed(detailedErrorCode: failure.code, reason: failure.reason)
            }
            return .playable(duration: playlist.duration)
        }
    }

    /// After a SEEK into HLS a device fetches the segment holding the new position: so does the emulator (a
    /// server that makes segments on demand sees the jump). Returns why it could not, if it could not.
    func fetchSegment(playlistURL: String, at seconds: Double) async -> Failure? {
        guard let response = try? await get(playlistURL), response.status == 200 else {
            return Failure(code: 301, reason: "\(playlistURL) cannot be fetched")
        }
        switch await mediaPlaylist(from: response) {
        case .failure(let failure): return failure
        case .success(let (playlist, url)): return await fetchSegment(of: playlist, at: seconds, playlistURL: url)
        }
    }

    /// Why fetching failed, with the device's `detailedErrorCode`.
    struct Failure: Error {
        var code: Int
        var reason: String
    }

    /// The media playlist `first` is, or leads to (its first variant), checking CORS on each.
    private func mediaPlaylist(from first: HTTPFetcher.Response) async -> Result<(HLSPlaylist, String), Failure> {
        var response = first
        for _ in 0..<2 {
            guard allowsOrigin(response) else {
                return .failure(Failure(code: 311, reason: "\(response.url) lacks CORS (Access-Control-Allow-Origin)"))
            }
            guard let playlist = try? HLSPlaylist.parse(String(decoding: response.body, as: UTF8.self)) else {
                return .failure(Failure(code: 411, reason: "\(response.url) is not an HLS playlist"))
            }
            switch playlist.kind {
            case .master(let variants):
                guard let variant = variants.first, let next = try? await get(resolve(variant, against: response.url)),
                    next.status == 200
                else { return .failure(Failure(code: 312, reason: "the variant playlist cannot be fetched")) }
                response = next
            case .media:
                return .success((playlist, response.url))
            }
        }
        return .failure(Failure(code: 411, reason: "nested master playlists"))
    }

    private func fetchSegment(of playlist: HLSPlaylist, at seconds: Double, playlistURL: String) async -> Failure? {
        guard case .media(let segments, _, _) = playlist.kind, !segments.isEmpty else {
            return Failure(code: 412, reason: "the playlist has no segments")
        }
        let index = playlist.segment(at: seconds)?.index ?? segments.count - 1
        let segmentURL = resolve(segments[index].uri, against: playlistURL)
        guard let answer = try? await get(segmentURL), answer.status == 200 || answer.status == 206 else {
            return Failure(code: 301, reason: "segment \(segmentURL) cannot be fetched")
        }
        guard allowsOrigin(answer) else { return Failure(code: 301, reason: "segment \(segmentURL) lacks CORS") }
        return nil
    }

    /// Text tracks are fetched by the page's script: without CORS the device never shows them.
    func fetchText(_ url: String) async -> Outcome {
        guard let response = try? await get(url), response.status == 200 || response.status == 206 else {
            return .failed(detailedErrorCode: 600, reason: "cannot be fetched")
        }
        guard allowsOrigin(response) else { return .failed(detailedErrorCode: 600, reason: "lacks CORS") }
        return .playable(duration: nil)
    }

    func get(_ url: String, range: String? = nil, whole: Bool = false) async throws -> HTTPFetcher.Response {
        var headers = [("User-Agent", Self.userAgent), ("Origin", Self.origin), ("Accept", "*/*")]
        if let range { headers.append(("Range", range)) }
        return try await (whole ? rangeHTTP : http).get(url, headers: headers, truncating: !whole)
    }

    private func allowsOrigin(_ response: HTTPFetcher.Response) -> Bool {
        let allowed = response.headers["access-control-allow-origin"]?.trimmingCharacters(in: " ")
        return allowed == "*" || allowed == Self.origin
    }

    /// `reference` resolved against `base` (absolute, root-relative or relative).
    func resolve(_ reference: String, against base: String) -> String {
        if reference.contains("://") { return reference }
        let schemeEnd = base.firstRange(of: "://").map { base.distance(from: base.startIndex, to: $0.upperBound) } ?? 0
        let afterScheme = base.dropFirst(schemeEnd)
        let authority = afterScheme.prefix { $0 != "/" }
        if reference.hasPrefix("/") { return base.prefix(schemeEnd) + authority + reference }
        let path = base.prefix { $0 != "?" && $0 != "#" }
        guard let slash = path.lastIndex(of: "/"), path.distance(from: path.startIndex, to: slash) >= schemeEnd else {
            return path + "/" + reference
        }
        return path[...slash] + reference
    }
}

extension HTTPFetcher.Response {
    /// The full size from `Content-Range: bytes a-b/SIZE` (or `Content-Length` of a whole 200 answer).
    var totalSize: UInt64? {
        if let range = headers["content-range"], let slash = range.lastIndex(of: "/") {
            return UInt64(range[range.index(after: slash)...])
        }
        return status == 200 ? headers["content-length"].flatMap { UInt64($0) } : nil
    }
}

/// Reads a remote file by range requests, as a player seeking for an MP4's `moov` at the end does.
struct HTTPByteRangeReader: ByteRangeReader {
    let url: String
    let size: UInt64?
    let prefix: [UInt8]
    let fetcher: MediaFetcher

    func read(_ range: Range<UInt64>) async throws -> [UInt8] {
        if range.upperBound <= UInt64(prefix.count) {
            return Array(prefix[Int(range.lowerBound)..<Int(range.upperBound)])
        }
        let response = try await fetcher.get(
            url,
            range: "bytes=\(range.lowerBound)-\(range.upperBound - 1)",
            whole: true
        )
        guard response.status == 206 || response.status == 200 else {
            throw CastMediaServerError(.invalidMedia, "\(url) answered HTTP \(response.status) to a range request")
        }
        if response.status == 200 {
            // No ranges: the body starts at 0; near the end of the file, fewer bytes than asked.
            let count = UInt64(response.body.count)
            guard range.lowerBound < count else { return [] }
            return Array(response.body[Int(range.lowerBound)..<Int(min(range.upperBound, count))])
        }
        return Array(response.body.prefix(range.count))
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
    }
}
