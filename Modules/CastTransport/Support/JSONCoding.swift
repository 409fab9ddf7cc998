/// JSON text ↔ ``JSONValue``, without Foundation.
///
/// The parser is strict about syntax but bounded: nesting deeper than ``JSONValue/maximumDepth`` is rejected
/// instead of recursing until the stack overflows (a 64 KiB frame can hold 32,000 nested arrays). The writer
/// sorts object keys so output is deterministic, and prints integral numbers without a fraction (`"requestId":3`).
extension JSONValue {
    /// The deepest nesting of arrays and objects the parser accepts.
    public static let maximumDepth = 256

    /// Parses JSON text.
    ///
    /// - Throws: ``CastTransportError`` with code ``CastTransportError/Code/invalidPayload`` saying where the text
    ///   stops being JSON.
    public init(parsing text: String) throws {
        // The string's own UTF-8, in place (a native string is not copied).
        var text = text
        self = try text.withUTF8 { bytes in
            var parser = JSONParser(bytes: bytes)
            return try parser.parseDocument()
        }
    }

    /// The compact JSON text of this value, object keys sorted.
    public var jsonString: String { Self.text { write(to: &$0) } }

    /// The JSON text of this object with `member` added (replacing a member of the same key), as if it were set
    /// first: how a request gets its `requestId` without copying its payload's dictionary. Other values are
    /// written as they are.
    package func jsonString(adding member: (key: String, value: JSONValue)) -> String {
        guard case .object(let members) = self else { return jsonString }
        return Self.text { Self.write(members: members, adding: member, to: &$0) }
    }

    /// Text written as UTF-8 bytes, made a `String` once: appending to a `String` piece by piece costs several
    /// times more (each append checks the grapheme boundary where the pieces meet).
    private static func text(_ write: (inout [UInt8]) -> Void) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(1024)
        write(&output)
        return String(decoding: output, as: UTF8.self)
    }

    private func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: value ? "true".utf8 : "false".utf8)
        case .number(let value): Self.write(number: value, to: &output)
        case .string(let value): Self.write(string: value, to: &output)
        case .array(let values):
            output.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                value.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members): Self.write(members: members, adding: nil, to: &output)
        }
    }

    private static func write(
        members: [String: JSONValue],
        adding extra: (key: String, value: JSONValue)?,
        to output: inout [UInt8]
    ) {
        output.append(UInt8(ascii: "{"))
        // Sorted as pairs (looking each key up again would hash it a second time), in temporary storage: on the
        // stack for an object of a few dozen members, where an array would be a heap allocation for each object
        // written.
        withUnsafeTemporaryAllocation(of: (key: String, value: JSONValue).self, capacity: members.count + 1) {
            storage in
            var count = 0
            for member in members where member.key != extra?.key {
                storage.initializeElement(at: count, to: member)
                count += 1
            }
            if let extra {
                storage.initializeElement(at: count, to: extra)
                count += 1
            }
            var sorted = UnsafeMutableBufferPointer(rebasing: storage[..<count])
            defer { sorted.deinitialize() }
            sorted.sort { $0.key < $1.key }
            for index in sorted.indices {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(string: sorted[index].key, to: &output)
                output.append(UInt8(ascii: ":"))
                sorted[index].value.write(to: &output)
            }
        }
        output.append(UInt8(ascii: "}"))
    }

    /// An integral number without a fraction (its digits written directly), any other as Swift's shortest
    /// round-tripping text; JSON has no NaN or infinity, so those become `null`.
    private static func write(number: Double, to output: inout [UInt8]) {
        guard number.isFinite else { return output.append(contentsOf: "null".utf8) }
        guard let exact = JSONValue.number(number).intValue else {
            return output.append(contentsOf: number.description.utf8)
        }
        var integer = Int64(exact)
        if integer < 0 {
            output.append(UInt8(ascii: "-"))
            integer = -integer
        }
        // At most 16 digits (2^53 has 16), written backwards into a fixed buffer.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(integer % 10)
                integer /= 10
            } while integer > 0
            output.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    private static func write(string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // The string's own UTF-8, in place. Most strings need no escape: copied whole. Only ASCII bytes are
        // escaped, so the bytes of a multi-byte character (all 0x80 and above) pass through unchanged.
        var string = string
        string.withUTF8 { bytes in
            if !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                return output.append(contentsOf: bytes)
            }
            let hex: StaticString = "0123456789abcdef"
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
                case UInt8(ascii: "\n"): output.append(contentsOf: #"\n"#.utf8)
                case UInt8(ascii: "\r"): output.append(contentsOf: #"\r"#.utf8)
                case UInt8(ascii: "\t"): output.append(contentsOf: #"\t"#.utf8)
                case ..<0x20:
                    output.append(contentsOf: #"\u00"#.utf8)
                    output.append(hex.utf8Start[Int(byte >> 4)])
                    output.append(hex.utf8Start[Int(byte & 0xF)])
                default: output.append(byte)
                }
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

/// Reads JSON from bytes that outlive it; every read of `bytes` is after a check of `index` against its count.
private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var depth = 0
    /// The members of the objects being parsed, innermost last.
    var pendingMembers: [(String, JSONValue)] = []

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func parseDocument() throws -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected text after the JSON value") }
        return value
    }

    private func error(_ what: String) -> CastTransportError {
        CastTransportError(.invalidPayload, "invalid JSON at byte \(index): \(what)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of text") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    private mutating func parseLiteral(_ word: StaticString, _ value: JSONValue) throws -> JSONValue {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count,
            bytes[index..<index + count].elementsEqual(UnsafeBufferPointer(start: word.utf8Start, count: count))
        else {
            throw error("expected \(word)")
        }
        index += count
        return value
    }

    private mutating func enter() throws {
        depth += 1
        guard depth <= JSONValue.maximumDepth else {
            throw error("nesting deeper than \(JSONValue.maximumDepth) levels")
        }
    }

    private mutating func parseObject() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object([:])
        }
        // Members gather on a stack shared by all nesting levels, then fill a dictionary sized once (growing one
        // member at a time rehashed it at every power of two). The stack starts with room for a media status's
        // open objects, so that it is allocated once per document rather than at every power of two.
        if pendingMembers.capacity == 0 { pendingMembers.reserveCapacity(32) }
        let start = pendingMembers.count
        defer {
            // One at a time: `removeSubrange` goes through the generic `replaceSubrange`, several times slower for
            // the few members of an object.
            while pendingMembers.count > start { pendingMembers.removeLast() }
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a key") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            pendingMembers.append((key, try parseValue()))
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                // A repeated key keeps its last value.
                var object = [String: JSONValue](minimumCapacity: pendingMembers.count - start)
                for (key, value) in pendingMembers[start...] { object[key] = value }
                return .object(object)
            } else {
                throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            } else {
                throw error("expected ',' or ']'")
            }
        }
    }

    private mutating func parseNumber() throws -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits() -> Int {
            let from = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - from
        }
        let integerStart = index
        let integerDigits = digits()
        guard integerDigits > 0 else { throw error("expected digits") }
        guard integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { throw error("leading zeros") }
        var fractionDigits = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            fractionDigits = digits()
            guard fractionDigits > 0 else { throw error("expected digits after '.'") }
        }
        var exponent = 0
        var exponentDigits = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            var sign = 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                if bytes[index] == UInt8(ascii: "-") { sign = -1 }
                index += 1
            }
            let exponentStart = index
            exponentDigits = digits()
            guard exponentDigits > 0 else { throw error("expected exponent digits") }
            if exponentDigits <= 4 {
                for byte in bytes[exponentStart..<index] { exponent = exponent * 10 + Int(byte - UInt8(ascii: "0")) }
                exponent *= sign
            }
        }
        if exponentDigits <= 4,
            let value = Self.exactValue(
                of: bytes[integerStart..<integerStart + integerDigits],
                fraction: fractionDigits > 0
                    ? bytes[integerStart + integerDigits + 1..<integerStart + integerDigits + 1 + fractionDigits] : nil,
                exponent: exponent
            )
        {
            return .number(start == integerStart ? value : -value)
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        // `Double("1e400")` is infinity: a number beyond Double's range is an error, not a value no JSON can write.
        guard let value = Double(text), value.isFinite else { throw error("number out of range") }
        return .number(value)
    }

    /// The value of these digits times 10^`exponent` without converting text, when that is exact: the digits make
    /// an integer of at most 2^53 (leading zeros aside), which a Double holds exactly, and 10^k up to 10^22 is exact
    /// too, so one multiplication or division rounds correctly (Clinger's fast path). `nil` otherwise.
    private static func exactValue(
        of integer: Slice<UnsafeBufferPointer<UInt8>>,
        fraction: Slice<UnsafeBufferPointer<UInt8>>?,
        exponent: Int
    ) -> Double? {
        var mantissa: UInt64 = 0
        var significantDigits = 0
        func add(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
            for byte in digits {
                if mantissa == 0 && byte == UInt8(ascii: "0") { continue }
                significantDigits += 1
                guard significantDigits <= 16 else { return false }
                mantissa = mantissa * 10 + UInt64(byte - UInt8(ascii: "0"))
            }
            return true
        }
        guard add(integer), fraction.map(add) ?? true, mantissa <= 1 << 53 else { return nil }
        if mantissa == 0 { return 0 }
        let scale = exponent - (fraction?.count ?? 0)
        guard (-22...22).contains(scale) else { return nil }
        let value = Double(mantissa)
        return scale < 0 ? value / powersOfTen[-scale] : value * powersOfTen[scale]
    }

    /// 10^0 … 10^22, every one exact in a Double.
    private static let powersOfTen: [Double] = (0...22).map { (0..<$0).reduce(1.0) { value, _ in value * 10 } }

    private mutating func parseHex4() throws -> UInt32 {
        guard bytes.count - index >= 4 else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    private mutating func parseString() throws -> String {
        index += 1
        // Most strings have no escape: decoded in one piece.
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"),
            bytes[index] >= 0x20
        {
            index += 1
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            index += 1
            return String(decoding: bytes[start..<index - 1], as: UTF8.self)
        }
        index = start
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flushRun() {
            scalars.append(contentsOf: String(decoding: bytes[runStart..<index], as: UTF8.self).unicodeScalars)
        }
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                flushRun()
                index += 1
                return String(scalars)
            }
            if byte < 0x20 { throw error("control character in string") }
            guard byte == UInt8(ascii: "\\") else {
                index += 1
                continue
            }
            flushRun()
            index += 1
            guard index < bytes.count else { throw error("unterminated escape") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try parseHex4()
                if (0xD800..<0xDC00).contains(code), bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u")
                {
                    let escapeStart = index
                    index += 2
                    let low = try parseHex4()
                    if (0xDC00..<0xE000).contains(low) {
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        index = escapeStart  // not a low half: that escape stands on its own
                    }
                }
                // Lone surrogates cannot be represented in a Swift String; substitute U+FFFD, as browsers do.
                scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
            default: throw error("invalid escape")
            }
            runStart = index
        }
    }
}
