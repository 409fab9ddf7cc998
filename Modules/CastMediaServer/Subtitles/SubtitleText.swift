/// The text of a subtitle file, whatever encoding and line endings the tool that wrote it chose.
///
/// Subtitle files rarely say how they are encoded: downloads are UTF-8 with or without a byte order mark, tools
/// on Windows write UTF-16 or the ANSI code page. The bytes are read in this order:
///
/// 1. a byte order mark (UTF-8, UTF-16 little or big endian) decides;
/// 2. without one, NUL bytes on every other position mean UTF-16 (ASCII-heavy subtitle text makes that reliable);
/// 3. bytes that are valid UTF-8 are UTF-8;
/// 4. anything else is Windows-1252, which is Latin-1 plus printable characters in 0x80–0x9F.
///
/// Line endings are then made `\n` (CRLF and lone CR both), and every U+FEFF is dropped: a byte order mark in the
/// middle of the text comes from files pasted together and is never meant to be shown.
struct SubtitleText: Sendable, Hashable {
    /// How the bytes were read.
    enum Encoding: Sendable, Hashable {
        case utf8
        case utf16LittleEndian
        case utf16BigEndian
        case windows1252
    }

    /// The decoded text, with `\n` line endings only.
    var string: String
    /// How the bytes were read.
    var encoding: Encoding

    /// Decodes subtitle file bytes; never fails (undecodable sequences become U+FFFD).
    init(decoding bytes: [UInt8]) {
        let raw: String
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            encoding = .utf8
            raw = String(decoding: bytes.dropFirst(3), as: UTF8.self)
        } else if bytes.starts(with: [0xFF, 0xFE]) {
            encoding = .utf16LittleEndian
            raw = Self.utf16(bytes.dropFirst(2), bigEndian: false)
        } else if bytes.starts(with: [0xFE, 0xFF]) {
            encoding = .utf16BigEndian
            raw = Self.utf16(bytes.dropFirst(2), bigEndian: true)
        } else if let bigEndian = Self.bomlessUTF16(bytes) {
            encoding = bigEndian ? .utf16BigEndian : .utf16LittleEndian
            raw = Self.utf16(bytes[...], bigEndian: bigEndian)
        } else if let utf8 = String(validating: bytes, as: UTF8.self) {
            encoding = .utf8
            raw = utf8
        } else {
            encoding = .windows1252
            raw = Self.windows1252(bytes)
        }
        string = Self.normalizingLineEndings(raw)
    }

    /// The text split at `\n`; line `n` (1-based, as editors count) is `lines[n - 1]`.
    var lines: [Substring] { string.split(separator: "\n", omittingEmptySubsequences: false) }

    // MARK: - Decoders

    /// Whether BOM-less bytes look like UTF-16: `true` for big endian, `false` for little endian, `nil` for neither.
    ///
    /// Subtitle text is mostly ASCII (timings, digits, punctuation), so UTF-16 has a zero high byte in most code
    /// units; UTF-8 and single-byte encodings have no zero bytes at all.
    private static func bomlessUTF16(_ bytes: [UInt8]) -> Bool? {
        let pairs = min(bytes.count / 2, 4096)
        guard pairs > 0 else { return nil }
        var evenZeros = 0
        var oddZeros = 0
        for pair in 0..<pairs {
            if bytes[2 * pair] == 0 { evenZeros += 1 }
            if bytes[2 * pair + 1] == 0 { oddZeros += 1 }
        }
        if oddZeros * 10 >= pairs * 3 && evenZeros * 10 < oddZeros { return false }
        if evenZeros * 10 >= pairs * 3 && oddZeros * 10 < evenZeros { return true }
        return nil
    }

    /// UTF-16 code units from byte pairs; an odd last byte is dropped, lone surrogates become U+FFFD.
    private static func utf16(_ bytes: ArraySlice<UInt8>, bigEndian: Bool) -> String {
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            let first = UInt16(bytes[index])
            let second = UInt16(bytes[index + 1])
            units.append(bigEndian ? first << 8 | second : second << 8 | first)
            index += 2
        }
        return String(decoding: units, as: UTF16.self)
    }

    /// What Windows-1252 puts in 0x80–0x9F; the five unassigned bytes keep their Latin-1 (C1 control) meaning.
    private static let windows1252High: [UInt32] = [
        0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
        0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
        0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
        0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
    ]

    private static func windows1252(_ bytes: [UInt8]) -> String {
        var scalars = String.UnicodeScalarView()
        for byte in bytes {
            let value = (0x80...0x9F).contains(byte) ? windows1252High[Int(byte) - 0x80] : UInt32(byte)
            if let scalar = Unicode.Scalar(value) { scalars.append(scalar) }
        }
        return String(scalars)
    }

    /// `\r\n` and lone `\r` become `\n`; U+FEFF is dropped.
    private static func normalizingLineEndings(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\u{FEFF}" }) else { return text }
        var scalars = String.UnicodeScalarView()
        var afterCarriageReturn = false
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r":
                scalars.append("\n")
                afterCarriageReturn = true
                continue
            case "\n" where afterCarriageReturn:
                break
            case "\u{FEFF}":
                continue
            default:
                scalars.append(scalar)
            }
            afterCarriageReturn = false
        }
        return String(scalars)
    }
}
