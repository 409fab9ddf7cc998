import CastDiscovery
import CastMedia
import CastReceiver
import CastSession
import CastTransport
import NIOConcurrencyHelpers
import Testing

/// A CastChannel subclass that records what the receiver app sends and its connection changes.
final class RecordingChannel: CastChannel, @unchecked Sendable {
    // @unchecked: the recorders are thread-safe and immutable references.
    let texts = Recorder<String>()
    let binaries = Recorder<[UInt8]>()
    let connections = Recorder<Bool>()

    override func didReceiveTextMessage(_ message: String) { texts.record(message) }
    override func didReceiveBinaryMessage(_ message: [UInt8]) { binaries.record(message) }
    override func didConnect() { connections.record(true) }
    override func didDisconnect() { connections.record(false) }
}

/// A channel that answers each message from the app, as a GCK channel does in `didReceiveTextMessage`: with a
/// synchronous, queued send (the echo app returns the answer too, which is not answered again).
final class AnsweringChannel: CastChannel, @unchecked Sendable {
    // @unchecked: the recorder is thread-safe.
    let texts = Recorder<String>()

    override func didReceiveTextMessage(_ message: String) {
        texts.record(message)
        if !message.hasPrefix("ack:") { try? postTextMessage("ack:" + message) }
    }
}

/// Custom namespace channels against the emulator's echo app (`E0C40001` on `urn:x-cast:com.example.echo`).
@Suite struct CustomChannelTests {
    static let echoNamespace = "urn:x-cast:com.example.echo"

    static func echoOptions(_ options: inout CastOptions) {
        options.receiverApplicationID = "E0C40001"
    }

    @Test func genericChannelRoundTrip() async throws {
        try await withStartedSession(options: Self.echoOptions) { fixture in
            #expect(fixture.session.application.namespaces == [Self.echoNamespace])
            #expect(fixture.session.remoteMediaClient == nil)

            let handled = Recorder<CastMessage.Payload>()
            let channel = try GenericChannel(namespace: Self.echoNamespace) { handled.record($0) }
            let connections = channel.connectionChanges()
            let messages = channel.messages()
            #expect(!channel.isConnected)
            fixture.session.add(channel)
            #expect(try await next(connections) { _ in true } == true)
            #expect(channel.isConnected)

            try await channel.sendTextMessage("{\"hello\":\"echo\"}")
            let text = try await next(messages) { _ in true }
            #expect(text == .string("{\"hello\":\"echo\"}"))

            try await channel.sendBinaryMessage([0, 1, 2, 254, 255])
            let bytes = try await next(messages) { _ in true }
            #expect(bytes == .binary([0, 1, 2, 254, 255]))
            #expect(handled.values == [.string("{\"hello\":\"echo\"}"), .binary([0, 1, 2, 254, 255])])

            await fixture.context.sessionManager.endSession(stopCasting: true)
            #expect(try await next(connections) { _ in true } == false)
            #expect(!channel.isConnected)
            await #expect {
                try await channel.sendTextMessage("after the end")
            } throws: { ($0 as? CastSessionError)?.code == .channelNotConnected }
        }
    }

    @Test func subclassOverridesReceiveTheMessages() async throws {
        try await withStartedSession(options: Self.echoOptions) { fixture in
            let channel = try RecordingChannel(namespace: Self.echoNamespace)
            fixture.session.add(channel)
            #expect(channel.isConnected, "a channel added to a connected session connects at once")
            #expect(channel.connections.values == [true])
            try await channel.sendTextMessage("ping")
            #expect(try await next(channel.texts.stream) { _ in true } == "ping")
            try await channel.sendBinaryMessage([7, 8, 9])
            #expect(try await next(channel.binaries.stream) { _ in true } == [7, 8, 9])

            // Replacing the channel for the namespace disconnects the old one.
            let replacement = try RecordingChannel(namespace: Self.echoNamespace)
            fixture.session.add(replacement)
            #expect(channel.connections.values == [true, false])
            #expect(replacement.isConnected)
            try await replacement.sendTextMessage("again")
            #expect(try await next(replacement.texts.stream) { _ in true } == "again")
            #expect(channel.texts.values == ["ping"])

            fixture.session.remove(replacement)
            #expect(replacement.connections.values == [true, false])
            #expect(!replacement.isConnected)
        }
    }

    @Test func aCallbackAnswersWithQueuedSendsInOrder() async throws {
        try await withStartedSession(options: Self.echoOptions) { fixture in
            let channel = try AnsweringChannel(namespace: Self.echoNamespace)
            fixture.session.add(channel)
            // Queued without waiting, in order with the awaited sends around them.
            try channel.postTextMessage("1")
            try await channel.sendTextMessage("2")
            try channel.postTextMessage("3")
            try channel.postBinaryMessage([4])
            var seen: [String] = []
            for await text in channel.texts.stream {
                seen.append(text)
                if seen.count == 6 { break }
            }
            // Each echo is answered from the callback; the answers come back after the messages queued before.
            #expect(seen.filter { !$0.hasPrefix("ack:") } == ["1", "2", "3"])
            #expect(seen.filter { $0.hasPrefix("ack:") } == ["ack:1", "ack:2", "ack:3"])
            #expect(seen.firstIndex(of: "ack:1")! > seen.firstIndex(of: "1")!)

            let tooBig = String(repeating: "x", count: 70_000)
            #expect {
                try channel.postTextMessage(tooBig)
            } throws: { ($0 as? CastTransportError)?.code == .messageTooLarge }

            await fixture.context.sessionManager.endSession(stopCasting: true)
            #expect {
                try channel.postTextMessage("after the end")
            } throws: { ($0 as? CastSessionError)?.code == .channelNotConnected }
        }
        let unconnected = try AnsweringChannel(namespace: Self.echoNamespace)
        #expect {
            try unconnected.postBinaryMessage([1])
        } throws: { ($0 as? CastSessionError)?.code == .channelNotConnected }
    }

    @Test func namespacesMustBeCustomChannelURNs() throws {
        #expect {
            try GenericChannel(namespace: "com.example.bad")
        } throws: { ($0 as? CastSessionError)?.code == .invalidNamespace }
        #expect {
            try RecordingChannel(namespace: "")
        } throws: { ($0 as? CastSessionError)?.code == .invalidNamespace }
        let valid = try GenericChannel(namespace: "urn:x-cast:com.example.ok")
        #expect(valid.namespace == "urn:x-cast:com.example.ok")
    }

    @Test func sendingOnAnUnconnectedChannelFails() async throws {
        let channel = try GenericChannel(namespace: Self.echoNamespace)
        await #expect {
            try await channel.sendTextMessage("nobody listens")
        } throws: { ($0 as? CastSessionError)?.code == .channelNotConnected }
        await #expect {
            try await channel.sendBinaryMessage([1])
        } throws: { ($0 as? CastSessionError)?.code == .channelNotConnected }
    }

    @Test func aChannelTheAppDoesNotListStaysDisconnected() async throws {
        try await withStartedSession(options: Self.echoOptions) { fixture in
            let channel = try RecordingChannel(namespace: "urn:x-cast:com.example.other")
            fixture.session.add(channel)
            #expect(!channel.isConnected)
            #expect(channel.connections.values.isEmpty)
            await #expect {
                try await channel.sendTextMessage("lost")
            } throws: { ($0 as? CastSessionError)?.code == .channelNotConnected }
        }
        // The Default Media Receiver does not list the echo namespace either.
        try await withStartedSession { fixture in
            let channel = try RecordingChannel(namespace: Self.echoNamespace)
            fixture.session.add(channel)
            #expect(!channel.isConnected)
        }
    }

    @Test func channelsReconnectAfterAResume() async throws {
        let sleeper = GatedSleeper()
        try await withStartedSession(options: Self.echoOptions, sleep: sleeper.sleep) { fixture in
            let channel = try GenericChannel(namespace: Self.echoNamespace)
            let connections = channel.connectionChanges()
            let messages = channel.messages()
            fixture.session.add(channel)
            #expect(try await next(connections) { _ in true } == true)

            try await dropConnection(fixture)
            #expect(try await next(connections) { _ in true } == false)
            #expect(!channel.isConnected)
            await #expect {
                try await channel.sendTextMessage("while suspended")
            } throws: { ($0 as? CastSessionError)?.code == .channelNotConnected }

            fixture.device.setFaults(FaultInjection())
            sleeper.open()
            try await nextEvent(fixture.events, "didResume")
            #expect(try await next(connections) { _ in true } == true)
            try await channel.sendTextMessage("back")
            #expect(try await next(messages) { _ in true } == .string("back"))
        }
    }

    @Test func aChannelRegisteredWhileSuspendedConnectsOnResume() async throws {
        let sleeper = GatedSleeper()
        try await withStartedSession(options: Self.echoOptions, sleep: sleeper.sleep) { fixture in
            try await dropConnection(fixture)
            let channel = try RecordingChannel(namespace: Self.echoNamespace)
            fixture.session.add(channel)
            #expect(!channel.isConnected)

            fixture.device.setFaults(FaultInjection())
            sleeper.open()
            try await nextEvent(fixture.events, "didResume")
            #expect(channel.isConnected)
            #expect(channel.connections.values == [true])
            try await channel.sendTextMessage("hello after resume")
            #expect(try await next(channel.texts.stream) { _ in true } == "hello after resume")
        }
    }
}
