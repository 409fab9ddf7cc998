/// Big-endian reading over a datagram, failing with ``CastStreamingError/Code/malformedPacket`` at its end.
struct ByteReader {
    let bytes: [UInt8]
    var offset: Int
    let end: Int

    init(_ bytes: [UInt8], from offset: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        self.offset = offset
        self.end = end ?? bytes.count
    }

    var remaining: Int { end - offset }

    mutating func uint8(_ what: @autoclosure () -> String = "a byte") throws -> UInt8 {
        guard remaining >= 1 else { throw Self.truncated(what()) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16(_ what: @autoclosure () -> String = "a 16-bit field") throws -> UInt16 {
        guard remaining >= 2 else { throw Self.truncated(what()) }
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    mutating func uint32(_ what: @autoclosure () -> String = "a 32-bit field") throws -> UInt32 {
        guard remaining >= 4 else { throw Self.truncated(what()) }
        defer { offset += 4 }
        return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func uint64(_ what: @autoclosure () -> String = "a 64-bit field") throws -> UInt64 {
        let high = try uint32(what())
        return UInt64(high) << 32 | UInt64(try uint32(what()))
    }

    mutating func take(_ count: Int, _ what: @autoclosure () -> String = "bytes") throws -> ArraySlice<UInt8> {
        guard count >= 0, remaining >= count else { throw Self.truncated(what()) }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    static func truncated(_ what: String) -> CastStreamingError {
        CastStreamingError(.malformedPacket, "the packet ends inside \(what)")
    }
}

extension Array where Element == UInt8 {
    mutating func append(bigEndian value: UInt16) {
        append(UInt8(value >> 8))
        append(UInt8(value & 0xFF))
    }

    mutating func append(bigEndian value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func append(bigEndian value: UInt64) {
        append(bigEndian: UInt32(truncatingIfNeeded: value >> 32))
        append(bigEndian: UInt32(truncatingIfNeeded: value))
    }
}
