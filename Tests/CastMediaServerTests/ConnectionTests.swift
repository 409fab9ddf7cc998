import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import CastMediaServer

/// What the server does with connections that take a place without asking: closed after a short time, and
/// the one idle longest closed for a newcomer at the limit, so nobody can lock the device out.
@Suite struct ConnectionTests {
    let folder: TemporaryFolder

    init() throws { folder = try TemporaryFolder() }

    /// How long a test waits for what should happen at once (only a failing test waits this long).
    static let bound = Duration.seconds(30)

    /// A server whose connections all live on one event loop, so they are admitted in the order they connect.
    private static func serverOnOneLoop(_ options: MediaServerOptions) async throws -> (
        MediaServer, MultiThreadedEventLoopGroup
    ) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        return (try await MediaServer.start(reaching: "127.0.0.1", options: options, eventLoopGroup: group), group)
    }

    private static func path(of media: SharedMedia, on server: MediaServer) -> String {
        String(media.url.dropFirst(server.baseURL.count))
    }

    @Test func aConnectionThatSendsNoCompleteHeadIsClosed() async throws {
        var options = MediaServerOptions()
        options.requestHeadTimeout = .milliseconds(300)
        let server = try await MediaServer.start(reaching: "127.0.0.1", options: options)
        let silent = try await RawConnection.open(port: server.port)
        let slow = try await RawConnection.open(port: server.port)
        // Half a head; on a busy machine the server may have closed already, which is what is expected anyway.
        try? await slow.send("GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        #expect(await silent.isClosedByServer(within: Self.bound))
        #expect(await slow.isClosedByServer(within: Self.bound))
        #expect(silent.received.isEmpty && slow.received.isEmpty)
        await server.stop()
    }

    @Test func aKeptAliveConnectionIsClosedWhenItAsksNothingMore() async throws {
        var options = MediaServerOptions()
        options.idleTimeout = .milliseconds(100)
        let server = try await MediaServer.start(reaching: "127.0.0.1", options: options)
        let media = server.share(bytes: Array("hello".utf8), name: "a.txt", contentType: "text/plain")
        let connection = try await RawConnection.open(port: server.port)
        try await connection.send("GET \(Self.path(of: media, on: server)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(await connection.isClosedByServer(within: Self.bound))
        #expect(connection.text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(connection.text.hasSuffix("\r\n\r\nhello"))
        await server.stop()
    }

    /// The limit reached by sockets that send nothing: a device still gets its answer, and the socket idle longest
    /// makes room for it (it was once the device that was refused, however long it tried).
    @Test func atTheLimitTheConnectionIdleLongestMakesRoom() async throws {
        var options = MediaServerOptions()
        options.maximumConnections = 2
        options.requestHeadTimeout = .seconds(3600)
        let (server, group) = try await Self.serverOnOneLoop(options)
        let media = server.share(bytes: Array("hello".utf8), name: "a.txt", contentType: "text/plain")
        let oldest = try await RawConnection.open(port: server.port)
        let newer = try await RawConnection.open(port: server.port)
        let device = try await RawHTTPClient.exchange(port: server.port, path: Self.path(of: media, on: server))
        #expect(device.status == 200)
        #expect(device.text == "hello")
        #expect(await oldest.isClosedByServer(within: Self.bound))
        #expect(newer.channel.isActive)
        await server.stop()
        try await group.shutdownGracefully()
    }

    /// A connection answering (a live stream that never ends, here) is not idle, however old: the idle one goes.
    @Test func aConnectionAnsweringIsNotClosedForANewcomer() async throws {
        var options = MediaServerOptions()
        options.maximumConnections = 2
        options.requestHeadTimeout = .seconds(3600)
        let (server, group) = try await Self.serverOnOneLoop(options)
        let (chunks, feed) = AsyncStream.makeStream(of: ByteBuffer.self)
        feed.yield(ByteBuffer(string: "live"))
        let live = server.share(stream: chunks, name: "live.ts", contentType: "video/mp2t")
        let small = server.share(bytes: Array("hello".utf8), name: "a.txt", contentType: "text/plain")

        let player = try await RawConnection.open(port: server.port)
        try await player.send("GET \(Self.path(of: live, on: server)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        await player.waitForBytes(1)
        #expect(player.text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        let idle = try await RawConnection.open(port: server.port)
        let device = try await RawHTTPClient.exchange(port: server.port, path: Self.path(of: small, on: server))
        #expect(device.text == "hello")
        #expect(await idle.isClosedByServer(within: Self.bound))
        #expect(player.channel.isActive)
        feed.finish()
        await server.stop()
        try await group.shutdownGracefully()
    }
}

extension ConnectionTests {
    /// Clients that ask for a file and never read it (a token holder filling the places): the newcomer gets the
    /// place of one whose writes back up, rather than being refused while every place is busy answering.
    @Test func aConnectionThatStoppedReadingMakesRoom() async throws {
        var options = MediaServerOptions()
        options.maximumConnections = 1
        options.requestHeadTimeout = .seconds(3600)
        let (server, group) = try await Self.serverOnOneLoop(options)
        let file = try folder.write("big.mp4", patternBytes(1000))
        #expect(truncate(file, off_t(256 << 20)) == 0)  // sparse: no disk used
        let big = try server.share(file: file)
        let small = server.share(bytes: Array("hello".utf8), name: "a.txt", contentType: "text/plain")
        let hoarder = try await RawConnection.open(port: server.port, reading: false)
        try await hoarder.send("GET \(Self.path(of: big, on: server)) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(await server.waitForRequest(for: big, timeout: .seconds(3600)))
        // Refused while the hoarder's writes still fit in the socket buffers; let in once they back up.
        var answer: RawHTTPResponse?
        let deadline = ContinuousClock.now + Self.bound
        while answer == nil, ContinuousClock.now < deadline {
            answer = try? await RawHTTPClient.exchange(port: server.port, path: Self.path(of: small, on: server))
        }
        #expect(answer?.text == "hello")
        try await hoarder.startReading()
        #expect(await hoarder.isClosedByServer(within: Self.bound))
        await server.stop()
        try await group.shutdownGracefully()
    }
}

/// A file that shrinks while it is sent: the connection closes at once with a short body (sendfile once found
/// nothing past the new end, and the server spun with the connection open and silent until the client gave up).
@Suite struct ShrinkingFileTests {
    @Test func aFileThatShrinksWhileSentEndsTheConnection() async throws {
        let folder = try TemporaryFolder()
        let length = 256 << 20
        let file = try folder.write("big.mp4", patternBytes(1000))
        #expect(truncate(file, off_t(length)) == 0)  // sparse: no disk used
        var options = MediaServerOptions()
        options.fileCheckInterval = .milliseconds(10)
        let server = try await MediaServer.start(reaching: "127.0.0.1", options: options)
        let media = try server.share(file: file)
        let path = String(media.url.dropFirst(server.baseURL.count))
        let client = try await RawConnection.open(
            port: server.port,
            reading: false,
            sending: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        )
        // The server has answered before the file shrinks: whatever it sends, it has promised the whole length.
        #expect(await server.waitForRequest(for: media, timeout: .seconds(3600)))
        #expect(truncate(file, 1_000_000) == 0)
        try await client.startReading()
        #expect(await client.isClosedByServer(within: ConnectionTests.bound))
        #expect(client.text.contains("\r\nContent-Length: \(length)\r\n"))
        #expect(client.received.count < length)
        await server.stop()
    }
}
