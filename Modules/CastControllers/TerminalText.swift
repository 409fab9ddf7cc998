/// Fitting styled text to a terminal's width.
enum TerminalText {
    /// `line` cut to `columns` cells, its escape sequences (colours) kept and not counted; a cut line ends with a
    /// reset, so no colour runs on. A line longer than the terminal wraps, and a controller that redraws its lines in
    /// place then leaves the wrapped rows behind on every redraw.
    static func clipped(_ line: String, toColumns columns: Int) -> String {
        var result = String.UnicodeScalarView()
        var used = 0
        var scalars = line.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            if scalar == "\u{1B}" {
                // CSI: ESC [ parameters… final byte (0x40–0x7E), copied whole.
                result.append(scalar)
                guard let next = scalars.next() else { break }
                result.append(next)
                guard next == "[" else { continue }
                while let part = scalars.next() {
                    result.append(part)
                    if (0x40...0x7E).contains(part.value) { break }
                }
                continue
            }
            let width = cells(scalar)
            if used + width > columns {
                result.append(contentsOf: "\u{1B}[0m".unicodeScalars)
                return String(result)
            }
            used += width
            result.append(scalar)
        }
        return String(result)
    }

    /// The cells a scalar takes: none for combining marks and joiners, two for wide East Asian characters and most
    /// emoji, one otherwise (an approximation of wcwidth that needs no locale).
    static func cells(_ scalar: Unicode.Scalar) -> Int {
        switch scalar.value {
        case 0x0300...0x036F, 0x200B...0x200F, 0xFE00...0xFE0F: return 0
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default: return 1
        }
    }
}
