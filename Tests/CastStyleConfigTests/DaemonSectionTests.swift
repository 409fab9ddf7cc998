// swift-cast — Apache-2.0

import Testing

@testable import CastStyleConfig

/// The `<daemon>` section: castd's listen address, tokens, media folders, origins and limits, in the same
/// settings table as the rest of the profile.
@Suite struct DaemonSectionTests {
    static let hash = "sha256:" + String(repeating: "ab", count: 32)

    @Test func defaultsAreTheServicesOwn() throws {
        let resolved = try ProfileResolver().resolve()
        #expect(resolved.daemon == DaemonSettings())
        #expect(resolved.value(forKey: "daemon.listen")?.value == "127.0.0.1:8765")
        #expect(resolved.value(forKey: "daemon.requestsPerSecond")?.value == "50")
    }

    @Test func everySettingIsRead() throws {
        let directory = TemporaryDirectory()
        let path = directory.write(
            "profiles/castd.xml",
            profileXML(
                """
                <daemon listen="[::]:9000" requestsPerSecond="none" burst="5" maximumBodySize="1024">
                    <token hash="\(Self.hash)"/>
                    <mediaFolder path="../media"/>
                    <mediaFolder path="/srv/films"/>
                    <allowedOrigin origin="https://home.example"/>
                </daemon>
                """
            )
        )
        let resolved = try CastProfile(contentsOfFile: path).resolved()
        var expected = DaemonSettings()
        expected.listen = "[::]:9000"
        expected.requestsPerSecond = nil
        expected.burst = 5
        expected.maximumBodySize = 1024
        expected.tokenHashes = [Self.hash]
        expected.mediaFolders = [directory.url("profiles/../media"), "/srv/films"]
        expected.allowedOrigins = ["https://home.example"]
        #expect(resolved.daemon == expected)
        let tokenRow = try #require(resolved.value(forKey: "daemon.token"))
        #expect(tokenRow.source.line == 4)
    }

    @Test func anExtendingProfileAppendsToTheListsUnlessItSaysNotTo() throws {
        let directory = TemporaryDirectory()
        directory.write(
            "base.xml",
            profileXML(#"<daemon><token hash="\#(Self.hash)"/><mediaFolder path="/base"/></daemon>"#)
        )
        let appending = directory.write(
            "appending.xml",
            profileXML(#"<daemon listen="127.0.0.1:1"><mediaFolder path="/more"/></daemon>"#, extends: "base.xml")
        )
        let resolved = try CastProfile(contentsOfFile: appending).resolved()
        #expect(resolved.daemon.tokenHashes == [Self.hash])
        #expect(resolved.daemon.mediaFolders == ["/base", "/more"])
        #expect(resolved.daemon.listen == "127.0.0.1:1")

        let replacing = directory.write(
            "replacing.xml",
            profileXML(#"<daemon inherit="false"><mediaFolder path="/only"/></daemon>"#, extends: "base.xml")
        )
        let replaced = try CastProfile(contentsOfFile: replacing).resolved()
        #expect(replaced.daemon.tokenHashes.isEmpty)
        #expect(replaced.daemon.mediaFolders == ["/only"])
    }

    @Test(
        "bad values name the element, the attribute and what was expected",
        arguments: [
            (#"<daemon><token hash="md5:abc"/></daemon>"#, "sha256: and 64 hex digits"),
            (#"<daemon listen="8765"/>"#, "HOST:PORT"),
            (#"<daemon><allowedOrigin origin="home.example"/></daemon>"#, "a web origin"),
            (#"<daemon requestsPerSecond="fast"/>"#, "requests per second"),
            (#"<daemon><mediaFolder path="http://example.com/media"/></daemon>"#, "a local file path"),
            (#"<daemon><mediaFolder/></daemon>"#, "path"),
            (#"<daemon burst="0"/>"#, "burst"),
        ]
    )
    func badValues(body: String, expected: String) {
        let error = expectConfigError(.schemaViolation) { () throws(CastConfigError) in
            _ = try CastProfile(xml: profileXML(body))
        }
        #expect(error?.line == 3)
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }

    @Test func theEnvironmentSetsTheScalars() throws {
        let resolved = try ProfileResolver(
            environment: ["CAST_DAEMON_LISTEN": "127.0.0.1:9999", "CAST_DAEMON_BURST": "7"]
        ).resolve()
        #expect(resolved.daemon.listen == "127.0.0.1:9999")
        #expect(resolved.daemon.burst == 7)
        let error = expectConfigError(.invalidValue) { () throws(CastConfigError) in
            _ = try ProfileResolver(environment: ["CAST_DAEMON_MAXIMUM_BODY_SIZE": "-1"]).resolve()
        }
        #expect(error?.message.contains("CAST_DAEMON_MAXIMUM_BODY_SIZE must be a whole number of at least 1") == true)
    }
}
