import Foundation
import NIOCore
import Testing

@testable import CastMediaServer

/// The media server over real loopback sockets: ranges, validators, CORS, tokens and traversal, streams,
/// responders, and what it tells about who fetched.
@Suite struct MediaServerTests {
    let folder: TemporaryFolder
    let server: MediaServer

    init() async throws {
        folder = try TemporaryFolder()
        server = try await MediaServer.start(reaching: "127.0.0.1")
    }

    private func get(_ path: String, method: String = "GET", _ headers: [(String, String)] = []) async throws
        -> RawHTTPResponse
    {
        try await RawHTTPClient.exchange(port: server.port, method: method, path: path, headers: headers)
    }

    private func path(of media: SharedMedia, on server: MediaServer? = nil) -> String {
        String(media.url.dropFirst((server ?? self.server).baseURL.count))
    }

    @Test func listensOnTheAddressThatRoutesToTheDevice() async throws {
        #expect(server.address == "127.0.0.1")
        #expect(server.addressReason.contains("127.0.0.1"))
        #expect(server.baseURL == "http://127.0.0.1:\(server.port)")
        await server.stop()
    }

    @Test func servesAWholeFileWithValidatorsAndCORS() async throws {
        let bytes = patternBytes(10_000)
        let media = try server.share(file: try folder.write("clip.mp4", bytes))
        #expect(media.name == "clip.mp4")
        #expect(media.size == 10_000)
        #expect(media.url.hasSuffix("/clip.mp4"))
        let response = try await get(path(of: media))
        #expect(response.status == 200)
        #expect(response.body == bytes)
        #expect(response.header("Content-Length") == "10000")
        #expect(response.header("Accept-Ranges") == "bytes")
        #expect(response.header("Content-Type") == "video/mp4")
        #expect(response.header("Access-Control-Allow-Origin") == "*")
        #expect(response.header("ETag")?.hasPrefix("\"") == true)
        #expect(response.header("Last-Modified")?.hasSuffix("GMT") == true)
        await server.stop()
    }

    @Test(
        arguments: [
            ("bytes=0-99", 206, "bytes 0-99/1000", 0..<100),
            ("bytes=990-", 206, "bytes 990-999/1000", 990..<1000),
            ("bytes=-10", 206, "bytes 990-999/1000", 990..<1000),
            ("bytes=0-", 206, "bytes 0-999/1000", 0..<1000),
            ("bytes=500-5000", 206, "bytes 500-999/1000", 500..<1000),
            ("bytes=-5000", 206, "bytes 0-999/1000", 0..<1000),
            ("bytes=1000-", 416, "bytes */1000", 0..<0),
            ("bytes=-0", 416, "bytes */1000", 0..<0),
            ("bytes=0-1,5-6", 200, nil, 0..<1000),
            ("bytes=9-3", 200, nil, 0..<1000),
            ("items=0-3", 200, nil, 0..<1000),
            ("bytes=abc", 200, nil, 0..<1000),
        ] as [(String, Int, String?, Range<Int>)]
    )
    func answersRanges(range: String, status: Int, contentRange: String?, bytes: Range<Int>) async throws {
        let content = patternBytes(1000)
        let media = try server.share(file: try folder.write("a.mp4", content))
        let response = try await get(path(of: media), [("Range", range)])
        #expect(response.status == status)
        #expect(response.header("Content-Range") == contentRange)
        #expect(response.body == Array(content[bytes]))
        #expect(response.header("Content-Length") == "\(bytes.count)")
        #expect(response.header("Access-Control-Allow-Origin") == "*")
        await server.stop()
    }

    @Test func headSendsTheHeadersOnly() async throws {
        let media = try server.share(file: try folder.write("a.mp4", patternBytes(4321)))
        let response = try await get(path(of: media), method: "HEAD")
        #expect(response.status == 200)
        #expect(response.header("Content-Length") == "4321")
        #expect(response.bodyCount == 0)
        let ranged = try await get(path(of: media), method: "HEAD", [("Range", "bytes=100-")])
        #expect(ranged.status == 206)
        #expect(ranged.header("Content-Length") == "4221")
        #expect(ranged.bodyCount == 0)
        await server.stop()
    }

    @Test func conditionalRequests() async throws {
        let content = patternBytes(2000)
        let media = try server.share(file: try folder.write("a.mp4", content))
        let first = try await get(path(of: media))
        let tag = try #require(first.header("ETag"))
        let modified = try #require(first.header("Last-Modified"))

        #expect(try await get(path(of: media), [("If-None-Match", tag)]).status == 304)
        #expect(try await get(path(of: media), [("If-None-Match", "\"other\", \(tag)")]).status == 304)
        #expect(try await get(path(of: media), [("If-None-Match", "\"other\"")]).status == 200)
        #expect(try await get(path(of: media), [("If-Modified-Since", modified)]).status == 304)

        let stillSame = try await get(path(of: media), [("Range", "bytes=10-19"), ("If-Range", tag)])
        #expect(stillSame.status == 206)
        #expect(stillSame.body == Array(content[10..<20]))
        let byDate = try await get(path(of: media), [("Range", "bytes=10-19"), ("If-Range", modified)])
        #expect(byDate.status == 206)
        let changed = try await get(path(of: media), [("Range", "bytes=10-19"), ("If-Range", "\"stale\"")])
        #expect(changed.status == 200)
        #expect(changed.body == content)
        await server.stop()
    }

    @Test func answersOnlyTheTokenAndTheName() async throws {
        let media = try server.share(file: try folder.write("a.mp4", patternBytes(10)))
        let token = media.id
        #expect(token.count == 32)
        #expect(try await get(path(of: media)).status == 200)
        #expect(try await get("/\(token)/other.mp4").status == 404)
        #expect(try await get("/\(token)/").status == 404)
        #expect(try await get("/\(token)").status == 404)
        #expect(try await get("/").status == 404)
        #expect(try await get("/0123456789abcdef0123456789abcdef/a.mp4").status == 404)
        #expect(try await get(path(of: media) + "?t=1").status == 200)
        let refused = try await get("/nothing")
        #expect(refused.header("Access-Control-Allow-Origin") == "*")
        await server.withdraw(media)
        #expect(try await get(path(of: media)).status == 404)
        await server.stop()
    }

    @Test func refusesEveryWayOutOfASharedFolder() async throws {
        try folder.write("shared/movie.mp4", patternBytes(100))
        try folder.write("shared/sub/episode.mp4", patternBytes(50))
        try folder.write("secret.txt", "secret")
        try FileManager.default.createSymbolicLink(
            atPath: folder.path + "/shared/escape.txt",
            withDestinationPath: folder.path + "/secret.txt"
        )
        try FileManager.default.createSymbolicLink(
            atPath: folder.path + "/shared/inside.mp4",
            withDestinationPath: folder.path + "/shared/movie.mp4"
        )
        let shared = try server.share(folder: folder.path + "/shared")
        let base = "/" + shared.id
        #expect(try await get(base + "/movie.mp4").status == 200)
        #expect(try await get(base + "/sub/episode.mp4").body == patternBytes(50))
        #expect(try await get(base + "/inside.mp4").status == 200)
        for hostile in [
            "/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E/secret.txt", "/sub/../../secret.txt",
            "/sub%2f..%2f..%2fsecret.txt", "/escape.txt", "//etc/passwd", "/%2fetc%2fpasswd", "/./movie.mp4",
            "/sub", "/", "", "/movie.mp4%00.txt", "/%zz", "/sub/",
        ] {
            let response = try await get(base + hostile)
            #expect(response.status == 404, "\(hostile) answered \(response.status)")
            #expect(!response.text.contains("secret"))
        }
        #expect(try await get("/../" + shared.id + "/movie.mp4").status == 404)
        #expect(server.url(of: shared, relativePath: "sub/episode.mp4") == shared.url + "sub/episode.mp4")
        await server.stop()
    }

    @Test func encodesNamesAndKeepsThemFetchable() async throws {
        let media = try server.share(file: try folder.write("Été à Paris (1).mp4", patternBytes(10)))
        #expect(media.url.hasSuffix("/%C3%89t%C3%A9%20%C3%A0%20Paris%20%281%29.mp4"))
        #expect(try await get(path(of: media)).status == 200)
        await server.stop()
    }

    @Test func theContentWinsOverALyingExtension() async throws {
        let matroska: [UInt8] = [0x1A, 0x45, 0xDF, 0xA3] + patternBytes(100)
        let media = try server.share(file: try folder.write("really.mp4", matroska))
        #expect(media.contentType == "video/x-matroska")
        #expect(try await get(path(of: media)).header("Content-Type") == "video/x-matroska")
        await server.stop()
    }

    @Test func refusesWhatCannotBeShared() async throws {
        #expect {
            try server.share(file: folder.path + "/missing.mp4")
        } throws: { ($0 as? CastMediaServerError)?.code == .notShareable }
        #expect {
            try server.share(file: folder.path)
        } throws: { ($0 as? CastMediaServerError)?.code == .notShareable }
        #expect {
            try server.share(folder: try folder.write("file.mp4", "x"))
        } throws: { ($0 as? CastMediaServerError)?.code == .notShareable }
        await server.stop()
    }

    @Test func answersPreflightsAndRefusesOtherMethods() async throws {
        let media = try server.share(file: try folder.write("a.vtt", "WEBVTT\n"))
        let preflight = try await get(
            path(of: media),
            method: "OPTIONS",
            [("Origin", "https://www.gstatic.com"), ("Access-Control-Request-Headers", "range")]
        )
        #expect(preflight.status == 204)
        #expect(preflight.header("Access-Control-Allow-Origin") == "*")
        #expect(preflight.header("Access-Control-Allow-Headers") == "range")
        #expect(preflight.header("Access-Control-Allow-Methods")?.contains("GET") == true)
        let post = try await get(path(of: media), method: "POST")
        #expect(post.status == 405)
        #expect(post.header("Allow") == "GET, HEAD, OPTIONS")
        await server.stop()
    }

    @Test func servesBytesWithRanges() async throws {
        let subtitles = Array("WEBVTT\n\n00:00.000 --> 00:01.000\nHello\n".utf8)
        let media = server.share(bytes: subtitles, name: "movie.en.vtt", contentType: "text/vtt")
        let whole = try await get(path(of: media))
        #expect(whole.body == subtitles)
        #expect(whole.header("Content-Type") == "text/vtt")
        let part = try await get(path(of: media), [("Range", "bytes=0-5")])
        #expect(part.status == 206)
        #expect(part.text == "WEBVTT")
        let tag = try #require(whole.header("ETag"))
        #expect(try await get(path(of: media), [("If-None-Match", tag)]).status == 304)
        await server.stop()
    }

    @Test func servesConcurrentReadersTheirOwnRanges() async throws {
        let content = patternBytes(1 << 20)
        let media = try server.share(file: try folder.write("big.mp4", content))
        let path = path(of: media)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<16 {
                group.addTask {
                    let lower = index * 60_000
                    let response = try await get(path, [("Range", "bytes=\(lower)-\(lower + 59_999)")])
                    #expect(response.status == 206)
                    #expect(response.body == Array(content[lower..<(lower + 60_000)]))
                }
            }
            try await group.waitForAll()
        }
        await server.stop()
    }

    @Test func servesASparseFourGigabyteFileWithFlatMemory() async throws {
        let size: UInt64 = 4 << 30
        let file = folder.path + "/huge.mp4"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("tail".utf8)))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        try handle.truncate(atOffset: size)
        try handle.close()
        let media = try server.share(file: file)
        #expect(media.size == size)
        let end = try await get(path(of: media), [("Range", "bytes=\(size - 10)-")])
        #expect(end.status == 206)
        #expect(end.header("Content-Range") == "bytes \(size - 10)-\(size - 1)/\(size)")
        #expect(end.body == [UInt8](repeating: 0, count: 10))
        let before = residentBytes()
        let whole = try await RawHTTPClient.exchange(port: server.port, path: path(of: media), keepBody: false)
        let after = residentBytes()
        #expect(whole.status == 200)
        #expect(UInt64(whole.bodyCount) == size)
        // sendfile: the file never passes through the process, so memory stays where it was. The bound leaves room
        // for the suites running beside this one in the same process (the mirroring tests hold video frames): a
        // server that read the 4 GiB file into memory would still exceed it many times over.
        #expect(after < before + 256 << 20, "resident memory grew from \(before >> 20) MiB to \(after >> 20) MiB")
        await server.stop()
    }

    @Test func streamsLiveBytesToAPlayer() async throws {
        let (source, input) = AsyncStream.makeStream(of: ByteBuffer.self)
        let media = server.share(stream: source, name: "live.ts", contentType: "video/mp2t")
        #expect(media.size == nil)
        let path = path(of: media)
        let port = server.port
        let response = Task { try await RawHTTPClient.exchange(port: port, path: path) }
        #expect(await server.waitForRequest(for: media, timeout: .seconds(60)))
        input.yield(ByteBuffer(bytes: [1, 2, 3]))
        input.yield(ByteBuffer(bytes: [4, 5]))
        input.finish()
        let answer = try await response.value
        #expect(answer.status == 200)
        #expect(answer.body == [1, 2, 3, 4, 5])
        #expect(answer.header("Content-Type") == "video/mp2t")
        #expect(answer.header("Content-Length") == nil)
        #expect(try await get(path).status == 404)  // The stream has ended.
        await server.stop()
    }

    @Test func asksResponders() async throws {
        let file = try folder.write("segment.ts", patternBytes(300))
        struct Segments: MediaResponder {
            let file: String
            func respond(to request: MediaRequest) async throws -> MediaResponse {
                switch request.path {
                case "index.m3u8": return .bytes(Array("#EXTM3U\n".utf8), contentType: "application/x-mpegURL")
                case "seg/1.ts": return .file(path: file, contentType: "video/mp2t")
                case "broken.ts": throw CastMediaServerError(.toolFailed, "ffmpeg failed")
                default: return .notFound
                }
            }
        }
        let media = server.share(
            responder: Segments(file: file),
            entry: "index.m3u8",
            contentType: "application/x-mpegURL"
        )
        #expect(media.url.hasSuffix("/index.m3u8"))
        #expect(try await get(path(of: media)).text == "#EXTM3U\n")
        let segment = try await get("/\(media.id)/seg/1.ts", [("Range", "bytes=100-199")])
        #expect(segment.status == 206)
        #expect(segment.body == Array(patternBytes(300)[100..<200]))
        #expect(segment.header("Content-Type") == "video/mp2t")
        #expect(try await get("/\(media.id)/missing.ts").status == 404)
        #expect(try await get("/\(media.id)/broken.ts").status == 500)
        await server.stop()
    }

    @Test func recordsFetchesAndDiagnosesWhatItSaw() async throws {
        let media = try server.share(file: try folder.write("a.mp4", patternBytes(10)))
        let silent = server.diagnose(media, deviceAddress: "127.0.0.1")
        #expect(silent.cause == .noConnection)
        #expect(silent.connections == 0)
        #expect(silent.advice.contains { $0.contains("--serve-port") })
        #expect(silent.advice.contains { $0.contains("--serve-address") })
        #expect(await !server.waitForRequest(for: media, timeout: .milliseconds(1)))

        _ = try await get(path(of: media), [("Range", "bytes=0-")])
        #expect(await server.waitForRequest(for: media, from: "127.0.0.1", timeout: .seconds(60)))
        let records = server.requests(for: media)
        #expect(records.count == 1)
        #expect(records.first?.peer == "127.0.0.1")
        #expect(records.first?.range == "bytes=0-")
        #expect(records.first?.status == 206)
        #expect(server.diagnose(media, deviceAddress: "127.0.0.1").cause == .fetchedButRejected)
        let elsewhere = server.diagnose(media, deviceAddress: "192.0.2.7")
        #expect(elsewhere.cause == .otherPeersOnly)
        #expect(elsewhere.deviceRequests == 0)

        let gone = try server.share(file: try folder.write("b.mp4", patternBytes(10)))
        try FileManager.default.removeItem(atPath: folder.path + "/b.mp4")
        #expect(try await get(path(of: gone)).status == 404)
        let failed = server.diagnose(gone, deviceAddress: "127.0.0.1")
        #expect(failed.cause == .requestFailed)
        #expect(failed.statuses == [404])
        await server.stop()
    }

    @Test(arguments: [
        ("127.0.0.1", "::ffff:127.0.0.1", true),
        ("::FFFF:192.168.1.20", "192.168.1.20", true),
        ("192.168.1.20", "::ffff:c0a8:114", true),
        ("127.0.0.1", "::1", true),
        ("::1", "127.0.0.2", true),
        ("fe80::1%eth0", "FE80:0:0::1", true),
        ("192.168.1.20", "::1", false),
        ("::1", "192.168.1.20", false),
        ("192.168.1.20", "192.168.1.21", false),
    ])
    func recognizesTheDeviceOverEitherAddressFamily(wanted: String, peer: String, same: Bool) {
        #expect(FetchLog.matches(wanted, peer) == same)
    }

    /// A server given `::1` and a device on `127.0.0.1`: the device's fetch arrives from `::1`, and is its own.
    @Test func aDeviceOnIPv4LoopbackFetchingOverIPv6IsTheDevice() async throws {
        await server.stop()
        let server = try await MediaServer.start(reaching: "127.0.0.1", options: MediaServerOptions(address: "::1"))
        let media = try server.share(file: try folder.write("a.mp3", patternBytes(10)))
        let answer = try await RawHTTPClient.exchange(host: "::1", port: server.port, path: path(of: media, on: server))
        #expect(answer.status == 200)
        #expect(server.requests(for: media).first?.peer == "::1")
        #expect(await server.waitForRequest(for: media, from: "127.0.0.1", timeout: .seconds(60)))
        let diagnosis = server.diagnose(media, deviceAddress: "127.0.0.1")
        #expect(diagnosis.cause == .fetchedButRejected)
        #expect(diagnosis.deviceRequests == 1)
        await server.stop()
    }

    /// LOAD failed on a text track (600–699): the advice is about the subtitles, never the media's codecs (it was
    /// once "its format or codecs may not suit the device; try --transcode always").
    @Test func aTextTrackErrorIsDiagnosedAsTheSubtitles() async throws {
        let media = try server.share(file: try folder.write("a.mp4", patternBytes(10)))
        let unfetched = server.diagnose(media, deviceAddress: "127.0.0.1", detailedErrorCode: 600)
        #expect(unfetched.isTextTrackFailure)
        #expect(unfetched.advice.first?.contains("subtitle") == true)
        #expect(unfetched.advice.contains { $0.contains("--serve-port") })

        _ = try await get(path(of: media))
        for code in [600, 650, 699] {
            let diagnosis = server.diagnose(media, deviceAddress: "127.0.0.1", detailedErrorCode: code)
            #expect(diagnosis.cause == .fetchedButRejected)
            #expect(diagnosis.detailedErrorCode == code)
            #expect(diagnosis.isTextTrackFailure)
            #expect(diagnosis.advice.count == 1)
            #expect(diagnosis.advice.allSatisfy { $0.contains("subtitle") && $0.contains("\(code)") })
            #expect(!diagnosis.advice.contains { $0.contains("codec") || $0.contains("--transcode") })
        }
        for code in [nil, 104, 700] as [Int?] {
            let diagnosis = server.diagnose(media, deviceAddress: "127.0.0.1", detailedErrorCode: code)
            #expect(!diagnosis.isTextTrackFailure)
            #expect(diagnosis.advice.contains { $0.contains("--transcode always") })
        }
        await server.stop()
    }

    @Test func aWaitEndsWhenTheServerStops() async throws {
        let media = try server.share(file: try folder.write("a.mp4", patternBytes(10)))
        let server = self.server
        let wait = Task { await server.waitForRequest(for: media, timeout: .seconds(3600)) }
        await server.stop()
        #expect(await wait.value == false)
    }

    @Test func aScopedServerStopsWhenItsScopeEnds() async throws {
        await server.stop()
        let (port, url) = try await withMediaServer(reaching: "127.0.0.1") { scoped in
            let media = scoped.share(bytes: Array("hello".utf8), name: "a.txt", contentType: "text/plain")
            let path = String(media.url.dropFirst(scoped.baseURL.count))
            let answer = try await RawHTTPClient.exchange(port: scoped.port, method: "GET", path: path, headers: [])
            #expect(answer.text == "hello")
            return (scoped.port, path)
        }
        await #expect(throws: (any Error).self, "nothing listens after the scope") {
            try await RawHTTPClient.exchange(port: port, method: "GET", path: url, headers: [])
        }
    }

    @Test func honorsAGivenAddressAndPortRange() async throws {
        let busy = server.port
        await #expect {
            try await MediaServer.start(
                reaching: nil,
                options: MediaServerOptions(address: "127.0.0.1", ports: busy...busy)
            )
        } throws: { error in
            let error = error as? CastMediaServerError
            return error?.code == .bindFailed && error?.message.contains("port \(busy)") == true
        }
        let next = try await MediaServer.start(
            reaching: "192.0.2.1",
            options: MediaServerOptions(address: "127.0.0.1", ports: busy...(busy + 20))
        )
        #expect(next.port != busy && (busy...(busy + 20)).contains(next.port))
        #expect(next.addressReason == "given with --serve-address")
        await next.stop()
        await #expect {
            try await MediaServer.start(reaching: nil, options: MediaServerOptions(address: "192.0.2.1"))
        } throws: { ($0 as? CastMediaServerError)?.code == .bindFailed }
        await server.stop()
    }
}

extension MediaServerTests {
    /// `--serve-address 0.0.0.0` listens on every interface, but a device cannot fetch from `0.0.0.0`: URLs get the
    /// address routed towards the device (they once said `http://0.0.0.0:…`).
    @Test(arguments: ["0.0.0.0", "::"])
    func listeningEverywhereAdvertisesTheRoutedAddress(everywhere: String) async throws {
        await server.stop()
        let server = try await MediaServer.start(
            reaching: "127.0.0.1",
            options: MediaServerOptions(address: everywhere)
        )
        #expect(server.listeningAddress == everywhere)
        #expect(server.address == "127.0.0.1")
        #expect(server.baseURL == "http://127.0.0.1:\(server.port)")
        #expect(server.addressReason.contains("all interfaces") && server.addressReason.contains("127.0.0.1"))
        let media = server.share(bytes: Array("hello".utf8), name: "a.txt", contentType: "text/plain")
        #expect(media.url.hasPrefix("http://127.0.0.1:\(server.port)/"))
        let answer = try await RawHTTPClient.exchange(port: server.port, path: path(of: media, on: server))
        #expect(answer.text == "hello")
        await server.stop()

        let unknown = try await MediaServer.start(reaching: nil, options: MediaServerOptions(address: everywhere))
        #expect(unknown.address == (everywhere == "::" ? "::1" : "127.0.0.1"))
        await unknown.stop()
    }

    @Test func anIPv4OnlyListenerCannotServeADeviceReachedOverIPv6() async throws {
        await server.stop()
        await #expect {
            try await MediaServer.start(reaching: "::1", options: MediaServerOptions(address: "0.0.0.0"))
        } throws: { error in
            let error = error as? CastMediaServerError
            return error?.code == .bindFailed && error?.message.contains("IPv6") == true
        }
    }
}

/// This process's resident memory, from /proc.
private func residentBytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
}

extension MediaServerTests {
    @Test func streamsAPipeAndTakesItsTypeFromTheFirstBytes() async throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        let writer = FileHandle(fileDescriptor: descriptors[1], closeOnDealloc: true)
        let matroska: [UInt8] = [0x1A, 0x45, 0xDF, 0xA3, 1, 2, 3]
        writer.write(Data(matroska))
        let media = try await server.share(pipe: descriptors[0], name: "stdin")
        #expect(media.contentType == "video/x-matroska")
        let path = String(media.url.dropFirst(server.baseURL.count))
        let port = server.port
        let response = Task { try await RawHTTPClient.exchange(port: port, path: path) }
        #expect(await server.waitForRequest(for: media, timeout: .seconds(60)))
        writer.write(Data([9, 9]))
        try writer.close()
        let answer = try await response.value
        #expect(answer.body == matroska + [9, 9])
        await server.stop()
    }

    @Test func anEmptyPipeCannotBeShared() async throws {
        var descriptors: [Int32] = [0, 0]
        #expect(pipe(&descriptors) == 0)
        close(descriptors[1])
        await #expect {
            try await server.share(pipe: descriptors[0], name: "stdin")
        } throws: { ($0 as? CastMediaServerError)?.code == .notShareable }
        await server.stop()
    }
}
