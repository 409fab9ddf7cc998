import Foundation
import NIOCore
import NIOEmbedded
import NIOTestUtils
import Testing

@testable import CastTransport

/// Frame encoding and decoding (cast-protocol.md §1.2–1.3): the length prefix, the 64 KiB limit, and every way a
/// frame can be malformed, each with its own error code.
@Suite("Framing: CastMessage frames, limits and malformed input")
struct FramingTests {
    static let testNamespace = "urn:x-cast:com.example.test"

    // MARK: - Round trips

    @Test func stringPayloadRoundTrips() throws {
        let message = CastMessage(
            sourceID: "sender-0",
            destinationID: "receiver-0",
            namespace: CastNamespace.receiver,
            payload: .string(#"{"requestId":1,"type":"GET_STATUS"}"#)
        )
        let frame = try message.encodedFrame()
        #expect(Array(frame.prefix(4)) == [0, 0, 0, UInt8(frame.count - 4)])
        #expect(try CastMessage(frame: frame) == message)
    }

    @Test func aPayloadParsedOnceIsTheSameMessageAndAChangedPayloadIsParsedAgain() throws {
        let message = CastMessage(
            sourceID: "receiver-0",
            destinationID: "*",
            namespace: CastNamespace.receiver,
            payload: .string(#"{"requestId":7,"type":"RECEIVER_STATUS"}"#)
        )
        var parsed = try #require(message.parsingJSON())
        #expect(parsed.json["requestId"]?.intValue == 7)
        #expect(parsed.message == message)
        #expect(parsed.message.hashValue == message.hashValue)
        #expect(try parsed.message.json() == message.json())
        parsed.message.payload = .string(#"{"requestId":8}"#)
        #expect(try parsed.message.json()["requestId"]?.intValue == 8, "the old parse is not kept")
        let text = CastMessage(sourceID: "a", destinationID: "b", namespace: "urn:x-cast:t", payload: .string("hi"))
        #expect(text.parsingJSON() == nil)
    }

    @Test func aMessageIsOneWordAndCopiesStayIndependent() throws {
        // One word each, so SwiftNIO carries them between handlers inline instead of boxing them at every handler.
        #expect(MemoryLayout<CastMessage>.size == MemoryLayout<Int>.size)
        #expect(MemoryLayout<RouterCommand>.size == MemoryLayout<Int>.size)

        let original = CastMessage(
            sourceID: "sender-0",
            destinationID: "receiver-0",
            namespace: CastNamespace.receiver,
            payload: .string(#"{"requestId":1}"#)
        )
        var parsed = try #require(original.parsingJSON()).message
        var copy = parsed
        copy.sourceID = "sender-1"
        copy.destinationID = "*"
        copy.namespace = CastNamespace.media
        copy.payload = .string(#"{"requestId":2}"#)
        #expect(parsed == original, "writing a copy leaves the message it was copied from as it was")
        #expect(try parsed.json()["requestId"]?.intValue == 1)
        #expect(try copy.json()["requestId"]?.intValue == 2)
        #expect(
            copy.description == #"sender-1 → * [\#(CastNamespace.media)] {"requestId":2}"#
        )
        var alias = original
        alias.sourceID = "sender-2"
        #expect(original.sourceID == "sender-0", "a plain copy shares storage until it is written")
        #expect(alias.sourceID == "sender-2")
        parsed.destinationID = "sender-3"
        #expect(try parsed.json()["requestId"]?.intValue == 1, "a parse stays valid while the payload does")
    }

    @Test func binaryPayloadRoundTrips() throws {
        let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let message = CastMessage(
            sourceID: "sender-0",
            destinationID: "receiver-0",
            namespace: CastNamespace.deviceAuth,
            payload: .binary(bytes)
        )
        let decoded = try CastMessage(frame: try message.encodedFrame())
        #expect(decoded == message)
        #expect(decoded.payload == .binary(bytes))
    }

    @Test func unicodeAndEmptyStringPayloadsRoundTrip() throws {
        for text in ["", "héllo wörld 🎶", String(repeating: "x", count: 5000)] {
            let message = CastMessage(
                sourceID: "a",
                destinationID: "*",
                namespace: Self.testNamespace,
                payload: .string(text)
            )
            #expect(try CastMessage(frame: try message.encodedFrame()) == message)
        }
    }

    /// The worked example from cast-protocol.md §1.2, byte for byte.
    @Test func heartbeatPingMatchesTheWorkedExample() throws {
        let ping = CastMessage(
            sourceID: "sender-0",
            destinationID: "receiver-0",
            namespace: CastNamespace.heartbeat,
            json: ["type": "PING"]
        )
        var expected: [UInt8] = [0x00, 0x00, 0x00, 0x54]
        expected += [0x08, 0x00]
        expected += [0x12, 0x08] + Array("sender-0".utf8)
        expected += [0x1A, 0x0A] + Array("receiver-0".utf8)
        expected += [0x22, 0x27] + Array("urn:x-cast:com.google.cast.tp.heartbeat".utf8)
        expected += [0x28, 0x00]
        expected += [0x32, 0x0F] + Array(#"{"type":"PING"}"#.utf8)
        #expect(expected.count == 4 + 84)

        let frame = try ping.encodedFrame()
        #expect(frame == expected, "got \(TransportTestKit.hex(frame))")
        #expect(try CastMessage(frame: expected) == ping)
    }

    // MARK: - Decoder under NIO's verifier (drip-fed, coalesced, split)

    @Test func decoderPassesTheByteToMessageVerifier() throws {
        let messages = [
            CastMessage(
                sourceID: "sender-0",
                destinationID: "receiver-0",
                namespace: CastNamespace.heartbeat,
                json: ["type": "PING"]
            ),
            CastMessage(
                sourceID: "receiver-0",
                destinationID: "*",
                namespace: CastNamespace.receiver,
                payload: .string(String(repeating: "é", count: 120))
            ),
            CastMessage(
                sourceID: "sender-0",
                destinationID: "receiver-0",
                namespace: CastNamespace.deviceAuth,
                payload: .binary(Array(0...200))
            ),
        ]
        var pairs: [(ByteBuffer, [CastMessage])] = try messages.map { message in
            (ByteBuffer(bytes: try message.encodedFrame()), [message])
        }
        // Two frames coalesced into one buffer produce two messages.
        let coalesced = try messages[0].encodedFrame() + messages[2].encodedFrame()
        pairs.append((ByteBuffer(bytes: coalesced), [messages[0], messages[2]]))

        try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: pairs) { CastMessageDecoder() }
    }

    @Test func dripFedFrameDecodesOnlyOnItsLastByte() throws {
        let message = CastMessage(
            sourceID: "a",
            destinationID: "b",
            namespace: Self.testNamespace,
            payload: .string("hi")
        )
        let frame = try message.encodedFrame()
        let channel = EmbeddedChannel(handler: CastFrameHandler())
        for byte in frame.dropLast() {
            try channel.writeInbound(ByteBuffer(bytes: [byte]))
            #expect(try channel.readInbound(as: CastMessage.self) == nil)
        }
        try channel.writeInbound(ByteBuffer(bytes: [frame.last!]))
        #expect(try channel.readInbound(as: CastMessage.self) == message)
        #expect(try channel.finish().isClean)
    }

    // MARK: - The connection's framing handler

    private func sample(_ index: Int) -> CastMessage {
        CastMessage(
            sourceID: "sender-\(index)",
            destinationID: "receiver-0",
            namespace: Self.testNamespace,
            payload: index.isMultiple(of: 2)
                ? .string(#"{"n":\#(index)}"#) : .binary([UInt8](repeating: 7, count: index))
        )
    }

    /// Three frames cut into two reads at every offset: whatever the cut, the same three messages in order.
    @Test func framesCutAtEveryOffsetDecodeInOrder() throws {
        let messages = (1...3).map(sample)
        let stream = try messages.flatMap { try $0.encodedFrame() }
        for cut in 0...stream.count {
            let channel = EmbeddedChannel(handler: CastFrameHandler())
            try channel.writeInbound(ByteBuffer(bytes: stream[..<cut]))
            try channel.writeInbound(ByteBuffer(bytes: stream[cut...]))
            var decoded: [CastMessage] = []
            while let message = try channel.readInbound(as: CastMessage.self) { decoded.append(message) }
            #expect(decoded == messages, "cut at \(cut)")
            #expect(try channel.finish().isClean)
        }
    }

    /// Reads come in the thread's plaintext buffer, as TLS delivers them, which the next read reuses: the
    /// unfinished frame's bytes are kept in a buffer of their own, and a read refilling the reused buffer does not
    /// change them.
    @Test func anUnfinishedFrameKeepsItsBytesWhenTheReadBufferIsReused() throws {
        let messages = (1...3).map(sample)
        let stream = try messages.flatMap { try $0.encodedFrame() }
        let channel = EmbeddedChannel(handler: CastFrameHandler())
        func read(_ bytes: ArraySlice<UInt8>) throws {
            var buffer = ScratchBuffers.take(.plaintext, capacity: 16 * 1024, allocator: channel.allocator)
            buffer.writeBytes(bytes)
            try channel.writeInbound(buffer)
            ScratchBuffers.giveBack(buffer, for: .plaintext)
        }
        let cut = stream.count / 2
        try read(stream[..<cut])
        // The same storage, overwritten by the next read (garbage first, to show the held bytes are a copy).
        var reused = ScratchBuffers.take(.plaintext, capacity: 16 * 1024, allocator: channel.allocator)
        reused.writeBytes([UInt8](repeating: 0xEE, count: cut))
        ScratchBuffers.giveBack(reused, for: .plaintext)
        try read(stream[cut...])
        var decoded: [CastMessage] = []
        while let message = try channel.readInbound(as: CastMessage.self) { decoded.append(message) }
        #expect(decoded == messages)
        #expect(try channel.finish().isClean)
    }

    @Test func aScratchBufferIsReusedWhenFreeAndCopiedWhenHeld() {
        let allocator = ByteBufferAllocator()
        var first = ScratchBuffers.take(.ciphertext, capacity: 512, allocator: allocator)
        first.writeString("held")
        ScratchBuffers.giveBack(first, for: .ciphertext)
        // `first` is still held: the next user gets an empty buffer, and `first` keeps its bytes.
        var second = ScratchBuffers.take(.ciphertext, capacity: 512, allocator: allocator)
        #expect(second.readableBytes == 0)
        second.writeString("next")
        #expect(first.readString(length: 4) == "held")
        // Taken out, none is left for a user in between; a buffer over the use's limit is not kept.
        #expect(ScratchBuffers.take(.ciphertext, capacity: 8, allocator: allocator).capacity == 8)
        ScratchBuffers.giveBack(allocator.buffer(capacity: 64 * 1024), for: .ciphertext)
        #expect(ScratchBuffers.take(.ciphertext, capacity: 8, allocator: allocator).capacity == 8)
    }

    /// The handler writes every frame into one reused buffer (its thread's); frames still held below (as TLS holds
    /// writes during its handshake) keep their own bytes.
    @Test func framesHeldBelowKeepTheirBytesWhileTheBufferIsReused() throws {
        let channel = EmbeddedChannel(handler: CastFrameHandler())
        // A frame larger than the buffer the handler keeps, between small ones.
        let messages = [sample(1), sample(40_001), sample(2), sample(3)]
        for message in messages { try channel.writeOutbound(message) }
        for message in messages {
            let frame = try #require(try channel.readOutbound(as: ByteBuffer.self))
            #expect(Array(frame.readableBytesView) == (try message.encodedFrame()))
        }
        #expect(try channel.finish().isClean)
    }

    /// Every connection on a thread writes into the same buffer: frames one connection's TLS still holds keep
    /// their bytes while another connection writes.
    @Test func connectionsOnOneThreadShareTheBufferWithoutSharingBytes() throws {
        let first = EmbeddedChannel(handler: CastFrameHandler())
        let second = EmbeddedChannel(handler: CastFrameHandler())
        let messages = (1...6).map(sample)
        for (index, message) in messages.enumerated() {
            try (index.isMultiple(of: 2) ? first : second).writeOutbound(message)
        }
        for (index, message) in messages.enumerated() {
            let channel = index.isMultiple(of: 2) ? first : second
            let frame = try #require(try channel.readOutbound(as: ByteBuffer.self))
            #expect(Array(frame.readableBytesView) == (try message.encodedFrame()), "frame \(index)")
        }
        #expect(try first.finish().isClean)
        #expect(try second.finish().isClean)
    }

    // MARK: - Malformed frames through the pipeline

    private func decoderChannel() -> EmbeddedChannel {
        EmbeddedChannel(handler: CastFrameHandler())
    }

    /// A proto2 message that passes every check, for tests to break one field at a time.
    private func validProto() -> ProtoCastMessage {
        var proto = ProtoCastMessage()
        proto.protocolVersion = .castv210
        proto.sourceID = "sender-0"
        proto.destinationID = "receiver-0"
        proto.namespace = Self.testNamespace
        proto.payloadType = .string
        proto.payloadUtf8 = #"{"type":"HELLO"}"#
        return proto
    }

    /// Serializes without the required-field check, so tests can build invalid messages.
    private func body(_ proto: ProtoCastMessage) throws -> [UInt8] {
        try proto.serializedBytes(partial: true)
    }

    /// Feeds one frame with `body` into a fresh decoder and expects the error `code`.
    private func expectRejected(
        _ code: CastTransportError.Code,
        body: [UInt8],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let channel = decoderChannel()
        expectTransportError(code, sourceLocation: sourceLocation) {
            try channel.writeInbound(TransportTestKit.frame(body))
        }
        #expect((try? channel.readInbound(as: CastMessage.self)) ?? nil == nil, sourceLocation: sourceLocation)
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    private func decodeOne(_ body: [UInt8]) throws -> CastMessage? {
        let channel = decoderChannel()
        try channel.writeInbound(TransportTestKit.frame(body))
        let message = try channel.readInbound(as: CastMessage.self)
        _ = try channel.finish()
        return message
    }

    @Test func validProtoIsAccepted() throws {
        let message = try #require(try decodeOne(body(validProto())))
        #expect(message.payload == .string(#"{"type":"HELLO"}"#))
        #expect(message.namespace == Self.testNamespace)
    }

    /// Empty frames are skipped wherever they fall (before, between and after frames, split across reads), and
    /// the connection goes on: go-chromecast's reader tolerates them, so ours does too (cast-protocol.md §1.2).
    @Test func zeroLengthFramesAreSkipped() throws {
        let channel = decoderChannel()
        var bytes = TransportTestKit.header(0)
        bytes.writeBytes(try sample(1).encodedFrame())
        bytes.writeInteger(UInt32(0))
        bytes.writeInteger(UInt32(0))
        bytes.writeBytes(try sample(2).encodedFrame())
        bytes.writeInteger(UInt32(0))
        // Fed in reads of 3 bytes, so headers (empty ones too) are split across reads.
        while bytes.readableBytes > 0 {
            try channel.writeInbound(bytes.readSlice(length: min(3, bytes.readableBytes))!)
        }
        #expect(try channel.readInbound(as: CastMessage.self) == sample(1))
        #expect(try channel.readInbound(as: CastMessage.self) == sample(2))
        #expect(try channel.readInbound(as: CastMessage.self) == nil)
        #expect(try channel.finish().isClean)
    }

    /// Only the 4-byte header arrives, yet the error is immediate: the decoder does not wait for (or buffer)
    /// the 65,537 bytes the header announces.
    @Test(arguments: [UInt32(65_537), 1 << 20, UInt32.max])
    func oversizedLengthIsRejectedFromTheHeaderAlone(length: UInt32) {
        let channel = decoderChannel()
        expectTransportError(.frameTooLarge) { try channel.writeInbound(TransportTestKit.header(length)) }
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    /// A binary message whose serialized body is exactly `bodyLength` bytes.
    private func message(withBodyLength bodyLength: Int) throws -> CastMessage {
        func make(_ count: Int) -> CastMessage {
            CastMessage(
                sourceID: "sender-0",
                destinationID: "receiver-0",
                namespace: CastNamespace.deviceAuth,
                payload: .binary([UInt8](repeating: 0xA5, count: count))
            )
        }
        // The payload length's varint is 3 bytes for anything from 16 KiB to 2 MiB, so the overhead is constant.
        let probe = 30_000
        let probeBody: [UInt8] = try make(probe).proto.serializedBytes()
        let message = make(probe + bodyLength - probeBody.count)
        let actual: [UInt8] = try message.proto.serializedBytes()
        try #require(actual.count == bodyLength)
        return message
    }

    @Test func bodyOfExactly65536BytesIsAccepted() throws {
        let message = try message(withBodyLength: CastFrame.maximumBodyLength)
        let frame = try message.encodedFrame()
        #expect(frame.count == 4 + 65_536)
        #expect(Array(frame.prefix(4)) == [0x00, 0x01, 0x00, 0x00])

        let channel = decoderChannel()
        // The header alone is not an error at the limit: the decoder waits for the body.
        try channel.writeInbound(ByteBuffer(bytes: frame.prefix(4)))
        #expect(try channel.readInbound(as: CastMessage.self) == nil)
        try channel.writeInbound(ByteBuffer(bytes: frame.dropFirst(4)))
        #expect(try channel.readInbound(as: CastMessage.self) == message)
        #expect(try channel.finish().isClean)
        #expect(try CastMessage(frame: frame) == message)
    }

    @Test func encoderRefusesBodiesOverTheLimit() throws {
        let tooBig = try message(withBodyLength: CastFrame.maximumBodyLength + 1)
        expectTransportError(.messageTooLarge) { try tooBig.encodedFrame() }

        // The pipeline's framing fails the write the same way instead of emitting a frame.
        let channel = EmbeddedChannel(handler: CastFrameHandler())
        expectTransportError(.messageTooLarge) { try channel.writeOutbound(tooBig) }
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    @Test func connectionEndingMidFrameIsTruncatedFrame() throws {
        let channel = decoderChannel()
        var partial = TransportTestKit.header(100)
        partial.writeBytes([UInt8](repeating: 0x42, count: 10))
        try channel.writeInbound(partial)
        #expect(try channel.readInbound(as: CastMessage.self) == nil)
        // Closing with 14 bytes of an unfinished frame held.
        expectTransportError(.truncatedFrame) { try channel.finish() }
    }

    @Test func connectionEndingInsideTheHeaderIsTruncatedFrame() throws {
        let channel = decoderChannel()
        try channel.writeInbound(ByteBuffer(bytes: [0x00, 0x00]))
        expectTransportError(.truncatedFrame) { try channel.finish() }
    }

    @Test func cleanEndBetweenFramesIsNotAnError() throws {
        let channel = decoderChannel()
        let message = CastMessage(
            sourceID: "a",
            destinationID: "b",
            namespace: Self.testNamespace,
            payload: .string("x")
        )
        try channel.writeInbound(ByteBuffer(bytes: try message.encodedFrame()))
        #expect(try channel.readInbound(as: CastMessage.self) == message)
        #expect(try channel.finish().isClean)
    }

    @Test(arguments: [
        [UInt8](repeating: 0xFF, count: 8),  // an unterminated varint tag
        [0x0F, 0x00],  // field 1 with the invalid wire type 7
        [0x12, 0x40, 0x41],  // a string field that claims 64 bytes but has 1
        Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8),
    ])
    func garbageBodyIsMalformedMessage(garbage: [UInt8]) {
        expectRejected(.malformedMessage, body: garbage)
    }

    @Test func onlyProtocolVersionIsMissingRequiredFields() {
        // Field 1 (protocol_version) = 0 and nothing else.
        expectRejected(.missingRequiredFields, body: [0x08, 0x00])
    }

    enum RequiredField: String, CaseIterable, Sendable {
        case protocolVersion, sourceID, destinationID, namespace, payloadType
    }

    @Test(arguments: RequiredField.allCases)
    func absentRequiredFieldIsMissingRequiredFields(field: RequiredField) throws {
        var proto = validProto()
        switch field {
        case .protocolVersion: proto.clearProtocolVersion()
        case .sourceID: proto.clearSourceID()
        case .destinationID: proto.clearDestinationID()
        case .namespace: proto.clearNamespace()
        case .payloadType: proto.clearPayloadType()
        }
        expectRejected(.missingRequiredFields, body: try body(proto))
    }

    @Test(arguments: [RequiredField.sourceID, .destinationID, .namespace])
    func emptyRequiredStringIsMissingRequiredFields(field: RequiredField) throws {
        var proto = validProto()
        switch field {
        case .sourceID: proto.sourceID = ""
        case .destinationID: proto.destinationID = ""
        case .namespace: proto.namespace = ""
        default: Issue.record("not a string field")
        }
        expectRejected(.missingRequiredFields, body: try body(proto))
    }

    @Test func binaryTypeWithOnlyTextPayloadIsPayloadMismatch() throws {
        var proto = validProto()
        proto.payloadType = .binary
        expectRejected(.payloadMismatch, body: try body(proto))
    }

    @Test func stringTypeWithNoPayloadIsPayloadMismatch() throws {
        var proto = validProto()
        proto.clearPayloadUtf8()
        expectRejected(.payloadMismatch, body: try body(proto))
    }

    @Test func stringTypeWithInvalidUTF8InBinaryFieldIsPayloadMismatch() throws {
        var proto = validProto()
        proto.clearPayloadUtf8()
        proto.payloadBinary = Data([0xC3, 0x28, 0xFF])
        expectRejected(.payloadMismatch, body: try body(proto))
    }

    /// A receiver app's Latin-1 title or a stray byte in an id does not close the connection: proto2 strings are
    /// not validated by the protobuf runtimes Chrome, openscreen and other senders use, so such text reaches
    /// them, and reaches us with U+FFFD in place of each bad sequence. The frames after it are read as usual.
    @Test func textThatIsNotUTF8IsReadWithReplacementCharacters() throws {
        let latin1Title: [UInt8] = Array(#"{"type":"MEDIA_STATUS","title":"Caf"#.utf8) + [0xE9] + Array(#""}"#.utf8)
        var body: [UInt8] = [0x08, 0x00]
        for (field, bytes) in [(0x12, Array("web-".utf8) + [0xFF]), (0x1A, Array("sender-0".utf8))] {
            body += [UInt8(field), UInt8(bytes.count)] + bytes
        }
        body += [0x22, UInt8(Self.testNamespace.utf8.count)] + Array(Self.testNamespace.utf8) + [0x28, 0x00]
        body += [0x32, UInt8(latin1Title.count)] + latin1Title
        let channel = decoderChannel()
        try channel.writeInbound(TransportTestKit.frame(body))
        try channel.writeInbound(TransportTestKit.frame(try self.body(validProto())))
        let repaired = try #require(try channel.readInbound(as: CastMessage.self))
        #expect(repaired.sourceID == "web-\u{FFFD}")
        #expect(try repaired.json()["title"] == "Caf\u{FFFD}")
        let next = try #require(try channel.readInbound(as: CastMessage.self))
        #expect(next.payload == .string(#"{"type":"HELLO"}"#))
        _ = try channel.finish()
    }

    /// openscreen notes that some receivers put STRING payloads in `payload_binary`; they are accepted as text.
    @Test func stringPayloadDeliveredInBinaryFieldIsAccepted() throws {
        var proto = validProto()
        proto.clearPayloadUtf8()
        proto.payloadBinary = Data(#"{"type":"PONG","note":"héllo"}"#.utf8)
        let message = try #require(try decodeOne(body(proto)))
        #expect(message.payload == .string(#"{"type":"PONG","note":"héllo"}"#))
        #expect(try message.json()["type"] == "PONG")
    }

    @Test func emptyStringPayloadIsAccepted() throws {
        var proto = validProto()
        proto.payloadUtf8 = ""
        #expect(try decodeOne(body(proto))?.payload == .string(""))
    }

    @Test func chunkedMessageIsUnsupportedProtocolVersion() throws {
        var proto = validProto()
        proto.protocolVersion = .castv211
        proto.continued = true
        proto.remainingLength = 1000
        expectRejected(.unsupportedProtocolVersion, body: try body(proto))

        var v10 = validProto()
        v10.continued = true
        expectRejected(.unsupportedProtocolVersion, body: try body(v10))
    }

    @Test func explicitContinuedFalseIsAccepted() throws {
        var proto = validProto()
        proto.continued = false
        #expect(try decodeOne(body(proto)) != nil)
    }

    /// After the first fatal error nothing more is read (the connection closes on it): no resynchronising on
    /// later bytes, no second error, and no truncation reported at the end for the bytes left behind.
    @Test func decoderStaysFailedAfterAnError() throws {
        let channel = decoderChannel()
        var bytes = TransportTestKit.header(UInt32(CastFrame.maximumBodyLength + 1))
        bytes.writeBytes(try sample(2).encodedFrame())
        expectTransportError(.frameTooLarge) { try channel.writeInbound(bytes) }
        try channel.writeInbound(ByteBuffer(bytes: try sample(4).encodedFrame()))
        #expect(try channel.readInbound(as: CastMessage.self) == nil)
        #expect(try channel.finish(acceptAlreadyClosed: true).isClean)
    }

    // MARK: - CastMessage(frame:)

    @Test func frameInitializerChecksTheWholeBuffer() throws {
        let frame = try CastMessage(
            sourceID: "a",
            destinationID: "b",
            namespace: Self.testNamespace,
            payload: .string("x")
        )
        .encodedFrame()
        expectTransportError(.truncatedFrame) { try CastMessage(frame: Array(frame.dropLast())) }
        expectTransportError(.truncatedFrame) { try CastMessage(frame: [0, 0]) }
        expectTransportError(.malformedMessage) { try CastMessage(frame: frame + [0x00]) }
        expectTransportError(.emptyFrame) { try CastMessage(frame: [0, 0, 0, 0]) }
        expectTransportError(.frameTooLarge) { try CastMessage(frame: [0, 1, 0, 1]) }
    }

    @Test func binaryPayloadIsNotJSON() {
        let message = CastMessage(
            sourceID: "a",
            destinationID: "b",
            namespace: CastNamespace.deviceAuth,
            payload: .binary([1])
        )
        expectTransportError(.invalidPayload) { try message.json() }
        let text = CastMessage(
            sourceID: "a",
            destinationID: "b",
            namespace: Self.testNamespace,
            payload: .string("not json")
        )
        expectTransportError(.invalidPayload) { try text.json() }
    }
}

/// `JSONValue` parsing and printing: the payload format of every Google namespace.
@Suite("JSON: JSONValue parsing and printing")
struct JSONValueTests {
    @Test func documentRoundTripsWithSortedKeys() throws {
        let text = #"{"b":{"c":{},"d":[]},"a":[1,2.5,-300,true,false,null,"x"]}"#
        let value = try JSONValue(parsing: text)
        #expect(value["a"] == [1, 2.5, -300, true, false, .null, "x"])
        #expect(value["b"]?["c"] == .object([:]))
        let printed = value.jsonString
        #expect(printed == #"{"a":[1,2.5,-300,true,false,null,"x"],"b":{"c":{},"d":[]}}"#)
        #expect(try JSONValue(parsing: printed) == value)
    }

    @Test func whitespaceIsAllowedBetweenTokens() throws {
        let value = try JSONValue(parsing: " \n\t{ \"a\" : [ 1 , 2 ] ,\r\n \"b\" : null } \n")
        #expect(value == ["a": [1, 2], "b": .null])
    }

    @Test func explicitNullsAreKept() throws {
        let value = try JSONValue(parsing: #"{"customData":null,"media":{"metadata":null}}"#)
        #expect(value["customData"] == .null)
        #expect(value["customData"]?.isNull == true)
        #expect(value["missing"] == nil)
        #expect(value["media"]?["metadata"] == .null)
        #expect(value.jsonString == #"{"customData":null,"media":{"metadata":null}}"#)
    }

    @Test func integralNumbersPrintWithoutAFraction() throws {
        #expect(JSONValue.object(["requestId": 3]).jsonString == #"{"requestId":3}"#)
        #expect(try JSONValue(parsing: "3.0").jsonString == "3")
        #expect(try JSONValue(parsing: "-7").jsonString == "-7")
        #expect(try JSONValue(parsing: "1e3").jsonString == "1000")
        #expect(JSONValue.number(1.5).jsonString == "1.5")
        #expect(JSONValue.number(0.1).jsonString == "0.1")
        #expect(JSONValue.number(Double.nan).jsonString == "null")
        #expect(JSONValue.number(Double.infinity).jsonString == "null")
        #expect(try JSONValue(parsing: "2147483647").intValue == 2_147_483_647)
        #expect(try JSONValue(parsing: "2.5").intValue == nil)
        // Very large numbers still print as valid JSON.
        let huge = JSONValue.number(1e300)
        #expect(try JSONValue(parsing: huge.jsonString) == huge)
    }

    /// Numbers read without converting text (an exact integer scaled by an exact power of ten) come out as the
    /// standard library reads the same text, at the fast path's edges and over many random forms.
    @Test func numbersParseAsTheStandardLibraryReadsThem() throws {
        var texts = [
            "0", "-0", "0.5", "-0.5", "1e22", "1e23", "1e-22", "1e-23", "123456789012345", "1234567890123456",
            "999999999999999.9", "0.000000000000000000001", "4.35", "0.1", "0.3", "1.7976931348623157e308",
            "2.2250738585072014e-308", "5e-324", "9007199254740993", "0.0006363340000064", "12.5E+3", "7e0",
            "-1.5e-7", "3.0e000001", "1e00030", "0e999", "0.0e-999", "1e0010", "25e-0003", "1e-0022", "1e0023",
            "9007199254740992", "-9007199254740992e-22", "12345e-9999",
        ]
        var random = SplitMix64(seed: 12)
        for _ in 0..<4000 {
            // Up to 18 digits (past the fast path's 16), no leading zero, a point anywhere.
            let digits = String(random.next() % 1_000_000_000_000_000_000)
            let point = Int(random.next() % UInt64(digits.count + 1))
            var text = String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
            if text.hasPrefix(".") { text = "0" + text }
            if text.hasSuffix(".") { text += "0" }
            // Zeros right after the point (as in a position's seconds) are no significant digits.
            if random.next() % 4 == 0 { text = "0." + String(repeating: "0", count: Int(random.next() % 8)) + digits }
            if random.next() % 2 == 0 { text += "e\(Int(random.next() % 60) - 30)" }
            texts.append(random.next() % 4 == 0 ? "-" + text : text)
        }
        for text in texts {
            let expected = try #require(Double(text), "\(text)")
            let parsed = try JSONValue(parsing: text).doubleValue
            #expect(parsed?.bitPattern == expected.bitPattern, "\(text)")
        }
    }

    /// A request's `requestId` is written into its payload's text, the payload itself unchanged.
    @Test func aMemberIsAddedAsTheTextIsWritten() throws {
        let payload: JSONValue = ["type": "PLAY", "mediaSessionId": 4, "customData": ["z": 1, "a": 2]]
        #expect(
            payload.jsonString(adding: ("requestId", 7))
                == #"{"customData":{"a":2,"z":1},"mediaSessionId":4,"requestId":7,"type":"PLAY"}"#
        )
        // A member of the same key is replaced, as setting it would.
        #expect(
            payload.jsonString(adding: ("type", "PAUSE"))
                == #"{"customData":{"a":2,"z":1},"mediaSessionId":4,"type":"PAUSE"}"#
        )
        #expect(JSONValue.object([:]).jsonString(adding: ("requestId", 1)) == #"{"requestId":1}"#)
        #expect(payload["requestId"] == nil)
        // Not an object: written as it is.
        #expect(JSONValue.array([1]).jsonString(adding: ("requestId", 1)) == "[1]")
    }

    /// Over random objects, the member added as the text is written gives the text of setting it first.
    @Test func aMemberAddedAsWrittenIsTheMemberSet() throws {
        var random = SplitMix64(seed: 7)
        let keys = ["requestId", "type", "a", "é", "we\"ird", "mediaSessionId", "z", ""]
        func value(_ depth: Int) -> JSONValue {
            switch random.next() % (depth > 2 ? 4 : 6) {
            case 0: return .number(Double(Int(random.next() % 2_000)) / 8)
            case 1: return .string(keys[Int(random.next() % UInt64(keys.count))])
            case 2: return .bool(random.next() % 2 == 0)
            case 3: return .null
            case 4: return .array((0..<Int(random.next() % 3)).map { _ in value(depth + 1) })
            default: return object(depth + 1)
            }
        }
        func object(_ depth: Int) -> JSONValue {
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int(random.next() % 5) {
                members[keys[Int(random.next() % UInt64(keys.count))]] = value(depth)
            }
            return .object(members)
        }
        for _ in 0..<500 {
            let payload = object(0)
            let key = keys[Int(random.next() % UInt64(keys.count))]
            let added = value(1)
            var set = payload
            set[key] = added
            #expect(payload.jsonString(adding: (key, added)) == set.jsonString)
        }
    }

    /// Setting a member changes the object held, and no other copy of it.
    @Test func settingAMemberLeavesOtherCopiesAlone() throws {
        var value: JSONValue = ["a": 1]
        let copy = value
        value["b"] = 2
        value["a"] = nil
        #expect(value == ["b": 2])
        #expect(copy == ["a": 1])
        var notAnObject: JSONValue = [1]
        notAnObject["a"] = 1
        #expect(notAnObject == [1])
    }

    @Test func nestingAtTheLimitIsAccepted() throws {
        let depth = JSONValue.maximumDepth
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var value = try JSONValue(parsing: text)
        for _ in 0..<(depth - 1) { value = try #require(value.arrayValue?.first) }
        #expect(value == .array([]))
    }

    @Test(arguments: [JSONValue.maximumDepth + 1, 300, 40_000])
    func nestingBeyondTheLimitIsInvalidPayload(depth: Int) {
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        expectTransportError(.invalidPayload) { try JSONValue(parsing: arrays) }
        let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        expectTransportError(.invalidPayload) { try JSONValue(parsing: objects) }
        // Unbalanced, too: the depth check fires before the missing closers are noticed.
        expectTransportError(.invalidPayload) { try JSONValue(parsing: String(repeating: "[", count: depth)) }
    }

    @Test(arguments: [
        "", " ", "{", "}", "[", "]", "[1,]", "[,1]", "[1 2]", #"{"a":}"#, #"{"a" 1}"#, "{a:1}", #"{"a":1,}"#,
        "tru", "nul", "falsy", "1.", ".5", "-", "1e", "+1", #""abc"#, #""\x""#, #""\u12""#, #""\uZZZZ""#,
        "\"tab\there\"", "1 2", "{} {}", "NaN", "'single'",
    ])
    func invalidTextIsInvalidPayload(text: String) {
        expectTransportError(.invalidPayload) { try JSONValue(parsing: text) }
    }

    /// Numbers beyond `Double`'s range would parse as infinity, which no JSON text can hold; tiny ones underflow
    /// to zero, which is still the closest value.
    @Test(arguments: ["1e400", "-1e400", "[1e309]", #"{"currentTime":1E+999}"#, String(repeating: "9", count: 400)])
    func numbersOutOfRangeAreInvalidPayload(text: String) {
        let error = expectTransportError(.invalidPayload) { try JSONValue(parsing: text) }
        #expect(error?.message.contains("number out of range") == true)
    }

    @Test func tinyNumbersUnderflowToZero() throws {
        #expect(try JSONValue(parsing: "1e-400") == .number(0))
        #expect(try JSONValue(parsing: "1.7976931348623157e308") == .number(.greatestFiniteMagnitude))
    }

    /// RFC 8259 forbids leading zeros ("01"); the parser documents itself as strict about syntax.
    @Test(arguments: ["01", "-01", "[00]", #"{"requestId":007}"#])
    func leadingZerosAreInvalidPayload(text: String) {
        expectTransportError(.invalidPayload) { try JSONValue(parsing: text) }
    }

    @Test func stringEscapesAreDecoded() throws {
        let value = try JSONValue(parsing: #""q\" b\\ s\/ \b\f\n\r\t \u00e9 \u20AC""#)
        #expect(value == .string("q\" b\\ s/ \u{08}\u{0C}\n\r\t é €"))
    }

    @Test func surrogatePairsDecodeToOneScalar() throws {
        #expect(try JSONValue(parsing: #""\ud83d\ude00""#) == .string("😀"))
        #expect(try JSONValue(parsing: #""a\uD834\uDD1Eb""#) == .string("a𝄞b"))
        // Raw UTF-8 passes through and prints unescaped.
        let raw = try JSONValue(parsing: "\"😀 ü\"")
        #expect(raw == .string("😀 ü"))
        #expect(raw.jsonString == "\"😀 ü\"")
    }

    @Test func loneSurrogatesBecomeReplacementCharacters() throws {
        #expect(try JSONValue(parsing: #""\ud83d""#) == .string("\u{FFFD}"))
        #expect(try JSONValue(parsing: #""\ude00x""#) == .string("\u{FFFD}x"))
        #expect(try JSONValue(parsing: #""\ud83dx""#) == .string("\u{FFFD}x"))
    }

    /// A high surrogate followed by an escape that is not a low surrogate: the second escape is a character of
    /// its own and must survive.
    @Test func highSurrogateFollowedByAnotherEscapeKeepsThatEscape() throws {
        let value = try JSONValue(parsing: #""\ud83d\u0041""#)
        #expect(value == .string("\u{FFFD}A"))
    }

    @Test func writerEscapesQuotesBackslashesAndControlCharacters() throws {
        let value = JSONValue.string("a\"b\\c\nd\re\tf\u{01}g\u{1F}h/")
        #expect(value.jsonString == #""a\"b\\c\nd\re\tf\u0001g\u001fh/""#)
        #expect(try JSONValue(parsing: value.jsonString) == value)
    }

    /// The writer's own integer digits and byte-wise escaping, at their edges.
    @Test func writerDigitsAndEscapesAtTheirEdges() throws {
        #expect(JSONValue.number(0).jsonString == "0")
        #expect(JSONValue.number(-0.0).jsonString == "0")
        #expect(JSONValue.number(10).jsonString == "10")
        #expect(JSONValue.number(-1_000_000).jsonString == "-1000000")
        #expect(JSONValue.number(8_999_999_999_999_998).jsonString == "8999999999999998")
        #expect(JSONValue.number(-8_999_999_999_999_998).jsonString == "-8999999999999998")
        #expect(JSONValue.number(1e16).jsonString == "1e+16")
        // Multi-byte characters next to escapes keep their bytes.
        let mixed = JSONValue.string("é\n😀\u{7F}\u{0}€\"")
        #expect(mixed.jsonString == #""é\n😀\#u{7F}\u0000€\"""#)
        #expect(try JSONValue(parsing: mixed.jsonString) == mixed)
    }

    @Test func keysAreEscapedToo() throws {
        let value: JSONValue = ["we\"ird\nkey": 1]
        #expect(value.jsonString == #"{"we\"ird\nkey":1}"#)
        #expect(try JSONValue(parsing: value.jsonString) == value)
    }

    @Test func duplicateKeysKeepTheLastValue() throws {
        #expect(try JSONValue(parsing: #"{"a":1,"a":2}"#) == ["a": 2])
    }
}
