import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import CastTransport

/// A server treats every peer as hostile: idle and half-open sockets are closed, a full server closes the
/// connection idle longest, and a peer that floods without reading stops being read — while senders that talk
/// keep being served.
@Suite("Hostile peers: limits, idle and handshake timeouts, back-pressure")
struct HostilePeerTests {
    private static let probe = "urn:x-cast:com.example.probe"

    private static func hello(_ text: String) -> CastMessage {
        CastMessage(
            sourceID: CastEndpoint.sender,
            destinationID: CastEndpoint.receiver,
            namespace: probe,
            json: ["type": .string(text)]
        )
    }

    @Test func aFullServerClosesTheConnectionIdleLongest() async throws {
        var configuration = TransportTestKit.quietServerConfiguration()
        configuration.maximumConnections = 3
        let harness = try await LoopbackHarness.start(configuration: configuration)
        let (quiet, _) = try await harness.connectClient()
        let quietEvents = StreamReader(quiet.events())
        var talkers: [(CastConnection, LoopbackPeer)] = []
        for name in ["b", "c"] {
            let (client, peer) = try await harness.connectClient()
            try await client.send(Self.hello(name))
            #expect(try await peer.messages.next(within: .seconds(60), "\(name)'s message")?.namespace == Self.probe)
            talkers.append((client, peer))
        }

        // A fourth: the quiet one, idle since it connected, is closed; the talkers stay.
        let (late, latePeer) = try await harness.connectClient()
        _ = try await quietEvents.first(within: .seconds(60), "the idle connection to close") {
            if case .disconnected = $0 { return true }
            return false
        }
        #expect(!quiet.isConnected)
        for (client, peer) in talkers + [(late, latePeer)] {
            try await client.send(Self.hello("still here"))
            #expect(try await peer.messages.next(within: .seconds(60), "a message after the eviction") != nil)
        }
        #expect(harness.server.connectionCount == 3)
        for client in [late] + talkers.map(\.0) { await client.close() }
        await harness.server.close()
    }

    @Test func halfOpenSocketsDoNotLockOutASenderThatTalks() async throws {
        var configuration = TransportTestKit.quietServerConfiguration()
        configuration.maximumConnections = 8
        let heard = LockedLog<String>()
        let server = try await CastServer.bind(
            tlsContext: try TransportTestKit.serverContext(),
            configuration: configuration
        ) {
            connection in
            let messages = connection.messages()
            // The task holds the connection: nothing else does, and it delivers only while it lives.
            Task {
                for await message in messages { heard.append(message.namespace) }
                _ = connection
            }
        }
        // Forty sockets that connect and never start TLS.
        var sockets: [any Channel] = []
        for _ in 0..<40 {
            sockets.append(
                try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connect(host: "127.0.0.1", port: server.port).get()
            )
        }
        let client = try await CastConnection.connect(
            host: "127.0.0.1",
            port: server.port,
            configuration: TransportTestKit.quietClientConfiguration()
        )
        try await client.send(Self.hello("served"))
        try await withDeadline(.seconds(60), "the talker's message") {
            while !heard.all.contains(Self.probe) { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(server.connectionCount <= 8)
        await client.close()
        for socket in sockets { try? await socket.close() }
        await server.close()
    }

    @Test func aHalfOpenHandshakeIsClosedAtTheHandshakeTimeout() async throws {
        var configuration = TransportTestKit.quietServerConfiguration()
        configuration.connection.connectTimeout = .milliseconds(300)
        let harness = try await LoopbackHarness.start(configuration: configuration)
        let socket = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: harness.server.port).get()
        // The server closes it; a deadline, not a sleep.
        try await withDeadline(.seconds(60), "the server to close a silent handshake") {
            try await socket.closeFuture.get()
        }
        await harness.server.close()
    }

    @Test func aSilentSenderIsClosedAfterTheIdleTimeout() async throws {
        var configuration = TransportTestKit.quietServerConfiguration()
        configuration.connection.heartbeat = HeartbeatConfiguration(pingInterval: nil, deadAfter: .milliseconds(300))
        let harness = try await LoopbackHarness.start(configuration: configuration)
        let (client, peer) = try await harness.connectClient()
        let events = StreamReader(client.events())
        // On a busy machine the close can come before this subscription: then the connection is already down.
        if client.isConnected {
            let closed = try await events.first(within: .seconds(60), "the server to close a silent sender") {
                if case .disconnected = $0 { return true }
                return false
            }
            #expect(closed == .disconnected(.connectionClosed))
        }
        #expect(!client.isConnected)
        // The client can see the close before the server's side has finished it (under load): the server's
        // connection reports its end after the registry forgot it.
        _ = try await peer.events.first(within: .seconds(60), "the server's side of the connection to end") {
            if case .disconnected = $0 { return true }
            return false
        }
        #expect(harness.server.connectionCount == 0)
        await harness.server.close()
    }

    /// A peer that sends requests and never reads the answers: the server stops reading once it cannot write,
    /// so its buffers stay bounded; when the peer reads again, every request is answered — nothing lost.
    /// Slow by design (16 MB through a 4 KiB receive buffer): 12 s in a debug build, about 60 s under
    /// ThreadSanitizer, hence the generous limits.
    @Test(.timeLimit(.minutes(6)))
    func aFloodWithoutReadingIsBackPressured() async throws {
        let total = 1_000
        let processed = Count()
        let reply = CastMessage(
            sourceID: CastEndpoint.receiver,
            destinationID: CastEndpoint.sender,
            namespace: Self.probe,
            payload: .string(String(repeating: "r", count: 16_384))
        )
        let server = try await CastServer.bind(
            tlsContext: try TransportTestKit.serverContext(),
            configuration: TransportTestKit.quietServerConfiguration()
        ) { connection in
            // Answered on the connection's event loop as each request is read, as the emulator answers: what is
            // read is answered before more is read, so the test sees the pipeline's back-pressure and not how
            // soon a consumer task gets a thread (one that gets none while the loop reads the whole flood has
            // written nothing that could stop the reading: 2 runs in 8 of the transport suite in parallel).
            _ = connection.addMessageHandler { message in
                guard message.namespace == Self.probe else { return }
                processed.add()
                connection.post(reply)  // fire and forget: nothing but the pipeline holds the writer back
            }
        }

        let received = Count()
        let handshake = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: Void.self)
        let flooder = try await ClientBootstrap(group: handshake.futureResult.eventLoop)
            .channelOption(.socketOption(.so_rcvbuf), value: 4096)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    try operations.addHandler(
                        TLSHandler(
                            context: try TLSContext.makeClientContext(),
                            handshakeTimeout: .seconds(60),
                            handshakePromise: handshake
                        )
                    )
                    try operations.addHandler(ByteToMessageHandler(CastMessageDecoder()))
                    try operations.addHandler(MessageToByteHandler(CastMessageEncoder()))
                    try operations.addHandler(ReplyCounter(received: received))
                }
            }
            .connect(host: "127.0.0.1", port: server.port).get()
        // TLS reads until the handshake is done; then the flooder stops reading.
        try await withDeadline(.seconds(60), "the flooder's handshake") { try await handshake.futureResult.get() }
        try await flooder.setOption(.autoRead, value: false).get()
        // Requests of 1 KiB: together several read batches, so reading can stop between them.
        let padding = String(repeating: "q", count: 1_024)
        for index in 0..<total { flooder.write(Self.hello("request \(index) \(padding)"), promise: nil) }
        flooder.flush()

        // Without back-pressure every request would be read and answered into unbounded buffers at once.
        let readEverything: Void? = try? await withDeadline(.seconds(2), "all requests to be read") {
            while processed.value < total { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(readEverything == nil, "the server kept reading a peer that does not read")
        #expect(processed.value < total)

        // The peer reads again: everything is answered.
        try await flooder.setOption(.autoRead, value: true).get()
        flooder.read()
        try await withDeadline(.seconds(300), "every request to be answered") {
            while received.value < total { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(processed.value == total)
        try? await flooder.close()
        await server.close()
    }
}

/// A counter shared with event-loop callbacks.
private final class Count: Sendable {
    private let storage = NIOLockedValueBox(0)
    func add() { storage.withLockedValue { $0 += 1 } }
    var value: Int { storage.withLockedValue { $0 } }
}

/// Counts the frames a raw client receives.
private final class ReplyCounter: ChannelInboundHandler, Sendable {
    typealias InboundIn = CastMessage
    let received: Count

    init(received: Count) { self.received = received }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received.add()
    }
}
