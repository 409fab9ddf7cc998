// swift-cast — Apache-2.0

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Text helpers the modules and apps of this package share, so none of them needs classic Foundation (whose string
// functions link ICU and its data) for trimming or number formatting.

extension StringProtocol {
    /// The text without leading and trailing whitespace (spaces, tabs, line breaks).
    package func trimmingWhitespace() -> SubSequence {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
            let last = lastIndex(where: { !$0.isWhitespace })
        else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}

extension String {
    /// `format` filled in as C's `printf` does (`%.3f`, `%05d` with an `Int32`), in the C locale: `String(format:)`
    /// without classic Foundation.
    package init(printf format: String, _ arguments: any CVarArg...) {
        var buffer = [CChar](repeating: 0, count: 256)
        var length = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        if length >= buffer.count {
            buffer = [CChar](repeating: 0, count: Int(length) + 1)
            length = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        }
        self = length < 0 ? "" : String(decoding: buffer[0..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
