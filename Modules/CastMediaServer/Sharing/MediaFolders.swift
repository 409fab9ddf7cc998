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
}
