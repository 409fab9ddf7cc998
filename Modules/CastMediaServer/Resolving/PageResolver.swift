import CastTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A web page (a video site's page, an HTML page with a `<video>`) turned into a URL a Cast device can play.
public struct ResolvedPage: Sendable, Hashable {
    /// The stream's URL.
    public var url: String
    /// The content type for `MediaInformation.contentType`.
    public var contentType: String
    /// The page's title, when it gives one.
    public var title: String?
    /// The artwork.
    public var thumbnail: String?
    /// Whether the stream is live (no end, no seeking).
    public var isLive: Bool
    /// The duration in seconds, when the page gives it.
    public var duration: Double?
}

/// Resolves page URLs with yt-dlp, when it is installed.
public enum PageResolver {
    /// Whether a URL looks like a page rather than media: its path names no media or playlist type.
    public static func looksLikePage(_ url: String) -> Bool {
        guard let components = URLComponents(string: url), ["http", "https"].contains(components.scheme ?? "")
        else { return false }
        let path = components.path
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return true }
        return MediaSniffer.mimeType(forExtension: String(path[path.index(after: dot)...])) == nil
    }

    /// The stream behind `page`, its title and artwork: one format with audio and video that plays without
    /// merging (MP4 first), as `yt-dlp -J` describes it.
    ///
    /// - Throws: ``CastMediaServerError/Code/toolMissing`` without yt-dlp; ``CastMediaServerError/Code/toolFailed``
    ///   when yt-dlp finds nothing to play there.
    public static func resolve(_ page: String, ytDLP: String = "yt-dlp") async throws -> ResolvedPage {
        let tool = try ExternalTool.require(ytDLP, for: "casting a web page")
        let output = try await tool.output(arguments: [
            "-J", "--no-playlist", "--no-warnings", "-f", "b[ext=mp4]/b[protocol^=m3u8]/b", "--", page,
        ])
        return try parse(Data(output.utf8), page: page)
    }

    /// Reads yt-dlp's JSON description of one video.
    static func parse(_ json: Data, page: String) throws -> ResolvedPage {
        guard let info = (try? JSONValue(parsing: String(decoding: json, as: UTF8.self)))?.objectValue else {
            throw CastMediaServerError(.toolFailed, "yt-dlp's answer about \(page) is not JSON")
        }
        let format = info["requested_formats"]?.arrayValue?.first?.objectValue ?? info
        guard let url = info["url"]?.stringValue ?? format["url"]?.stringValue else {
            throw CastMediaServerError(.toolFailed, "yt-dlp found no single stream to play at \(page)")
        }
        let protocolName = (info["protocol"]?.stringValue ?? "").lowercased()
        let fileExtension = (info["ext"]?.stringValue ?? "").lowercased()
        let contentType =
            protocolName.hasPrefix("m3u8")
            ? "application/x-mpegURL"
            : protocolName.hasPrefix("http_dash")
                ? "application/dash+xml"
                : MediaSniffer.mimeType(forExtension: fileExtension) ?? "video/mp4"
        return ResolvedPage(
            url: url,
            contentType: contentType,
            title: info["title"]?.stringValue,
            thumbnail: info["thumbnail"]?.stringValue,
            isLive: info["is_live"]?.boolValue ?? false,
            duration: info["duration"]?.doubleValue
        )
    }
}
