// swift-cast — Apache-2.0

/// One complaint of libxml2's schema validator, copied out of its `xmlError` and node.
struct SchemaIssue: Sendable {
    /// libxml2's error code (`xmlParserErrors`, the `XML_SCHEMAV_*` range).
    var code: Int
    /// libxml2's message, e.g. `Element '{urn:…}heartbeat', attribute 'interval': '5x' is not a valid value …`.
    var message: String
    /// `str1`: for value errors, the offending value.
    var value: String?
    /// `str2`: for facet errors, the facet's value (the enumeration set, the bound).
    var detail: String?
    /// The line libxml2 reported.
    var line: Int? = nil
    /// The local name of the element the complaint is about.
    var elementName: String? = nil
    /// Where that element's start tag begins.
    var elementOffset: Int? = nil
    /// The local name of its parent element.
    var parentName: String? = nil
    /// Whether an earlier sibling has the same name (so "not expected" most likely means "repeated").
    var repeatsEarlierSibling = false
}

/// An XML Schema the module ships, with what it needs to turn libxml2's complaints into helpful messages.
struct DocumentSchema: Sendable {
    /// The XSD text.
    var xsd: String
    /// What users call this kind of document, e.g. `profile`.
    var kind: String
    /// The root element's local name.
    var rootElement: String
    /// The target namespace.
    var namespace: String

    /// The first of `issues` (in document order) as a friendly, located error; mentions how many more there are.
    func explain(_ issues: [SchemaIssue], in text: DocumentText) -> CastConfigError {
        let vocabulary = SchemaVocabulary(xsd: xsd)
        // libxml2 may report one bad value twice (a facet, then the type); count each element/attribute once.
        var seen = Set<String>()
        let unique = issues.filter { issue in
            seen.insert("\(issue.elementOffset ?? -1)|\(Self.attributeName(in: issue.message) ?? "")").inserted
        }
        guard let first = unique.first else {
            return CastConfigError(code: .schemaViolation, message: "the document does not match the schema")
        }
        var (message, location) = explain(first, vocabulary: vocabulary, text: text)
        if unique.count > 1 {
            let more = unique.count - 1
            message += " (\(more) more problem\(more == 1 ? "" : "s") after this one)"
        }
        return CastConfigError(.schemaViolation, message, at: location)
    }

    private func explain(
        _ issue: SchemaIssue,
        vocabulary: SchemaVocabulary,
        text: DocumentText
    ) -> (String, DocumentLocation) {
        let element = issue.elementName ?? "?"
        let elementLocation =
            issue.elementOffset.map { text.lines.location(ofByte: $0, file: text.file) }
            ?? DocumentLocation(file: text.file, line: issue.line)
        let message = issue.message

        if message.contains("No matching global declaration available for the validation root") {
            return (
                "the root element of a \(kind) must be <\(rootElement) xmlns=\"\(namespace)\">, not <\(element)> "
                    + "in \(Self.namespace(in: message).map { "namespace '\($0)'" } ?? "no namespace")",
                elementLocation
            )
        }
        if let attribute = Self.attributeName(in: message) {
            let location =
                issue.elementOffset.flatMap { text.location(ofAttribute: attribute, inTagAt: $0) } ?? elementLocation
            let expectation = vocabulary.expectation(forAttribute: attribute, of: element)
            if message.contains("is not allowed") {
                let accepted = vocabulary.attributes[element] ?? []
                let list = accepted.isEmpty ? "it takes none" : "it accepts \(accepted.joined(separator: ", "))"
                return ("element '\(element)' has no attribute '\(attribute)'; \(list)", location)
            }
            if message.contains("is required but missing") {
                let what = expectation.map { " (\($0))" } ?? ""
                return ("element '\(element)' needs attribute '\(attribute)'\(what)", location)
            }
            let found = issue.value.map { " (found '\($0)')" } ?? ""
            if let expectation {
                return ("element '\(element)': attribute '\(attribute)' must be \(expectation)\(found)", location)
            }
            if message.contains("[facet 'enumeration']"), let set = issue.detail {
                return ("element '\(element)': attribute '\(attribute)' must be one of \(set)\(found)", location)
            }
            return (Self.clean(message), location)
        }
        if message.contains("This element is not expected") {
            guard let parent = issue.parentName else {
                return (Self.clean(message), elementLocation)
            }
            let allowed = vocabulary.children[parent] ?? []
            if issue.repeatsEarlierSibling, allowed.contains(element) {
                return (
                    "element '\(element)' appears more than once in '\(parent)'; it is allowed once", elementLocation
                )
            }
            let list =
                allowed.isEmpty ? "it has no child elements" : "expected one of \(allowed.joined(separator: ", "))"
            return ("element '\(element)' is not allowed in '\(parent)'; \(list)", elementLocation)
        }
        if message.contains("Character content") || message.contains("is not allowed because the content type") {
            return ("element '\(element)' may not contain text", elementLocation)
        }
        if message.contains("Missing child element") {
            let allowed = vocabulary.children[element] ?? []
            return (
                "element '\(element)' is missing a child element; expected one of \(allowed.joined(separator: ", "))",
                elementLocation
            )
        }
        return (Self.clean(message), elementLocation)
    }

    /// The attribute a libxml2 schema message is about (`…, attribute 'interval': …`), if any.
    static func attributeName(in message: String) -> String? {
        guard let range = message.firstRange(of: "attribute '") else { return nil }
        let rest = message[range.upperBound...]
        guard let end = rest.firstIndex(of: "'") else { return nil }
        return String(rest[..<end])
    }

    /// The namespace in `Element '{urn:…}name'`, if the message names one.
    private static func namespace(in message: String) -> String? {
        guard let open = message.firstIndex(of: "{"), let close = message.firstIndex(of: "}"), open < close else {
            return nil
        }
        return String(message[message.index(after: open)..<close])
    }

    /// libxml2's message without `{namespace}` prefixes and with a lower-case start: the fallback explanation.
    static func clean(_ message: String) -> String {
        var result = ""
        var skipping = false
        for character in message {
            if character == "{" {
                skipping = true
            } else if character == "}" {
                skipping = false
            } else if !skipping {
                result.append(character)
            }
        }
        if result.hasPrefix("Element ") {
            result = "element " + result.dropFirst("Element ".count)
        }
        while result.last == "." {
            result.removeLast()
        }
        return result
    }
}

/// What an XSD declares, read from the XSD itself so messages and schema never disagree: the documentation of each
/// named simple type, and the children and attributes (with their types) each element allows.
///
/// Assumes, as the module's schemas guarantee, that element names are unique across the schema.
struct SchemaVocabulary {
    /// Element name → the child elements it allows, in declaration order.
    private(set) var children: [String: [String]] = [:]
    /// Element name → the attributes it allows, in declaration order.
    private(set) var attributes: [String: [String]] = [:]
    /// Element name → attribute name → what its value must be, e.g. `a duration like 5s or 500ms`.
    private var expectations: [String: [String: String]] = [:]

    private static let builtInTypes = [
        "boolean": "true or false",
        "string": "text",
        "token": "text",
        "positiveInteger": "a whole number of at least 1",
        "nonNegativeInteger": "a whole number of at least 0",
    ]

    init(xsd: String) {
        let parsed = try? LibXML2Document.parse(
            Array(xsd.utf8),
            file: "schema",
            limits: DocumentLimits(),
            schema: { (_, _, _) throws(CastConfigError) -> DocumentSchema? in nil }
        )
        guard let root = parsed else { return }
        var declarations = Declarations()
        var elements: [ConfigElement] = []
        Self.walk(root) { node in
            let name = node.attribute("name")?.value
            switch node.name {
            case "complexType":
                if let name { declarations.complexTypes[name] = node }
            case "attributeGroup":
                if let name { declarations.attributeGroups[name] = node }
            case "simpleType":
                if let name, let text = node.child("annotation")?.child("documentation")?.text {
                    declarations.typeDocumentation[name] =
                        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                }
            case "element":
                if name != nil { elements.append(node) }
            default:
                break
            }
        }
        for element in elements {
            guard let name = element.attribute("name")?.value else { continue }
            let content =
                element.child("complexType")
                ?? element.attribute("type").flatMap { declarations.complexTypes[Self.localName($0.value)] }
            guard let content else { continue }
            children[name] = Self.childElements(of: content, declarations)
            let declared = Self.attributeDeclarations(of: content, declarations)
            attributes[name] = declared.map(\.name)
            var byName: [String: String] = [:]
            for attribute in declared {
                if let type = attribute.type, let documentation = declarations.typeDocumentation[type] {
                    byName[attribute.name] = documentation
                }
            }
            expectations[name] = byName
        }
    }

    /// What the value of `attribute` on `element` must be, from its type's documentation.
    func expectation(forAttribute attribute: String, of element: String) -> String? {
        expectations[element]?[attribute]
    }

    /// The named parts of a schema that declarations refer to.
    private struct Declarations {
        var complexTypes: [String: ConfigElement] = [:]
        var attributeGroups: [String: ConfigElement] = [:]
        var typeDocumentation = SchemaVocabulary.builtInTypes
    }

    private static func walk(_ node: ConfigElement, _ visit: (ConfigElement) -> Void) {
        visit(node)
        for child in node.children {
            walk(child, visit)
        }
    }

    private static func localName(_ qualified: String) -> String {
        qualified.split(separator: ":").last.map(String.init) ?? qualified
    }

    private static func childElements(of node: ConfigElement, _ declarations: Declarations) -> [String] {
        var names: [String] = []
        for child in node.children {
            switch child.name {
            case "element":
                if let name = child.attribute("name")?.value ?? child.attribute("ref")?.value {
                    names.append(localName(name))
                }
            case "extension", "restriction":
                if let base = child.attribute("base").flatMap({ declarations.complexTypes[localName($0.value)] }) {
                    names += childElements(of: base, declarations)
                }
                names += childElements(of: child, declarations)
            case "sequence", "choice", "all", "complexContent":
                names += childElements(of: child, declarations)
            default:
                break
            }
        }
        return names
    }

    private static func attributeDeclarations(
        of node: ConfigElement,
        _ declarations: Declarations
    ) -> [(name: String, type: String?)] {
        var result: [(name: String, type: String?)] = []
        for child in node.children {
            switch child.name {
            case "attribute":
                if let name = child.attribute("name")?.value {
                    result.append((name, child.attribute("type").map { localName($0.value) }))
                }
            case "attributeGroup":
                if let group = child.attribute("ref").flatMap({ declarations.attributeGroups[localName($0.value)] }) {
                    result += attributeDeclarations(of: group, declarations)
                }
            case "extension", "restriction":
                if let base = child.attribute("base").flatMap({ declarations.complexTypes[localName($0.value)] }) {
                    result += attributeDeclarations(of: base, declarations)
                }
                result += attributeDeclarations(of: child, declarations)
            case "complexContent", "simpleContent":
                result += attributeDeclarations(of: child, declarations)
            default:
                break
            }
        }
        return result
    }
}
