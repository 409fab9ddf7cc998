import CastService
import CastTransport
import Foundation
import Testing

/// Local files through castd: served from the media folders only, with their subtitles, never from elsewhere.
@Suite struct LocalFileTests {
    /// A media folder holding a real one-second clip (made by ffmpeg) and its sidecar subtitles; beside it, a
    /// file outside the folder and a symbolic link inside that points to it.
    struct Library {
        let root: String
        var folder: String { root + "/media" }
        var outside: String { root + "/secret.m4a" }

        init() throws {
            root = temporaryStateDirectory()
            try FileManager.default.createDirectory(atPath: root + "/media/sub", withIntermediateDirectories: true)
            let ffmpeg = Process()
            ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            ffmpeg.arguments = [
                "ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i",
                "sine=frequency=440:duration=1:sample_rate=48000", "-c:a", "aac", root + "/media/sub/clip.m4a",
            ]
            try ffmpeg.run()
            ffmpeg.waitUntilExit()
            guard ffmpeg.terminationStatus == 0 else {
                throw CastServiceError(.invalidConfiguration, "ffmpeg failed; Tools/test.sh installs it", httpStatus: 0)
            }
            try "1\n00:00:00,000 --> 00:00:01,000\nHello\n".write(
                toFile: root + "/media/sub/clip.en.srt",
                atomically: true,
                encoding: .utf8
            )
            try FileManager.default.copyItem(atPath: root + "/media/sub/clip.m4a", toPath: outside)
            try FileManager.default.createSymbolicLink(atPath: root + "/media/link.m4a", withDestinationPath: outside)
        }

        func remove() { try? FileManager.default.removeItem(atPath: root) }
    }

    @Test func aFileInAMediaFolderIsServedWithItsSubtitles() async throws {
        let library = try Library()
        defer { library.remove() }
        try await withHub(mediaFolders: [library.folder]) { hub, emulator in
            let id = hub.devices[0].device.id
            try await withServer(hub) { port in
                let reply = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"file":"sub/clip.m4a"}"#
                )
                #expect(reply.status == 200, "\(reply.body)")
                #expect(reply.json?["status"]?["media"]?["title"]?.stringValue == "clip")
                #expect(reply.json?["status"]?["media"]?["activeTrackIds"]?[0]?.intValue == 1)

                let loaded = try #require(emulator.devices[0].mediaStatus?["media"])
                let url = try #require(loaded["contentId"]?.stringValue)
                #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/clip.m4a"))
                #expect(loaded["contentType"]?.stringValue == "audio/mp4")
                let track = try #require(loaded["tracks"]?[0])
                #expect(track["language"]?.stringValue == "en")
                #expect(track["trackContentType"]?.stringValue == "text/vtt")

                // The device can fetch both, from this machine.
                let media = try await Self.fetch(url)
                #expect(media.status == 200)
                #expect(media.header("Content-Length").flatMap(Int.init) == Self.size(library.folder + "/sub/clip.m4a"))
                let subtitles = try await Self.fetch(try #require(track["trackContentId"]?.stringValue))
                #expect(subtitles.body.hasPrefix("WEBVTT"))
                #expect(subtitles.body.contains("Hello"))
            }
        }
    }

    @Test func pathsLeavingTheFoldersAreRefusedAlike() async throws {
        let library = try Library()
        defer { library.remove() }
        try await withHub(mediaFolders: [library.folder]) { hub, emulator in
            let id = hub.devices[0].device.id
            try await withServer(hub) { port in
                for path in [
                    library.outside,  // absolute, outside
                    "../secret.m4a",  // traversal
                    library.folder + "/../secret.m4a",
                    "link.m4a",  // a symbolic link inside, leading out
                    "sub/missing.m4a",  // nothing there
                    "sub",  // a folder
                    "/etc/passwd",
                ] {
                    let reply = try await TestHTTP.send(
                        port: port,
                        "POST",
                        "/v1/devices/\(id)/media",
                        json: #"{"file":"\#(path)"}"#
                    )
                    #expect(reply.status == 403, "\(path)")
                    #expect(reply.json?["code"]?.stringValue == "forbiddenPath", "\(path)")
                    #expect(reply.json?["field"]?.stringValue == "file")
                    #expect(reply.body.contains("is not a readable file inside the media folders"))
                }
                let both = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"file":"sub/clip.m4a","url":"http://example.com/a.mp4"}"#
                )
                #expect(both.status == 400)
                #expect(both.json?["field"]?.stringValue == "file")
                let neither = try await TestHTTP.send(port: port, "POST", "/v1/devices/\(id)/media", json: "{}")
                #expect(neither.status == 400)
                #expect(neither.json?["field"]?.stringValue == "url")
                #expect(emulator.devices[0].launches.isEmpty)
            }
        }
    }

    @Test func theFoldersCastableFilesAreListedWithoutFollowingLinks() async throws {
        let library = try Library()
        defer { library.remove() }
        try "x".write(toFile: library.folder + "/.hidden.mp4", atomically: true, encoding: .utf8)
        try "x".write(toFile: library.folder + "/notes.txt", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: library.folder + "/loop",
            withDestinationPath: library.folder
        )
        try await withHub(mediaFolders: [library.folder]) { hub, _ in
            try await withServer(hub) { port in
                let reply = try await TestHTTP.send(port: port, "GET", "/v1/media-files")
                #expect(reply.status == 200)
                let files = reply.json?["files"]?.arrayValue ?? []
                // The clip only: not its subtitles, the hidden file, the text, the link out or the link in a loop.
                #expect(files.map { $0["name"]?.stringValue } == ["sub/clip.m4a"])
                #expect(files.first?["file"]?.stringValue == library.folder + "/sub/clip.m4a")
                #expect(files.first?["folder"]?.stringValue == library.folder)
                #expect(files.first?["contentType"]?.stringValue == "audio/mp4")
                #expect(files.first?["size"]?.intValue == Self.size(library.folder + "/sub/clip.m4a"))
                #expect(reply.json?["truncated"]?.boolValue == false)

                try "x".write(toFile: library.folder + "/a.webm", atomically: true, encoding: .utf8)
                let limited = try await TestHTTP.send(port: port, "GET", "/v1/media-files?limit=1")
                #expect(limited.json?["files"]?.arrayValue?.map { $0["name"]?.stringValue } == ["a.webm"])
                #expect(limited.json?["truncated"]?.boolValue == true)

                let invalid = try await TestHTTP.send(port: port, "GET", "/v1/media-files?limit=0")
                #expect(invalid.status == 400)
                #expect(invalid.json?["field"]?.stringValue == "limit")
            }
        }
        try await withHub { hub, _ in
            try await withServer(hub) { port in
                let reply = try await TestHTTP.send(port: port, "GET", "/v1/media-files")
                #expect(reply.json?["files"]?.arrayValue?.isEmpty == true)
            }
        }
    }

    @Test func withoutMediaFoldersNoFileIsCast() async throws {
        let library = try Library()
        defer { library.remove() }
        try await withHub { hub, emulator in
            let id = hub.devices[0].device.id
            try await withServer(hub) { port in
                let reply = try await TestHTTP.send(
                    port: port,
                    "POST",
                    "/v1/devices/\(id)/media",
                    json: #"{"file":"\#(library.folder)/sub/clip.m4a"}"#
                )
                #expect(reply.status == 403)
                #expect(reply.json?["detail"]?.stringValue?.contains("no media folder is configured") == true)
                #expect(emulator.devices[0].launches.isEmpty)
            }
        }
    }

    static func fetch(_ url: String) async throws -> HTTPReply {
        let rest = try #require(url.split(separator: "//", maxSplits: 1).last)
        let slash = try #require(rest.firstIndex(of: "/"))
        let port = try #require(rest[..<slash].split(separator: ":").last.flatMap { Int($0) })
        return try await TestHTTP.send(port: port, "GET", String(rest[slash...]))
    }

    static func size(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
    }
}
