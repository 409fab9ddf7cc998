import CastTransport
import Foundation
import NIOCore
import NIOPosix
import Testing

/// A sender and a server built from CastTransport, talking over real TLS on 127.0.0.1.
@Suite struct LoopbackTests {
    @Test func connectPingPongAndRequestReply() async throws {
        let identity = try TestIdentity.shared.get()
        let received = AsyncStream.makeStream(of: CastMessage.self)
        let server = try await CastServer.bind(tlsContext: try TLSContext.makeServerContext(identity: identity)) {
            connection in
            let messages = connection.messages()
            Task {
                for await message in messages {
                    received.continuation.yield(message)
                    let json = try message.json()
                    if message.namespace == CastNamespace.receiver, json["type"] == "GET_STATUS" {
                        try await connection.send(
                            namespace: CastNamespace.receiver,
                            to: message.sourceID,
                            payload: ["type": "RECEIVER_STATUS", "requestId": json["requestId"]!, "status": [:]],
                            from: CastEndpoint.receiver
                        )
                    }
                }
            }
        }
        var configuration = CastConnection.Configuration()
        configuration.heartbeat.pingInterval = nil
        let client = try await CastConnection.connect(
            host: "127.0.0.1",
            port: server.port,
            configuration: configuration
        )
        #expect(client.isConnected)

        try await client.openVirtualConnection(to: CastEndpoint.receiver)
        var iterator = received.stream.makeAsyncIterator()
        let connect = try #require(await iterator.next())
        #expect(connect.namespace == CastNamespace.connection)
        let connectJSON = try connect.json()
        #expect(connectJSON["type"] == "CONNECT")
        #expect(connectJSON["senderInfo"]?["platform"] == 6)
        #expect(connectJSON["userAgent"]?.stringValue?.hasPrefix("swift-cast/") == true)

        let reply = try await client.request(
            namespace: CastNamespace.receiver,
            to: CastEndpoint.receiver,
            payload: ["type": "GET_STATUS"]
        )
        let replyJSON = try reply.json()
        #expect(replyJSON["type"] == "RECEIVER_STATUS")
        // The first id is random (far from the 1, 2, 3… of other senders), the next ones count up from it.
        let first = try #require(replyJSON["requestId"]?.intValue)
        #expect((1...(1 << 30)).contains(first))
        let second = try await client.request(
            namespace: CastNamespace.receiver,
            to: CastEndpoint.receiver,
            payload: ["type": "GET_STATUS"]
        )
        #expect(try second.json()["requestId"]?.intValue == first + 1)
        var pinned = configuration
        pinned.firstRequestID = 41
        let other = try await CastConnection.connect(host: "127.0.0.1", port: server.port, configuration: pinned)
        try await other.openVirtualConnection(to: CastEndpoint.receiver)
        let fromOther = try await other.request(
            namespace: CastNamespace.receiver,
            to: CastEndpoint.receiver,
            payload: ["type": "GET_STATUS"]
        )
        #expect(try fromOther.json()["requestId"] == 41)
        await other.close()

        // A PING from the client is answered by the server's heartbeat handler with a PONG.
        let pong = client.messages()
        try await client.send(namespace: CastNamespace.heartbeat, to: CastEndpoint.receiver, payload: ["type": "PING"])
        _ = pong  // heartbeat traffic is consumed below the router; the PONG resets the liveness timer instead.

        await client.close()
        await server.close()
        #expect(!client.isConnected)
    }

    /// What one thread posts is not overtaken by what the event loop posts after it: a status decided on a
    /// timer's thread before a request was answered must not reach the sender after that answer. (An inline write
    /// on the event loop used to jump the queue of posts from other threads.)
    @Test(.timeLimit(.minutes(2)))
    func postsKeepTheirOrderAcrossThreads() async throws {
        let identity = try TestIdentity.shared.get()
        @Sendable func message(_ text: String) -> CastMessage {
            CastMessage(
                sourceID: CastEndpoint.receiver,
                destinationID: CastEndpoint.sender,
                namespace: "urn:x-cast:test.order",
                payload: .string(text)
            )
        }
        let server = try await CastServer.bind(tlsContext: try TLSContext.makeServerContext(identity: identity)) {
            connection in
            _ = connection.addMessageHandler { _ in
                // On the connection's event loop: another thread posts first, then the loop itself.
                let posted = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    connection.post(message("from another thread"))
                    posted.signal()
                }
                posted.wait()
                connection.post(message("from the event loop"))
            }
        }
        let client = try await CastConnection.connect(
            host: "127.0.0.1",
            port: server.port,
            configuration: TransportTestKit.quietClientConfiguration()
        )
        let received = client.messages()
        try await client.send(namespace: "urn:x-cast:test.order", to: CastEndpoint.receiver, payload: ["go": true])
        var order: [String] = []
        for await message in received where message.namespace == "urn:x-cast:test.order" {
            order.append(message.payload.text)
            if order.count == 2 { break }
        }
        #expect(order == ["from another thread", "from the event loop"])
        await client.close()
        await server.close()
    }
}

enum TestIdentity {
    /// One self-signed identity for the whole test run: RSA key generation takes tens of milliseconds.
    static let shared: Result<TLSIdentity, any Error> = Result { try TLSIdentity.makeSelfSigned(commonName: "test") }
}

extension Result where Failure == any Error {
    func callAsFunction() throws -> Success { try get() }
}
