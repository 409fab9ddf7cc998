import CastTransport
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A size-bounded disk cache of artwork (GCKUIImageCache): images are fetched once, stored under
/// `$XDG_CACHE_HOME/cast/images` (or `~/.cache/cast/images`), and the least recently used files are removed
/// when the cache grows past its limit. Concurrent requests for one URL share one download.
public final class ImageCache: Sendable {
    /// The cache directory.
    public let directory: String
    /// The most bytes the cache keeps on disk. Defaults to 64 MiB.
    public let maximumBytes: Int
    private let fetcher: HTTPFetcher
    private let inFlight = NIOLockedValueBox<[String: Task<[UInt8], any Error>]>([:])

    /// Creates a cache.
    ///
    /// - Parameters:
    ///   - directory: Where files go; `nil` for the XDG cache directory.
    ///   - maximumBytes: The size bound.
    ///   - fetcher: How images are downloaded.
    public init(directory: String? = nil, maximumBytes: Int = 64 << 20, fetcher: HTTPFetcher) {
        self.directory = directory ?? Self.defaultDirectory()
        self.maximumBytes = maximumBytes
        self.fetcher = fetcher
    }

    /// `$XDG_CACHE_HOME/cast/images`, or `~/.cache/cast/images`.
    public static func defaultDirectory() -> String {
        if let cache = getenv("XDG_CACHE_HOME").map({ String(cString: $0) }), !cache.isEmpty {
            return cache + "/cast/images"
        }
        return (getenv("HOME").map { String(cString: $0) } ?? "/tmp") + "/.cache/cast/images"
    }

    /// The image at `url`, from disk when cached, else downloaded and stored.
    ///
    /// - Throws: ``CastMediaError`` with ``CastMediaError/Code/imageDownloadFailed``.
    public func image(for url: String) async throws -> [UInt8] {
        if let cached = cachedImage(for: url) { return cached }
        let (task, isNew) = inFlight.withLockedValue { tasks -> (Task<[UInt8], any Error>, Bool) in
            if let existing = tasks[url] { return (existing, false) }
            let task = Task { [fetcher] in try await fetcher.fetch(url) }
            tasks[url] = task
            return (task, true)
        }
        defer { if isNew { _ = inFlight.withLockedValue { $0.removeValue(forKey: url) } } }
        let bytes = try await task.value
        if isNew { store(bytes, for: url) }
        return bytes
    }

    /// The cached image at `url`, without downloading; a hit marks the file as recently used.
    public func cachedImage(for url: String) -> [UInt8]? {
        let path = self.path(for: url)
        guard let bytes = LocalFiles.read(path) else { return nil }
        utimes(path, nil)
        return bytes
    }

    /// The file that holds (or would hold) the image at `url`.
    public func path(for url: String) -> String {
        // FNV-1a over the URL: stable across runs and processes, unlike Swift's hashValue.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in url.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "\(directory)/\(String(repeating: "0", count: 16 - hex.count))\(hex)-\(url.utf8.count).img"
    }

    /// Bytes currently on disk.
    public var totalBytes: Int { entries().reduce(0) { $0 + $1.size } }

    /// Deletes every cached file.
    public func removeAll() {
        for entry in entries() { unlink(entry.path) }
    }

    private func store(_ bytes: [UInt8], for url: String) {
        guard bytes.count <= maximumBytes, LocalFiles.makeDirectories(directory) else { return }
        guard LocalFiles.writeAtomically(bytes, to: path(for: url)) else { return }
        evict()
    }

    /// Removes least recently used files until the cache fits.
    private func evict() {
        var files = entries().sorted { $0.modified < $1.modified }
        var total = files.reduce(0) { $0 + $1.size }
        while total > maximumBytes, !files.isEmpty {
            let oldest = files.removeFirst()
            unlink(oldest.path)
            total -= oldest.size
        }
    }

    private struct Entry {
        var path: String
        var size: Int
        var modified: Double
    }

    private func entries() -> [Entry] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var result: [Entry] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasSuffix(".img") else { continue }
            let path = directory + "/" + name
            var info = stat()
            guard stat(path, &info) == 0 else { continue }
            let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
            result.append(Entry(path: path, size: Int(info.st_size), modified: modified))
        }
        return result
    }
}
