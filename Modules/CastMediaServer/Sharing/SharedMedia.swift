/// One thing the media server serves, and the URL a device fetches it at.
///
/// Put ``url`` in `MediaInformation.contentID` (or a track's `trackContentId`). The URL holds an unguessable
/// token: the server answers nothing else, lists nothing, and forgets the item when it is withdrawn.
public struct SharedMedia: Sendable, Hashable, Identifiable {
    /// The item's token, unique for the server's lifetime.
    public let id: String
    /// The URL to give the device.
    public let url: String
    /// The name shown in the URL and to people (a file's name, percent-decoded).
    public let name: String
    /// The content type served (from the extension, or the content when the extension says nothing or lies).
    public let contentType: String
    /// The size in bytes, when known (files and byte buffers; not live streams or folders).
    public let size: UInt64?
    /// The file or folder served, when the item is one.
    public let path: String?
}

/// What a ``MediaResponder`` is asked: a request under its item's URL.
public struct MediaRequest: Sendable {
    /// The path below the item's URL, percent-decoded segments joined by `/` (for example `segment-00012.ts`).
    public var path: String
    /// The peer's address.
    public var peer: String?
    /// Whether this is a HEAD request (the body is not sent, but the length must be right).
    public var isHead: Bool
}

/// What a ``MediaResponder`` answers; the server adds ranges, validators and CORS.
public enum MediaResponse: Sendable {
    /// A file on disk, served with ranges (`contentType` nil: from its extension or content).
    case file(path: String, contentType: String?)
    /// Bytes in memory, served with ranges.
    case bytes([UInt8], contentType: String)
    /// Nothing there: 404.
    case notFound
}

/// Content made on demand (an HLS playlist and its segments, say): asked for each request under its item's URL.
public protocol MediaResponder: Sendable {
    /// The response to `request`. Thrown errors are answered 500 and logged.
    func respond(to request: MediaRequest) async throws -> MediaResponse

    /// Ends whatever work the responder does (a transcoder's ffmpeg), when its item is withdrawn or the server
    /// stops. The default does nothing.
    func stop() async
}

extension MediaResponder {
    /// Does nothing: most responders hold no work between requests.
    public func stop() async {}
}
