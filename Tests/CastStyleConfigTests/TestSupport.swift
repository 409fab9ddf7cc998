// swift-cast — Apache-2.0
//
// No Foundation here: `@testable import CastStyleConfig` also loads its libxml2 module, whose system-ICU headers
// clash with Foundation's bundled ICU in one module (see Modules/CastStyleConfig/README.md). Files are POSIX.

import Testing

@testable import CastStyleConfig

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A directory under /tmp that is removed, with everything written through it, when the value goes away.
final class TemporaryDirectory {
    let path: String
    private var files: [String] = []
    private var directories: [String] = []

    init() {
        var template = Array("/tmp/cast-style-config-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { buffer -> String in
            guard let created = mkdtemp(buffer.baseAddress!) else { preconditionFailure("mkdtemp failed") }
            return String(cString: created)
        }
    }

    deinit {
        for file in files.reversed() {
            unlink(file)
        }
        for directory in directories.reversed() {
            rmdir(directory)
        }
        rmdir(path)
    }

    /// The absolute path of `name` inside the directory.
    func url(_ name: String) -> String {
        path + "/" + name
    }

    /// Writes `text` to `name` (creating intermediate directories) and returns its path.
    @discardableResult
    func write(_ name: String, _ text: String) -> String {
        write(name, bytes: Array(text.utf8))
    }

    /// Writes `bytes` to `name` and returns its path.
    @discardableResult
    func write(_ name: String, bytes: [UInt8]) -> String {
        let path = prepare(name)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        precondition(descriptor >= 0, "cannot create \(path)")
        defer { close(descriptor) }
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                precondition(written > 0, "write failed")
                offset += written
            }
        }
        return path
    }

    /// Writes a file of `count` chunks produced by `chunk`, without holding more than one chunk in memory.
    @discardableResult
    func write(_ name: String, chunks count: Int, chunk: (Int) -> [UInt8]) -> String {
        let path = prepare(name)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        precondition(descriptor >= 0, "cannot create \(path)")
        defer { close(descriptor) }
        for index in 0..<count {
            let bytes = chunk(index)
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    precondition(written > 0, "write failed")
                    offset += written
                }
            }
        }
        return path
    }

    /// Creates a symbolic link `name` pointing at `target`.
    func symlink(_ name: String, to target: String) {
        let path = prepare(name)
        precondition(Glibc.symlink(target, path) == 0, "symlink failed")
    }

    private func prepare(_ name: String) -> String {
        var current = path
        for component in name.split(separator: "/").dropLast() {
            current += "/" + component
            if mkdir(current, 0o755) == 0 {
                directories.append(current)
            }
        }
        let full = url(name)
        files.append(full)
        return full
    }
}

/// The repository root, found from this file's path.
let repositoryRoot: String = {
    var components = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    components.removeLast(3)  // Tests/CastStyleConfigTests/TestSupport.swift
    return components.joined(separator: "/")
}()

/// The example profiles directory.
let examplesDirectory = repositoryRoot + "/Tools/profiles"

/// Runs `body`, expecting it to throw a ``CastConfigError`` with `code`; returns the error for further checks.
@discardableResult
func expectConfigError(
    _ code: CastConfigError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws(CastConfigError) -> Void
) -> CastConfigError? {
    do {
        try body()
        Issue.record("expected \(code), but nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        return error
    }
}

/// A profile document with `body` inside `<castProfile>`.
func profileXML(_ body: String, extends: String? = nil) -> String {
    let attribute = extends.map { " extends=\"\($0)\"" } ?? ""
    return """
        <?xml version="1.0" encoding="UTF-8"?>
        <castProfile xmlns="urn:swift-cast:profile:1"\(attribute)>
        \(body)
        </castProfile>
        """
}
