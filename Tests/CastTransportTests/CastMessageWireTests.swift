import Foundation
import NIOCore
import SwiftProtobuf
import Testing

@testable import CastTransport

/// The hand-written `CastMessage` codec against the generated SwiftProtobuf one it replaced: the same bytes out,
/// and the same messages or the same errors in, for crafted bodies, the fuzz corpora and seeded mutations of them;
/// except text that is not UTF-8, which SwiftProtobuf refuses and the transport reads with U+FFFD.
@Suite("CastMessage wire codec: byte for byte what SwiftProtobuf does")
struct CastMessageWireTests {
    private static let namespace = "urn:x-cast:com.example.wire"

    // MARK: - Writing

    @Test(arguments: [
        CastMessage.Payload.string(#"{"type":"PING"}"#),
        .string(""),
        .string("ünïcödé ✓ " + String(repeating: "x", count: 200)),
        .string(String(repeating: "y", count: 20_000)),
        .binary([]),
        .binary([0, 1, 2, 255]),
        .binary(Array(repeating: 7, count: 300)),
    ])
    func writesWhatSwiftProtobufWrites(_ payload: CastMessage.Payload) throws {
        let message = CastMessage(
            sourceID: "sender-\(String(repeating: "s", count: 130))",
            destinationID: "receiver-0",
            namespace: Self.namespace,
            payload: payload
        )
        let expected: [UInt8] = try message.proto.serializedBytes()
        let frame = try message.encodedFrame()
        #expect(Array(frame.dropFirst(CastFrame.headerLength)) == expected)
        #expect(CastMessageWire.bodyLength(of: message) == expected.count)
        #expect(try message.checkFrameSize() == expected.count)
    }

    // MARK: - Reading

    /// Bodies that take each rule's edge: unknown fields of every wire type, groups, wrong wire types, unknown
    /// enum values, repeated fields, long varints, bad keys, bad UTF-8.
    @Test func readsCraftedBodiesAsSwiftProtobufDoes() throws {
        let valid: [UInt8] = try CastMessage(
            sourceID: "s",
            destinationID: "d",
            namespace: Self.namespace,
            payload: .string("{}")
        ).proto.serializedBytes()
        var bodies: [[UInt8]] = [
            valid,
            [],
            valid + [0x48, 0x01],  // continued = true
            valid + [0x48, 0x00],  // continued = false
            valid + [0x50, 0x05],  // remaining_length
            valid + [0x58, 0x81, 0x01],  // unknown varint field 11
            valid + [0x59] + Array(repeating: 1, count: 8),  // unknown fixed64
            valid + [0x5D, 1, 2, 3, 4],  // unknown fixed32
            valid + [0x5D, 1, 2],  // truncated fixed32
            valid + [0x5A, 0x02, 0x41, 0x42],  // unknown length-delimited
            valid + [0x5A, 0x09, 0x41],  // length past the end
            valid + [0x5B, 0x58, 0x01, 0x5C],  // a group with a field inside
            valid + [0x5B, 0x64],  // a group closed by another field number
            valid + [0x5B],  // an unclosed group
            valid + [0x5C],  // an end of group with no start
            valid + [0x5E, 0x00],  // wire type 6
            valid + [0x5F, 0x00],  // wire type 7
            valid + [0x00, 0x00],  // field 0
            valid + [0x12, 0x00],  // an empty source id, last wins
            valid + [0x10, 0x01],  // source id as a varint: unknown
            valid + [0x08, 0x07],  // an unknown protocol version: kept as unknown, the earlier one stays
            valid + [0x08, 0x03],  // CASTV2_1_3
            valid + [0x28, 0x05],  // an unknown payload type
            valid + [0x28, 0x01],  // BINARY without a binary payload
            valid + [0x28, 0x01, 0x3A, 0x01, 0x09],  // BINARY with one
            valid + [0x3A, 0x02, 0xC3, 0xA9],  // STRING with both payloads: the text wins
            valid + [0x32, 0x01, 0xFF],  // invalid UTF-8 text
            valid + [0x22, 0x02, 0xC3, 0x28],  // invalid UTF-8 namespace
            valid + [0x32, 0x02, 0xC0, 0x80],  // an overlong NUL
            valid + [0x32, 0x03, 0xED, 0xA0, 0x80],  // a UTF-16 surrogate
            valid + [0x32, 0x04, 0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
            valid + [0x32, 0x03, 0xF0, 0x9F, 0x98],  // a four-byte sequence cut short
            valid + [0x32, 0x07, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80],  // € and 😀: valid
            valid + [0x32, 0x01, 0x00],  // a NUL: valid UTF-8
            valid + [0x58] + Array(repeating: 0xFF, count: 9) + [0x01],  // a ten-byte varint
            valid + [0x58] + Array(repeating: 0xFF, count: 9) + [0x7F],  // a ten-byte varint, high bits dropped
            valid + [0x58] + Array(repeating: 0xFF, count: 10) + [0x01],  // eleven bytes
            valid + [0x58, 0xFF],  // a varint cut off
            valid + [0xF8, 0xFF, 0xFF, 0xFF, 0x0F, 0x00],  // key UInt32.max
            valid + [0xF0, 0xFF, 0xFF, 0xFF, 0x0F, 0x00],  // the largest field number, varint
            valid + [0xF8, 0xFF, 0xFF, 0xFF, 0x1F, 0x00],  // a key past UInt32
            Array(valid.dropLast(3)),
            [0x08, 0x00, 0x12, 0x01, 0x73, 0x1A, 0x01, 0x64, 0x22, 0x01, 0x6E, 0x28, 0x00],  // no payload
            [0x12, 0x01, 0x73, 0x1A, 0x01, 0x64, 0x22, 0x01, 0x6E, 0x28, 0x00, 0x32, 0x00],  // no version
        ]
        // Groups nested up to the depth limit, and one deeper.
        for depth in [99, 100, 101] {
            bodies.append(valid + Array(repeating: 0x5B, count: depth) + Array(repeating: 0x5C, count: depth))
        }
        for body in bodies { try expectSameOutcome(body) }
    }

    /// A connection's decoder takes a long id equal to the last one read from there (its storage), and reads any
    /// other as it is.
    @Test func longIdsEqualToTheLastOnesReadAreReused() throws {
        let storage = { (text: String) in text.utf8.withContiguousStorageIfAvailable { $0.baseAddress } ?? nil }
        let transport = "web-\(String(repeating: "t", count: 30))"
        let sender = "sender-\(String(repeating: "s", count: 30))"
        let messages = [
            (transport, sender), (transport, sender), (transport + "2", "*"), (transport + "2", sender),
            ("short", "sender-0"), (transport + "2", sender),
        ].map { source, destination in
            CastMessage(
                sourceID: source,
                destinationID: destination,
                namespace: Self.namespace,
                payload: .string(#"{"type":"PING"}"#)
            )
        }
        var buffer = ByteBuffer()
        for message in messages { buffer.writeBytes(try message.encodedFrame()) }
        var decoder = CastMessageDecoder()
        var decoded: [CastMessage] = []
        while let message = try decoder.decodeFrame(from: &buffer) { decoded.append(message) }
        #expect(decoded == messages)
        #expect(storage(decoded[1].sourceID) == storage(decoded[0].sourceID))
        #expect(storage(decoded[1].destinationID) == storage(decoded[0].destinationID))
        #expect(storage(decoded[3].sourceID) == storage(decoded[2].sourceID))
        #expect(storage(decoded[3].destinationID) == storage(decoded[0].destinationID))
        #expect(storage(decoded[5].sourceID) == storage(decoded[2].sourceID))
    }

    /// Google namespaces are read as their shared constants; a namespace of the same length that differs in one
    /// byte, a longer or shorter one, is read as itself.
    @Test(arguments: [
        CastNamespace.heartbeat, CastNamespace.media, CastNamespace.receiver, CastNamespace.connection,
        "urn:x-cast:com.google.cast.tp.heartbeaT", "Urn:x-cast:com.google.cast.tp.heartbeat",
        "urn:x-cast:com.google.cast.medi", "urn:x-cast:com.google.cast.mediaa",
    ])
    func readsNamespacesKnownOrNot(_ namespace: String) throws {
        let message = CastMessage(
            sourceID: "sender-0",
            destinationID: "receiver-0",
            namespace: namespace,
            payload: .string(#"{"type":"PING"}"#)
        )
        let body: [UInt8] = try message.proto.serializedBytes()
        let decoded = try CastMessageDecoder.decodeMessage(body)
        #expect(decoded == message)
        try expectSameOutcome(body)
        // A known namespace is the constant itself (its storage), not an equal copy.
        let storage = { (text: String) in text.utf8.withContiguousStorageIfAvailable { $0.baseAddress } ?? nil }
        let known = [CastNamespace.heartbeat, CastNamespace.media, CastNamespace.receiver, CastNamespace.connection]
        #expect((storage(decoded.namespace) == storage(namespace)) == known.contains(namespace))
    }

    /// Every body in the fuzz corpora of the frame targets, and 20,000 seeded mutations of them.
    @Test func readsTheCorporaAndTheirMutationsAsSwiftProtobufDoes() throws {
        let corpora = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tools/Fuzz/corpus")
        var bodies: [[UInt8]] = []
        for (target, isFrame) in [("cast-message", false), ("frame", true), ("frame-stream", true)] {
            let folder = corpora.appendingPathComponent(target)
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                let bytes = Array(try Data(contentsOf: folder.appendingPathComponent(name)))
                bodies.append(isFrame ? Array(bytes.dropFirst(CastFrame.headerLength)) : bytes)
            }
        }
        #expect(bodies.count > 50)
        var random = SplitMix64(seed: 0x5EED_CA57)
        for _ in 0..<20_000 {
            var body = bodies[Int.random(in: 0..<bodies.count, using: &random)]
            for _ in 0...Int.random(in: 0..<4, using: &random) where !body.isEmpty {
                let index = Int.random(in: 0..<body.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: body[index] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
                case 1: body[index] = UInt8.random(in: 0...255, using: &random)
                case 2: body.insert(UInt8.random(in: 0...255, using: &random), at: index)
                default: body.removeSubrange(index..<min(body.count, index + Int.random(in: 1...8, using: &random)))
                }
            }
            bodies.append(body)
        }
        for body in bodies { try expectSameOutcome(body) }
    }

    /// Decodes `body` both ways: the same message, or errors with the same code.
    private func expectSameOutcome(_ body: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ours = Result { try CastMessageDecoder.decodeMessage(body) }
        let reference = Result { try Self.referenceDecode(body) }
        switch (ours, reference) {
        case (_, .failure(is ReferenceRejectsUTF8)):
            // SwiftProtobuf rejects text that is not UTF-8; the transport reads it with U+FFFD instead, as the
            // protobuf runtimes of Chrome and other senders do not check proto2 strings at all.
            if case .success(let message) = ours {
                let texts = [message.sourceID, message.destinationID, message.namespace, message.payload.text]
                #expect(
                    texts.contains { $0.contains("\u{FFFD}") },
                    "\(TransportTestKit.hex(body))",
                    sourceLocation: sourceLocation
                )
            }
        case (.success(let a), .success(let b)):
            #expect(a == b, "\(TransportTestKit.hex(body))", sourceLocation: sourceLocation)
        case (.failure(let a), .failure(let b)):
            let codes = ((a as? CastTransportError)?.code, (b as? CastTransportError)?.code)
            #expect(
                codes.0 != nil && codes.0 == codes.1,
                "\(TransportTestKit.hex(body)): \(a) / \(b)",
                sourceLocation: sourceLocation
            )
        default:
            Issue.record(
                "\(TransportTestKit.hex(body)): ours \(ours), SwiftProtobuf \(reference)",
                sourceLocation: sourceLocation
            )
        }
    }

    /// The decoding the transport used before: SwiftProtobuf's generated code.
    private static func referenceDecode(_ body: [UInt8]) throws -> CastMessage {
        let proto: ProtoCastMessage
        do {
            proto = try ProtoCastMessage(serializedBytes: body)
        } catch BinaryDecodingError.missingRequiredFields {
            throw CastTransportError(.missingRequiredFields, "missing")
        } catch BinaryDecodingError.invalidUTF8 {
            throw ReferenceRejectsUTF8()
        } catch {
            throw CastTransportError(.malformedMessage, "malformed")
        }
        var fields = CastMessageWire.Fields()
        fields.protocolVersion = proto.protocolVersion.rawValue
        fields.sourceID = proto.sourceID
        fields.destinationID = proto.destinationID
        fields.namespace = proto.namespace
        fields.payloadType = proto.payloadType.rawValue
        fields.payloadUTF8 = proto.hasPayloadUtf8 ? proto.payloadUtf8 : nil
        fields.payloadBinary = proto.hasPayloadBinary ? Array(proto.payloadBinary) : nil
        fields.continued = proto.continued
        return try CastMessage(validating: fields)
    }
}

/// SwiftProtobuf's refusal of a string field that is not UTF-8, which the transport repairs instead.
private struct ReferenceRejectsUTF8: Error {}
