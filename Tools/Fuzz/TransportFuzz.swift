// swift-cast — Apache-2.0

import CastTransport

/// The transport's parsers: the frame decoder, the CastMessage protobuf, and JSON.
enum TransportFuzz {
    /// The input as bytes off the TLS stream. First as exactly one frame (`CastMessage(frame:)`, the decoder's
    /// own checks: empty, oversized, truncated, trailing bytes), then as a stream cut at each declared length the
    /// way the connection's `CastFrameHandler` cuts it, stopping at the first bad frame as the connection
    /// does. Every message that decodes must re-encode to a frame that decodes to the same message.
    static func frames(_ bytes: [UInt8]) {
        if let message = try? CastMessage(frame: bytes) { check(message) }
        var offset = 0
        while bytes.count - offset >= CastFrame.headerLength {
            let length = bytes[offset..<offset + CastFrame.headerLength].reduce(0) { $0 << 8 | Int($1) }
            if length == 0 {
                // Skipped, as the connection skips empty frames.
                offset += CastFrame.headerLength
                continue
            }
            guard length <= CastFrame.maximumBodyLength,
                bytes.count - offset - CastFrame.headerLength >= length
            else { return }
            let end = offset + CastFrame.headerLength + length
            guard let message = try? CastMessage(frame: Array(bytes[offset..<end])) else { return }
            check(message)
            offset = end
        }
    }

    /// The input as one frame body (what follows the length prefix): the protobuf decoding and the message
    /// validation, reached through the public frame decoder.
    static func castMessage(_ bytes: [UInt8]) {
        guard bytes.count <= CastFrame.maximumBodyLength else { return }
        let count = UInt32(bytes.count)
        let prefix = (0..<4).map { UInt8(truncatingIfNeeded: count >> (24 - 8 * $0)) }
        if let message = try? CastMessage(frame: prefix + bytes) { check(message) }
    }

    /// The input as a JSON payload: the parser, then the writer (its output must parse and print the same).
    static func json(_ bytes: [UInt8]) {
        guard let value = FuzzInput.json(bytes) else { return }
        FuzzInput.checkWritable(value)
        _ = value.hashValue
    }

    /// What the package does with a decoded message, plus the round trip.
    static func check(_ message: CastMessage) {
        _ = message.description
        if let json = try? message.json() { FuzzInput.checkWritable(json) }
        let frame: [UInt8]
        do {
            frame = try message.encodedFrame()
        } catch {
            fatalError("a message decoded from a valid frame does not encode: \(error)")
        }
        guard let again = try? CastMessage(frame: frame) else {
            fatalError("a re-encoded frame does not decode: \(message)")
        }
        precondition(again == message, "a frame's round trip changed the message: \(message) → \(again)")
    }
}
