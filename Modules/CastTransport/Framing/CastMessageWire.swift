import NIOCore

/// The `CastMessage` protobuf (cast_channel.proto), read from and written to buffers directly.
///
/// A message has nine fields and no nesting, and every message of a session passes here twice: the generated
/// SwiftProtobuf code copied each frame into an array and then into a `Data`, and its generic decoder led the
/// transport's profile (a quarter of the emulator's CPU in an echo). This reads the fields straight out of the
/// frame and writes them straight into the outgoing buffer, byte for byte what SwiftProtobuf writes, and accepts
/// and refuses exactly what it does (proto2 rules: unknown fields and unknown enum values are skipped, a field of
/// the wrong wire type counts as unknown, the last occurrence of a field wins, required fields must be present,
/// strings must be UTF-8). `CastMessageWireTests` checks both against each other.
enum CastMessageWire {
    private enum Field {
        static let protocolVersion: UInt64 = 1
        static let sourceID: UInt64 = 2
        static let destinationID: UInt64 = 3
        static let namespace: UInt64 = 4
        static let payloadType: UInt64 = 5
        static let payloadUTF8: UInt64 = 6
        static let payloadBinary: UInt64 = 7
        static let continued: UInt64 = 8
    }

    private enum WireType {
        static let varint: UInt64 = 0
        static let fixed64: UInt64 = 1
        static let lengthDelimited: UInt64 = 2
        static let startGroup: UInt64 = 3
        static let endGroup: UInt64 = 4
        static let fixed32: UInt64 = 5
    }

    /// Why a body is not a `CastMessage`: the two ways SwiftProtobuf fails, which map to two transport errors.
    enum DecodingFailure: Error {
        case malformed(String)
        case missingRequiredFields
    }

    // MARK: - Writing

    /// The body's length: field 1 (version 0), 2–4 (the endpoints and namespace), 5 (the payload type) and 6 or 7
    /// (the payload).
    static func bodyLength(of message: CastMessage) -> Int {
        func stringField(_ length: Int) -> Int { 1 + varintLength(UInt64(length)) + length }
        let payload =
            switch message.payload {
            case .string(let text): stringField(text.utf8.count)
            case .binary(let bytes): stringField(bytes.count)
            }
        return 2 + stringField(message.sourceID.utf8.count) + stringField(message.destinationID.utf8.count)
            + stringField(message.namespace.utf8.count) + 2 + payload
    }

    /// Writes the body of `message` (its length is ``bodyLength(of:)``) to `buffer`.
    static func writeBody(of message: CastMessage, to buffer: inout ByteBuffer) {
        func writeKey(_ field: UInt64, _ wireType: UInt64) { writeVarint(field << 3 | wireType, to: &buffer) }
        func writeString(_ field: UInt64, _ text: String) {
            writeKey(field, WireType.lengthDelimited)
            writeVarint(UInt64(text.utf8.count), to: &buffer)
            buffer.writeString(text)
        }
        writeKey(Field.protocolVersion, WireType.varint)
        buffer.writeInteger(UInt8(0))  // CASTV2_1_0
        writeString(Field.sourceID, message.sourceID)
        writeString(Field.destinationID, message.destinationID)
        writeString(Field.namespace, message.namespace)
        writeKey(Field.payloadType, WireType.varint)
        switch message.payload {
        case .string(let text):
            buffer.writeInteger(UInt8(0))  // STRING
            writeString(Field.payloadUTF8, text)
        case .binary(let bytes):
            buffer.writeInteger(UInt8(1))  // BINARY
            writeKey(Field.payloadBinary, WireType.lengthDelimited)
            writeVarint(UInt64(bytes.count), to: &buffer)
            buffer.writeBytes(bytes)
        }
    }

    private static func varintLength(_ value: UInt64) -> Int {
        value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
    }

    private static func writeVarint(_ value: UInt64, to buffer: inout ByteBuffer) {
        var value = value
        while value >= 0x80 {
            buffer.writeInteger(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        buffer.writeInteger(UInt8(value))
    }

    // MARK: - Reading

    /// What a body said, before the message's own rules are applied.
    struct Fields {
        var protocolVersion: Int?
        var sourceID: String?
        var destinationID: String?
        var namespace: String?
        var payloadType: Int?
        var payloadUTF8: String?
        var payloadBinary: [UInt8]?
        var continued = false
    }

    /// The last long source and destination ids a connection read. Its messages repeat them (the peer's transport
    /// id, our own sender id), and one more than 15 bytes long would be a new string, an allocation, every time.
    struct RecentIDs {
        var sourceID: String?
        var destinationID: String?
    }

    /// Reads the fields of one body.
    static func readFields(_ body: UnsafeRawBufferPointer) throws(DecodingFailure) -> Fields {
        var recent = RecentIDs()
        return try readFields(body, recent: &recent)
    }

    /// Reads the fields of one body, taking ids equal to `recent` ones from there instead of making them again.
    static func readFields(_ body: UnsafeRawBufferPointer, recent: inout RecentIDs) throws(DecodingFailure) -> Fields {
        var reader = Reader(bytes: body)
        var fields = Fields()
        while !reader.isAtEnd {
            let (field, wireType) = try reader.readKey()
            switch (field, wireType) {
            case (Field.protocolVersion, WireType.varint):
                // Unknown enum values are kept as unknown fields, so they leave the field unset.
                let value = Int32(truncatingIfNeeded: try reader.readVarint())
                if (0...3).contains(value) { fields.protocolVersion = Int(value) }
            case (Field.sourceID, WireType.lengthDelimited):
                fields.sourceID = try reader.readString(reusing: &recent.sourceID)
            case (Field.destinationID, WireType.lengthDelimited):
                fields.destinationID = try reader.readString(reusing: &recent.destinationID)
            case (Field.namespace, WireType.lengthDelimited): fields.namespace = try reader.readNamespace()
            case (Field.payloadType, WireType.varint):
                let value = Int32(truncatingIfNeeded: try reader.readVarint())
                if (0...1).contains(value) { fields.payloadType = Int(value) }
            case (Field.payloadUTF8, WireType.lengthDelimited): fields.payloadUTF8 = try reader.readString()
            case (Field.payloadBinary, WireType.lengthDelimited):
                fields.payloadBinary = Array(try reader.readLengthDelimited())
            case (Field.continued, WireType.varint): fields.continued = try reader.readVarint() != 0
            default: try reader.skip(field: field, wireType: wireType)
            }
        }
        guard fields.protocolVersion != nil, fields.sourceID != nil, fields.destinationID != nil,
            fields.namespace != nil, fields.payloadType != nil
        else { throw .missingRequiredFields }
        return fields
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        var isAtEnd: Bool { index >= bytes.count }

        mutating func readVarint() throws(DecodingFailure) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.count {
                // Ten bytes at most; the tenth's bits past bit 63 are dropped, as SwiftProtobuf drops them.
                guard shift <= 63 else { throw .malformed("a varint is longer than ten bytes") }
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) &<< shift
                if byte < 0x80 { return value }
                shift += 7
            }
            throw .malformed("the body ends inside a varint")
        }

        mutating func readKey() throws(DecodingFailure) -> (field: UInt64, wireType: UInt64) {
            let key = try readVarint()
            let field = key >> 3
            guard key < UInt64(UInt32.max), field > 0 else { throw .malformed("field key \(key) is not valid") }
            return (field, key & 7)
        }

        mutating func readLengthDelimited() throws(DecodingFailure) -> UnsafeRawBufferPointer {
            let length = try readVarint()
            guard length <= UInt64(bytes.count - index) else {
                throw .malformed("a field's length \(length) runs past the body")
            }
            defer { index += Int(length) }
            return UnsafeRawBufferPointer(rebasing: bytes[index..<index + Int(length)])
        }

        mutating func readString() throws(DecodingFailure) -> String {
            Self.string(from: try readLengthDelimited())
        }

        /// `recent` when it has the same bytes, else a new string, which becomes `recent` when it is too long to
        /// be stored inline (a string of at most 15 bytes costs no allocation anyway).
        mutating func readString(reusing recent: inout String?) throws(DecodingFailure) -> String {
            let bytes = try readLengthDelimited()
            guard bytes.count > 15 else { return Self.string(from: bytes) }
            if var known = recent, known.utf8.count == bytes.count, known.withUTF8({ $0.elementsEqual(bytes) }) {
                return known
            }
            let text = Self.string(from: bytes)
            recent = text
            return text
        }

        /// A Google namespace comes back as the shared constant, not a copy: no allocation for the field (39
        /// bytes is past a string's inline capacity), and every later comparison with the constant is a pointer
        /// check. Any other namespace is read as a string.
        mutating func readNamespace() throws(DecodingFailure) -> String {
            let bytes = try readLengthDelimited()
            for known in knownNamespaces where known.bytes.count == bytes.count {
                if known.bytes.withUnsafeBytes({ $0.elementsEqual(bytes) }) { return known.text }
            }
            return Self.string(from: bytes)
        }

        /// A field's bytes as a string, validated through `UTF8Span`: the generic `String(validating:as:)` looked
        /// up type metadata at run time for every field and took twice as long.
        ///
        /// Bytes that are not UTF-8 become U+FFFD rather than an error: proto2 string fields are not validated by
        /// the protobuf runtimes Chrome, openscreen, pychromecast and go-chromecast use, so a receiver app's
        /// stray Latin-1 title reaches them as text, and must not close our connection.
        private static func string(from bytes: UnsafeRawBufferPointer) -> String {
            guard !bytes.isEmpty else { return "" }
            return bytes.withMemoryRebound(to: UInt8.self) { bytes in
                guard let span = try? UTF8Span(validating: bytes.span) else {
                    return String(decoding: bytes, as: UTF8.self)
                }
                return String(copying: span)
            }
        }

        /// Skips an unknown field (or a known one of another wire type), groups included, nested at most
        /// `groupDepth` deep (SwiftProtobuf allows 99 in a message: its default depth limit, 100, counts the message).
        mutating func skip(field: UInt64, wireType: UInt64, groupDepth: Int = 99) throws(DecodingFailure) {
            switch wireType {
            case WireType.varint: _ = try readVarint()
            case WireType.fixed64: try advance(by: 8)
            case WireType.lengthDelimited: _ = try readLengthDelimited()
            case WireType.fixed32: try advance(by: 4)
            case WireType.startGroup:
                guard groupDepth > 0 else { throw .malformed("groups are nested too deep") }
                while true {
                    guard !isAtEnd else { throw .malformed("the body ends inside group \(field)") }
                    let (inner, innerType) = try readKey()
                    if innerType == WireType.endGroup {
                        guard inner == field else { throw .malformed("group \(field) ends as group \(inner)") }
                        return
                    }
                    try skip(field: inner, wireType: innerType, groupDepth: groupDepth - 1)
                }
            default: throw .malformed("wire type \(wireType) of field \(field) is not valid here")
            }
        }

        mutating func advance(by count: Int) throws(DecodingFailure) {
            guard bytes.count - index >= count else { throw .malformed("the body ends inside a fixed-size field") }
            index += count
        }
    }
}

/// The namespaces ``CastMessageWire`` reads as shared constants, with their bytes.
private let knownNamespaces: [(bytes: [UInt8], text: String)] = [
    CastNamespace.heartbeat, CastNamespace.connection, CastNamespace.receiver, CastNamespace.media,
    CastNamespace.deviceAuth, CastNamespace.multizone, CastNamespace.receiverDiscovery,
].map { (Array($0.utf8), $0) }
