import NIOCore

/// The Cast v2 frame limits.
public enum CastFrame {
    /// The largest frame body a peer may send or receive: 64 KiB, as Chrome and openscreen enforce.
    public static let maximumBodyLength = 65_536
    /// The size of the big-endian length prefix.
    public static let headerLength = 4
}

/// Splits the TLS plaintext stream into `CastMessage`s: a 4-byte big-endian length, then that many bytes of
/// protobuf.
///
/// The declared length is checked against ``CastFrame/maximumBodyLength`` before anything is buffered, so a
/// hostile length costs no memory. Each malformed frame throws its own ``CastTransportError`` code; the
/// connection handler then closes the connection.
struct CastMessageDecoder: ByteToMessageDecoder {
    typealias InboundOut = CastMessage

    var maximumBodyLength = CastFrame.maximumBodyLength
    /// The connection's recent ids, reused by the messages that repeat them.
    private var recentIDs = CastMessageWire.RecentIDs()

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let message = try decodeFrame(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(message))
        return .continue
    }

    mutating func decodeLast(
        context: ChannelHandlerContext,
        buffer: inout ByteBuffer,
        seenEOF: Bool
    ) throws -> DecodingState {
        if let message = try decodeFrame(from: &buffer) {
            context.fireChannelRead(wrapInboundOut(message))
            return .continue
        }
        if buffer.readableBytes > 0 {
            let count = buffer.readableBytes
            buffer.moveReaderIndex(forwardBy: count)
            throw Self.truncation(count)
        }
        return .needMoreData
    }

    /// The error for a connection that ended `count` bytes into an unfinished frame.
    static func truncation(_ count: Int) -> CastTransportError {
        CastTransportError(.truncatedFrame, "the connection ended \(count) bytes into an unfinished frame")
    }

    /// One frame from `buffer`, or `nil` when more bytes are needed. Frames with an empty body are skipped: no
    /// sender should write them, but some peers' readers tolerate them, so ours does too (go-chromecast skips them).
    mutating func decodeFrame(from buffer: inout ByteBuffer) throws -> CastMessage? {
        var length: UInt32 = 0
        while length == 0 {
            guard let declared = buffer.getInteger(at: buffer.readerIndex, endianness: .big, as: UInt32.self) else {
                return nil
            }
            length = declared
            if declared == 0 { buffer.moveReaderIndex(forwardBy: CastFrame.headerLength) }
        }
        guard length <= maximumBodyLength else {
            throw CastTransportError(
                .frameTooLarge,
                "a frame declared \(length) bytes, more than the \(maximumBodyLength)-byte limit"
            )
        }
        guard buffer.readableBytes >= CastFrame.headerLength + Int(length) else { return nil }
        buffer.moveReaderIndex(forwardBy: CastFrame.headerLength)
        defer { buffer.moveReaderIndex(forwardBy: Int(length)) }
        return try buffer.withUnsafeReadableBytes { bytes in
            try Self.decodeMessage(UnsafeRawBufferPointer(rebasing: bytes[..<Int(length)]), recentIDs: &recentIDs)
        }
    }

    /// Decodes and validates one frame body.
    static func decodeMessage(_ body: [UInt8]) throws -> CastMessage {
        var recentIDs = CastMessageWire.RecentIDs()
        return try body.withUnsafeBytes { try decodeMessage($0, recentIDs: &recentIDs) }
    }

    /// Decodes and validates one frame body.
    static func decodeMessage(
        _ body: UnsafeRawBufferPointer,
        recentIDs: inout CastMessageWire.RecentIDs
    ) throws -> CastMessage {
        let fields: CastMessageWire.Fields
        do {
            fields = try CastMessageWire.readFields(body, recent: &recentIDs)
        } catch {
            switch error {
            case .missingRequiredFields:
                throw CastTransportError(.missingRequiredFields, "a frame lacks required CastMessage fields")
            case .malformed(let reason):
                throw CastTransportError(.malformedMessage, "a frame is not a CastMessage protobuf: \(reason)")
            }
        }
        return try CastMessage(validating: fields)
    }
}

/// Frames outgoing `CastMessage`s; a message over the 64 KiB limit fails its write with
/// ``CastTransportError/Code/messageTooLarge`` instead of producing a frame peers would reject.
struct CastMessageEncoder: MessageToByteEncoder {
    typealias OutboundIn = CastMessage

    func encode(data: CastMessage, out: inout ByteBuffer) throws {
        let length = try data.checkFrameSize()
        out.reserveCapacity(minimumWritableBytes: CastFrame.headerLength + length)
        out.writeInteger(UInt32(length), endianness: .big)
        CastMessageWire.writeBody(of: data, to: &out)
    }
}

extension CastMessage {
    /// Throws ``CastTransportError/Code/messageTooLarge`` when the encoder would refuse this message, so a
    /// message can be checked before it is queued; answers the length of its body.
    @discardableResult
    package func checkFrameSize() throws -> Int {
        let length = CastMessageWire.bodyLength(of: self)
        guard length <= CastFrame.maximumBodyLength else {
            throw CastTransportError(
                .messageTooLarge,
                "a \(length)-byte message on \(namespace) exceeds the \(CastFrame.maximumBodyLength)-byte limit"
            )
        }
        return length
    }

    /// The complete frame for this message, length prefix included (for tests, logs and raw writers).
    public func encodedFrame() throws -> [UInt8] {
        var buffer = ByteBuffer()
        try CastMessageEncoder().encode(data: self, out: &buffer)
        return Array(buffer.readableBytesView)
    }

    /// Decodes one complete frame (length prefix included), with the same checks the connection applies.
    public init(frame: [UInt8]) throws {
        if frame.count >= CastFrame.headerLength, frame.prefix(CastFrame.headerLength).allSatisfy({ $0 == 0 }) {
            throw CastTransportError(.emptyFrame, "the frame declares an empty body")
        }
        var buffer = ByteBuffer(bytes: frame)
        var decoder = CastMessageDecoder()
        guard let message = try decoder.decodeFrame(from: &buffer) else {
            throw CastTransportError(.truncatedFrame, "the frame is shorter than its declared length")
        }
        guard buffer.readableBytes == 0 else {
            throw CastTransportError(.malformedMessage, "\(buffer.readableBytes) bytes follow the frame")
        }
        self = message
    }
}
