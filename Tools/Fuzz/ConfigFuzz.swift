// swift-cast — Apache-2.0

import CastStyleConfig

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The XML profile and style loaders (libxml2 with the bundled XSDs, then the package's own checks).
///
/// Relative `extends` and style paths resolve against the working directory; `Tools/fuzz.sh` runs these targets
/// in a scratch copy of `Tools/profiles`, so inputs can reach real documents to extend.
enum ConfigFuzz {
    /// The input as an option profile held in memory, resolved with its style; then as a file of either kind.
    static func profile(_ bytes: [UInt8]) {
        if let profile = try? CastProfile(xml: FuzzInput.text(bytes)) {
            _ = profile.values.count
            if let resolved = try? profile.resolved() {
                _ = resolved.formattedProvenance()
                _ = resolved.style.dump()
            }
        }
        validateFile(bytes)
    }

    /// The input as a style held in memory, resolved and printed; then as a file of either kind.
    static func style(_ bytes: [UInt8]) {
        if let style = try? CastStyle(xml: FuzzInput.text(bytes)) {
            _ = style.resolved().dump()
        }
        validateFile(bytes)
    }

    /// `cast config validate FILE` on the raw bytes (no UTF-8 repair, so encodings and byte order marks count).
    private static func validateFile(_ bytes: [UInt8]) {
        let path = "cast-fuzz-input-\(getpid()).xml"
        guard let file = fopen(path, "wb") else { return }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
        defer { unlink(path) }
        guard written == bytes.count else { return }
        _ = try? CastConfigValidator.validate(contentsOfFile: path)
    }
}
