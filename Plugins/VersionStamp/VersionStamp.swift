import Foundation
import PackagePlugin

/// Stamps the target it is applied to (CastVersion) with the package's version: VERSION at the repository's top and
/// the git commit the sources are at, written by Tools/version-stamp.sh as `Version.swift`.
///
/// A build command with the files it reads as inputs: the build runs it again when VERSION or the script changes, or
/// when git moves HEAD (a commit, checkout, reset or pull rewrites HEAD's reflog), and at no other time.
@main
struct VersionStamp: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let package = context.package.directoryURL
        let script = package.appending(path: "Tools/version-stamp.sh")
        let output = context.pluginWorkDirectoryURL.appending(path: "Version.swift")
        return [
            .buildCommand(
                displayName: "Stamping \(target.name) with VERSION and the git commit",
                executable: URL(fileURLWithPath: "/bin/bash"),
                arguments: [script.path, output.path],
                inputFiles: [script, package.appending(path: "VERSION")] + gitFiles(in: package),
                outputFiles: [output]
            )
        ]
    }

    /// The files git rewrites whenever HEAD moves: HEAD and its reflog, those that exist (none outside a checkout).
    private func gitFiles(in package: URL) -> [URL] {
        var gitDirectory = package.appending(path: ".git")
        // In a worktree or a submodule, .git is a file naming the repository's folder.
        if let text = try? String(contentsOf: gitDirectory, encoding: .utf8), text.hasPrefix("gitdir: ") {
            let path = text.dropFirst("gitdir: ".count).trimmingCharacters(in: .whitespacesAndNewlines)
            gitDirectory = path.hasPrefix("/") ? URL(fileURLWithPath: path) : package.appending(path: path)
        }
        return ["HEAD", "logs/HEAD"].map { gitDirectory.appending(path: $0) }
            .filter { FileManager.default.fileExists(atPath: $0.path) }
    }
}
