extension String {
    /// The text with each control character (C0, DEL and C1: escapes, carriage returns, newlines, bells) replaced
    /// by a space: names and titles come from any device or sender on the network, and printed as they are, an
    /// escape sequence in a title would clear a terminal or retitle its window, and a newline would forge a line
    /// of output.
    package var withoutControlCharacters: String {
        guard unicodeScalars.contains(where: \.isControlCharacter) else { return self }
        var text = String.UnicodeScalarView()
        for scalar in unicodeScalars { text.append(scalar.isControlCharacter ? " " : scalar) }
        return String(text)
    }
}

extension Unicode.Scalar {
    fileprivate var isControlCharacter: Bool { value < 0x20 || (0x7F...0x9F).contains(value) }
}
