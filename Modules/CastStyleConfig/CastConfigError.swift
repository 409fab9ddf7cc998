// swift-cast — Apache-2.0

/// The one error type of CastStyleConfig: what went wrong, and where in which document.
///
/// A struct with an open set of codes rather than an enum, so new failure kinds can be added without breaking
/// clients that switch exhaustively. Every failure to read, parse, validate or map a profile or style document is
/// one of these; nothing falls back to defaults silently.
///
/// ``description`` is ready to print, in the form editors and compilers use:
///
/// ```
/// profile.xml: line 12, column 5: element 'heartbeat': attribute 'interval' must be a duration like 5s or 500ms
/// ```
public struct CastConfigError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure, stable across releases, for programmatic handling and tests.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case fileNotFound, unreadableFile, tooLarge, invalidEncoding, invalidXML, tooDeep
            case entityDeclaration, externalEntity, externalDTD, schemaViolation, invalidValue
            case extendsCycle, extendsTooDeep, wrongDocumentKind, internalError
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The document (or a document it extends) does not exist.
        public static let fileNotFound = Code(.fileNotFound)
        /// The document exists but cannot be read (a directory, no permission, an I/O error).
        public static let unreadableFile = Code(.unreadableFile)
        /// The document is larger than ``DocumentLimits/maximumByteCount``; rejected before it is read or parsed.
        public static let tooLarge = Code(.tooLarge)
        /// The document is not UTF-8 (invalid byte sequences, or an XML declaration naming another encoding).
        public static let invalidEncoding = Code(.invalidEncoding)
        /// The document is not well-formed XML.
        public static let invalidXML = Code(.invalidXML)
        /// Elements nest deeper than ``DocumentLimits/maximumDepth``.
        public static let tooDeep = Code(.tooDeep)
        /// The DOCTYPE declares entities (`<!ENTITY name "…">`), the way entity-expansion bombs such as
        /// "billion laughs" start. Rejected outright, before parsing.
        public static let entityDeclaration = Code(.entityDeclaration)
        /// The DOCTYPE declares an external entity (`<!ENTITY x SYSTEM "file:///etc/passwd">`, XXE). Rejected
        /// outright, before parsing; nothing is ever fetched.
        public static let externalEntity = Code(.externalEntity)
        /// The DOCTYPE names an external DTD (`<!DOCTYPE x SYSTEM "http://…">`). Rejected outright; nothing is
        /// ever fetched.
        public static let externalDTD = Code(.externalDTD)
        /// The document is well-formed but does not match the module's XML Schema (an unknown element or
        /// attribute, a missing attribute, a value of the wrong form).
        public static let schemaViolation = Code(.schemaViolation)
        /// A value passed the schema but cannot be used (an unknown color name, an invalid regular expression),
        /// or an environment variable or command-line override has the wrong form.
        public static let invalidValue = Code(.invalidValue)
        /// A chain of `extends` attributes leads back to a document already in the chain.
        public static let extendsCycle = Code(.extendsCycle)
        /// A chain of `extends` attributes is longer than ``DocumentLimits/maximumExtendsDepth``.
        public static let extendsTooDeep = Code(.extendsTooDeep)
        /// The document is valid XML of the other kind (a style where a profile was expected, or the reverse),
        /// or of no known kind.
        public static let wrongDocumentKind = Code(.wrongDocumentKind)
        /// libxml2 failed in a way that is not the document's fault (out of memory, a broken built-in schema).
        public static let internalError = Code(.internalError)

        /// The code's name, e.g. `schemaViolation`.
        public var description: String { base.rawValue }
    }

    /// What went wrong, in general.
    public var code: Code
    /// What went wrong, specifically, and what was expected instead; ready to print.
    public var message: String
    /// The document the error is in, as it was named (a path), or the override's origin, such as
    /// `environment variable CAST_REQUEST_TIMEOUT`; `nil` when there is no document.
    public var file: String?
    /// The 1-based line of the offending construct, when known.
    public var line: Int?
    /// The 1-based column (in characters) of the offending construct, when known.
    public var column: Int?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: The specific problem, naming the offending element, attribute or value.
    ///   - file: The document or override origin.
    ///   - line: The 1-based line, when known.
    ///   - column: The 1-based column, when known.
    public init(code: Code, message: String, file: String? = nil, line: Int? = nil, column: Int? = nil) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file: line L, column C: message`, leaving out the parts that are unknown.
    public var description: String {
        var prefix: [String] = []
        if let file {
            prefix.append(file)
        }
        switch (line, column) {
        case let (line?, column?):
            prefix.append("line \(line), column \(column)")
        case let (line?, nil):
            prefix.append("line \(line)")
        default:
            break
        }
        return (prefix + [message]).joined(separator: ": ")
    }
}

extension CastConfigError {
    /// An error located at `location`.
    init(_ code: Code, _ message: String, at location: DocumentLocation?) {
        self.init(code: code, message: message, file: location?.file, line: location?.line, column: location?.column)
    }
}

/// Where something is in a document: used for errors and for provenance.
struct DocumentLocation: Sendable, Hashable {
    /// The document as named by the caller.
    var file: String
    /// 1-based line.
    var line: Int?
    /// 1-based column in characters.
    var column: Int?
}
