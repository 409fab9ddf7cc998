import CastMedia
import CastTransport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real HTTPS server on 127.0.0.1 (OpenSSL TLS + NIOHTTP1) serving `/image.png` and friends.
final class LocalHTTPSServer: Sendable {
    let identity: TLSIdentity
    let port: Int
    private let channel: any Channel
    private let hits = NIOLockedValueBox<[String: Int]>([:])

    init(identity: TLSIdentity, body: [UInt8]) async throws {
        self.identity = identity
        let context = try TLSContext.makeServerContext(identity: identity)
        let counter = NIOLockedValueBox<[String: Int]>([:])
        let box = HitBox()
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    try operations.addHandler(
                        makeTLSHandler(
                            context: context,
                            serverHostname: nil,
                            // The fetcher's own limit (15 s) is what the tests judge; a saturated machine has
                            // taken more than 5 s for a handshake.
                            handshakeTimeout: .seconds(60),
                            handshakePromise: nil
                        )
                    )
                    try operations.configureHTTPServerPipeline()
                    try operations.addHandler(ImageServerHandler(body: body, box: box))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress!.port!
        _ = counter
        self.boxRef = box
    }

    private let boxRef: HitBox
    func hitCount(_ path: String) -> Int { boxRef.count(path) }

    func close() async { try? await channel.close() }
}

final class HitBox: Sendable {
    private let hits = NIOLockedValueBox<[String: Int]>([:])
    func record(_ path: String) { hits.withLockedValue { $0[path, default: 0] += 1 } }
    func count(_ path: String) -> Int { hits.withLockedValue { $0[path] ?? 0 } }
}

private final class ImageServerHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    let body: [UInt8]
    let box: HitBox
    var uri = "/"

    init(body: [UInt8], box: HitBox) {
        self.body = body
        self.box = box
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): uri = head.uri
        case .body: break
        case .end:
            box.record(uri)
            var headers = HTTPHeaders()
            var status = HTTPResponseStatus.ok
            var payload = body
            if uri == "/redirect" {
                status = .found
                headers.add(name: "Location", value: "/image.png")
                payload = []
            } else if uri == "/missing" {
                status = .notFound
                payload = []
            } else if uri == "/huge" {
                payload = [UInt8](repeating: 7, count: 64 * 1024)
            }
            headers.add(name: "Content-Length", value: "\(payload.count)")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
                promise: nil
            )
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: payload)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}

func makeTemporaryDirectory() -> String {
    var template = Array("/tmp/cast-image-test-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    return String(cString: path!)
}

@Suite struct ImageCacheTests {
    static let identity = Result {
        try TLSIdentity.makeSelfSigned(
            commonName: "localhost",
            subjectAlternativeNames: ["DNS:localhost", "IP:127.0.0.1"]
        )
    }
    let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 1, count: 1000)

    @Test func downloadsOverVerifiedHTTPSAndCaches() async throws {
        let identity = try Self.identity.get()
        let server = try await LocalHTTPSServer(identity: identity, body: png)
        defer { Task { await server.close() } }
        let fetcher = try HTTPFetcher(trustRootsPEM: identity.certificatePEM)
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = ImageCache(directory: directory, maximumBytes: 1 << 20, fetcher: fetcher)
        let url = "https://127.0.0.1:\(server.port)/image.png"
        let first = try await cache.image(for: url)
        #expect(first == png)
        let second = try await cache.image(for: url)
        #expect(second == png)
        #expect(server.hitCount("/image.png") == 1)
        #expect(cache.cachedImage(for: url) == png)
        // The host name "localhost" is checked against the certificate's names too.
        let viaName = try await fetcher.fetch("https://localhost:\(server.port)/redirect")
        #expect(viaName == png)
        await server.close()
    }

    @Test func rejectsAnUntrustedCertificate() async throws {
        let identity = try Self.identity.get()
        let server = try await LocalHTTPSServer(identity: identity, body: png)
        let fetcher = try HTTPFetcher()  // the system trust store does not know the test certificate
        await #expect {
            try await fetcher.fetch("https://127.0.0.1:\(server.port)/image.png")
        } throws: { error in
            guard let error = error as? CastMediaError, error.code == .imageDownloadFailed else { return false }
            return "\(error)".contains("certificate verify failed")
        }
        await server.close()
    }

    @Test func reportsHTTPErrorsAndLimits() async throws {
        let identity = try Self.identity.get()
        let server = try await LocalHTTPSServer(identity: identity, body: png)
        var fetcher = try HTTPFetcher(trustRootsPEM: identity.certificatePEM)
        fetcher.maximumBodyBytes = 10_000
        await #expect { try await fetcher.fetch("https://127.0.0.1:\(server.port)/missing") } throws: {
            "\($0)".contains("HTTP 404")
        }
        await #expect { try await fetcher.fetch("https://127.0.0.1:\(server.port)/huge") } throws: {
            "\($0)".contains("larger than")
        }
        await #expect { try await fetcher.fetch("ftp://example.com/a.png") } throws: {
            ($0 as? CastMediaError)?.code == .imageDownloadFailed
        }
        await server.close()
    }

    @Test func evictsLeastRecentlyUsedBeyondTheBound() async throws {
        let identity = try Self.identity.get()
        let server = try await LocalHTTPSServer(identity: identity, body: png)
        let fetcher = try HTTPFetcher(trustRootsPEM: identity.certificatePEM)
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = ImageCache(directory: directory, maximumBytes: 2500, fetcher: fetcher)
        for index in 0..<4 { _ = try await cache.image(for: "https://127.0.0.1:\(server.port)/image.png?\(index)") }
        #expect(cache.totalBytes <= 2500)
        #expect(cache.cachedImage(for: "https://127.0.0.1:\(server.port)/image.png?3") != nil)
        #expect(cache.cachedImage(for: "https://127.0.0.1:\(server.port)/image.png?0") == nil)
        await server.close()
    }

    @Test func picksImagesByHints() {
        let metadata = MediaMetadata.movie(
            title: "T",
            images: [
                WebImage(url: "small", width: 100, height: 100), WebImage(url: "large", width: 1000, height: 1000),
                WebImage(url: "medium", width: 400, height: 400),
            ]
        )
        #expect(FirstImagePicker().image(from: metadata, for: ImageHints(usage: .miniController))?.url == "small")
        let picker = SizeMatchingImagePicker()
        #expect(picker.image(from: metadata, for: ImageHints(usage: .expandedControllerBackground))?.url == "large")
        #expect(picker.image(from: metadata, for: ImageHints(usage: .miniController))?.url == "small")
        #expect(
            picker.image(from: metadata, for: ImageHints(usage: .queueItem, preferredWidth: 300, preferredHeight: 300))?
                .url == "medium"
        )
        #expect(
            picker.image(
                from: metadata,
                for: ImageHints(usage: .queueItem, preferredWidth: 2000, preferredHeight: 2000)
            )?.url == "large"
        )
    }
}
