/// A `Range` request header, parsed (RFC 9110 §14): one range of bytes, or none the server must honor.
///
/// Only single ranges are honored; a multi-range request gets the whole representation, which the RFC allows
/// and every Cast player accepts (they only ever ask for one range).
public enum ByteRangeRequest: Sendable, Hashable {
    /// `bytes=first-last` (last inclusive) or `bytes=first-` (`last` nil).
    case from(UInt64, through: UInt64?)
    /// `bytes=-count`: the final `count` bytes.
    case suffix(UInt64)

    /// Parses a `Range` header value; `nil` when it is absent, malformed, not in bytes or asks for several ranges
    /// (all answered with the whole representation).
    public init?(header: String?) {
        guard let header else { return nil }
        let trimmed = header.trimmingASCIISpaces()
        guard trimmed.lowercased().hasPrefix("bytes=") else { return nil }
        let spec = trimmed.dropFirst(6).trimmingASCIISpaces()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash].trimmingASCIISpaces()
        let last = spec[spec.index(after: dash)...].trimmingASCIISpaces()
        if first.isEmpty {
            guard let count = UInt64(digits: last) else { return nil }
            self = .suffix(count)
        } else {
            guard let lower = UInt64(digits: first) else { return nil }
            if last.isEmpty {
                self = .from(lower, through: nil)
            } else {
                guard let upper = UInt64(digits: last), upper >= lower else { return nil }
                self = .from(lower, through: upper)
            }
        }
    }

    /// The bytes to send of a representation of `size` bytes (answered 206 with `Content-Range`, even when they
    /// are all of it, as players asking `bytes=0-` expect), or `nil` when none can be (416, `bytes */size`).
    public func resolve(size: UInt64) -> ClosedRange<UInt64>? {
        guard size > 0 else { return nil }
        switch self {
        case .from(let lower, let upper):
            guard lower < size else { return nil }
            return lower...min(upper ?? (size - 1), size - 1)
        case .suffix(let count):
            guard count > 0 else { return nil }
            return (size - min(count, size))...(size - 1)
        }
    }
}

extension UInt64 {
    /// Only ASCII digits (no sign, no spaces), and no overflow.
    init?(digits: Substring) {
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        guard let value = UInt64(digits) else { return nil }
        self = value
    }
}

extension StringProtocol {
    func trimmingASCIISpaces() -> Substring {
        let view = self[...]
        let start = view.firstIndex { $0 != " " && $0 != "\t" } ?? view.endIndex
        let end = view.lastIndex { $0 != " " && $0 != "\t" }.map { view.index(after: $0) } ?? start
        return Substring(view[start..<Swift.max(start, end)])
    }
}
