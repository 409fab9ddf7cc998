import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import CastTransport

/// ``CastConnection/enqueue(_:)``: returns once queued, keeps its order with every other way of sending, refuses
/// what the encoder would, and holds a sender back while the peer does not read.
@Suite("Queued sends: order, size, back-pressure")
struct EnqueueTests {
    private static let namespace = "urn:x-cast:test.enqueue"

    private static func message(_ text: String) -> CastMessage {
        CastMessage(
            sourceID: CastEndpoint.sender,
            destinationID: CastEndpoint.receiver,
            namespace: namespace,
            payload: .string(text)
        )
    }

    /// On the connection's event loop a send or a request writes at once, unless a queued message waits: then it
    /// goes behind it. (It used to overtake it.)
    @Test(.timeLimit(.minutes(2)))
    func queuedMessagesKeepTheirOrderWithSendsAndRequests() async throws {
        let harness = try await LoopbackHarness.start()
        let (client, peer) = try await harness.connectClient()
        let task = Task(executorPreference: client.taskExecutor) {
            try await client.enqueue(Self.message("1"))
            try await client.send(Self.message("2"))
            try await client.enqueue(Self.message("3"))
            _ = try client.startRequest(namespace: Self.namespace, to: CastEndpoint.receiver, payload: ["type": "4"])
            try await client.enqueue(Self.message("5"))
        }
        try await task.value
        var order: [String] = []
        while order.count < 5 {
            let message = try #require(try await peer.messages.next(within: .seconds(60), "message \(order.count)"))
            guard message.namespace == Self.namespace else { continue }
            let json = try? message.json()
            order.append(json?["type"]?.stringValue ?? message.payload.text)
        }
        #expect(order == ["1", "2", "3", "4", "5"])
        await client.close()
        await harness.server.close()
    }

    /// A long run of queued messages goes out in several flushes (so the peer can start on the first while the
    /// rest are written), all of it, in order, with a request in the middle kept in its place.
    @Test(.timeLimit(.minutes(2)))
    func aLongRunOfQueuedMessagesArrivesWholeAndInOrder() async throws {
        let harness = try await LoopbackHarness.start()
        let (client, peer) = try await harness.connectClient()
        let task = Task(executorPreference: client.taskExecutor) {
            for index in 0..<100 {
                if index == 50 {
                    _ = try client.startRequest(
                        namespace: Self.namespace,
                        to: CastEndpoint.receiver,
                        payload: ["type": "request"]
                    )
                }
                try await client.enqueue(Self.message("\(index)"))
            }
        }
        try await task.value
        var order: [String] = []
        while order.count < 101 {
            let message = try #require(try await peer.messages.next(within: .seconds(60), "message \(order.count)"))
            guard message.namespace == Self.namespace else { continue }
            order.append((try? message.json())?["type"]?.stringValue ?? message.payload.text)
        }
        let expected: [String] = (0..<50).map { "\($0)" } + ["request"] + (50..<100).map { "\($0)" }
        #expect(order == expected)
        await client.close()
        await harness.server.close()
    }

    /// A request over the frame limit fails with `messageTooLarge`, whether it is written on the connection's event
    /// loop (nobody waits for that write: the router checks the size) or from elsewhere; the connection stays up and
    /// the next request is answered.
    @Test(.timeLimit(.minutes(2)), arguments: [true, false])
    func aRequestOverTheLimitFailsAndTheConnectionStays(onTheEventLoop: Bool) async throws {
        let harness = try await LoopbackHarness.start()
        let (client, peer) = try await harness.connectClient()
        let padding = JSONValue.string(String(repeating: "x", count: CastFrame.maximumBodyLength))
        let executor = onTheEventLoop ? client.taskExecutor : nil
        await expectTransportError(.messageTooLarge) {
            try await withTaskExecutorPreference(executor) {
                try await client.startRequest(
                    namespace: Self.namespace,
                    to: CastEndpoint.receiver,
                    payload: ["type": "HUGE", "padding": padding]
                ).response()
            }
        }
        let answered = Task(executorPreference: executor) {
            try await client.request(namespace: Self.namespace, to: CastEndpoint.receiver, payload: ["type": "small"])
        }
        var request = try #require(try await peer.messages.next(within: .seconds(60), "the small request"))
        while request.namespace != Self.namespace {
            request = try #require(try await peer.messages.next(within: .seconds(60), "the small request"))
        }
        #expect(try request.json()["type"] == "small")
        let requestID = try #require(try request.json()["requestId"])
        try await peer.connection.send(
            namespace: Self.namespace,
            to: request.sourceID,
            payload: ["type": "answer", "requestId": requestID],
            from: request.destinationID
        )
        #expect(try await answered.value.json()["type"] == "answer")
        #expect(client.isConnected)
        await client.close()
        await harness.server.close()
    }

    /// A message over the frame limit is refused before it is queued, and the connection stays up.
    @Test(.timeLimit(.minutes(2)))
    func aMessageOverTheLimitIsRefusedAndTheConnectionStays() async throws {
        let harness = try await LoopbackHarness.start()
        let (client, peer) = try await harness.connectClient()
        let tooBig = Self.message(String(repeating: "x", count: CastFrame.maximumBodyLength))
        await expectTransportError(.messageTooLarge) { try await client.enqueue(tooBig) }
        await expectTransportError(.messageTooLarge) { try await client.send(tooBig) }
        // Just under the limit, counting the envelope: the bound is only an estimate, the encoder decides.
        let envelope = try Self.message("").encodedFrame().count - CastFrame.headerLength
        let largest = Self.message(String(repeating: "y", count: CastFrame.maximumBodyLength - envelope - 2))
        try await client.enqueue(largest)
        try await client.enqueue(Self.message("after"))
        let first = try #require(try await peer.messages.next(within: .seconds(60), "the largest message"))
        #expect(first.payload == largest.payload)
        let second = try #require(try await peer.messages.next(within: .seconds(60), "the message after it"))
        #expect(second.payload.text == "after")
        #expect(client.isConnected)
        await client.close()
        await harness.server.close()
    }

    /// A peer that stops reading holds the sender back (it does not queue 12 MB; the kernel's buffers take about 4), and once the peer reads again
    /// every message arrives, in order.
    @Test(.timeLimit(.minutes(5)))
    func aPeerThatDoesNotReadHoldsTheSenderBack() async throws {
        let total = 200
        let (arrivals, arrived) = AsyncStream.makeStream(of: String.self)
        let handshake = NIOLockedValueBox<(any Channel)?>(nil)
        let (handshakes, handshook) = AsyncStream.makeStream(of: Void.self)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(.socketOption(.so_rcvbuf), value: 256 * 1024)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let done = channel.eventLoop.makePromise(of: Void.self)
                    done.futureResult.whenSuccess {
                        // Handshake over: stop reading.
                        channel.setOption(.autoRead, value: false).whenComplete { _ in
                            handshake.withLockedValue { $0 = channel }
                            handshook.yield()
                        }
                    }
                    let operations = channel.pipeline.syncOperations
                    try operations.addHandler(
                        TLSHandler(context: try TransportTestKit.serverContext(), handshakePromise: done)
                    )
                    try operations.addHandler(ByteToMessageHandler(CastMessageDecoder()))
                    try operations.addHandler(ArrivalRecorder(arrived: arrived))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let client = try await CastConnection.connect(
            host: "127.0.0.1",
            port: try #require(server.localAddress?.port),
            configuration: TransportTestKit.quietClientConfiguration()
        )
        var handshakeEvents = handshakes.makeAsyncIterator()
        _ = await handshakeEvents.next()

        let (progress, reported) = AsyncStream.makeStream(of: Int.self)
        let padding = String(repeating: "p", count: 60_000)
        let sender = Task {
            for index in 0..<total {
                try await client.enqueue(Self.message("\(index) \(padding)"))
                reported.yield(index + 1)
            }
            reported.finish()
        }
        // Without back-pressure all 12 MB would be queued at once; with it the sender stops when the kernel's
        // buffers (capped by the peer's small receive buffer and the sender's send buffer, up to 4 MB) are full.
        let progressReader = StreamReader(progress)
        var queued = 0
        // Progress until it stalls for 2 s (or the sender finishes).
        while let count = try? await progressReader.next(within: .seconds(2), "the sender's progress") {
            queued = count
        }
        #expect(queued < 150, "the sender queued \(queued) of \(total) messages to a peer that does not read")

        // The peer reads again: everything arrives, in order.
        let channel = try #require(handshake.withLockedValue { $0 })
        try await channel.setOption(.autoRead, value: true).get()
        channel.read()
        let arrivalReader = StreamReader(arrivals)
        for index in 0..<total {
            let text = try #require(try await arrivalReader.next(within: .seconds(120), "message \(index)"))
            #expect(text.hasPrefix("\(index) "), "message \(index) arrived as \(text.prefix(12))")
        }
        try await sender.value
        await client.close()
        try await server.close()
    }
}

/// Hands the payload of every frame a raw server reads to a stream.
private final class ArrivalRecorder: ChannelInboundHandler, Sendable {
    typealias InboundIn = CastMessage
    let arrived: AsyncStream<String>.Continuation

    init(arrived: AsyncStream<String>.Continuation) { self.arrived = arrived }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        arrived.yield(unwrapInboundIn(data).payload.text)
    }
}
