#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Small POSIX file helpers the modules and apps of this package share (state files, caches, certificates),
/// so none of them needs Foundation for a read or a `mkdir -p`.
package enum LocalFiles {
    /// The whole file, or `nil` when it cannot be opened or read (`errno` says why); reading stops with `nil` past
    /// `limit` bytes.
    package static func read(_ path: String, limit: Int = .max) -> [UInt8]? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 {
                if ferror(file) != 0 { return nil }
                break
            }
            bytes += buffer[0..<count]
            if bytes.count > limit { return nil }
        }
        return bytes
    }

    /// Creates `path` and its missing parents (mode 0700); `false` when a component cannot be created.
    @discardableResult
    package static func makeDirectories(_ path: String) -> Bool {
        var current = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            current += "/" + component
            if mkdir(current, 0o700) != 0, errno != EEXIST { return false }
        }
        return true
    }

    /// Replaces `path` whole: writes a temporary file beside it, then renames it over `path`, so a reader sees the
    /// old content or the new, never half; `synced` also flushes it to disk first. `false` when any step fails.
    @discardableResult
    package static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, synced: Bool = false)
        -> Bool
    {
        let temporary = path + ".tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard descriptor >= 0 else { return false }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let flushed = synced ? fsync(descriptor) == 0 : true
        close(descriptor)
        guard written == bytes.count, flushed, rename(temporary, path) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    /// Where the symbolic link at `path` points (`readlink`), or `nil` when it is no link or cannot be read.
    package static func resolvedLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Writes `text` to a descriptor at once (unbuffered), e.g. standard output for lines scripts wait for.
    package static func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written <= 0 { return }
            offset += written
        }
    }
}

extension LocalFiles {
    /// The last component of `path` (`/a/b.mp4` → `b.mp4`), trailing slashes ignored: NSString's
    /// `lastPathComponent`.
    package static func lastComponent(of path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        guard trimmed != "/", let slash = trimmed.lastIndex(of: "/") else { return trimmed }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// A file name for `id` (a device's id, say): its letters, digits and `-._` kept, anything else (a `/`, a
    /// space) as `_`, at most 120 characters.
    package static func fileName(for id: String) -> String {
        String(id.map { $0.isLetter || $0.isNumber || "-._".contains($0) ? $0 : "_" }.prefix(120))
    }

    /// `path` without its last component (`/a/b.mp4` → `/a`, `/a` → `/`, `b.mp4` → empty): NSString's
    /// `deletingLastPathComponent`.
    package static func directory(of path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        let parent = withoutTrailingSlashes(String(trimmed[..<slash]))
        return parent.isEmpty ? "/" : parent
    }

    /// The extension of the last component without its dot (`/a/b.tar.gz` → `gz`), empty when it has none (a
    /// leading dot starts a name, not an extension): NSString's `pathExtension`.
    package static func fileExtension(of path: String) -> String {
        let name = lastComponent(of: path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// The last component without its extension (`/a/b.mp4` → `b`).
    package static func baseName(of path: String) -> String {
        let name = lastComponent(of: path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// `name` inside `directory`, with one slash between them: NSString's `appendingPathComponent`.
    package static func path(_ name: String, in directory: String) -> String {
        guard !directory.isEmpty else { return name }
        return withoutTrailingSlashes(directory) == "/" ? "/" + name : withoutTrailingSlashes(directory) + "/" + name
    }

    private static func withoutTrailingSlashes(_ path: String) -> String {
        var result = Substring(path)
        while result.count > 1, result.hasSuffix("/") { result = result.dropLast() }
        return String(result)
    }
}
