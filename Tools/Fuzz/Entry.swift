// swift-cast — Apache-2.0

import CastTransport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if CAST_FUZZING

// The libFuzzer build (`Tools/fuzz.sh`): the targets run inside libFuzzer's driver; `CAST_FUZZ_TARGET` names one.
//
// SwiftPM links every Linux executable with `--defsym main=cast_fuzz_main`, so the `main` in libFuzzer's runtime
// can never be the entry point of this product. `cast_fuzz_main` is therefore defined here and hands over to
// libFuzzer's documented driver entry, `LLVMFuzzerRunDriver` (declared with `@_extern(c)`, which needs
// `-enable-experimental-feature Extern`).

@_extern(c, "LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The target `CAST_FUZZ_TARGET` names; the process stops with the list when it names none, and prints the names
/// one per line when it is `list`.
let selectedTarget: FuzzTarget = {
    let name = getenv("CAST_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    if let target = FuzzTarget.named(name) { return target }
    if name == "list" {
        LocalFiles.write(FuzzTarget.all.map { $0.name + "\n" }.joined(), to: 1)
        exit(0)
    }
    let names = FuzzTarget.all.map(\.name).joined(separator: " ")
    LocalFiles.write("cast-fuzz: set CAST_FUZZ_TARGET to one of: \(names)\n", to: 2)
    exit(2)
}()

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selectedTarget.run(bytes)
    return 0
}

@_cdecl("cast_fuzz_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    _ = selectedTarget
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzTestOneInput(data, size) }
}

#else

/// The ordinary build: replays inputs (corpus files, crash reproducers) through a target. A crash ends the
/// process with a signal, so a non-zero exit status means an input crashed.
@main
enum CastFuzz {
    static let usage = """
        usage: cast-fuzz list
               cast-fuzz replay TARGET PATH...   (files, or folders of inputs)

        """

    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case "list":
            for target in FuzzTarget.all { print("\(target.name)\t\(target.summary)") }
        case "replay" where arguments.count >= 3:
            guard let target = FuzzTarget.named(arguments[1]) else {
                let names = FuzzTarget.all.map(\.name).joined(separator: " ")
                fail("unknown target '\(arguments[1])'; targets: \(names)")
            }
            var count = 0
            for path in arguments.dropFirst(2) {
                for file in inputFiles(at: path) {
                    guard let bytes = LocalFiles.read(file) else { fail("cannot read \(file)") }
                    target.run(bytes)
                    count += 1
                }
            }
            print("replay \(target.name): \(count) inputs, no crash")
        default:
            LocalFiles.write(usage, to: 2)
            exit(2)
        }
    }

    /// `path` itself when it is a file; the files in it (not recursively, sorted) when it is a folder.
    static func inputFiles(at path: String) -> [String] {
        var info = stat()
        guard stat(path, &info) == 0 else { fail("\(path): no such file or folder") }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return [path] }
        guard let folder = opendir(path) else { fail("cannot open \(path)") }
        defer { closedir(folder) }
        var files: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard !name.hasPrefix(".") else { continue }
            var entryInfo = stat()
            let file = path.hasSuffix("/") ? path + name : path + "/" + name
            if stat(file, &entryInfo) == 0, (entryInfo.st_mode & S_IFMT) == S_IFREG { files.append(file) }
        }
        return files.sorted()
    }

    static func fail(_ message: String) -> Never {
        LocalFiles.write("cast-fuzz: \(message)\n", to: 2)
        exit(2)
    }
}

#endif
