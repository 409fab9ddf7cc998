import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A regular file opened for one response: its handle (closed once the body is written), size and validators.
/// Opening is blocking I/O, so it runs on the server's thread pool, never on an event loop.
struct OpenedFile {
    let handle: NIOFileHandle
    let size: UInt64
    let modified: Int
    let entityTag: String
    let contentType: String

    /// Opens `path` if it is a regular file; when `root` is given, only if its real path lies inside `root`
    /// (which must itself be a real path), so `..`, symlinks and bind tricks cannot leave the shared folder.
    static func openForReading(path: String, inside root: String?, contentType: String?) -> OpenedFile? {
        var target = path
        if let root {
            guard let resolved = realPath(path), lies(resolved, inside: root) else { return nil }
            target = resolved
        }
        let descriptor = open(target, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            return nil
        }
        let type = contentType ?? ContentTypes.forFile(named: target, prefix: readPrefix(descriptor))
        let size = UInt64(info.st_size)
        let modified = Int(info.st_mtim.tv_sec)
        let tag =
            "\"\(String(UInt64(info.st_ino), radix: 16))-\(String(size, radix: 16))-"
            + "\(String(modified, radix: 16))\(String(info.st_mtim.tv_nsec, radix: 16))\""
        return OpenedFile(
            handle: NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor),
            size: size,
            modified: modified,
            entityTag: tag,
            contentType: type
        )
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether the real path `resolved` lies inside `root` (a real path too): below it, not merely beginning with
    /// the same characters (`/srv/media2` is not inside `/srv/media`).
    static func lies(_ resolved: String, inside root: String) -> Bool {
        resolved.hasPrefix(root.hasSuffix("/") ? root : root + "/")
    }

    /// The first bytes, as many as sniffing the content type looks at.
    static func readPrefix(_ descriptor: CInt) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: MediaSniffer.prefixLength)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        return count > 0 ? Array(buffer.prefix(count)) : []
    }
}

/// Content types: the content's own signature wins over the extension, which can lie (a `.mp4` that is
/// Matroska plays as Matroska); the extension decides when the content says nothing.
enum ContentTypes {
    static func forFile(named name: String, prefix: [UInt8]) -> String {
        if let sniffed = MediaSniffer.sniff(prefix) { return sniffed.mimeType }
        return forName(name)
    }

    static func forName(_ name: String) -> String {
        let base = name.split(separator: "/").last.map(String.init) ?? name
        guard let dot = base.lastIndex(of: ".") else { return "application/octet-stream" }
        return MediaSniffer.mimeType(forExtension: String(base[base.index(after: dot)...]))
            ?? "application/octet-stream"
    }
}
