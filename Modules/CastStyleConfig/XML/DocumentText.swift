// swift-cast — Apache-2.0

/// A document's bytes with what is needed to point into them: its name and a line table.
struct DocumentText: Sendable {
    /// The whole document.
    let bytes: [UInt8]
    /// The name used in errors.
    let file: String
    /// Byte offsets to lines and columns.
    let lines: LineTable

    init(bytes: [UInt8], file: String) {
        self.bytes = bytes
        self.file = file
        self.lines = LineTable(bytes)
    }

    /// The offset of the last `<` at or before `offset`: where the start tag being parsed begins.
    func lastOpeningBracket(atOrBefore offset: Int) -> Int? {
        var index = min(offset, bytes.count - 1)
        while index >= 0 {
            if bytes[index] == UInt8(ascii: "<") {
                return index
            }
            index -= 1
        }
        return nil
    }

    /// Where attribute `name` is written in the start tag beginning at `tagOffset`, if it is there.
    func location(ofAttribute name: String, inTagAt tagOffset: Int) -> DocumentLocation? {
        let target = Array(name.utf8)
        var index = tagOffset + 1
        skip(while: { !isSpace($0) && $0 != UInt8(ascii: ">") && $0 != UInt8(ascii: "/") }, from: &index)
        while index < bytes.count {
            skip(while: isSpace, from: &index)
            guard index < bytes.count, bytes[index] != UInt8(ascii: ">"), bytes[index] != UInt8(ascii: "/") else {
                return nil
            }
            let nameStart = index
            skip(while: { !isSpace($0) && $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: ">") }, from: &index)
            var written = Array(bytes[nameStart..<index])
            if let colon = written.lastIndex(of: UInt8(ascii: ":")) {
                written = Array(written[(colon + 1)...])
            }
            if written == target {
                return lines.location(ofByte: nameStart, file: file)
            }
            skip(while: { isSpace($0) || $0 == UInt8(ascii: "=") }, from: &index)
            guard index < bytes.count else { return nil }
            let quote = bytes[index]
            guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else { return nil }
            index += 1
            skip(while: { $0 != quote }, from: &index)
            index += 1
        }
        return nil
    }

    private func skip(while predicate: (UInt8) -> Bool, from index: inout Int) {
        while index < bytes.count, predicate(bytes[index]) {
            index += 1
        }
    }
}

private func isSpace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
}
