// swift-cast — Apache-2.0

/// An element of a parsed, validated document, copied out of libxml2 into plain Swift values.
///
/// The libxml2 tree is freed as soon as this copy exists, so nothing here points into C memory. Locations are
/// kept for every element and attribute, so mapping errors can point at the exact spot.
struct ConfigElement: Sendable {
    /// An attribute with its location.
    struct Attribute: Sendable {
        /// The local name (configuration attributes are never namespace-qualified).
        var name: String
        /// The value, as written (entity-free: documents with entity declarations never get this far).
        var value: String
        /// Where the attribute's name starts.
        var location: DocumentLocation
    }

    /// The local name, e.g. `heartbeat`.
    var name: String
    /// The namespace URI, e.g. `urn:swift-cast:profile:1`; `nil` for none.
    var namespaceURI: String?
    /// Attributes in document order.
    var attributes: [Attribute]
    /// Child elements in document order.
    var children: [ConfigElement]
    /// The element's own text (its text and CDATA children, concatenated; no descendants').
    var text: String
    /// Where the start tag's `<` is.
    var location: DocumentLocation

    /// The attribute called `name`, if present.
    func attribute(_ name: String) -> Attribute? {
        attributes.first { $0.name == name }
    }

    /// The first child element called `name`, if present.
    func child(_ name: String) -> ConfigElement? {
        children.first { $0.name == name }
    }

    /// Every child element called `name`.
    func children(named name: String) -> [ConfigElement] {
        children.filter { $0.name == name }
    }
}
