/// One item of a playlist file: where the media is, and what the playlist calls it.
public struct PlaylistEntry: Sendable, Hashable {
    /// Where an entry's media is.
    public enum Location: Sendable, Hashable {
        /// A local path, absolute when the playlist's own path is (relative entries are resolved against its folder).
        case file(String)
        /// A URL to hand over as it is (`http`, `https`, `rtsp`, a `file://` URL naming another host, …).
        case url(String)
    }

    /// Where the media is.
    public var location: Location
    /// The title the playlist gives (`#EXTINF` in M3U, `TitleN` in PLS), if any.
    public var title: String?
    /// The duration in seconds the playlist claims, if positive; a hint only, players measure their own.
    public var duration: Double?

    /// Creates an entry.
    public init(location: Location, title: String? = nil, duration: Double? = nil) {
        self.location = location
        self.title = title
        self.duration = duration
    }
}

/// Reads the playlist files people keep next to their music and videos: M3U/M3U8 and PLS.
///
/// An `.m3u8` can also be an HLS stream (see ``isHLSMediaPlaylist(_:)``): that one is cast as a single URL, not
/// read as a list of files. Parsing is pure and never touches the file system, so any bytes are safe to pass.
public enum PlaylistFile {
    /// Whether `path` names a playlist by its extension (`.m3u`, `.m3u8`, `.pls`, any case).
    public static func isPlaylist(path: String) -> Bool {
        ["m3u", "m3u8", "pls"].contains(fileExtension(of: path))
    }

    /// Whether `bytes` is an HLS playlist (media or master): `#EXTM3U` first, then tags only HLS uses
    /// (`#EXT-X-TARGETDURATION`, `#EXT-X-STREAM-INF`, …). Such a file is one stream, not a list of files.
    public static func isHLSMediaPlaylist(_ bytes: [UInt8]) -> Bool {
        guard let text = decodedText(bytes), startsWithExtendedM3UHeader(text) else { return false }
        let lines = playlistLines(text).map { trimmedLine($0) }.filter { !$0.isEmpty }
        let tags = [
            "#EXT-X-TARGETDURATION", "#EXT-X-STREAM-INF", "#EXT-X-I-FRAME-STREAM-INF", "#EXT-X-MEDIA-SEQUENCE",
            "#EXT-X-PLAYLIST-TYPE", "#EXT-X-ENDLIST", "#EXT-X-MAP", "#EXT-X-PART-INF", "#EXT-X-MEDIA:",
            "#EXT-X-INDEPENDENT-SEGMENTS", "#EXT-X-DISCONTINUITY-SEQUENCE",
        ]
        return lines.contains { line in tags.contains { line.hasPrefix($0) } }
    }

    /// The entries of the playlist in `bytes`, in order.
    ///
    /// - Parameters:
    ///   - bytes: the file's contents (UTF-8, UTF-16 with a byte-order mark, or legacy Windows-1252).
    ///   - playlistPath: where the playlist is, to resolve relative entries: a local path, or an `http(s)` URL
    ///     (relative entries then become URLs).
    /// - Throws: ``CastMediaServerError/Code/invalidPlaylist`` when `bytes` is not text or lists nothing.
    public static func entries(in bytes: [UInt8], playlistPath: String) throws -> [PlaylistEntry] {
        guard let text = decodedText(bytes) else {
            throw CastMediaServerError(.invalidPlaylist, "\(playlistPath) is not a text playlist (binary content)")
        }
        let lines = playlistLines(text).map { trimmedLine($0) }
        let firstLine = lines.first { !$0.isEmpty && !$0.hasPrefix(";") } ?? ""
        let isPLS = fileExtension(of: playlistPath) == "pls" || firstLine.lowercased() == "[playlist]"
        let base = PlaylistBase(playlistPath: playlistPath)
        let entries = isPLS ? plsEntries(lines, base: base) : m3uEntries(lines, base: base)
        guard !entries.isEmpty else {
            throw CastMediaServerError(.invalidPlaylist, "\(playlistPath) lists no media")
        }
        return entries
    }

    // MARK: - M3U

    private static func m3uEntries(_ lines: [Substring], base: PlaylistBase) -> [PlaylistEntry] {
        var entries: [PlaylistEntry] = []
        var pending: (title: String?, duration: Double?)?
        for line in lines where !line.isEmpty {
            if line.hasPrefix("#") {
                if line.prefix(8).uppercased() == "#EXTINF:" { pending = extendedInfo(line.dropFirst(8)) }
                continue
            }
            guard let location = base.location(of: line) else { continue }
            entries.append(PlaylistEntry(location: location, title: pending?.title, duration: pending?.duration))
            pending = nil
        }
        return entries
    }

    /// `123,Artist - Title` or `-1 tvg-name="a, b" group-title="x",Title`: the title follows the first comma
    /// outside quotes, the duration precedes the first space or comma.
    private static func extendedInfo(_ value: Substring) -> (title: String?, duration: Double?) {
        var inQuotes = false
        var comma: Substring.Index?
        for index in value.indices {
            if value[index] == "\"" {
                inQuotes.toggle()
            } else if value[index] == ",", !inQuotes {
                comma = index
                break
            }
        }
        let durationText = value[..<(comma ?? value.endIndex)].prefix { $0 != " " && $0 != "\t" }
        let duration = Double(durationText).flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
        let title = comma.map { trimmedLine(value[value.index(after: $0)...]) }
        return (title.flatMap { $0.isEmpty ? nil : String($0) }, duration)
    }

    // MARK: - PLS

    /// `FileN=`, `TitleN=` and `LengthN=` keys (any case), ordered by N. `NumberOfEntries` is not trusted:
    /// hand-edited files often get it wrong, and every `FileN` present is meant to play.
    private static func plsEntries(_ lines: [Substring], base: PlaylistBase) -> [PlaylistEntry] {
        var files: [Int: Substring] = [:]
        var titles: [Int: String] = [:]
        var lengths: [Int: Double] = [:]
        for line in lines {
            guard !line.hasPrefix(";"), !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { continue }
            let key = trimmedLine(line[..<equals]).lowercased()
            let value = trimmedLine(line[line.index(after: equals)...])
            for prefix in ["file", "title", "length"] where key.hasPrefix(prefix) {
                guard let number = Int(key.dropFirst(prefix.count)), number >= 0 else { continue }
                switch prefix {
                case "file": files[number] = value
                case "title": titles[number] = value.isEmpty ? nil : String(value)
                default: lengths[number] = Double(value).flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
                }
            }
        }
        return files.keys.sorted().compactMap { number in
            guard let value = files[number], let location = base.location(of: value) else { return nil }
            return PlaylistEntry(location: location, title: titles[number], duration: lengths[number])
        }
    }

    // MARK: - Text

    /// The text of `bytes`, or nil when it looks binary (a NUL, or more than 1% control characters).
    ///
    /// UTF-16 needs its byte-order mark; bytes that are not UTF-8 are read as Windows-1252, the encoding of
    /// most legacy `.m3u` files (`.m3u8` is meant to be UTF-8).
    static func decodedText(_ bytes: [UInt8]) -> String? {
        let isUTF16 = bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF])
        if !isUTF16, bytes.contains(0) { return nil }
        let text: String
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            text = decodeUTF8OrLegacy(bytes[3...])
        } else if isUTF16 {
            let littleEndian = bytes[0] == 0xFF
            let body = bytes[2...]
            let units = stride(from: body.startIndex, to: body.endIndex - 1, by: 2).map { index in
                littleEndian
                    ? UInt16(body[index]) | UInt16(body[index + 1]) << 8
                    : UInt16(body[index]) << 8 | UInt16(body[index + 1])
            }
            text = String(decoding: units, as: UTF16.self)
        } else {
            text = decodeUTF8OrLegacy(bytes[...])
        }
        var controls = 0
        var total = 0
        for scalar in text.unicodeScalars {
            total += 1
            switch scalar.value {
            case 0: return nil
            case 0x09, 0x0A, 0x0D: break
            case 0x01..<0x20, 0x7F: controls += 1
            default: break
            }
        }
        return controls * 100 > total ? nil : text
    }

    /// UTF-8 when the bytes are valid UTF-8, else Windows-1252; never fails, and stays fast on binary input
    /// (unlike `String(decoding:as:)`, whose repairs are slow when most of the input is invalid).
    static func decodeUTF8OrLegacy(_ bytes: ArraySlice<UInt8>) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var scalars = String.UnicodeScalarView()
        for byte in bytes {
            let value = byte >= 0x80 && byte < 0xA0 ? windows1252[Int(byte - 0x80)] : UInt32(byte)
            scalars.append(Unicode.Scalar(value) ?? Unicode.Scalar(byte))
        }
        return String(scalars)
    }

    /// Windows-1252 0x80–0x9F; the five undefined bytes map to the C1 controls of the same value.
    private static let windows1252: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D,
        0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A,
        0x0153, 0x9D, 0x017E, 0x0178,
    ]

    /// Lines split at LF or CR (so CRLF leaves an empty line between, which every caller skips).
    ///
    /// Works on Unicode scalars, not characters: grapheme breaking is far slower on large or hostile input.
    static func playlistLines(_ text: String) -> [Substring] {
        text.unicodeScalars.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r" }.map(Substring.init)
    }

    /// `line` without leading and trailing white space.
    static func trimmedLine(_ line: Substring) -> Substring {
        let scalars = line.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isWhitespace($0) }),
            let last = scalars.lastIndex(where: { !isWhitespace($0) })
        else { return line[line.endIndex...] }
        return Substring(scalars[first...last])
    }

    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || (scalar.value > 0x7F && scalar.properties.isWhitespace)
    }

    /// Whether `text` starts with `#EXTM3U` (after a byte-order mark and white space): a cheap check before
    /// splitting a large text into lines.
    static func startsWithExtendedM3UHeader(_ text: String) -> Bool {
        let start = text.unicodeScalars.drop { $0 == "\u{FEFF}" || $0 == "\n" || $0 == "\r" || isWhitespace($0) }
        return Substring(start).hasPrefix("#EXTM3U")
    }

    private static func fileExtension(of path: String) -> String {
        let name = path.split(separator: "/").last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }
}

/// Where a playlist is, to resolve the entries it names relative to itself.
private struct PlaylistBase {
    /// The playlist's folder, without a trailing slash ("" for the current folder), when it is a local file.
    var folder: String?
    /// `scheme://authority` and the folder path (ending in "/") when the playlist was fetched from a URL.
    var origin: (scheme: String, authority: String, folder: String)?

    init(playlistPath: String) {
        if let url = ParsedURL(playlistPath), url.scheme != "file" {
            let path = String(url.path.prefix { $0 != "?" && $0 != "#" })
            let folder = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "/"
            origin = (url.scheme, url.authority, folder)
        } else {
            let path = ParsedURL(playlistPath).flatMap { $0.localPath } ?? playlistPath
            folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
            if folder == "", path.hasPrefix("/") { folder = "/" }
        }
    }

    /// What an entry line names, or nil for an empty one.
    func location(of entry: Substring) -> PlaylistEntry.Location? {
        guard !entry.isEmpty else { return nil }
        if let url = ParsedURL(String(entry)) {
            if url.scheme == "file" { return url.localPath.map { .file(normalizedPath($0)) } ?? .url(String(entry)) }
            return .url(String(entry))
        }
        // Playlists written on Windows use backslashes; a name with no slash at all is most likely one of those.
        var path = String(entry)
        if path.contains("\\"), !path.contains("/") { path = replacingBackslashes(path) }
        if let origin {
            if path.hasPrefix("//") { return .url("\(origin.scheme):\(path)") }
            let joined = path.hasPrefix("/") ? path : origin.folder + path
            return .url("\(origin.scheme)://\(origin.authority)\(normalizedPath(joined))")
        }
        if path.hasPrefix("/") { return .file(normalizedPath(path)) }
        let folder = folder ?? ""
        return .file(normalizedPath(folder.isEmpty ? path : folder == "/" ? "/" + path : folder + "/" + path))
    }
}

/// `scheme://authority/path` split apart, enough to tell URLs from paths and to resolve against them.
private struct ParsedURL {
    var scheme: String
    var authority: String
    var path: String

    /// Accepts `scheme://…` with a scheme of two letters or more (so `C:\` is not one), and `file:/path`.
    init?(_ text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon]
        guard scheme.count >= 2, let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        let rest = text[text.index(after: colon)...]
        self.scheme = scheme.lowercased()
        if rest.hasPrefix("//") {
            let afterSlashes = rest.dropFirst(2)
            let slash = afterSlashes.firstIndex(of: "/") ?? afterSlashes.endIndex
            authority = String(afterSlashes[..<slash])
            path = String(afterSlashes[slash...])
        } else if self.scheme == "file", rest.hasPrefix("/") {
            authority = ""
            path = String(rest)
        } else {
            return nil
        }
    }

    /// For a `file:` URL on this host: the percent-decoded path, without query or fragment.
    var localPath: String? {
        guard scheme == "file", authority.isEmpty || authority.lowercased() == "localhost" else { return nil }
        let raw = path.prefix { $0 != "?" && $0 != "#" }
        return raw.isEmpty ? nil : percentDecoded(raw)
    }
}

/// `%XX` escapes decoded as UTF-8 (Windows-1252 when that fails); malformed escapes are kept as written.
private func percentDecoded(_ text: Substring) -> String {
    let utf8 = Array(text.utf8)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(utf8.count)
    var index = 0
    while index < utf8.count {
        if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count,
            let high = percentHexValue(utf8[index + 1]), let low = percentHexValue(utf8[index + 2])
        {
            bytes.append(high << 4 | low)
            index += 3
        } else {
            bytes.append(utf8[index])
            index += 1
        }
    }
    return PlaylistFile.decodeUTF8OrLegacy(bytes[...])
}

private func percentHexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

/// Removes `.` and empty components and applies `..` lexically (never above the root of an absolute path).
private func normalizedPath(_ path: String) -> String {
    let isAbsolute = path.hasPrefix("/")
    var components: [Substring] = []
    for component in path.split(separator: "/") {
        switch component {
        case ".": continue
        case "..":
            if let last = components.last, last != ".." {
                components.removeLast()
            } else if !isAbsolute {
                components.append(component)
            }
        default: components.append(component)
        }
    }
    let joined = components.joined(separator: "/")
    return isAbsolute ? "/" + joined : joined.isEmpty ? "." : joined
}

private func replacingBackslashes(_ path: String) -> String {
    String(path.map { $0 == "\\" ? "/" : $0 })
}
