import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import CastTransport

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Child processes

/// A child process (`openssl`, `python3`) whose stdout and stderr go to temporary files the test polls.
///
/// Files, not pipes: Foundation's `Process` on Linux lets concurrently spawned children inherit each other's
/// pipe ends, so a pipe's end of file can wait for an unrelated, long-lived child (an `s_server` of another
/// test). For the same reason nothing here relies on closing stdin; inputs that must end come as files.
///
/// Always `terminate()` it in a `defer`. Waiting for output polls in short steps up to a deadline: that is
/// waiting for an external process, never a fixed sleep standing in for an assertion.
final class ChildProcess: @unchecked Sendable {
    // @unchecked: `Process` and `Pipe` are used from the test task only; the output lives in files.

    private static let ignoreSIGPIPE: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    let name: String
    private let process = Process()
    private let input = Pipe()
    private let stdoutURL: URL
    private let stderrURL: URL

    /// Runs `arguments` through `/usr/bin/env`, so `openssl` and `python3` are found on the PATH.
    init(_ arguments: [String]) throws {
        Self.ignoreSIGPIPE
        name = arguments.prefix(2).joined(separator: " ")
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("cast-child-\(UUID().uuidString)")
        stdoutURL = base.appendingPathExtension("out")
        stderrURL = base.appendingPathExtension("err")
        guard FileManager.default.createFile(atPath: stdoutURL.path, contents: nil),
            FileManager.default.createFile(atPath: stderrURL.path, contents: nil),
            let stdoutHandle = FileHandle(forWritingAtPath: stdoutURL.path),
            let stderrHandle = FileHandle(forWritingAtPath: stderrURL.path)
        else { throw CocoaError(.fileWriteUnknown) }
        defer {
            try? stdoutHandle.close()
            try? stderrHandle.close()
        }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = stdoutHandle
        process.standardError = stderrHandle
        try process.run()
    }

    deinit {
        try? FileManager.default.removeItem(at: stdoutURL)
        try? FileManager.default.removeItem(at: stderrURL)
    }

    var stdout: [UInt8] { Array((try? Data(contentsOf: stdoutURL)) ?? Data()) }
    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    var stderrText: String { String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self) }
    var isRunning: Bool { process.isRunning }

    func write(_ bytes: [UInt8]) throws {
        try input.fileHandleForWriting.write(contentsOf: Data(bytes))
    }

    /// Waits until stdout contains `needle`.
    func waitForStdout(containing needle: [UInt8], within timeout: Duration = .seconds(60)) async throws {
        try await poll(within: timeout, "\(name) printing \(String(decoding: needle, as: UTF8.self).debugDescription)")
        {
            self.stdout.firstRange(of: needle) != nil
        }
    }

    func waitForStdout(containing needle: String, within timeout: Duration = .seconds(60)) async throws {
        try await waitForStdout(containing: Array(needle.utf8), within: timeout)
    }

    /// Waits until stderr contains `needle`.
    func waitForStderr(containing needle: String, within timeout: Duration = .seconds(60)) async throws {
        try await poll(within: timeout, "\(name) reporting \(needle.debugDescription) on stderr") {
            self.stderrText.contains(needle)
        }
    }

    /// Waits for the process to exit; returns its exit status. Its output is complete in the files by then.
    @discardableResult
    func waitForExit(within timeout: Duration = .seconds(60)) async throws -> Int32 {
        try await poll(within: timeout, "\(name) exiting") { !self.process.isRunning }
        return process.terminationStatus
    }

    /// Stops the process if it still runs and reaps it.
    ///
    /// SIGKILL, not `Process.terminate()`'s SIGTERM: children spawned from a Swift concurrency thread inherit its
    /// blocked-signal mask, so `openssl s_server` would never see a SIGTERM and `waitUntilExit()` would hang.
    func terminate() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? input.fileHandleForWriting.close()
    }

    private func poll(within timeout: Duration, _ what: String, until condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else {
                throw ProcessWaitTimedOut(what: what, stdout: stdoutText, stderr: stderrText)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

struct ProcessWaitTimedOut: Error, CustomStringConvertible {
    var what: String
    var stdout: String
    var stderr: String
    var description: String { "timed out waiting for \(what)\n--- stdout:\n\(stdout)\n--- stderr:\n\(stderr)" }
}

/// Python snippets run with `python3 -c`.
enum PythonScripts {
    /// argv: port, frame hex, "default" | "tls12". Sends the frame, reads one frame back, closes with close_notify.
    static let echoClient = """
        import socket, ssl, struct, sys
        port, frame, mode = int(sys.argv[1]), bytes.fromhex(sys.argv[2]), sys.argv[3]
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        if mode == "tls12":
            ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        t = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=60))
        t.sendall(frame)
        def read_exact(n):
            data = b""
            while len(data) < n:
                chunk = t.recv(n - len(data))
                if not chunk:
                    raise SystemExit("EOF after %d bytes" % len(data))
                data += chunk
            return data
        header = read_exact(4)
        body = read_exact(struct.unpack(">I", header)[0])
        print("OK", t.version(), (header + body).hex(), flush=True)
        try:
            t.unwrap()
            print("CLOSED clean", flush=True)
        except Exception as e:
            print("CLOSED unclean", type(e).__name__, e, flush=True)
        """

    /// argv: port. Tries a TLS 1.1-only handshake (security level 0 so OpenSSL is willing to offer it).
    static let tls11Client = """
        import socket, ssl, sys, warnings
        warnings.simplefilter("ignore")
        try:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
            ctx.minimum_version = ssl.TLSVersion.TLSv1_1
            ctx.maximum_version = ssl.TLSVersion.TLSv1_1
            t = ctx.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=60))
            print("OK", t.version(), flush=True)
        except Exception as e:
            print("FAILED", type(e).__name__, e, flush=True)
        """

    /// argv: port, bytes hex. Sends the bytes, then resets the connection (SO_LINGER 0).
    static let resetClient = """
        import socket, struct, sys
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=60)
        s.sendall(bytes.fromhex(sys.argv[2]))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
        print("RESET", flush=True)
        """
}

// MARK: - Raw TCP peers

/// How a plain TCP server that is not TLS treats our ClientHello.
enum RawPeerBehavior: Sendable {
    /// Read the complete ClientHello record, then close (with a reset when `reset`).
    case closeAfterClientHello(reset: Bool)
    /// Answer the ClientHello with these bytes and keep the connection open.
    case answer([UInt8])
    /// Accept and never answer.
    case silent
}

final class RawTLSPeerHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let behavior: RawPeerBehavior
    private let captured: LockedLog<[UInt8]>
    private var received = ByteBuffer()
    private var reacted = false

    init(behavior: RawPeerBehavior, captured: LockedLog<[UInt8]>) {
        self.behavior = behavior
        self.captured = captured
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        received.writeBuffer(&buffer)
        // Wait for the whole first TLS record: 5-byte header, then its length.
        guard !reacted, let length = received.getInteger(at: received.readerIndex + 3, as: UInt16.self),
            received.readableBytes >= 5 + Int(length)
        else { return }
        reacted = true
        captured.append(Array(received.readableBytesView))
        switch behavior {
        case .silent:
            break
        case .answer(let bytes):
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
        case .closeAfterClientHello(let reset):
            if reset, let provider = context.channel as? any SocketOptionProvider {
                provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
                    context.close(promise: nil)
                }
            } else {
                context.close(promise: nil)
            }
        }
    }
}

/// A plain TCP listener on 127.0.0.1 that plays a broken TLS server.
struct RawTCPServer {
    let channel: any Channel
    let port: Int
    let captured: LockedLog<[UInt8]>

    static func start(_ behavior: RawPeerBehavior) async throws -> RawTCPServer {
        let captured = LockedLog<[UInt8]>()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        RawTLSPeerHandler(behavior: behavior, captured: captured)
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return RawTCPServer(channel: channel, port: channel.localAddress!.port!, captured: captured)
    }

    func close() async { try? await channel.close() }
}

enum InteropKit {
    /// A port nothing listens on: bound by us, then released.
    /// Starts `openssl s_server` on a port the kernel picks (`-accept 127.0.0.1:0`) and returns it with that port
    /// once it listens (it prints `ACCEPT 127.0.0.1:PORT` then): no port another test could take meanwhile, and
    /// no connection attempts before it is ready.
    static func startOpenSSLServer(certificate: String, key: String) async throws -> (ChildProcess, port: Int) {
        let server = try ChildProcess([
            "openssl", "s_server", "-accept", "127.0.0.1:0", "-cert", certificate, "-key", key,
        ])
        do {
            try await server.waitForStdout(containing: "ACCEPT 127.0.0.1:")
            let line = server.stdoutText.split(separator: "\n").first { $0.hasPrefix("ACCEPT 127.0.0.1:") }
            guard let port = line.flatMap({ Int($0.split(separator: ":").last ?? "") }) else {
                throw ProcessWaitTimedOut(
                    what: "s_server's port",
                    stdout: server.stdoutText,
                    stderr: server.stderrText
                )
            }
            return (server, port)
        } catch {
            server.terminate()
            throw error
        }
    }

    /// A port nothing listens on: 1 (tcpmux) is privileged and unused on any machine these tests run on, so
    /// a connection is refused — unlike a port freed a moment ago, which another test may take.
    static let closedPort = 1

    /// Writes the shared identity's PEMs to a fresh temporary directory.
    static func writeIdentity() throws -> (directory: URL, certificate: String, key: String) {
        let identity = try TransportTestKit.identity.get()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("cast-tls-interop-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificate = directory.appendingPathComponent("c.pem")
        let key = directory.appendingPathComponent("k.pem")
        try identity.certificatePEM.write(to: certificate, atomically: true, encoding: .utf8)
        try identity.privateKeyPEM.write(to: key, atomically: true, encoding: .utf8)
        return (directory, certificate.path, key.path)
    }

    /// The start of a real ClientHello record (type 22, TLS 1.0 record version, 512-byte body) cut short.
    static let partialClientHello: [UInt8] =
        [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03]
        + [UInt8](repeating: 0x5A, count: 20)

    static func sampleFrame(from source: String = "sender-9", requestID: Int = 1) throws -> (CastMessage, [UInt8]) {
        let message = CastMessage(
            sourceID: source,
            destinationID: CastEndpoint.receiver,
            namespace: CastNamespace.receiver,
            json: ["type": "GET_STATUS", "requestId": .number(Double(requestID))]
        )
        return (message, try message.encodedFrame())
    }
}

// MARK: - Our client against OpenSSL's server

@Suite("TLS interop: our client against openssl s_server and broken servers")
struct TLSClientInteropTests {
    @Test func clientHandshakesWithOpenSSLServerAndSendsAConnectFrame() async throws {
        let (directory, certificate, key) = try InteropKit.writeIdentity()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (server, port) = try await InteropKit.startOpenSSLServer(certificate: certificate, key: key)
        defer { server.terminate() }

        let client = try await CastConnection.connect(
            host: "127.0.0.1",
            port: port,
            configuration: TransportTestKit.quietClientConfiguration()
        )
        #expect(client.isConnected)
        let inbound = StreamReader(client.messages())
        try await client.openVirtualConnection(to: CastEndpoint.receiver)

        // s_server prints the plaintext it received after its own report lines: our CONNECT frame, byte for byte.
        let expected = CastMessage(
            sourceID: CastEndpoint.sender,
            destinationID: CastEndpoint.receiver,
            namespace: CastNamespace.connection,
            json: .connectPayload(userAgent: client.configuration.userAgent)
        )
        let expectedFrame = try expected.encodedFrame()
        try await server.waitForStdout(containing: CastNamespace.connection)
        try await server.waitForStdout(containing: expectedFrame)

        // And the other way: bytes typed into s_server reach our client as a message.
        let reply = CastMessage(
            sourceID: CastEndpoint.receiver,
            destinationID: CastEndpoint.sender,
            namespace: CastNamespace.receiver,
            json: ["type": "RECEIVER_STATUS", "requestId": 0, "status": ["volume": ["level": 0.5]]]
        )
        try server.write(try reply.encodedFrame())
        #expect(try await inbound.next(within: .seconds(60), "the frame from s_server") == reply)
        await client.close()
    }

    @Test func clientCloseSendsCloseNotify() async throws {
        let (directory, certificate, key) = try InteropKit.writeIdentity()
        defer { try? FileManager.default.removeItem(at: directory) }
        // s_server reports how each connection ended: DONE for close_notify, ERROR otherwise.
        let (server, port) = try await InteropKit.startOpenSSLServer(certificate: certificate, key: key)
        defer { server.terminate() }

        let client = try await CastConnection.connect(
            host: "127.0.0.1",
            port: port,
            configuration: TransportTestKit.quietClientConfiguration()
        )
        let events = StreamReader(client.events())
        try await client.send(namespace: CastNamespace.heartbeat, to: CastEndpoint.receiver, payload: ["type": "PING"])
        try await server.waitForStdout(containing: #"{"type":"PING"}"#)
        await client.close()

        try await server.waitForStdout(containing: "DONE")
        #expect(!server.stdoutText.contains("ERROR"))
        #expect(try await events.remainingUntilEnd() == [.disconnected(nil)])
        #expect(!client.isConnected)
    }

    @Test func peerClosingAfterTheClientHelloIsTLSHandshakeFailed() async throws {
        let raw = try await RawTCPServer.start(.closeAfterClientHello(reset: false))
        await expectTransportError(.tlsHandshakeFailed) {
            try await CastConnection.connect(
                host: "127.0.0.1",
                port: raw.port,
                configuration: TransportTestKit.quietClientConfiguration()
            )
        }
        // What it read was a TLS ClientHello: a handshake record (22) whose first message is client_hello (1).
        let hello = try #require(raw.captured.all.first)
        #expect(hello.first == 0x16)
        #expect(hello.count > 5 && hello[5] == 0x01)
        await raw.close()
    }

    @Test func peerResettingAfterTheClientHelloIsTLSHandshakeFailed() async throws {
        let raw = try await RawTCPServer.start(.closeAfterClientHello(reset: true))
        await expectTransportError(.tlsHandshakeFailed) {
            try await CastConnection.connect(
                host: "127.0.0.1",
                port: raw.port,
                configuration: TransportTestKit.quietClientConfiguration()
            )
        }
        #expect(raw.captured.count == 1)
        await raw.close()
    }

    /// Cast devices are addressed by IP and senders send no SNI; the ClientHello must not carry server_name.
    @Test func clientHelloCarriesNoServerName() async throws {
        let raw = try await RawTCPServer.start(.closeAfterClientHello(reset: false))
        _ = try? await CastConnection.connect(
            host: "localhost",
            port: raw.port,
            configuration: TransportTestKit.quietClientConfiguration()
        )
        let hello = try #require(raw.captured.all.first)
        let extensions = try #require(Self.extensionTypes(ofClientHello: hello))
        #expect(!extensions.isEmpty)
        #expect(!extensions.contains(0x0000), "server_name extension present: \(extensions)")
        await raw.close()
    }

    @Test func peerAnsweringWithHTTPIsNotTLS() async throws {
        let raw = try await RawTCPServer.start(.answer(Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8)))
        await expectTransportError(.notTLS) {
            try await CastConnection.connect(
                host: "127.0.0.1",
                port: raw.port,
                configuration: TransportTestKit.quietClientConfiguration()
            )
        }
        await raw.close()
    }

    @Test func silentPeerFailsTheHandshakeAtTheConnectTimeout() async throws {
        let raw = try await RawTCPServer.start(.silent)
        var configuration = TransportTestKit.quietClientConfiguration()
        // Long enough for the loopback TCP connect itself on a machine whose cores are saturated (it has its own
        // limit of the same length, and a connect that misses it is a connectFailed, not this test's subject).
        configuration.connectTimeout = .milliseconds(1500)
        let started = ContinuousClock.now
        await expectTransportError(.tlsHandshakeFailed) {
            try await CastConnection.connect(host: "127.0.0.1", port: raw.port, configuration: configuration)
        }
        // Not before the timeout (the peer never answers, so nothing else can end the handshake).
        #expect(ContinuousClock.now - started >= .milliseconds(1400))
        // The peer got our ClientHello (its read may trail our timeout on a busy machine).
        try await withDeadline(.seconds(60), "the ClientHello to reach the silent peer") {
            while raw.captured.count == 0 { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(raw.captured.count == 1)
        await raw.close()
    }

    /// Cancelling a connect that waits for a silent peer's handshake ends it at once with `CancellationError`,
    /// not at the connect timeout: what lets a session or castd's hub end while a device does not answer.
    @Test func cancellingAConnectEndsItAtOnce() async throws {
        let raw = try await RawTCPServer.start(.silent)
        var configuration = TransportTestKit.quietClientConfiguration()
        configuration.connectTimeout = .seconds(3600)
        let port = raw.port
        let attempt = Task {
            try await CastConnection.connect(host: "127.0.0.1", port: port, configuration: configuration)
        }
        // The TLS handshake is under way once the ClientHello arrives.
        try await withDeadline(.seconds(60), "the ClientHello to reach the silent peer") {
            while raw.captured.count == 0 { try await Task.sleep(for: .milliseconds(10)) }
        }
        attempt.cancel()
        try await withDeadline(.seconds(60), "the cancelled connect to return") {
            await #expect(throws: CancellationError.self) { try await attempt.value }
        }
        await raw.close()
    }

    @Test func closedPortIsConnectFailed() async throws {
        let port = InteropKit.closedPort
        await expectTransportError(.connectFailed) {
            try await CastConnection.connect(
                host: "127.0.0.1",
                port: port,
                configuration: TransportTestKit.quietClientConfiguration()
            )
        }
    }

    /// The extension types of a ClientHello record, or nil when it does not parse.
    static func extensionTypes(ofClientHello record: [UInt8]) -> [UInt16]? {
        var index = 5 + 4 + 2 + 32  // record header, handshake header, client_version, random
        func byte() -> Int? {
            guard index < record.count else { return nil }
            defer { index += 1 }
            return Int(record[index])
        }
        func uint16() -> Int? {
            guard let high = byte(), let low = byte() else { return nil }
            return high << 8 | low
        }
        guard let sessionLength = byte() else { return nil }
        index += sessionLength
        guard let suitesLength = uint16() else { return nil }
        index += suitesLength
        guard let compressionLength = byte() else { return nil }
        index += compressionLength
        guard let extensionsLength = uint16() else { return nil }
        let end = index + extensionsLength
        guard end <= record.count else { return nil }
        var types: [UInt16] = []
        while index < end {
            guard let type = uint16(), let length = uint16() else { return nil }
            types.append(UInt16(type))
            index += length
        }
        return types
    }
}

// MARK: - Other clients against our server

@Suite("TLS interop: openssl s_client and Python ssl against our CastServer")
struct TLSServerInteropTests {
    @Test(arguments: ["-tls1_2", "-tls1_3"])
    func opensslClientHandshakesAndDeliversAFrame(versionFlag: String) async throws {
        let harness = try await LoopbackHarness.start()
        defer { Task { await harness.server.close() } }
        let client = try ChildProcess([
            "openssl", "s_client", "-connect", "127.0.0.1:\(harness.server.port)", "-brief", versionFlag,
        ])
        defer { client.terminate() }

        let (message, frame) = try InteropKit.sampleFrame(from: "sender-openssl")
        try client.write(frame)
        let peer = try await harness.nextPeer()
        #expect(try await peer.messages.next(within: .seconds(60), "the frame from s_client") == message)

        // s_client -brief reports the negotiated protocol on stderr.
        let expectedVersion = versionFlag == "-tls1_2" ? "TLSv1.2" : "TLSv1.3"
        try await client.waitForStderr(containing: "Protocol version: \(expectedVersion)")
        #expect(client.stderrText.contains("CONNECTION ESTABLISHED"))

        // Our reply reaches s_client's stdout as a frame.
        let reply = CastMessage(
            sourceID: CastEndpoint.receiver,
            destinationID: "sender-openssl",
            namespace: CastNamespace.receiver,
            json: ["type": "RECEIVER_STATUS", "requestId": 1]
        )
        try await peer.connection.send(reply)
        try await client.waitForStdout(containing: try reply.encodedFrame())
        await peer.connection.close()
    }

    @Test(arguments: ["default", "tls12"])
    func pythonClientHandshakesSendsAndReadsTheEcho(mode: String) async throws {
        let harness = try await LoopbackHarness.start()
        defer { Task { await harness.server.close() } }
        let (message, frame) = try InteropKit.sampleFrame(from: "sender-python", requestID: 42)

        let python = try ChildProcess([
            "python3", "-c", PythonScripts.echoClient, "\(harness.server.port)", TransportTestKit.hex(frame), mode,
        ])
        defer { python.terminate() }

        let peer = try await harness.nextPeer()
        let received = try #require(try await peer.messages.next(within: .seconds(60), "the frame from Python"))
        #expect(received == message)
        let echo = CastMessage(
            sourceID: received.destinationID,
            destinationID: received.sourceID,
            namespace: received.namespace,
            json: ["type": "RECEIVER_STATUS", "requestId": 42]
        )
        try await peer.connection.send(echo)

        try await python.waitForStdout(containing: "CLOSED")
        let lines = python.stdoutText.split(separator: "\n")
        let okLine = try #require(
            lines.first { $0.hasPrefix("OK ") },
            "python said: \(python.stdoutText) \(python.stderrText)"
        )
        let fields = okLine.split(separator: " ")
        try #require(fields.count == 3)
        #expect(["TLSv1.2", "TLSv1.3"].contains(String(fields[1])))
        if mode == "tls12" { #expect(fields[1] == "TLSv1.2") }
        let echoedFrame = try #require(TransportTestKit.bytes(fromHex: fields[2]))
        #expect(try CastMessage(frame: echoedFrame) == echo)

        // Python's unwrap() sent close_notify and got ours back; the server side ended.
        #expect(lines.contains("CLOSED clean"), "python said: \(python.stdoutText)")
        _ = try await peer.messages.remainingUntilEnd()
        #expect(try await python.waitForExit() == 0)
    }

    @Test func tls11ClientCannotHandshake() async throws {
        let harness = try await LoopbackHarness.start()
        defer { Task { await harness.server.close() } }

        let python = try ChildProcess(["python3", "-c", PythonScripts.tls11Client, "\(harness.server.port)"])
        defer { python.terminate() }
        try await python.waitForExit()
        #expect(python.stdoutText.hasPrefix("FAILED"), "python said: \(python.stdoutText) \(python.stderrText)")
        #expect(!python.stdoutText.contains("OK"))

        let opensslClient = try ChildProcess([
            "openssl", "s_client", "-connect", "127.0.0.1:\(harness.server.port)", "-brief", "-tls1_1",
            "-cipher", "DEFAULT:@SECLEVEL=0",
        ])
        defer { opensslClient.terminate() }
        let status = try await opensslClient.waitForExit()
        #expect(status != 0)
        #expect(!opensslClient.stderrText.contains("CONNECTION ESTABLISHED"), "\(opensslClient.stderrText)")

        // Each attempt that reached us ended as a failed handshake, without a single message.
        for _ in 0..<2 {
            let peer = try await harness.nextPeer()
            let events = try await peer.events.remainingUntilEnd()
            #expect(events == [.disconnected(.tlsHandshakeFailed)])
            #expect(try await peer.messages.remainingUntilEnd().isEmpty)
        }
    }

    @Test func peerResettingMidHandshakeDoesNotHurtTheServer() async throws {
        let harness = try await LoopbackHarness.start()
        defer { Task { await harness.server.close() } }

        let python = try ChildProcess([
            "python3", "-c", PythonScripts.resetClient, "\(harness.server.port)",
            TransportTestKit.hex(InteropKit.partialClientHello),
        ])
        defer { python.terminate() }
        #expect(try await python.waitForExit() == 0)
        #expect(python.stdoutText.contains("RESET"))

        let broken = try await harness.nextPeer()
        #expect(try await broken.events.remainingUntilEnd() == [.disconnected(.tlsHandshakeFailed)])
        #expect(try await broken.messages.remainingUntilEnd().isEmpty)

        // The server keeps serving.
        let (client, peer) = try await harness.connectClient()
        try await client.send(
            namespace: CastNamespace.receiver,
            to: CastEndpoint.receiver,
            payload: ["type": "GET_STATUS"]
        )
        #expect(try await peer.messages.next()?.type == "GET_STATUS")
        await client.close()
    }

    @Test func clientCloseEndsBothSidesCleanly() async throws {
        let harness = try await LoopbackHarness.start()
        defer { Task { await harness.server.close() } }
        let (client, peer) = try await harness.connectClient()
        let events = StreamReader(client.events())
        try await client.send(
            namespace: CastNamespace.receiver,
            to: CastEndpoint.receiver,
            payload: ["type": "GET_STATUS"]
        )
        await client.close()

        #expect(try await events.remainingUntilEnd() == [.disconnected(nil)])
        let seen = try await peer.messages.remainingUntilEnd()
        #expect(seen.map(\.type) == ["GET_STATUS"])
        let serverEvents = try await peer.events.remainingUntilEnd()
        #expect(serverEvents.count == 1)
        if case .disconnected(let code)? = serverEvents.first {
            // The peer (our client) closed: no TLS or framing error on the server side.
            #expect(code == .connectionClosed)
        } else {
            Issue.record("expected one .disconnected event, got \(serverEvents)")
        }
    }
}

// MARK: - Identity and contexts

@Suite("TLS identity: self-signed certificates and contexts")
struct TLSIdentityTests {
    @Test func selfSignedCertificateIsValidForThreeDaysFromNow() throws {
        let identity = try TransportTestKit.identity.get()
        let (notBefore, notAfter) = try identity.validityPeriod()
        #expect(notAfter - notBefore == 3 * 24 * 3600)
        let now = Int(Date().timeIntervalSince1970)
        // The shared identity was made during this test run.
        #expect(abs(notBefore - now) < 600)
        // Within official senders' 4-day limit.
        #expect(notAfter - now <= 4 * 24 * 3600)
    }

    @Test func customValidityIsHonoured() throws {
        let identity = try TLSIdentity.makeSelfSigned(commonName: "short", validity: .seconds(3600), keyBits: 1024)
        let (notBefore, notAfter) = try identity.validityPeriod()
        #expect(notAfter - notBefore == 3600)
    }

    @Test func pemAndDERForms() throws {
        let identity = try TransportTestKit.identity.get()
        #expect(identity.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(identity.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let der = try identity.certificateDER()
        #expect(!der.isEmpty)
        #expect(der.first == 0x30)  // a DER SEQUENCE
        // Long-form length: 0x82 then two length bytes covering the rest exactly.
        if der.count > 4, der[1] == 0x82 {
            #expect(Int(der[2]) << 8 | Int(der[3]) == der.count - 4)
        }
    }

    @Test func opensslReadsTheCertificate() async throws {
        let (directory, certificate, _) = try InteropKit.writeIdentity()
        defer { try? FileManager.default.removeItem(at: directory) }
        let x509 = try ChildProcess(["openssl", "x509", "-in", certificate, "-noout", "-subject", "-issuer", "-text"])
        defer { x509.terminate() }
        #expect(try await x509.waitForExit() == 0)
        let text = x509.stdoutText
        #expect(text.contains("transport-test-kit"))
        #expect(text.contains("rsaEncryption"))
        #expect(text.contains("2048 bit"))
        #expect(text.contains("sha256WithRSAEncryption"))
    }

    @Test func contextsReportTheirRole() throws {
        #expect(try TLSContext.makeClientContext().isClient)
        #expect(try !TransportTestKit.serverContext().isClient)
    }

    @Test func mismatchedKeyIsTLSFailure() throws {
        let identity = try TransportTestKit.identity.get()
        let other = try TLSIdentity.makeSelfSigned(commonName: "other")
        let mismatched = TLSIdentity(certificatePEM: identity.certificatePEM, privateKeyPEM: other.privateKeyPEM)
        expectTransportError(.tlsFailure) { try TLSContext.makeServerContext(identity: mismatched) }
    }

    @Test func unreadablePEMIsTLSFailure() throws {
        let identity = try TransportTestKit.identity.get()
        expectTransportError(.tlsFailure) {
            try TLSContext.makeServerContext(
                identity: TLSIdentity(certificatePEM: "not a certificate", privateKeyPEM: identity.privateKeyPEM)
            )
        }
        expectTransportError(.tlsFailure) {
            try TLSContext.makeServerContext(
                identity: TLSIdentity(certificatePEM: identity.certificatePEM, privateKeyPEM: "not a key")
            )
        }
        expectTransportError(.tlsFailure) {
            try TLSIdentity(certificatePEM: "nope", privateKeyPEM: "").certificateDER()
        }
        expectTransportError(.tlsFailure) {
            try TLSIdentity(certificatePEM: "nope", privateKeyPEM: "").validityPeriod()
        }
    }
}

// MARK: - Large frames

/// Frames are up to 64 KiB, but one TLS record carries at most 16 KiB of plaintext: a frame must be split over
/// several records.
@Suite("TLS interop: frames larger than one TLS record")
struct TLSLargeFrameTests {
    /// A message on a test namespace whose complete frame (header included) is exactly `frameLength` bytes.
    static func message(frameLength: Int, from source: String, to destination: String) throws -> CastMessage {
        func make(_ count: Int) -> CastMessage {
            CastMessage(
                sourceID: source,
                destinationID: destination,
                namespace: "urn:x-cast:com.example.big",
                payload: .binary([UInt8](repeating: 0x5A, count: count))
            )
        }
        var count = frameLength
        for _ in 0..<4 {
            let body: [UInt8] = try make(count).proto.serializedBytes()
            let actual = CastFrame.headerLength + body.count
            if actual == frameLength { return make(count) }
            count += frameLength - actual
        }
        throw CastTransportError(.messageTooLarge, "no payload size gives a \(frameLength)-byte frame")
    }

    @Test func frameFillingExactlyOneRecordIsDelivered() async throws {
        let harness = try await LoopbackHarness.start()
        defer { Task { await harness.server.close() } }
        let (client, peer) = try await harness.connectClient()
        let message = try Self.message(frameLength: 16_384, from: CastEndpoint.sender, to: "app-1")
        try await client.send(message)
        #expect(try await peer.messages.next(within: .seconds(60), "the 16 KiB frame") == message)
        await client.close()
    }

    @Test(arguments: [16_385, 65_540])
    func clientFrameSpanningSeveralRecordsIsDelivered(frameLength: Int) async throws {
        let harness = try await LoopbackHarness.start()
        defer { Task { await harness.server.close() } }
        let (client, peer) = try await harness.connectClient()
        let message = try Self.message(frameLength: frameLength, from: CastEndpoint.sender, to: "app-1")
        try await client.send(message)
        #expect(try await peer.messages.next(within: .seconds(60), "the large frame") == message)
        #expect(client.isConnected)
        await client.close()
    }

    @Test func serverFrameSpanningSeveralRecordsIsDelivered() async throws {
        let harness = try await LoopbackHarness.start()
        defer { Task { await harness.server.close() } }
        let (client, peer) = try await harness.connectClient()
        let inbound = StreamReader(client.messages())
        let message = try Self.message(frameLength: 40_000, from: CastEndpoint.receiver, to: CastEndpoint.sender)
        try await peer.connection.send(message)
        #expect(try await inbound.next(within: .seconds(60), "the large frame") == message)
        await client.close()
    }
}

// MARK: - Handshake interrupted by the connection's own close

@Suite("TLS interop: a close during the handshake")
struct TLSHandshakeInterruptedTests {
    /// A heartbeat whose dead-peer limit is shorter than the handshake timeout must not leave `connect` waiting
    /// forever on a peer that never answers the ClientHello: the handshake timeout (or the heartbeat, had it
    /// started before TLS) ends it, and it fails.
    @Test func heartbeatClosingMidHandshakeFailsTheConnect() async throws {
        let raw = try await RawTCPServer.start(.silent)
        var configuration = TransportTestKit.quietClientConfiguration()
        configuration.connectTimeout = .milliseconds(800)
        configuration.heartbeat = HeartbeatConfiguration(pingInterval: nil, deadAfter: .milliseconds(200))
        let outcome = LockedLog<String>()
        let port = raw.port
        // Unstructured on purpose: if connect never returns, the test must not hang with it.
        let attempt = Task {
            do {
                _ = try await CastConnection.connect(host: "127.0.0.1", port: port, configuration: configuration)
                outcome.append("connected")
            } catch let error as CastTransportError {
                outcome.append("\(error.code)")
            } catch {
                outcome.append("other: \(error)")
            }
        }
        // A deadline generous for a loaded machine: what matters is that connect returns at all.
        let deadline = ContinuousClock.now + .seconds(60)
        while outcome.count == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let result = try #require(outcome.all.first, "connect had not returned 60 s after starting")
        #expect(result != "connected")
        _ = attempt
        await raw.close()
    }
}
