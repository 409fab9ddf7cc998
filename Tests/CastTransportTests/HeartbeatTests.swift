import NIOCore
import NIOEmbedded
import Testing

@testable import CastTransport

/// `HeartbeatHandler` on an `EmbeddedChannel`: every timer is driven with `advanceTime(by:)`, nothing sleeps.
@Suite("Heartbeat: PING/PONG and dead-peer detection on virtual time")
struct HeartbeatTests {
    static let address = try! SocketAddress(ipAddress: "127.0.0.1", port: 1)

    private func makeChannel(
        _ configuration: HeartbeatConfiguration = HeartbeatConfiguration(),
        localID: String = "sender-0",
        peerID: String = "receiver-0",
        activate: Bool = true,
        keepsSlack: Bool = false
    ) throws -> EmbeddedChannel {
        var configuration = configuration
        if !keepsSlack { configuration.timerSlack = .zero }  // every timer exact, to the millisecond
        let channel = EmbeddedChannel(
            handler: HeartbeatHandler(
                configuration: configuration,
                localID: localID,
                peerID: peerID,
                logger: TransportTestKit.silentLogger
            )
        )
        if activate {
            try channel.connect(to: Self.address).wait()
            #expect(channel.isActive)
        }
        return channel
    }

    private func heartbeat(_ type: String, from source: String, to destination: String) -> CastMessage {
        CastMessage(
            sourceID: source,
            destinationID: destination,
            namespace: CastNamespace.heartbeat,
            json: ["type": .string(type)]
        )
    }

    private func other(_ text: String = "hello") -> CastMessage {
        CastMessage(
            sourceID: "receiver-0",
            destinationID: "sender-0",
            namespace: CastNamespace.receiver,
            json: ["type": "RECEIVER_STATUS", "note": .string(text)]
        )
    }

    private func expectNoOutbound(_ channel: EmbeddedChannel, sourceLocation: SourceLocation = #_sourceLocation) throws
    {
        let message = try channel.readOutbound(as: CastMessage.self)
        #expect(message == nil, "unexpected outbound \(String(describing: message))", sourceLocation: sourceLocation)
    }

    private func expectPing(
        _ channel: EmbeddedChannel,
        from source: String = "sender-0",
        to destination: String = "receiver-0",
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let message = try #require(try channel.readOutbound(as: CastMessage.self), sourceLocation: sourceLocation)
        #expect(message == heartbeat("PING", from: source, to: destination), sourceLocation: sourceLocation)
        #expect(message.payload == .string(#"{"type":"PING"}"#), sourceLocation: sourceLocation)
    }

    // MARK: - Answering

    @Test func pingIsAnsweredWithPongAddressedToItsSource() throws {
        let channel = try makeChannel()
        try channel.writeInbound(heartbeat("PING", from: "receiver-0", to: "sender-0"))
        let pong = try #require(try channel.readOutbound(as: CastMessage.self))
        #expect(pong == heartbeat("PONG", from: "sender-0", to: "receiver-0"))
        #expect(pong.payload == .string(#"{"type":"PONG"}"#))
        // Heartbeat traffic is consumed, not passed up.
        #expect(try channel.readInbound(as: CastMessage.self) == nil)

        // Whoever pinged gets the answer, from the endpoint the PING was addressed to.
        try channel.writeInbound(heartbeat("PING", from: "web-5", to: "sender-0"))
        #expect(try channel.readOutbound(as: CastMessage.self) == heartbeat("PONG", from: "sender-0", to: "web-5"))
        try channel.writeInbound(heartbeat("PING", from: "sender-7", to: "app-endpoint"))
        #expect(
            try channel.readOutbound(as: CastMessage.self) == heartbeat("PONG", from: "app-endpoint", to: "sender-7")
        )
        // A broadcast PING is answered from our own id, never from "*".
        try channel.writeInbound(heartbeat("PING", from: "receiver-0", to: "*"))
        #expect(try channel.readOutbound(as: CastMessage.self) == heartbeat("PONG", from: "sender-0", to: "receiver-0"))
        try expectNoOutbound(channel)
        #expect(try channel.finish().isClean)
    }

    @Test("A PING written otherwise (spacing, more fields) is answered like the usual text")
    func pingWrittenOtherwiseIsAnswered() throws {
        let channel = try makeChannel()
        for text in [#"{ "type" : "PING" }"#, #"{"requestId":0,"type":"PING"}"#, #"{"type":"PING"}"#] {
            try channel.writeInbound(
                CastMessage(
                    sourceID: "receiver-0",
                    destinationID: "sender-0",
                    namespace: CastNamespace.heartbeat,
                    payload: .string(text)
                )
            )
            #expect(
                try channel.readOutbound(as: CastMessage.self) == heartbeat("PONG", from: "sender-0", to: "receiver-0"),
                "\(text)"
            )
        }
        try channel.writeInbound(heartbeat("PONG", from: "receiver-0", to: "sender-0"))
        try expectNoOutbound(channel)
        #expect(try channel.finish().isClean)
    }

    @Test func otherHeartbeatMessagesAreConsumedSilently() throws {
        let channel = try makeChannel()
        try channel.writeInbound(heartbeat("PONG", from: "receiver-0", to: "sender-0"))
        try channel.writeInbound(
            CastMessage(
                sourceID: "receiver-0",
                destinationID: "sender-0",
                namespace: CastNamespace.heartbeat,
                payload: .string("not json")
            )
        )
        try channel.writeInbound(
            CastMessage(
                sourceID: "receiver-0",
                destinationID: "sender-0",
                namespace: CastNamespace.heartbeat,
                payload: .binary([1, 2])
            )
        )
        #expect(try channel.readInbound(as: CastMessage.self) == nil)
        try expectNoOutbound(channel)
        #expect(try channel.finish().isClean)
    }

    @Test func answersPingsFalseSendsNoPong() throws {
        let channel = try makeChannel(
            HeartbeatConfiguration(pingInterval: .seconds(5), deadAfter: .seconds(15), answersPings: false)
        )
        channel.embeddedEventLoop.advanceTime(by: .seconds(3))
        try channel.writeInbound(heartbeat("PING", from: "receiver-0", to: "sender-0"))
        try expectNoOutbound(channel)
        #expect(try channel.readInbound(as: CastMessage.self) == nil)
        // The unanswered PING still counted as traffic: the next PING is due 5 s after it, not after the start.
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(4_999))
        try expectNoOutbound(channel)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        try expectPing(channel)
        #expect(try channel.finish().isClean)
    }

    @Test func nonHeartbeatMessagesPassThrough() throws {
        let channel = try makeChannel()
        let messages = [
            other("one"),
            CastMessage(
                sourceID: "receiver-0",
                destinationID: "*",
                namespace: CastNamespace.media,
                payload: .string("{}")
            ),
            CastMessage(
                sourceID: "receiver-0",
                destinationID: "sender-0",
                namespace: CastNamespace.deviceAuth,
                payload: .binary([9])
            ),
        ]
        for message in messages { try channel.writeInbound(message) }
        for message in messages { #expect(try channel.readInbound(as: CastMessage.self) == message) }
        try expectNoOutbound(channel)
        #expect(try channel.finish().isClean)
    }

    // MARK: - Pinging

    @Test func pingIsSentAfterFiveSecondsOfSilenceAndRepeats() throws {
        let channel = try makeChannel()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(4_999))
        try expectNoOutbound(channel)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        try expectPing(channel)
        try expectNoOutbound(channel)
        // Still silent: another PING every 5 s.
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(4_999))
        try expectNoOutbound(channel)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        try expectPing(channel)
        #expect(channel.isActive)
        #expect(try channel.finish().isClean)
    }

    @Test func pingUsesTheConfiguredEndpoints() throws {
        let channel = try makeChannel(localID: "receiver-0", peerID: "sender-0")
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        try expectPing(channel, from: "receiver-0", to: "sender-0")
        #expect(try channel.finish().isClean)
    }

    @Test func inboundTrafficResetsThePingTimer() throws {
        let channel = try makeChannel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        try channel.writeInbound(other())
        #expect(try channel.readInbound(as: CastMessage.self) == other())
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))  // t = 8 s, 4 s after the traffic
        try expectNoOutbound(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))  // t = 9 s
        try expectPing(channel)

        // A PONG is traffic too, and it restarts the 5 s count from its arrival.
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))  // t = 11 s
        try channel.writeInbound(heartbeat("PONG", from: "receiver-0", to: "sender-0"))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(4_999))
        try expectNoOutbound(channel)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))  // t = 16 s
        try expectPing(channel)
        #expect(channel.isActive)
        #expect(try channel.finish().isClean)
    }

    @Test("Timer slack: PINGs go at the next multiple of the slack, one wake-up per interval; death is never early")
    func slackRoundsPingsUpAndKeepsDeathExact() throws {
        let channel = try makeChannel(keepsSlack: true)  // 250 ms
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(300))
        try channel.writeInbound(other())
        _ = try channel.readInbound(as: CastMessage.self)
        // Due at 5.3 s, rounded up to 5.5 s.
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(5_199))  // t = 5.499 s
        try expectNoOutbound(channel)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))  // t = 5.5 s
        try expectPing(channel)
        // The PONG 100 ms later moves the next PING's due time to 10.6 s; the timer armed for 10.5 s is within the
        // slack of it, so it pings then instead of waking up again.
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(100))
        try channel.writeInbound(heartbeat("PONG", from: "receiver-0", to: "sender-0"))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(4_899))  // t = 10.499 s
        try expectNoOutbound(channel)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        try expectPing(channel)
        // Silent from 5.6 s on: dead at 20.6 s exactly, not at a rounded time before it.
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(4_999))  // t = 15.499 s
        try expectNoOutbound(channel)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        try expectPing(channel)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(5_099))  // t = 20.599 s
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(151))  // t = 20.75 s, the rounded deadline
        #expect(!channel.isActive)
    }

    @Test("A server's timers fire half a slack off a sender's grid, so the two ends never PING at the same instant")
    func serverSlackPhaseIsOffTheSendersGrid() throws {
        var configuration = CastServer.Configuration().connection.heartbeat
        #expect(configuration.slackPhase == 0.5)
        configuration.deadAfter = nil
        let channel = try makeChannel(configuration, localID: "receiver-0", peerID: "sender-0", keepsSlack: true)
        // Due at 5 s; a sender's timer would fire then, a server's 125 ms later (and pings, being within the slack).
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(5_124))
        try expectNoOutbound(channel)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        try expectPing(channel, from: "receiver-0", to: "sender-0")
        _ = try channel.finish()
    }

    // MARK: - Dead peer

    @Test func fifteenSecondsOfSilenceClosesWithHeartbeatTimeout() throws {
        let channel = try makeChannel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        try expectPing(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        try expectPing(channel)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(4_999))
        #expect(channel.isActive)
        try channel.throwIfErrorCaught()

        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))  // t = 15 s
        #expect(!channel.isActive)
        expectTransportError(.heartbeatTimeout) { try channel.throwIfErrorCaught() }
        // No third PING on the way out.
        try expectNoOutbound(channel)
        // The timers are gone with the channel.
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        try expectNoOutbound(channel)
        try channel.throwIfErrorCaught()
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test func trafficPostponesTheDeadline() throws {
        let channel = try makeChannel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        try expectPing(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        try expectPing(channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))  // t = 14 s
        try channel.writeInbound(heartbeat("PONG", from: "receiver-0", to: "sender-0"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(14))  // t = 28 s: PINGs at 19 and 24
        try expectPing(channel)
        try expectPing(channel)
        #expect(channel.isActive)
        try channel.throwIfErrorCaught()
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))  // t = 29 s = 14 + 15
        #expect(!channel.isActive)
        expectTransportError(.heartbeatTimeout) { try channel.throwIfErrorCaught() }
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test func deadlineWithoutPingsStillCloses() throws {
        let channel = try makeChannel(HeartbeatConfiguration(pingInterval: nil, deadAfter: .seconds(15)))
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(14_999))
        try expectNoOutbound(channel)
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        try expectNoOutbound(channel)
        #expect(!channel.isActive)
        expectTransportError(.heartbeatTimeout) { try channel.throwIfErrorCaught() }
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test func pingsWithoutDeadlineNeverClose() throws {
        let channel = try makeChannel(HeartbeatConfiguration(pingInterval: .seconds(5), deadAfter: nil))
        for _ in 0..<24 {
            channel.embeddedEventLoop.advanceTime(by: .seconds(5))
            try expectPing(channel)
        }
        try expectNoOutbound(channel)
        #expect(channel.isActive)
        #expect(try channel.finish().isClean)
    }

    @Test func disabledHeartbeatNeverWritesOrCloses() throws {
        let channel = try makeChannel(HeartbeatConfiguration(pingInterval: nil, deadAfter: nil))
        channel.embeddedEventLoop.advanceTime(by: .hours(1))
        try expectNoOutbound(channel)
        #expect(channel.isActive)
        try channel.throwIfErrorCaught()
        // Answering PINGs is independent of the timers.
        try channel.writeInbound(heartbeat("PING", from: "receiver-0", to: "sender-0"))
        #expect(try channel.readOutbound(as: CastMessage.self) == heartbeat("PONG", from: "sender-0", to: "receiver-0"))
        #expect(try channel.finish().isClean)
    }

    // MARK: - Lifecycle

    @Test func timersStartOnlyOnceTheChannelIsActive() throws {
        let channel = try makeChannel(activate: false)
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        try expectNoOutbound(channel)
        try channel.throwIfErrorCaught()
        try channel.connect(to: Self.address).wait()
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        try expectPing(channel)
        #expect(try channel.finish().isClean)
    }

    @Test func handlerAddedToAnActiveChannelStartsAtOnce() throws {
        let channel = EmbeddedChannel()
        try channel.connect(to: Self.address).wait()
        channel.embeddedEventLoop.advanceTime(by: .seconds(100))
        try channel.pipeline.syncOperations.addHandler(
            HeartbeatHandler(
                configuration: HeartbeatConfiguration(),
                localID: "sender-0",
                peerID: "receiver-0",
                logger: TransportTestKit.silentLogger
            )
        )
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(4_999))
        try expectNoOutbound(channel)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        try expectPing(channel)
        #expect(try channel.finish().isClean)
    }

    @Test func closingTheChannelStopsTheTimers() throws {
        let channel = try makeChannel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        try channel.close().wait()
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        try expectNoOutbound(channel)
        try channel.throwIfErrorCaught()
        _ = try channel.finish(acceptAlreadyClosed: true)
    }
}
