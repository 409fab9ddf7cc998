#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folders a service may cast files from, and the one check every requested path passes: its real path
/// (after `..` and every symbolic link are resolved) lies inside one of them and is a regular file.
///
/// A path that does not exist, lies outside, or leaves through a symbolic link is answered alike (`nil`), so
/// the check tells a client nothing about files outside the folders.
public struct MediaFolders: Sendable {
    /// The folders as configured.
    public let paths: [String]
    /// Their real paths, for the containment check; folders that do not exist are left out.
    private let roots: [String]

    /// The folders at `paths`; relative paths are relative to the working directory.
    public init(_ paths: [String]) {
        self.paths = paths
        roots = paths.compactMap { path in
            OpenedFile.realPath(path).flatMap { FileKind.isDirectory($0) ? $0 : nil }
        }
    }

    /// Whether no folder is configured (or none exists): then no local file may be cast.
    public var isEmpty: Bool { roots.isEmpty }

    /// The real path of the regular file `path` names inside one of the folders: an absolute path, or one relative
    /// to a folder (the folders are tried in order). `nil` when there is none.
    public func file(_ path: String) -> String? {
        guard !path.isEmpty, !path.contains("\0") else { return nil }
        let candidates = path.hasPrefix("/") ? [path] : roots.map { $0 + "/" + path }
        for candidate in candidates {
            guard let real = OpenedFile.realPath(candidate), FileKind.isRegularFile(real) else { continue }
            if roots.contains(where: { OpenedFile.lies(real, inside: $0) }) { return real }
        }
        return nil
    }

    /// A castable file found in a folder.
    public struct File: Sendable, Hashable {
        /// The path to cast it by: its folder as configured, a slash, and ``name``.
        public var path: String
        /// Its path inside the folder (`Films/Brazil.mkv`).
        public var name: String
        /// The folder as configured.
        public var folder: String
        /// Its size in bytes.
        public var size: Int
        /// Its content type, by extension.
        public var contentType: String
    }

    /// The audio, video and image files in the folders, sorted by folder and name, at most `limit` of them (the
    /// second value says whether there were more). Symbolic links and hidden entries are skipped, so the walk
    /// never leaves a folder nor loops; unreadable subfolders are skipped quietly.
    public func files(limit: Int = 5000) -> (files: [File], truncated: Bool) {
        var found: [File] = []
        var truncated = false
        for (folder, root) in zip(paths, paths.map { OpenedFile.realPath($0) }) {
            guard let root, FileKind.isDirectory(root) else { continue }
            var pending = [""]
            while let relative = pending.popLast() {
                for entry in Self.entries(of: relative.isEmpty ? root : root + "/" + relative) {
                    let name = relative.isEmpty ? entry.name : relative + "/" + entry.name
                    if entry.isDirectory {
                        pending.append(name)
                    } else if let type = MediaSniffer.mimeType(forURL: entry.name),
                        type.hasPrefix("video/") || type.hasPrefix("audio/") || type.hasPrefix("image/")
                    {
                        guard found.count < limit else {
                            truncated = true
                            break
                        }
                        let separator = folder.hasSuffix("/") ? "" : "/"
                        found.append(
                            File(
                                path: folder + separator + name,
                                name: name,
                                folder: folder,
                                size: entry.size,
                                contentType: type
                            )
                        )
                    }
                }
            }
        }
        found.sort { ($0.folder, $0.name) < ($1.folder, $1.name) }
        return (found, truncated)
    }

    /// The directories and regular files in `directory` (not following symbolic links; no hidden entries).
    private static func entries(of directory: String) -> [(name: String, isDirectory: Bool, size: Int)] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var entries: [(name: String, isDirectory: Bool, size: Int)] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard !name.hasPrefix(".") else { continue }
            var info = stat()
            guard lstat(directory + "/" + name, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: entries.append((name, true, 0))
            case S_IFREG: entries.append((name, false, Int(info.st_size)))
            default: continue
            }
        }
        return entries
    }
}
