// swift-cast — Apache-2.0

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// No Foundation in this module: Debian's libxml2 headers include the system ICU, whose `UErrorCode` clashes with
// Foundation's bundled ICU when both are imported into one module. File access here is plain POSIX.

/// Reads documents from disk, bounded by the size limit, and follows `extends` chains.
enum DocumentLoader {
    /// One document of a chain.
    struct Document {
        /// The path as it was reached (joined to the including document's directory).
        var path: String
        /// The validated root element.
        var root: ConfigElement
    }

    /// The kinds of document the module knows, for telling them apart.
    static let schemas: [DocumentSchema] = [.profile, .style]

    /// Reads the file at `path`, refusing one larger than the limit from its size alone, before reading it.
    ///
    /// - Parameter reference: Where the path was named (an `extends` attribute), for the error if it is missing.
    static func read(
        _ path: String,
        limits: DocumentLimits,
        reference: DocumentLocation? = nil
    ) throws(CastConfigError) -> [UInt8] {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let message = reference == nil ? "\(path): no such file" : "extended document '\(path)' does not exist"
            throw CastConfigError(.fileNotFound, message, at: reference ?? DocumentLocation(file: path))
        }
        guard (info.st_mode & S_IFMT) != S_IFDIR else {
            throw CastConfigError(code: .unreadableFile, message: "\(path) is a directory", file: path)
        }
        guard Int(info.st_size) <= limits.maximumByteCount else {
            throw CastConfigError(
                code: .tooLarge,
                message: "document is \(info.st_size) bytes; the limit is \(limits.maximumByteCount) bytes",
                file: path
            )
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CastConfigError(
                code: .unreadableFile,
                message: "cannot open \(path): \(String(cString: strerror(errno)))",
                file: path
            )
        }
        defer { close(descriptor) }
        // Read at most one byte more than allowed, so a file that grew since the size check is still caught.
        let capacity = limits.maximumByteCount + 1
        var bytes = [UInt8](repeating: 0, count: min(capacity, Int(info.st_size) + 1))
        var count = 0
        while count < capacity {
            if count == bytes.count {
                bytes.append(contentsOf: repeatElement(0, count: min(capacity - count, max(4096, count))))
            }
            let result = bytes.withUnsafeMutableBytes { buffer in
                readFile(descriptor, buffer.baseAddress! + count, buffer.count - count)
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw CastConfigError(
                    code: .unreadableFile,
                    message: "cannot read \(path): \(String(cString: strerror(errno)))",
                    file: path
                )
            }
            if result == 0 { break }
            count += result
        }
        guard count <= limits.maximumByteCount else {
            throw CastConfigError(
                code: .tooLarge,
                message: "document is larger than the limit of \(limits.maximumByteCount) bytes",
                file: path
            )
        }
        return Array(bytes[..<count])
    }

    /// Parses and validates one document as `schema`'s kind.
    static func parse(
        _ bytes: [UInt8],
        file: String,
        as schema: DocumentSchema,
        limits: DocumentLimits
    ) throws(CastConfigError) -> ConfigElement {
        try LibXML2Document.parse(bytes, file: file, limits: limits) {
            (name, namespace, location) throws(CastConfigError) -> DocumentSchema? in
            if let other = schemas.first(where: { $0.rootElement == name && $0.namespace == namespace }),
                other.kind != schema.kind
            {
                throw CastConfigError(
                    .wrongDocumentKind,
                    "expected a \(schema.kind) (<\(schema.rootElement) xmlns=\"\(schema.namespace)\">) but this is a "
                        + "\(other.kind) (<\(other.rootElement)>)",
                    at: location
                )
            }
            return schema
        }
    }

    /// Parses and validates a document of whichever known kind its root element names.
    static func parseAnyKind(
        _ bytes: [UInt8],
        file: String,
        limits: DocumentLimits
    ) throws(CastConfigError) -> (DocumentSchema, ConfigElement) {
        var chosen: DocumentSchema?
        let root = try LibXML2Document.parse(bytes, file: file, limits: limits) {
            (name, namespace, location) throws(CastConfigError) -> DocumentSchema? in
            // Match on the name alone, so a missing or wrong namespace gets the schema's explanation.
            guard
                let schema = schemas.first(where: { $0.rootElement == name && $0.namespace == namespace })
                    ?? schemas.first(where: { $0.rootElement == name })
            else {
                let known = schemas.map { "<\($0.rootElement) xmlns=\"\($0.namespace)\">" }.joined(separator: " or ")
                throw CastConfigError(
                    .wrongDocumentKind,
                    "unknown document kind <\(name)>; expected \(known)",
                    at: location
                )
            }
            chosen = schema
            return schema
        }
        guard let chosen else {
            throw CastConfigError(code: .internalError, message: "no schema was chosen", file: file)
        }
        return (chosen, root)
    }

    /// Loads the document at `path` and every document it extends; returns the chain with the base-most document
    /// first and `path`'s document last.
    static func loadChain(
        path: String,
        as schema: DocumentSchema,
        limits: DocumentLimits
    ) throws(CastConfigError) -> [Document] {
        let bytes = try read(path, limits: limits)
        let root = try parse(bytes, file: path, as: schema, limits: limits)
        return try followExtends(from: Document(path: path, root: root), as: schema, limits: limits)
    }

    /// Follows `extends` from an already parsed document; returns the chain base-most first.
    static func followExtends(
        from document: Document,
        as schema: DocumentSchema,
        limits: DocumentLimits
    ) throws(CastConfigError) -> [Document] {
        var chain = [document]
        var identities = [identity(of: document.path)]
        var current = document
        while let extends = current.root.attribute("extends") {
            let target = resolve(extends.value, relativeTo: current.path)
            let targetIdentity = identity(of: target)
            if let start = identities.firstIndex(of: targetIdentity) {
                let cycle = (chain[start...].map(\.path) + [target]).map(displayName).joined(separator: " → ")
                throw CastConfigError(
                    .extendsCycle,
                    "extends cycle: \(cycle)",
                    at: extends.location
                )
            }
            guard chain.count < limits.maximumExtendsDepth else {
                throw CastConfigError(
                    .extendsTooDeep,
                    "extends chain is longer than \(limits.maximumExtendsDepth) documents: "
                        + (chain.map(\.path) + [target]).map(displayName).joined(separator: " → "),
                    at: extends.location
                )
            }
            let bytes = try read(target, limits: limits, reference: extends.location)
            let root = try parse(bytes, file: target, as: schema, limits: limits)
            current = Document(path: target, root: root)
            chain.append(current)
            identities.append(targetIdentity)
        }
        return chain.reversed()
    }

    /// `reference` resolved against the directory of `document`; absolute references stay as they are.
    static func resolve(_ reference: String, relativeTo document: String) -> String {
        if reference.hasPrefix("/") {
            return reference
        }
        guard let slash = document.lastIndex(of: "/") else {
            return reference
        }
        return String(document[...slash]) + reference
    }

    /// The file's canonical identity: symbolic links, `.` and `..` resolved, so two spellings of one file compare
    /// equal. Falls back to the path itself for files that do not exist (they fail when read).
    static func identity(of path: String) -> String {
        guard let resolved = realpath(path, nil) else {
            return path
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func displayName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}

/// POSIX `read`, named apart from ``DocumentLoader/read(_:limits:reference:)``.
private func readFile(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
