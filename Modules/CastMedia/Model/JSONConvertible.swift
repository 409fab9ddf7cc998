import CastTransport

/// A media-model value that maps to exactly the wire JSON of the Cast media namespace.
///
/// Mapping goes through `JSONValue` so decoding is tolerant by construction: unknown keys are ignored,
/// explicit `null`s read as absent, and a field of the wrong type reads as absent instead of failing the
/// whole status. `Codable` conformance comes for free and produces the same JSON.
public protocol JSONConvertible: Codable, Sendable {
    /// Reads a value from wire JSON.
    ///
    /// - Throws: ``CastMediaError`` with ``CastMediaError/Code/invalidResponse`` only when a field the value cannot
    ///   exist without is missing.
    init(json: JSONValue) throws
    /// The wire JSON of this value.
    var json: JSONValue { get }
}

extension JSONConvertible {
    /// Decodes through ``init(json:)``, so `Codable` reads exactly the wire JSON.
    public init(from decoder: any Decoder) throws {
        try self.init(json: try JSONValue(from: decoder))
    }

    /// Encodes ``json``, so `Codable` writes exactly the wire JSON.
    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

/// Builds JSON objects without writing absent optionals.
struct JSONObjectBuilder {
    private(set) var object: [String: JSONValue] = [:]

    subscript(key: String) -> JSONValue? {
        get { object[key] }
        set { if let newValue { object[key] = newValue } }
    }

    mutating func set(_ key: String, _ value: String?) { if let value { object[key] = .string(value) } }
    mutating func set(_ key: String, _ value: Double?) { if let value { object[key] = .number(value) } }
    mutating func set(_ key: String, _ value: Int?) { if let value { object[key] = .number(Double(value)) } }
    mutating func set(_ key: String, _ value: Bool?) { if let value { object[key] = .bool(value) } }
    mutating func set(_ key: String, _ value: [Int]?) {
        if let value { object[key] = .array(value.map { .number(Double($0)) }) }
    }
    mutating func set<T: JSONConvertible>(_ key: String, _ value: T?) { if let value { object[key] = value.json } }
    mutating func set<T: JSONConvertible>(_ key: String, _ value: [T]?) {
        if let value { object[key] = .array(value.map(\.json)) }
    }

    var json: JSONValue { .object(object) }
}

extension JSONValue {
    func string(_ key: String) -> String? { self[key]?.stringValue }
    func double(_ key: String) -> Double? { self[key]?.doubleValue }
    func int(_ key: String) -> Int? { self[key]?.intValue }
    func bool(_ key: String) -> Bool? { self[key]?.boolValue }
    func ints(_ key: String) -> [Int]? { self[key]?.arrayValue?.compactMap(\.intValue) }
    func strings(_ key: String) -> [String]? { self[key]?.arrayValue?.compactMap(\.stringValue) }
    func value(_ key: String) -> JSONValue? { self[key]?.present }
    func decode<T: JSONConvertible>(_ key: String, as type: T.Type = T.self) -> T? { self[key]?.decoded() }
    func decodeArray<T: JSONConvertible>(_ key: String, of type: T.Type = T.self) -> [T]? {
        self[key]?.decodedArray()
    }

    /// This value decoded as `T`, or `nil` when it is null or not a `T`.
    func decoded<T: JSONConvertible>(as type: T.Type = T.self) -> T? {
        guard let value = present else { return nil }
        return try? T(json: value)
    }

    /// The elements of this array that decode as `T`, or `nil` when it is not an array.
    func decodedArray<T: JSONConvertible>(of type: T.Type = T.self) -> [T]? {
        arrayValue?.compactMap { try? T(json: $0) }
    }

    /// The members of an object (in no particular order); none for any other value.
    ///
    /// The decoders of the values every status carries read their keys this way: a key that is present costs one
    /// comparison per key it is checked against, while looking up each key a value may have hashes it, present or
    /// not (for a typical status, its 20 keys looked up took 1.7 times as long as its 12 present ones read).
    var members: [String: JSONValue] { objectValue ?? [:] }
}
