import NIOConcurrencyHelpers

/// What an item serves.
enum ShareContent: Sendable {
    /// One file, fixed when shared.
    case file(path: String)
    /// Files under a folder (its real path), addressed by relative path; never a listing.
    case folder(root: String)
    /// Bytes in memory (converted subtitles, say), with a strong validator and their creation time.
    case bytes([UInt8], entityTag: String, created: Int)
    /// Content made on demand.
    case responder(any MediaResponder)
    /// A live byte stream, fanned out to whoever is connected.
    case stream(LiveStream)
}

/// Where a request goes, decided from its path alone (file system checks come when opening).
enum ShareRoute: Sendable {
    case file(path: String, contentType: String)
    case folderEntry(root: String, relativePath: [String])
    case bytes([UInt8], contentType: String, entityTag: String, created: Int)
    case responder(any MediaResponder, MediaRequest)
    case stream(LiveStream, contentType: String)
}

/// The items a server shares, by token. Lookups are what every request does first, so they take one lock.
final class ShareRegistry: Sendable {
    private let shares = NIOLockedValueBox<[String: (media: SharedMedia, content: ShareContent)]>([:])

    func add(_ media: SharedMedia, _ content: ShareContent) {
        shares.withLockedValue { $0[media.id] = (media, content) }
    }

    @discardableResult
    func remove(_ id: String) -> ShareContent? {
        shares.withLockedValue { $0.removeValue(forKey: id)?.content }
    }

    func removeAll() -> [ShareContent] {
        shares.withLockedValue { all in
            defer { all.removeAll() }
            return all.values.map(\.content)
        }
    }

    func media(_ id: String) -> SharedMedia? {
        shares.withLockedValue { $0[id]?.media }
    }

    /// The token of the item `uri` names, when it is well formed (for the fetch log; no existence check).
    static func token(of uri: String) -> String? {
        guard let segments = RequestPath.segments(of: uri), let first = segments.first else { return nil }
        return first
    }

    /// The route for a request URI, or `nil` (404) when the path is malformed, names no item, or names a single
    /// item by another name.
    func route(_ uri: String, peer: String?, isHead: Bool) -> (media: SharedMedia, route: ShareRoute)? {
        guard let segments = RequestPath.segments(of: uri), let token = segments.first,
            let (media, content) = shares.withLockedValue({ $0[token] })
        else { return nil }
        let rest = Array(segments.dropFirst())
        switch content {
        case .file(let path):
            guard rest == [media.name] else { return nil }
            return (media, .file(path: path, contentType: media.contentType))
        case .bytes(let bytes, let tag, let created):
            guard rest == [media.name] else { return nil }
            return (media, .bytes(bytes, contentType: media.contentType, entityTag: tag, created: created))
        case .stream(let stream):
            guard rest == [media.name] else { return nil }
            return (media, .stream(stream, contentType: media.contentType))
        case .folder(let root):
            guard !rest.isEmpty else { return nil }
            return (media, .folderEntry(root: root, relativePath: rest))
        case .responder(let responder):
            guard !rest.isEmpty else { return nil }
            let request = MediaRequest(path: rest.joined(separator: "/"), peer: peer, isHead: isHead)
            return (media, .responder(responder, request))
        }
    }
}

/// Request paths, decoded strictly: a path that could mean something else on disk is refused, not repaired.
package enum RequestPath {
    /// The percent-decoded segments of `uri`'s path (query and fragment dropped), or `nil` when any segment is
    /// empty, `.` or `..` (also when encoded), holds an encoded `/` or NUL, or has a malformed escape.
    static func segments(of uri: String) -> [String]? {
        var path = Substring(uri)
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        guard path.hasPrefix("/") else { return nil }
        var result: [String] = []
        for raw in path.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            guard let segment = decode(raw), !segment.isEmpty, segment != ".", segment != "..",
                !segment.contains("/"), !segment.contains("\0")
            else { return nil }
            result.append(segment)
        }
        return result
    }

    /// `text` with its `%XX` escapes decoded, or `nil` for a malformed escape or bytes that are not UTF-8.
    package static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters, so any file name makes a valid URL.
    package static func encode(_ segment: String) -> String {
        var result = ""
        for byte in segment.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                result.unicodeScalars.append("%")
                result.unicodeScalars.append(hex[Int(byte >> 4)])
                result.unicodeScalars.append(hex[Int(byte & 0xF)])
            }
        }
        return result
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// A new unguessable token: 128 random bits in hex.
    static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let value = generator.next() as UInt64
            let hex = String(value, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}
