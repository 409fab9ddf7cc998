/// A JSON value, the payload of every STRING-typed Cast message.
///
/// Cast payloads are open-ended (custom data, receiver-specific keys, explicit nulls), so the transport passes
/// them as this `Sendable` tree and leaves typed decoding to the layers that know the namespace.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue {
    /// The value for `key` when this is an object; `nil` otherwise or when the key is absent.
    public subscript(key: String) -> JSONValue? {
        get {
            guard case .object(let object) = self else { return nil }
            return object[key]
        }
        set {
            guard case .object(var object) = self else { return }
            // Let go of this value's reference first, so that a dictionary only this value holds is changed in
            // place instead of copied.
            self = .null
            object[key] = newValue
            self = .object(object)
        }
    }

    /// The element at `index` when this is an array and the index is in range; `nil` otherwise.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, when this is a number.
    public var doubleValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The number as an integer, when this is a number with no fractional part within ±2^53 (where a double
    /// holds every integer exactly, as JavaScript's safe integers).
    public var intValue: Int? {
        guard case .number(let value) = self, value.rounded() == value, abs(value) <= 0x1p53 else { return nil }
        return Int(value)
    }

    /// The boolean, when this is a boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, when this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is an explicit JSON `null`.
    public var isNull: Bool { self == .null }

    /// A non-null value, or `nil` for absent and explicit `null`: receivers send `null` where they mean absent.
    package var present: JSONValue? { self == .null ? nil : self }
}

// Deliberately not ExpressibleByNilLiteral: `nil` must always mean "absent", never silently become JSON null.
extension JSONValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// A JSON boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A JSON number from an integer literal.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// A JSON number.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A JSON string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A JSON array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// A JSON object; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: Codable {
    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the JSON it holds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
