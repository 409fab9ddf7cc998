// swift-cast — Apache-2.0

/// Bounds on what a profile or style document may be, so a hostile or broken document fails fast and cheaply.
///
/// The defaults are far above what any real profile needs (the examples are a few kilobytes and nest four
/// levels) and far below what could hurt the process.
///
/// ```swift
/// var limits = DocumentLimits()
/// limits.maximumByteCount = 64 * 1024
/// let profile = try CastProfile(contentsOfFile: path, limits: limits)
/// ```
public struct DocumentLimits: Sendable, Hashable {
    /// The largest document accepted, in bytes. A larger file is rejected with
    /// ``CastConfigError/Code/tooLarge`` from its size alone, before it is read or parsed. Defaults to 1 MiB.
    public var maximumByteCount = 1 << 20
    /// The deepest element nesting accepted (the root element is depth 1). Deeper documents fail with
    /// ``CastConfigError/Code/tooDeep`` while parsing, at the first element too deep. Defaults to 64; values above
    /// 256 (libxml2's own limit without `XML_PARSE_HUGE`, which is never set) act as 256.
    public var maximumDepth = 64
    /// The longest `extends` chain accepted, counting the document itself: with the default 8, a document can
    /// extend one that extends another, and so on, seven levels down. Longer chains fail with
    /// ``CastConfigError/Code/extendsTooDeep``.
    public var maximumExtendsDepth = 8

    /// The defaults: 1 MiB, 64 levels of elements, chains of 8 documents.
    public init() {}
}
