#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One Cast v2 message: who sent it, to whom, on which namespace, and its payload.
///
/// This is the transport's unit, one per frame. JSON payloads stay as text here and are parsed by whoever
/// knows the namespace (``json()``), because custom namespaces may carry any text.
public struct CastMessage: Sendable, Hashable {
    /// A message payload: text (JSON for every Google namespace) or bytes (device authentication).
    public enum Payload: Sendable, Hashable {
        case string(String)
        case binary([UInt8])
    }

    /// The sending endpoint, for example `sender-0`, `receiver-0` or an app's transport id.
    public var sourceID: String {
        get { fields.value.sourceID }
        set { fields.value.sourceID = newValue }
    }
    /// The receiving endpoint, or `*` for a broadcast.
    public var destinationID: String {
        get { fields.value.destinationID }
        set { fields.value.destinationID = newValue }
    }
    /// The namespace that multiplexes this message, `urn:x-cast:…`.
    public var namespace: String {
        get { fields.value.namespace }
        set { fields.value.namespace = newValue }
    }
    /// The payload.
    public var payload: Payload {
        get { fields.value.payload }
        set {
            fields.value.payload = newValue
            fields.value.parsedJSON = nil
        }
    }

    /// The fields behind one reference, copied on write: a message is one word, so SwiftNIO carries it between
    /// handlers without boxing it and a copy is a retain (the fields inline were 90-odd bytes, boxed at every
    /// handler).
    private struct Fields: Sendable {
        var sourceID: String
        var destinationID: String
        var namespace: String
        var payload: Payload
        /// The payload already parsed (by the connection, which reads every reply's `requestId`), so that the
        /// message's consumers do not parse it again.
        var parsedJSON: JSONValue? = nil
    }

    private var fields: CopyOnWrite<Fields>

    /// Creates a message.
    public init(sourceID: String, destinationID: String, namespace: String, payload: Payload) {
        fields = CopyOnWrite(
            Fields(sourceID: sourceID, destinationID: destinationID, namespace: namespace, payload: payload)
        )
    }

    /// Creates a message with a JSON payload.
    public init(sourceID: String, destinationID: String, namespace: String, json: JSONValue) {
        self.init(
            sourceID: sourceID,
            destinationID: destinationID,
            namespace: namespace,
            payload: .string(json.jsonString)
        )
    }

    /// The payload parsed as JSON.
    ///
    /// - Throws: ``CastTransportError`` with ``CastTransportError/Code/invalidPayload`` for binary payloads and
    ///   text that is not JSON.
    public func json() throws -> JSONValue {
        guard case .string(let text) = payload else {
            throw CastTransportError(.invalidPayload, "a binary payload on \(namespace) is not JSON")
        }
        return try fields.value.parsedJSON ?? JSONValue(parsing: text)
    }

    /// This message with its JSON payload parsed once for every later ``json()``; `nil` when the payload is not
    /// JSON.
    package func parsingJSON() -> (message: CastMessage, json: JSONValue)? {
        guard let json = try? json() else { return nil }
        var message = self
        message.fields.value.parsedJSON = json
        return (message, json)
    }

    /// Whether this message is addressed to everyone.
    public var isBroadcast: Bool { destinationID == "*" }

    /// Equal messages are equal whether or not their payload was parsed yet.
    public static func == (lhs: CastMessage, rhs: CastMessage) -> Bool {
        lhs.sourceID == rhs.sourceID && lhs.destinationID == rhs.destinationID && lhs.namespace == rhs.namespace
            && lhs.payload == rhs.payload
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(sourceID)
        hasher.combine(destinationID)
        hasher.combine(namespace)
        hasher.combine(payload)
    }
}

extension CastMessage: CustomStringConvertible {
    /// `source → destination [namespace] payload`, for logs.
    public var description: String {
        switch payload {
        case .string(let text): return "\(sourceID) → \(destinationID) [\(namespace)] \(text)"
        case .binary(let bytes): return "\(sourceID) → \(destinationID) [\(namespace)] <\(bytes.count) bytes>"
        }
    }
}

// MARK: - Protobuf mapping

extension CastMessage {
    /// Validates a decoded protobuf the way Chrome does and maps it, tolerating STRING payloads that arrive in
    /// `payload_binary` (some receivers send them so).
    init(validating fields: CastMessageWire.Fields) throws {
        guard let sourceID = fields.sourceID, let destinationID = fields.destinationID,
            let namespace = fields.namespace, !sourceID.isEmpty, !destinationID.isEmpty, !namespace.isEmpty
        else {
            throw CastTransportError(.missingRequiredFields, "a message has an empty source, destination or namespace")
        }
        if fields.continued {
            throw CastTransportError(
                .unsupportedProtocolVersion,
                "chunked messages (protocol version \(fields.protocolVersion ?? 0)) are not supported"
            )
        }
        let payload: Payload
        if fields.payloadType == 1 {
            guard let bytes = fields.payloadBinary else {
                throw CastTransportError(.payloadMismatch, "a BINARY message on \(namespace) has no binary payload")
            }
            payload = .binary(bytes)
        } else if let text = fields.payloadUTF8 {
            payload = .string(text)
        } else if let bytes = fields.payloadBinary, let text = String(validating: bytes, as: UTF8.self) {
            payload = .string(text)
        } else {
            throw CastTransportError(.payloadMismatch, "a STRING message on \(namespace) has no text payload")
        }
        self.init(sourceID: sourceID, destinationID: destinationID, namespace: namespace, payload: payload)
    }

    /// The generated SwiftProtobuf form (protocol version CASTV2_1_0): what ``CastMessageWire`` writes byte for
    /// byte, kept as the reference its tests compare against.
    package var proto: ProtoCastMessage {
        var proto = ProtoCastMessage()
        proto.protocolVersion = .castv210
        proto.sourceID = sourceID
        proto.destinationID = destinationID
        proto.namespace = namespace
        switch payload {
        case .string(let text):
            proto.payloadType = .string
            proto.payloadUtf8 = text
        case .binary(let bytes):
            proto.payloadType = .binary
            proto.payloadBinary = Data(bytes)
        }
        return proto
    }
}

extension CastMessage.Payload {
    /// The payload as text: a string as it is, bytes as `<N bytes>`.
    public var text: String {
        switch self {
        case .string(let text): text
        case .binary(let bytes): "<\(bytes.count) bytes>"
        }
    }
}
