// swift-cast — Apache-2.0

/// Checks on a document's raw bytes that run before libxml2 sees them: size, UTF-8, and the DOCTYPE.
///
/// Hostile constructs are rejected here, from the bytes, so no parser code path that could expand or fetch
/// anything is ever reached: entity declarations of any kind (entity-expansion bombs start with them, XXE is one),
/// and external DTDs. A DOCTYPE that declares nothing (`<!DOCTYPE castProfile>`) is harmless and allowed. The
/// parser wrapper checks the parsed DTD again afterwards, as a second line of defence.
enum DocumentPrescan {
    /// Runs every check; throws the first failure, located in `file`.
    static func check(_ bytes: [UInt8], file: String, limits: DocumentLimits) throws(CastConfigError) {
        guard bytes.count <= limits.maximumByteCount else {
            throw CastConfigError(
                code: .tooLarge,
                message: "document is \(bytes.count) bytes; the limit is \(limits.maximumByteCount) bytes",
                file: file
            )
        }
        let lines = LineTable(bytes)
        if let offset = firstInvalidUTF8Offset(in: bytes) {
            throw CastConfigError(
                .invalidEncoding,
                "invalid UTF-8 byte 0x\(String(bytes[offset], radix: 16, uppercase: true)); documents must be UTF-8",
                at: lines.location(ofByte: offset, file: file)
            )
        }
        var scanner = PrologScanner(bytes: bytes)
        if let finding = scanner.findHostileConstruct() {
            throw CastConfigError(finding.code, finding.message, at: lines.location(ofByte: finding.offset, file: file))
        }
    }

    /// The offset of the first byte that does not belong to a valid UTF-8 sequence, or `nil` if all are valid.
    static func firstInvalidUTF8Offset(in bytes: [UInt8]) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                offset += encoded.count
            case .emptyInput:
                return nil
            case .error:
                return offset
            }
        }
    }
}

/// What the prolog scan found.
struct PrescanFinding {
    var code: CastConfigError.Code
    var message: String
    var offset: Int
}

/// A forward scanner over the document prolog: the XML declaration, comments, processing instructions and the
/// DOCTYPE, up to the root element's start tag.
private struct PrologScanner {
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
        // A UTF-8 byte order mark is allowed and skipped.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
        }
    }

    mutating func findHostileConstruct() -> PrescanFinding? {
        if hasPrefix("<?xml"), let finding = checkXMLDeclaration() {
            return finding
        }
        while index < bytes.count {
            skipWhitespace()
            if hasPrefix("<!--") {
                guard skip(past: "-->") else { return nil }  // unterminated: libxml2 reports it
            } else if hasPrefix("<?") {
                guard skip(past: "?>") else { return nil }
            } else if hasPrefix("<!DOCTYPE") {
                return checkDoctype()
            } else {
                // The root element (or garbage, which libxml2 reports): the prolog is over.
                return nil
            }
        }
        return nil
    }

    /// Rejects an XML declaration naming an encoding other than UTF-8.
    private mutating func checkXMLDeclaration() -> PrescanFinding? {
        let start = index
        guard let end = find("?>", from: index) else { return nil }
        let declaration = String(decoding: bytes[start..<end], as: UTF8.self)
        index = end + 2
        guard let range = declaration.firstRange(of: "encoding") else { return nil }
        let rest = declaration[range.upperBound...].drop(while: { $0 == " " || $0 == "=" || $0 == "\t" })
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        let name = rest.dropFirst().prefix(while: { $0 != quote })
        guard name.lowercased() == "utf-8" else {
            let offset = start + declaration.utf8.distance(from: declaration.startIndex, to: range.lowerBound)
            return PrescanFinding(
                code: .invalidEncoding,
                message: "the XML declaration names encoding '\(name)'; documents must be UTF-8",
                offset: offset
            )
        }
        return nil
    }

    /// Rejects a DOCTYPE with an external identifier or any entity declaration in its internal subset.
    private mutating func checkDoctype() -> PrescanFinding? {
        index += "<!DOCTYPE".utf8.count
        skipWhitespace()
        skipName()
        skipWhitespace()
        if hasPrefix("SYSTEM") || hasPrefix("PUBLIC") {
            return PrescanFinding(
                code: .externalDTD,
                message: "the DOCTYPE refers to an external DTD; external DTDs are never loaded, so the document is "
                    + "rejected (remove the DOCTYPE)",
                offset: index
            )
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "[") else {
            return nil
        }
        index += 1
        // The internal subset, declaration by declaration: only comments, PIs, parameter-entity references and
        // markup declarations may appear, so anything else means the subset is not understood, and then any
        // `<!ENTITY` later in the document rejects it (strict rather than bypassable).
        while index < bytes.count {
            skipWhitespace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "]") {
                return nil
            } else if hasPrefix("<!--") {
                guard skip(past: "-->") else { return nil }
            } else if hasPrefix("<?") {
                guard skip(past: "?>") else { return nil }
            } else if hasPrefix("<!ENTITY") {
                return entityFinding()
            } else if hasPrefix("<!") {
                guard skipDeclaration() else { return nil }
            } else if bytes[index] == UInt8(ascii: "%") {
                guard skip(past: ";") else { return nil }
            } else {
                guard let entity = find("<!ENTITY", from: index) else { return nil }
                index = entity
                return entityFinding()
            }
        }
        return nil
    }

    /// Skips a markup declaration (`<!ELEMENT …>`, `<!ATTLIST …>`, `<!NOTATION …>`) up to its `>`, honouring quoted
    /// literals, which may contain `>` and `]`.
    private mutating func skipDeclaration() -> Bool {
        var quote: UInt8? = nil
        index += 2
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                return true
            }
        }
        return false
    }

    /// Classifies the `<!ENTITY` at `index` as an external or an internal entity declaration.
    private mutating func entityFinding() -> PrescanFinding {
        let start = index
        index += "<!ENTITY".utf8.count
        skipWhitespace()
        var isParameterEntity = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "%") {
            isParameterEntity = true
            index += 1
            skipWhitespace()
        }
        let nameStart = index
        skipName()
        let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
        skipWhitespace()
        let kind = isParameterEntity ? "parameter entity" : "entity"
        if hasPrefix("SYSTEM") || hasPrefix("PUBLIC") {
            return PrescanFinding(
                code: .externalEntity,
                message: "the DOCTYPE declares external \(kind) '\(name)'; external entities are never expanded, "
                    + "so the document is rejected",
                offset: start
            )
        }
        return PrescanFinding(
            code: .entityDeclaration,
            message: "the DOCTYPE declares \(kind) '\(name)'; entity declarations are not allowed in configuration "
                + "documents",
            offset: start
        )
    }

    private func hasPrefix(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let pointer = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != pointer[offset] {
            return false
        }
        return true
    }

    private func find(_ literal: StaticString, from start: Int) -> Int? {
        let needle = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        var position = start
        search: while position + needle.count <= bytes.count {
            for offset in 0..<needle.count where bytes[position + offset] != needle[offset] {
                position += 1
                continue search
            }
            return position
        }
        return nil
    }

    private mutating func skip(past literal: StaticString) -> Bool {
        guard let end = find(literal, from: index + 1) else {
            index = bytes.count
            return false
        }
        index = end + literal.utf8CodeUnitCount
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) {
            index += 1
        }
    }

    private mutating func skipName() {
        while index < bytes.count {
            let byte = bytes[index]
            if [0x20, 0x09, 0x0A, 0x0D].contains(byte) || byte == UInt8(ascii: "[") || byte == UInt8(ascii: ">")
                || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
            {
                return
            }
            index += 1
        }
    }
}

/// Maps byte offsets in a document to 1-based lines and character columns.
struct LineTable: Sendable {
    private let bytes: [UInt8]
    /// The byte offset at which each line starts.
    private let lineStarts: [Int]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        var starts = [0]
        for (offset, byte) in bytes.enumerated() where byte == 0x0A {
            starts.append(offset + 1)
        }
        lineStarts = starts
    }

    /// The line and column of the byte at `offset`; the column counts characters (UTF-8 lead bytes), not bytes.
    func location(ofByte offset: Int, file: String) -> DocumentLocation {
        let clamped = max(0, min(offset, bytes.count))
        // The last line start at or before the offset.
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= clamped {
                low = middle
            } else {
                high = middle - 1
            }
        }
        let start = lineStarts[low]
        let column = bytes[start..<clamped].reduce(1) { count, byte in (byte & 0xC0) == 0x80 ? count : count + 1 }
        return DocumentLocation(file: file, line: low + 1, column: column)
    }

    /// The byte offset at which 1-based `line` starts, if the document has that line.
    func startOfLine(_ line: Int) -> Int? {
        guard line >= 1, line <= lineStarts.count else { return nil }
        return lineStarts[line - 1]
    }
}
