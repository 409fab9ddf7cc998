// swift-cast — Apache-2.0

extension String {
    /// The string folded for a natural order, as the Cast dialog sorts device names and a file manager sorts file
    /// names: case, diacritics and width ignored, and each run of digits by value (`TV 2` before `TV 10`). Compare
    /// keys with `<`, and the strings themselves when keys tie. Written out because FoundationEssentials has no
    /// locale-aware comparison.
    package var naturalSortKey: String {
        var key = ""
        var digits = ""
        func flushDigits() {
            guard !digits.isEmpty else { return }
            let value = digits.drop { $0 == "0" }
            let significant = value.isEmpty ? "0" : String(value)
            // A marker below every letter, then the length, so that shorter numbers sort first.
            key += "\u{1}" + String(repeating: "0", count: max(0, 3 - String(significant.count).count))
            key += String(significant.count) + significant
            digits = ""
        }
        for scalar in lowercased().unicodeScalars {
            let folded = Self.foldedScalar(scalar)
            guard let folded else { continue }
            if ("0"..."9").contains(folded) {
                digits.unicodeScalars.append(folded)
            } else {
                flushDigits()
                key.unicodeScalars.append(folded)
            }
        }
        flushDigits()
        return key
    }

    /// `scalar` without its width or diacritic, or `nil` for a combining mark (a decomposed diacritic).
    private static func foldedScalar(_ scalar: Unicode.Scalar) -> Unicode.Scalar? {
        // Fullwidth ASCII (U+FF01…U+FF5E) and the ideographic space.
        if (0xFF01...0xFF5E).contains(scalar.value) { return Unicode.Scalar(scalar.value - 0xFEE0) }
        if scalar.value == 0x3000 { return " " }
        if scalar.properties.canonicalCombiningClass != .notReordered { return nil }
        guard scalar.value >= 0xC0 else { return scalar }
        // A precomposed Latin letter names its base letter: "LATIN SMALL LETTER E WITH ACUTE" is an "e".
        guard let name = scalar.properties.name, name.hasPrefix("LATIN "), let with = name.firstRange(of: " WITH ")
        else { return scalar }
        let base = name[..<with.lowerBound].split(separator: " ")
        guard base.count == 4, base[1] == "SMALL" || base[1] == "CAPITAL", base[2] == "LETTER", base[3].count == 1,
            let letter = base[3].unicodeScalars.first, letter.isASCII
        else { return scalar }
        return Unicode.Scalar(letter.value + (base[1] == "SMALL" ? 0x20 : 0))
    }
}
