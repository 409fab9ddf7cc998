// swift-cast — Apache-2.0
//
// The only file that talks to libxml2. Everything it hands out is a plain Swift value (``ConfigElement``,
// ``SchemaIssue``, ``CastConfigError``); no C type or pointer leaves this file.

internal import CLibXML2

/// Parses, checks and schema-validates one document with libxml2, and copies the result into Swift values.
///
/// Hardening, in order:
///
/// 1. ``DocumentPrescan`` rejects oversized documents, invalid UTF-8, entity declarations and external DTDs from
///    the raw bytes, before libxml2 runs.
/// 2. A fresh parser context per parse, with `XML_PARSE_NONET | NOERROR | NOWARNING | NOCDATA | BIG_LINES`; never
///    `NOENT` (entity substitution), `DTDLOAD`, `DTDATTR`, `DTDVALID`, `XINCLUDE` or `HUGE`.
/// 3. A SAX hook counts element depth and stops the parser at the first element deeper than the limit.
/// 4. After parsing, the DTD (if any) is checked again: entities or an external subset reject the document.
/// 5. The document is validated against the module's XML Schema before anything maps it.
enum LibXML2Document {
    /// Parses `bytes` as the document `file`, validating it against `schema` when one is given.
    ///
    /// - Parameters:
    ///   - bytes: The whole document.
    ///   - file: The name used in errors and locations.
    ///   - limits: Size and depth limits.
    ///   - schema: Picks the XSD to validate against from the root element's local name, namespace and location
    ///     (and may throw if the root is of no expected kind); returning `nil` skips validation.
    ///   - skipsPrescan: Tests set this to show that the later lines of defence hold on their own.
    /// - Returns: The root element, copied out of libxml2.
    static func parse(
        _ bytes: [UInt8],
        file: String,
        limits: DocumentLimits,
        schema: (String, String?, DocumentLocation) throws(CastConfigError) -> DocumentSchema?,
        skipsPrescan: Bool = false
    ) throws(CastConfigError) -> ConfigElement {
        _ = libxml2Initialized
        if !skipsPrescan {
            try DocumentPrescan.check(bytes, file: file, limits: limits)
        } else if bytes.count > limits.maximumByteCount {
            throw CastConfigError(code: .tooLarge, message: "document exceeds the size limit", file: file)
        }
        let text = DocumentText(bytes: bytes, file: file)
        let document = try parseTree(text, maximumDepth: min(max(1, limits.maximumDepth), 256))
        defer { xmlFreeDoc(document) }
        try checkDTD(of: document, text: text)
        guard let root = xmlDocGetRootElement(document) else {
            throw CastConfigError(code: .invalidXML, message: "the document has no root element", file: file)
        }
        let rootLocation = elementOffset(of: root).map { text.lines.location(ofByte: $0, file: file) }
        let namespace = root.pointee.ns.flatMap { $0.pointee.href }.map { String(cString: $0) }
        if let schema = try schema(string(root.pointee.name), namespace, rootLocation ?? DocumentLocation(file: file)) {
            let issues = try validate(document, against: schema.xsd, text: text)
            if !issues.isEmpty {
                throw schema.explain(issues, in: text)
            }
        }
        return copyElement(root, document: document, text: text)
    }

    // MARK: - Parsing

    /// Parses into a libxml2 tree the caller must free; throws for malformed or too-deep documents.
    private static func parseTree(_ text: DocumentText, maximumDepth: Int) throws(CastConfigError) -> xmlDocPtr {
        let state = ParseState(text: text, maximumDepth: maximumDepth)
        let result: xmlDocPtr? = text.bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars -> xmlDocPtr? in
                // A fresh context per parse, never shared: it carries our state in `_private` (which
                // `xmlCtxtReadMemory` leaves alone) and our SAX hooks, and libxml2 keeps per-parse state in it.
                guard let context = xmlNewParserCtxt() else {
                    state.failure = CastConfigError(
                        code: .internalError,
                        message: "libxml2 could not create a parser context",
                        file: text.file
                    )
                    return nil
                }
                defer { xmlFreeParserCtxt(context) }
                context.pointee._private = Unmanaged.passUnretained(state).toOpaque()
                context.pointee.sax.pointee.startElementNs = configStartElement
                context.pointee.sax.pointee.serror = configParserError
                // No base URL, no encoding override (the prescan insists on UTF-8).
                let document = xmlCtxtReadMemory(context, chars.baseAddress, Int32(chars.count), nil, nil, parseOptions)
                if state.failure == nil, document == nil {
                    state.failure =
                        state.firstError
                        ?? CastConfigError(
                            code: .invalidXML,
                            message: "not well-formed XML",
                            file: text.file
                        )
                }
                if state.failure != nil {
                    xmlFreeDoc(document)
                    return nil
                }
                return document
            }
        }
        if let failure = state.failure {
            throw failure
        }
        guard let result else {
            throw CastConfigError(code: .internalError, message: "libxml2 returned no document", file: text.file)
        }
        return result
    }

    /// The second line of defence against entities and external DTDs, on the parsed DTD.
    private static func checkDTD(of document: xmlDocPtr, text: DocumentText) throws(CastConfigError) {
        if document.pointee.extSubset != nil {
            throw CastConfigError(code: .externalDTD, message: "the document has an external DTD", file: text.file)
        }
        guard let dtd = document.pointee.intSubset else { return }
        if dtd.pointee.SystemID != nil || dtd.pointee.ExternalID != nil {
            throw CastConfigError(
                code: .externalDTD,
                message: "the DOCTYPE refers to an external DTD; external DTDs are never loaded",
                file: text.file
            )
        }
        var declaration = dtd.pointee.children
        while let current = declaration {
            if current.pointee.type == XML_ENTITY_DECL {
                let entity = UnsafeMutableRawPointer(current).assumingMemoryBound(to: xmlEntity.self)
                let name = string(entity.pointee.name)
                let isExternal = entity.pointee.SystemID != nil || entity.pointee.ExternalID != nil
                throw CastConfigError(
                    code: isExternal ? .externalEntity : .entityDeclaration,
                    message: "the DOCTYPE declares \(isExternal ? "external " : "")entity '\(name)'; entity "
                        + "declarations are not allowed",
                    file: text.file
                )
            }
            declaration = current.pointee.next
        }
        if dtd.pointee.entities != nil || dtd.pointee.pentities != nil {
            throw CastConfigError(
                code: .entityDeclaration,
                message: "the DOCTYPE declares entities; entity declarations are not allowed",
                file: text.file
            )
        }
    }

    // MARK: - Schema validation

    /// Validates `document` against the XSD `xsd`; returns every complaint, empty when the document is valid.
    private static func validate(
        _ document: xmlDocPtr,
        against xsd: String,
        text: DocumentText
    ) throws(CastConfigError) -> [SchemaIssue] {
        let collector = SchemaIssueCollector(text: text)
        let context = Unmanaged.passUnretained(collector).toOpaque()
        let schema: xmlSchemaPtr? = xsd.withCString { chars in
            guard let parser = xmlSchemaNewMemParserCtxt(chars, Int32(xsd.utf8.count)) else { return nil }
            defer { xmlSchemaFreeParserCtxt(parser) }
            xmlSchemaSetParserStructuredErrors(parser, configSchemaError, context)
            return xmlSchemaParse(parser)
        }
        guard let schema else {
            let detail = collector.issues.first?.message ?? "unknown error"
            throw CastConfigError(code: .internalError, message: "the built-in XML Schema does not compile: \(detail)")
        }
        defer { xmlSchemaFree(schema) }
        collector.issues.removeAll()
        guard let validator = xmlSchemaNewValidCtxt(schema) else {
            throw CastConfigError(code: .internalError, message: "libxml2 could not create a schema validator")
        }
        defer { xmlSchemaFreeValidCtxt(validator) }
        xmlSchemaSetValidStructuredErrors(validator, configSchemaError, context)
        let status = xmlSchemaValidateDoc(validator, document)
        if status < 0 {
            throw CastConfigError(code: .internalError, message: "libxml2's schema validator failed internally")
        }
        if status > 0, collector.issues.isEmpty {
            // Valid is 0; a positive code with no reported issue still means invalid.
            collector.issues.append(
                SchemaIssue(
                    code: Int(status),
                    message: "the document does not match the schema",
                    value: nil,
                    detail: nil
                )
            )
        }
        return collector.issues
    }

    // MARK: - Copying the tree

    private static func copyElement(_ node: xmlNodePtr, document: xmlDocPtr, text: DocumentText) -> ConfigElement {
        let offset = elementOffset(of: node)
        let location =
            offset.map { text.lines.location(ofByte: $0, file: text.file) }
            ?? DocumentLocation(
                file: text.file,
                line: Int(xmlGetLineNo(node)),
                column: nil
            )
        var attributes: [ConfigElement.Attribute] = []
        var attribute = node.pointee.properties
        while let current = attribute {
            let name = string(current.pointee.name)
            var value = ""
            if let raw = xmlNodeListGetString(document, current.pointee.children, 1) {
                value = String(cString: raw)
                CLibXML2_free(raw)
            }
            let attributeLocation = offset.flatMap { text.location(ofAttribute: name, inTagAt: $0) } ?? location
            attributes.append(ConfigElement.Attribute(name: name, value: value, location: attributeLocation))
            attribute = current.pointee.next
        }
        var children: [ConfigElement] = []
        var ownText = ""
        var child = node.pointee.children
        while let current = child {
            switch current.pointee.type {
            case XML_ELEMENT_NODE:
                children.append(copyElement(current, document: document, text: text))
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if let content = current.pointee.content {
                    ownText += String(cString: content)
                }
            default:
                break
            }
            child = current.pointee.next
        }
        return ConfigElement(
            name: string(node.pointee.name),
            namespaceURI: node.pointee.ns.flatMap { $0.pointee.href }.map { String(cString: $0) },
            attributes: attributes,
            children: children,
            text: ownText,
            location: location
        )
    }
}

// MARK: - Shared helpers

/// `NONET | NOERROR | NOWARNING | NOCDATA | BIG_LINES`. Deliberately absent: `NOENT` (substitute entities),
/// `DTDLOAD` (fetch the external subset), `DTDATTR`, `DTDVALID`, `XINCLUDE`, `HUGE` (lift the depth and size
/// limits) and `RECOVER` (accept broken documents).
private let parseOptions = Int32(
    XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue | XML_PARSE_NOCDATA.rawValue
        | XML_PARSE_BIG_LINES.rawValue
)

/// libxml2's global initialisation, done once (thread-safely, as a Swift global) before the first parse.
///
/// `xmlInitParser` sets up the parser's globals. libxml2 2.9 initialises its built-in XML Schema types lazily, on
/// the first `xmlSchemaParse`, without a lock; parsing an empty schema here does that once, so concurrent
/// validations never race on it.
private let libxml2Initialized: Void = {
    xmlInitParser()
    let emptySchema = #"<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"/>"#
    emptySchema.withCString { chars in
        guard let parser = xmlSchemaNewMemParserCtxt(chars, Int32(emptySchema.utf8.count)) else { return }
        xmlSchemaSetParserStructuredErrors(parser, ignoreError, nil)
        if let schema = xmlSchemaParse(parser) {
            xmlSchemaFree(schema)
        }
        xmlSchemaFreeParserCtxt(parser)
    }
}()

/// A structured-error handler that drops the error.
private func ignoreError(_ userData: UnsafeMutableRawPointer?, _ error: xmlErrorPtr?) {}

private func string(_ pointer: UnsafePointer<xmlChar>?) -> String {
    pointer.map { String(cString: $0) } ?? ""
}

/// The byte offset of an element's `<`, stored in the node's `_private` field by ``configStartElement`` (plus one,
/// so that offset 0 is not a null pointer).
private func elementOffset(of node: xmlNodePtr) -> Int? {
    guard let stored = node.pointee._private else { return nil }
    return Int(bitPattern: stored) - 1
}

// MARK: - Parser callbacks (C convention: top-level functions, no captures)

/// Per-parse state the C callbacks reach through the parser context's `_private` pointer.
private final class ParseState {
    let text: DocumentText
    let maximumDepth: Int
    /// The first error or warning-free failure libxml2 reported.
    var firstError: CastConfigError?
    /// A failure decided by our own hooks (depth), which wins over whatever libxml2 reports afterwards.
    var failure: CastConfigError?

    init(text: DocumentText, maximumDepth: Int) {
        self.text = text
        self.maximumDepth = maximumDepth
    }
}

private func parseState(_ context: xmlParserCtxtPtr) -> ParseState? {
    guard let raw = context.pointee._private else { return nil }
    return Unmanaged<ParseState>.fromOpaque(raw).takeUnretainedValue()
}

/// The byte offset at which the parser currently is.
private func currentOffset(_ context: xmlParserCtxtPtr) -> Int? {
    guard let input = context.pointee.input, let base = input.pointee.base, let cur = input.pointee.cur else {
        return nil
    }
    return Int(input.pointee.consumed) + base.distance(to: cur)
}

/// SAX2 start-element hook: enforces the depth limit, then builds the node as libxml2 would and records where its
/// start tag begins (for column numbers, which libxml2 does not keep on nodes).
private func configStartElement(
    _ rawContext: UnsafeMutableRawPointer?,
    _ localName: UnsafePointer<xmlChar>?,
    _ prefix: UnsafePointer<xmlChar>?,
    _ uri: UnsafePointer<xmlChar>?,
    _ namespaceCount: Int32,
    _ namespaces: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?,
    _ attributeCount: Int32,
    _ defaultedCount: Int32,
    _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
) {
    guard let rawContext else { return }
    let context = rawContext.assumingMemoryBound(to: xmlParserCtxt.self)
    guard let state = parseState(context) else {
        preconditionFailure("CastStyleConfig parser context without state")
    }
    // At this point the start tag has been read up to its `>`; its `<` is the last one before here, because `<`
    // cannot occur inside attribute values.
    let tagOffset = currentOffset(context).flatMap { state.text.lastOpeningBracket(atOrBefore: $0) }
    // `nameNr` counts the open ancestors; this element is one deeper.
    let depth = Int(context.pointee.nameNr) + 1
    if depth > state.maximumDepth {
        let location = tagOffset.map { state.text.lines.location(ofByte: $0, file: state.text.file) }
        state.failure = CastConfigError(
            .tooDeep,
            "element '\(string(localName))' is nested \(depth) levels deep; the limit is \(state.maximumDepth)",
            at: location ?? DocumentLocation(file: state.text.file, line: Int(context.pointee.input.pointee.line))
        )
        xmlStopParser(context)
        return
    }
    xmlSAX2StartElementNs(
        rawContext,
        localName,
        prefix,
        uri,
        namespaceCount,
        namespaces,
        attributeCount,
        defaultedCount,
        attributes
    )
    if let node = context.pointee.node, let tagOffset {
        node.pointee._private = UnsafeMutableRawPointer(bitPattern: tagOffset + 1)
    }
}

/// Structured parser errors: keeps the first real error (warnings are ignored), with libxml2's line and column.
private func configParserError(_ userData: UnsafeMutableRawPointer?, _ error: xmlErrorPtr?) {
    guard let userData, let error else { return }
    let context = userData.assumingMemoryBound(to: xmlParserCtxt.self)
    guard let state = parseState(context), state.firstError == nil,
        error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue
    else { return }
    let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
    let column = Int(error.pointee.int2)
    state.firstError = CastConfigError(
        code: .invalidXML,
        message: "not well-formed XML: " + message.trimmingTrailingNewlines(),
        file: state.text.file,
        line: error.pointee.line > 0 ? Int(error.pointee.line) : nil,
        column: column > 0 ? column : nil
    )
}

// MARK: - Schema callbacks

/// Collects schema complaints for one validation.
private final class SchemaIssueCollector {
    let text: DocumentText
    var issues: [SchemaIssue] = []

    init(text: DocumentText) {
        self.text = text
    }
}

/// Structured schema errors: copies what the explanation needs (the element, its parent, whether an earlier
/// sibling has the same name, where it starts) out of the error and its node.
private func configSchemaError(_ userData: UnsafeMutableRawPointer?, _ error: xmlErrorPtr?) {
    guard let userData, let error else { return }
    let collector = Unmanaged<SchemaIssueCollector>.fromOpaque(userData).takeUnretainedValue()
    guard error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
    var issue = SchemaIssue(
        code: Int(error.pointee.code),
        message: (error.pointee.message.map { String(cString: $0) } ?? "invalid").trimmingTrailingNewlines(),
        value: error.pointee.str1.map { String(cString: $0) },
        detail: error.pointee.str2.map { String(cString: $0) }
    )
    issue.line = error.pointee.line > 0 ? Int(error.pointee.line) : nil
    if let raw = error.pointee.node {
        var node = raw.assumingMemoryBound(to: xmlNode.self)
        if node.pointee.type == XML_ATTRIBUTE_NODE, let parent = node.pointee.parent {
            node = parent
        }
        if node.pointee.type == XML_ELEMENT_NODE {
            issue.elementName = string(node.pointee.name)
            issue.elementOffset = elementOffset(of: node)
            if let parent = node.pointee.parent, parent.pointee.type == XML_ELEMENT_NODE {
                issue.parentName = string(parent.pointee.name)
            }
            var previous = node.pointee.prev
            while let sibling = previous {
                if sibling.pointee.type == XML_ELEMENT_NODE, string(sibling.pointee.name) == issue.elementName {
                    issue.repeatsEarlierSibling = true
                    break
                }
                previous = sibling.pointee.prev
            }
        }
    }
    collector.issues.append(issue)
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var result = self
        while result.last?.isNewline == true {
            result.removeLast()
        }
        return result
    }
}
