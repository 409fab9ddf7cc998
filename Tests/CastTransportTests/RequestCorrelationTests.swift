import NIOCore
import NIOEmbedded
import Testing

@testable import CastTransport

/// `CastMessageRouter` on an `EmbeddedChannel`: requestId correlation, timeouts on virtual time, destination
/// filtering and the connection's end (cast-protocol.md §1.4, §10).
@Suite("Request correlation: CastMessageRouter on an embedded channel")
struct RouterCorrelationTests {
    static let address = try! SocketAddress(ipAddress: "127.0.0.1", port: 1)

    /// What the router handed to its owner.
    final class Recorder {
        var delivered: [CastMessage] = []
        var closedCalls: [CastTransportError?] = []
    }

    private func makeChannel(
        acceptedDestinations: Set<String>? = ["sender-0"],
        below: (any ChannelHandler & Sendable)? = nil
    ) throws -> (EmbeddedChannel, Recorder) {
        let recorder = Recorder()
        let router = CastMessageRouter(
            acceptedDestinations: acceptedDestinations,
            logger: TransportTestKit.silentLogger,
            deliver: { recorder.delivered.append($0) },
            closed: { recorder.closedCalls.append($0) }
        )
        let channel = EmbeddedChannel()
        if let below { try channel.pipeline.syncOperations.addHandler(below) }
        try channel.pipeline.syncOperations.addHandler(router)
        try channel.connect(to: Self.address).wait()
        return (channel, recorder)
    }

    private func request(_ requestID: Int, type: String = "GET_STATUS", to destination: String = "receiver-0")
        -> CastMessage
    {
        CastMessage(
            sourceID: "sender-0",
            destinationID: destination,
            namespace: CastNamespace.receiver,
            json: ["type": .string(type), "requestId": .number(Double(requestID))]
        )
    }

    private func reply(_ requestID: Int, to destination: String, from source: String = "receiver-0") -> CastMessage {
        CastMessage(
            sourceID: source,
            destinationID: destination,
            namespace: CastNamespace.receiver,
            json: ["type": "RECEIVER_STATUS", "requestId": .number(Double(requestID)), "status": [:]]
        )
    }

    /// Writes a `.request` command and checks that the message went out unchanged; with `writePromise` false, as
    /// the connection writes a request on its open channel's loop: nobody waits for the write.
    private func sendRequest(
        _ channel: EmbeddedChannel,
        id requestID: Int,
        timeout: TimeAmount = .seconds(5),
        writePromise: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> FutureProbe<CastMessage> {
        let promise = channel.eventLoop.makePromise(of: CastMessage.self)
        let probe = FutureProbe(promise.futureResult)
        let message = request(requestID)
        let command = RouterCommand.request(
            RouterRequest(message: message, requestID: requestID, timeout: timeout, promise: promise)
        )
        if writePromise {
            try channel.writeOutbound(command)
        } else {
            channel.pipeline.syncOperations.writeAndFlush(NIOAny(command), promise: nil)
        }
        #expect(try channel.readOutbound(as: CastMessage.self) == message, sourceLocation: sourceLocation)
        #expect(probe.isPending, sourceLocation: sourceLocation)
        return probe
    }

    /// The router's sweep and the heartbeat's timer capture their handlers strongly (a weak capture would make every
    /// retain of a handler the slow kind), so closing the channel must cancel them: nothing else holds the handlers
    /// then.
    @Test func aClosedChannelLetsItsRouterAndHeartbeatGo() throws {
        weak var weakRouter: CastMessageRouter?
        weak var weakHeartbeat: HeartbeatHandler?
        let channel = EmbeddedChannel()
        do {
            let heartbeat = HeartbeatHandler(
                configuration: HeartbeatConfiguration(),
                localID: "sender-0",
                peerID: "receiver-0",
                logger: TransportTestKit.silentLogger
            )
            let router = CastMessageRouter(
                acceptedDestinations: ["sender-0"],
                logger: TransportTestKit.silentLogger,
                deliver: { _ in },
                closed: { _ in }
            )
            weakRouter = router
            weakHeartbeat = heartbeat
            try channel.pipeline.syncOperations.addHandler(heartbeat)
            try channel.pipeline.syncOperations.addHandler(router)
        }
        try channel.connect(to: Self.address).wait()
        // A request in flight arms the sweep; the connect armed the heartbeat.
        let probe = try sendRequest(channel, id: 1, timeout: .seconds(10))
        #expect(weakRouter != nil && weakHeartbeat != nil)
        try channel.close().wait()
        channel.embeddedEventLoop.run()  // the pipeline removes its handlers in a later turn
        #expect(probe.transportError?.code == .connectionClosed)
        #expect(weakRouter == nil, "the sweep still holds the router")
        #expect(weakHeartbeat == nil, "the heartbeat's timer still holds its handler")
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    @Test func sendCommandIsWrittenAsIs() throws {
        let (channel, recorder) = try makeChannel()
        let message = CastMessage(
            sourceID: "sender-0",
            destinationID: "receiver-0",
            namespace: CastNamespace.connection,
            json: ["type": "CONNECT"]
        )
        try channel.writeOutbound(RouterCommand.send(message))
        #expect(try channel.readOutbound(as: CastMessage.self) == message)
        #expect(recorder.delivered.isEmpty)
        #expect(try channel.finish().isClean)
    }

    @Test func replyAddressedToBroadcastCompletesTheRequest() throws {
        let (channel, recorder) = try makeChannel()
        let probe = try sendRequest(channel, id: 1)
        try channel.writeInbound(reply(1, to: "*"))
        #expect(probe.value == reply(1, to: "*"))
        // The owner sees the reply too (the router delivers replies as well as unsolicited messages).
        #expect(recorder.delivered == [reply(1, to: "*")])
        // A second reply with the same id is an ordinary message now.
        try channel.writeInbound(reply(1, to: "*"))
        #expect(recorder.delivered.count == 2)
        #expect(try channel.finish().isClean)
    }

    @Test func replyAddressedToAnotherEndpointStillCompletesTheRequest() throws {
        let (channel, _) = try makeChannel()
        let probe = try sendRequest(channel, id: 7)
        try channel.writeInbound(reply(7, to: "sender-12345"))
        #expect(probe.value == reply(7, to: "sender-12345"))
        #expect(try channel.finish().isClean)
    }

    @Test(arguments: [true, false])
    func repliesAreMatchedByRequestIdInAnyOrder(writePromise: Bool) throws {
        let (channel, _) = try makeChannel()
        let probes = try (1...3).map { try sendRequest(channel, id: $0, writePromise: writePromise) }
        try channel.writeInbound(reply(3, to: "sender-0"))
        try channel.writeInbound(reply(1, to: "*"))
        #expect(probes[0].value == reply(1, to: "*"))
        #expect(probes[1].isPending)
        #expect(probes[2].value == reply(3, to: "sender-0"))
        try channel.writeInbound(reply(2, to: "sender-0"))
        #expect(probes[1].value == reply(2, to: "sender-0"))
        #expect(try channel.finish().isClean)
    }

    /// A device that addresses replies to `*` shows us other senders' replies, whose ids may equal ours: one on
    /// another namespace is not our reply (it is delivered as a message, ours stays pending), in the inline slot
    /// and in the table.
    @Test func aReplyOnAnotherNamespaceDoesNotCompleteTheRequest() throws {
        let (channel, recorder) = try makeChannel()
        let probes = try (1...2).map { try sendRequest(channel, id: $0) }
        for id in 1...2 {
            let foreign = CastMessage(
                sourceID: "web-7",
                destinationID: "*",
                namespace: CastNamespace.media,
                json: ["type": "MEDIA_STATUS", "requestId": .number(Double(id)), "status": []]
            )
            try channel.writeInbound(foreign)
            #expect(probes[id - 1].isPending)
            #expect(recorder.delivered.last == foreign)
        }
        try channel.writeInbound(reply(2, to: "*"))
        try channel.writeInbound(reply(1, to: "*"))
        #expect(probes[0].value == reply(1, to: "*"))
        #expect(probes[1].value == reply(2, to: "*"))
        #expect(try channel.finish().isClean)
    }

    @Test func replyWithUnknownRequestIdIsDeliveredInstead() throws {
        let (channel, recorder) = try makeChannel()
        let probe = try sendRequest(channel, id: 5)
        try channel.writeInbound(reply(6, to: "sender-0"))
        try channel.writeInbound(reply(0, to: "*"))  // unsolicited broadcast status
        #expect(recorder.delivered == [reply(6, to: "sender-0"), reply(0, to: "*")])
        #expect(probe.isPending)
        // An unknown id addressed to someone else is just another endpoint's message: dropped.
        try channel.writeInbound(reply(8, to: "sender-other"))
        #expect(recorder.delivered.count == 2)
        #expect(probe.isPending)
        try channel.writeInbound(reply(5, to: "sender-0"))
        #expect(probe.value != nil)
        #expect(try channel.finish().isClean)
    }

    /// requestId 0 means "no requestor" (cast-protocol.md §10), so it never completes anything.
    @Test func requestIdZeroIsNeverCorrelated() throws {
        let (channel, recorder) = try makeChannel()
        let probe = try sendRequest(channel, id: 0)
        try channel.writeInbound(reply(0, to: "sender-0"))
        #expect(probe.isPending)
        #expect(recorder.delivered == [reply(0, to: "sender-0")])
        _ = try channel.finish()
    }

    @Test func binaryAndNonJSONMessagesAreNotCorrelated() throws {
        let (channel, recorder) = try makeChannel()
        let probe = try sendRequest(channel, id: 1)
        let binary = CastMessage(
            sourceID: "receiver-0",
            destinationID: "sender-0",
            namespace: CastNamespace.deviceAuth,
            payload: .binary([1])
        )
        let text = CastMessage(
            sourceID: "receiver-0",
            destinationID: "sender-0",
            namespace: CastNamespace.receiver,
            payload: .string("requestId 1")
        )
        try channel.writeInbound(binary)
        try channel.writeInbound(text)
        #expect(recorder.delivered == [binary, text])
        #expect(probe.isPending)
        _ = try channel.finish()
    }

    @Test(arguments: [true, false])
    func requestFailsWithRequestTimedOutAfterItsTimeout(writePromise: Bool) throws {
        let (channel, recorder) = try makeChannel()
        let short = try sendRequest(channel, id: 1, timeout: .seconds(2), writePromise: writePromise)
        let long = try sendRequest(channel, id: 2, timeout: .seconds(10), writePromise: writePromise)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1_999))
        #expect(short.isPending)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(short.transportError?.code == .requestTimedOut)
        #expect(long.isPending)
        channel.embeddedEventLoop.advanceTime(by: .seconds(8))
        #expect(long.transportError?.code == .requestTimedOut)

        // A reply that arrives after the timeout is an ordinary message.
        try channel.writeInbound(reply(1, to: "sender-0"))
        #expect(recorder.delivered == [reply(1, to: "sender-0")])
        #expect(channel.isActive)
        #expect(try channel.finish().isClean)
    }

    @Test(arguments: [true, false])
    func timeoutsAreSweptAtTheirOwnDeadlinesWhateverTheOrder(writePromise: Bool) throws {
        // One sweep timer per connection: a shorter timeout sent after a longer one arms an earlier sweep, and the
        // sweep that finds nothing overdue arms the next for what is left.
        let (channel, _) = try makeChannel()
        let long = try sendRequest(channel, id: 1, timeout: .seconds(10), writePromise: writePromise)
        let short = try sendRequest(channel, id: 2, timeout: .seconds(3), writePromise: writePromise)
        let answered = try sendRequest(channel, id: 3, timeout: .seconds(1), writePromise: writePromise)
        try channel.writeInbound(reply(3, to: "*"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(answered.value == reply(3, to: "*"))
        #expect(short.isPending && long.isPending)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(short.transportError?.code == .requestTimedOut)
        #expect(long.isPending)
        let later = try sendRequest(channel, id: 4, timeout: .seconds(20), writePromise: writePromise)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(6_999))
        #expect(long.isPending)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(long.transportError?.code == .requestTimedOut)
        #expect(later.isPending)
        channel.embeddedEventLoop.advanceTime(by: .seconds(13))
        #expect(later.transportError?.code == .requestTimedOut)
        #expect(try channel.finish().isClean)
    }

    @Test func answeredRequestDoesNotTimeOutLater() throws {
        let (channel, _) = try makeChannel()
        let probe = try sendRequest(channel, id: 1, timeout: .seconds(1))
        try channel.writeInbound(reply(1, to: "*"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(probe.value == reply(1, to: "*"))
        #expect(try channel.finish().isClean)
    }

    @Test(arguments: [true, false])
    func closingFailsEveryOutstandingRequestAtOnce(writePromise: Bool) throws {
        let (channel, recorder) = try makeChannel()
        let probes = try (1...4).map {
            try sendRequest(channel, id: $0, timeout: .seconds(30), writePromise: writePromise)
        }
        try channel.writeInbound(reply(2, to: "*"))
        try channel.close().wait()
        #expect(probes[1].value != nil)
        for index in [0, 2, 3] {
            #expect(probes[index].transportError?.code == .connectionClosed)
        }
        #expect(recorder.closedCalls.count == 1)
        #expect(recorder.closedCalls.first! == nil)
        // Nothing is left to time out.
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(recorder.closedCalls.count == 1)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test func errorClosesTheChannelAndIsReportedAsTheCause() throws {
        let (channel, recorder) = try makeChannel()
        let probe = try sendRequest(channel, id: 1)
        channel.pipeline.fireErrorCaught(CastTransportError(.heartbeatTimeout, "silent peer"))
        #expect(!channel.isActive)
        let error = try #require(probe.transportError)
        #expect(error.code == .connectionClosed)
        #expect((error.cause as? CastTransportError)?.code == .heartbeatTimeout)
        #expect(recorder.closedCalls.count == 1)
        #expect(recorder.closedCalls.first??.code == .heartbeatTimeout)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test func foreignErrorsAreReportedAsConnectionClosed() throws {
        struct SocketBroke: Error {}
        let (channel, recorder) = try makeChannel()
        channel.pipeline.fireErrorCaught(SocketBroke())
        #expect(!channel.isActive)
        let reported = try #require(recorder.closedCalls.first ?? nil)
        #expect(reported.code == .connectionClosed)
        #expect(reported.cause is SocketBroke)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    /// Without a write promise, a request the framing would refuse is failed before anything is written or kept.
    @Test func anOversizedRequestWithoutAWritePromiseFailsAsTooLarge() throws {
        let (channel, recorder) = try makeChannel()
        let promise = channel.eventLoop.makePromise(of: CastMessage.self)
        let probe = FutureProbe(promise.futureResult)
        let message = CastMessage(
            sourceID: "sender-0",
            destinationID: "receiver-0",
            namespace: CastNamespace.receiver,
            json: ["type": "GET_STATUS", "requestId": 1, "pad": .string(String(repeating: "x", count: 70_000))]
        )
        channel.pipeline.syncOperations.writeAndFlush(
            NIOAny(
                RouterCommand.request(
                    RouterRequest(message: message, requestID: 1, timeout: .seconds(5), promise: promise)
                )
            ),
            promise: nil
        )
        #expect(probe.transportError?.code == .messageTooLarge)
        #expect(try channel.readOutbound(as: CastMessage.self) == nil)
        // Nothing kept: no timeout fires later, and a reply with its id is an ordinary message.
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        #expect(probe.transportError?.code == .messageTooLarge)
        try channel.writeInbound(reply(1, to: "sender-0"))
        #expect(recorder.delivered == [reply(1, to: "sender-0")])
        #expect(channel.isActive)
        _ = try channel.finish()
    }

    /// A `requestId` used again while a request still waits under it (the ids wrapped around) fails the older one:
    /// its reply could no longer be told apart. The newer gets the reply.
    @Test(arguments: [true, false])
    func aRequestIdUsedAgainFailsTheRequestWaitingUnderIt(writePromise: Bool) throws {
        let (channel, _) = try makeChannel()
        let other = try sendRequest(channel, id: 2, writePromise: writePromise)
        let older = try sendRequest(channel, id: 1, writePromise: writePromise)
        let newer = try sendRequest(channel, id: 1, writePromise: writePromise)
        let again = try sendRequest(channel, id: 2, writePromise: writePromise)
        #expect(older.transportError?.code == .requestTimedOut)
        #expect(other.transportError?.code == .requestTimedOut)
        try channel.writeInbound(reply(1, to: "sender-0"))
        try channel.writeInbound(reply(2, to: "sender-0"))
        #expect(newer.value == reply(1, to: "sender-0"))
        #expect(again.value == reply(2, to: "sender-0"))
        #expect(try channel.finish().isClean)
    }

    @Test func failedWriteFailsTheRequest() throws {
        struct WriteRefused: Error {}
        final class RefuseWrites: ChannelOutboundHandler, Sendable {
            typealias OutboundIn = CastMessage
            func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
                promise?.fail(WriteRefused())
            }
        }
        let (channel, _) = try makeChannel(below: RefuseWrites())
        let promise = channel.eventLoop.makePromise(of: CastMessage.self)
        let probe = FutureProbe(promise.futureResult)
        let write = FutureProbe(
            channel.writeAndFlush(
                RouterCommand.request(
                    RouterRequest(message: request(1), requestID: 1, timeout: .seconds(5), promise: promise)
                )
            )
        )
        #expect(probe.error is WriteRefused)
        #expect(write.error is WriteRefused)
        // The failed request was forgotten: its timer does not fire into a completed promise.
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        #expect(probe.error is WriteRefused)
        _ = try channel.finish()
    }

    @Test func messagesForAnotherDestinationAreDropped() throws {
        let (channel, recorder) = try makeChannel(acceptedDestinations: ["sender-0"])
        let mine = CastMessage(
            sourceID: "receiver-0",
            destinationID: "sender-0",
            namespace: CastNamespace.media,
            payload: .string("{}")
        )
        let broadcast = CastMessage(
            sourceID: "receiver-0",
            destinationID: "*",
            namespace: CastNamespace.receiver,
            payload: .string("{}")
        )
        let theirs = CastMessage(
            sourceID: "receiver-0",
            destinationID: "sender-1",
            namespace: CastNamespace.media,
            payload: .string("{}")
        )
        try channel.writeInbound(theirs)
        try channel.writeInbound(mine)
        try channel.writeInbound(broadcast)
        #expect(recorder.delivered == [mine, broadcast])
        // Nothing travels past the router.
        #expect(try channel.readInbound(as: CastMessage.self) == nil)
        #expect(try channel.finish().isClean)
    }

    @Test func serversWithoutAFilterGetEverything() throws {
        let (channel, recorder) = try makeChannel(acceptedDestinations: nil)
        let messages = ["receiver-0", "app-1", "*", "anyone"].map {
            CastMessage(
                sourceID: "sender-0",
                destinationID: $0,
                namespace: CastNamespace.receiver,
                payload: .string("{}")
            )
        }
        for message in messages { try channel.writeInbound(message) }
        #expect(recorder.delivered == messages)
        #expect(try channel.finish().isClean)
    }
}

// MARK: - Over real TLS

/// A `CastServer` on 127.0.0.1 whose accepted connections the test drives directly.
struct LoopbackPeer: Sendable {
    let connection: CastConnection
    let messages: StreamReader<CastEventStream<CastMessage>>
    let events: StreamReader<CastEventStream<CastConnectionEvent>>
}

struct LoopbackHarness: Sendable {
    let server: CastServer
    let accepted: StreamReader<AsyncStream<LoopbackPeer>>

    static func start(
        configuration: CastServer.Configuration = TransportTestKit.quietServerConfiguration()
    ) async throws -> LoopbackHarness {
        let (stream, continuation) = AsyncStream.makeStream(of: LoopbackPeer.self)
        let server = try await CastServer.bind(
            tlsContext: try TransportTestKit.serverContext(),
            configuration: configuration
        ) { connection in
            // Subscribe before the first read, as CastServer documents.
            continuation.yield(
                LoopbackPeer(
                    connection: connection,
                    messages: StreamReader(connection.messages()),
                    events: StreamReader(connection.events())
                )
            )
        }
        return LoopbackHarness(server: server, accepted: StreamReader(stream))
    }

    func nextPeer(_ what: String = "an accepted connection") async throws -> LoopbackPeer {
        try #require(try await accepted.next(within: .seconds(60), what))
    }

    func connectClient(
        _ configuration: CastConnection.Configuration = TransportTestKit.quietClientConfiguration()
    ) async throws -> (CastConnection, LoopbackPeer) {
        let client = try await CastConnection.connect(
            host: "127.0.0.1",
            port: server.port,
            configuration: configuration
        )
        return (client, try await nextPeer())
    }
}

extension CastMessage {
    var type: String? { (try? json())?["type"]?.stringValue }
    var requestID: Int? { (try? json())?["requestId"]?.intValue }
}

@Suite("Request correlation: CastConnection against CastServer over TLS")
struct ConnectionCorrelationTests {
    @Test func requestToASilentServerTimesOut() async throws {
        let harness = try await LoopbackHarness.start()
        let (client, peer) = try await harness.connectClient()
        let started = ContinuousClock.now
        await expectTransportError(.requestTimedOut) {
            try await client.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "GET_STATUS"],
                timeout: .milliseconds(200)
            )
        }
        #expect(ContinuousClock.now - started >= .milliseconds(200), "not before its timeout")
        // The request did reach the server; the connection survives the timeout.
        let seen = try #require(try await peer.messages.next())
        #expect(seen.type == "GET_STATUS")
        #expect(client.isConnected)
        await client.close()
        await harness.server.close()
    }

    @Test func serverClosingFailsOutstandingRequestsAndReportsTheDisconnect() async throws {
        let harness = try await LoopbackHarness.start()
        let (client, peer) = try await harness.connectClient()
        let events = StreamReader(client.events())
        let pending = Task {
            try await client.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "GET_STATUS"]
            )
        }
        let seen = try #require(try await peer.messages.next())
        #expect(seen.type == "GET_STATUS")
        await peer.connection.close()

        await expectTransportError(.connectionClosed) { try await pending.value }
        let event = try #require(try await events.next(within: .seconds(60), "the disconnect event"))
        guard case .disconnected(let code) = event else {
            Issue.record("expected .disconnected, got \(event)")
            return
        }
        #expect(code != nil)
        #expect(code == .connectionClosed)
        #expect(!client.isConnected)
        // The server-side connection was closed for good: its streams end.
        _ = try await peer.messages.remainingUntilEnd()
        await client.close()
        await harness.server.close()
    }

    /// What this test checks is ids, not time: a saturated machine (the ten-run stress check) once kept one of
    /// 20 concurrent replies past the default 10 s.
    static let loadedMachineTimeout: Duration = .seconds(60)

    @Test func requestIdsAreUniqueIncreasingAndNeverZero() async throws {
        let harness = try await LoopbackHarness.start()
        let (client, peer) = try await harness.connectClient()
        let seenIDs = LockedLog<Int>()
        let echo = Task {
            while let message = try await peer.messages.next(within: .seconds(60)) {
                guard let id = message.requestID else { continue }
                seenIDs.append(id)
                try await peer.connection.send(
                    namespace: message.namespace,
                    to: "*",  // devices often address replies to everyone; correlation is by requestId
                    payload: ["type": "ECHO", "requestId": .number(Double(id)), "n": try message.json()["n"] ?? .null],
                    from: message.destinationID
                )
            }
        }
        defer { echo.cancel() }

        var sequential: [Int] = []
        for n in 0..<5 {
            let reply = try await client.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "GET_STATUS", "n": .number(Double(n))],
                timeout: Self.loadedMachineTimeout
            )
            #expect(try reply.json()["n"]?.intValue == n)
            sequential.append(try #require(reply.requestID))
        }
        // Counting up from a random first id.
        let first = try #require(sequential.first)
        #expect((1...(1 << 30)).contains(first))
        #expect(sequential == Array(first..<first + 5))

        // Concurrent requests each get their own id and their own reply.
        let concurrent = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for n in 100..<120 {
                group.addTask {
                    let reply = try await client.request(
                        namespace: CastNamespace.media,
                        to: "app-1",
                        payload: ["type": "GET_STATUS", "n": .number(Double(n))],
                        timeout: Self.loadedMachineTimeout
                    )
                    return (n, try #require(reply.requestID))
                }
            }
            var results: [(Int, Int)] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(concurrent.count == 20)
        let ids = concurrent.map(\.1)
        #expect(Set(ids).count == 20)
        #expect(ids.allSatisfy { $0 >= first + 5 && $0 < first + 25 })
        #expect(!seenIDs.all.contains(0))
        #expect(seenIDs.all.count == 25)
        #expect(Set(seenIDs.all).count == 25)
        await client.close()
        await harness.server.close()
    }

    @Test func serverCloseOfAVirtualConnectionIsReportedAndForgotten() async throws {
        let harness = try await LoopbackHarness.start()
        let (client, peer) = try await harness.connectClient()
        let events = StreamReader(client.events())
        let inbound = StreamReader(client.messages())
        try await client.openVirtualConnection(to: CastEndpoint.receiver)
        try await client.openVirtualConnection(to: "app-7")
        #expect(client.virtualConnections == [CastEndpoint.receiver, "app-7"])
        for expected in [CastEndpoint.receiver, "app-7"] {
            let connect = try #require(try await peer.messages.next())
            #expect(connect.namespace == CastNamespace.connection)
            #expect(connect.type == "CONNECT")
            #expect(connect.destinationID == expected)
        }

        // A CLOSE from an endpoint we never opened is not an event; the one from app-7 is.
        try await peer.connection.send(
            namespace: CastNamespace.connection,
            to: "sender-0",
            payload: ["type": "CLOSE"],
            from: "stranger-1"
        )
        try await peer.connection.send(
            namespace: CastNamespace.connection,
            to: "sender-0",
            payload: ["type": "CLOSE"],
            from: "app-7"
        )
        let event = try #require(try await events.next(within: .seconds(60), "the virtual connection event"))
        #expect(event == .virtualConnectionClosed(endpoint: "app-7"))
        #expect(client.virtualConnections == [CastEndpoint.receiver])
        // The CLOSE messages are still delivered to subscribers.
        let closes = [try await inbound.next(), try await inbound.next()]
        #expect(closes.map { $0?.sourceID } == ["stranger-1", "app-7"])
        #expect(client.isConnected)
        await client.close()
        await harness.server.close()
    }

    @Test func reconnectReopensEveryRememberedVirtualConnection() async throws {
        let harness = try await LoopbackHarness.start()
        let (client, first) = try await harness.connectClient()
        let events = StreamReader(client.events())
        try await client.openVirtualConnection(to: CastEndpoint.receiver)
        try await client.openVirtualConnection(to: "app-7")
        try await client.openVirtualConnection(to: "app-8")
        try await client.closeVirtualConnection(to: "app-8")
        let firstTypes = try await (0..<4).asyncMap { _ in try #require(try await first.messages.next()) }
        #expect(firstTypes.map(\.type) == ["CONNECT", "CONNECT", "CONNECT", "CLOSE"])

        try await client.reconnect()
        let second = try await harness.nextPeer("the reconnected connection")
        #expect(try await events.next() == .connected)
        var reopened: [String] = []
        for _ in 0..<2 {
            let message = try #require(try await second.messages.next())
            #expect(message.namespace == CastNamespace.connection)
            #expect(message.type == "CONNECT")
            #expect(message.sourceID == "sender-0")
            reopened.append(message.destinationID)
        }
        #expect(reopened == [CastEndpoint.receiver, "app-7"])
        #expect(client.virtualConnections == [CastEndpoint.receiver, "app-7"])
        // The old server-side connection ended when the client dropped it.
        _ = try await first.messages.remainingUntilEnd()
        #expect(client.isConnected)

        // The new transport works for requests, with ids continuing on this connection object.
        let echo = Task {
            let message = try #require(try await second.messages.next())
            try await second.connection.send(
                namespace: message.namespace,
                to: message.sourceID,
                payload: ["type": "OK", "requestId": .number(Double(message.requestID ?? -1))],
                from: message.destinationID
            )
        }
        let reply = try await client.request(
            namespace: CastNamespace.receiver,
            to: CastEndpoint.receiver,
            payload: ["type": "GET_STATUS"]
        )
        #expect(reply.type == "OK")
        #expect((reply.requestID ?? 0) > 0)
        try await echo.value
        await client.close()
        await harness.server.close()
    }

    @Test func nonObjectRequestPayloadIsInvalidPayload() async throws {
        let harness = try await LoopbackHarness.start()
        let (client, _) = try await harness.connectClient()
        for payload: JSONValue in [[1, 2], "GET_STATUS", 3, .null, true] {
            await expectTransportError(.invalidPayload) {
                try await client.request(namespace: CastNamespace.receiver, to: CastEndpoint.receiver, payload: payload)
            }
        }
        #expect(client.isConnected)
        await client.close()
        await harness.server.close()
    }

    @Test func sendingAfterCloseIsNotConnected() async throws {
        let harness = try await LoopbackHarness.start()
        let (client, peer) = try await harness.connectClient()
        let events = StreamReader(client.events())
        try await client.openVirtualConnection(to: CastEndpoint.receiver)
        await client.close()
        #expect(!client.isConnected)

        await expectTransportError(.notConnected) {
            try await client.send(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "GET_STATUS"]
            )
        }
        await expectTransportError(.notConnected) {
            try await client.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "GET_STATUS"]
            )
        }
        await expectTransportError(.notConnected) { try await client.openVirtualConnection(to: "app-1") }

        // Our own close is reported without an error, then the stream ends; new subscribers get a finished stream.
        #expect(try await events.remainingUntilEnd() == [.disconnected(nil)])
        #expect(try await StreamReader(client.events()).next() == nil)
        #expect(try await StreamReader(client.messages()).next() == nil)

        // close() said goodbye to every virtual connection before closing the transport.
        let seen = try await peer.messages.remainingUntilEnd()
        #expect(seen.map(\.type) == ["CONNECT", "CLOSE"])
        await harness.server.close()
    }

    @Test func cancellingARequestThrowsCancellationError() async throws {
        let harness = try await LoopbackHarness.start()
        let (client, peer) = try await harness.connectClient()
        let pending = Task {
            try await client.request(
                namespace: CastNamespace.receiver,
                to: CastEndpoint.receiver,
                payload: ["type": "GET_STATUS"],
                timeout: .seconds(30)
            )
        }
        _ = try #require(try await peer.messages.next())
        pending.cancel()
        await #expect(throws: CancellationError.self) { try await pending.value }
        #expect(client.isConnected)
        await client.close()
        await harness.server.close()
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
