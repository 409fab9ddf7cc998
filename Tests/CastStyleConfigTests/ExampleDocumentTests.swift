// swift-cast — Apache-2.0

import CastDiscovery
import CastSession
import CastStyleConfig
import Testing

/// The documented examples in Tools/profiles stay valid and mean what their comments say.
@Suite("Example documents")
struct ExampleDocumentTests {
    @Test(
        "every example validates",
        arguments: [
            ("default.xml", CastConfigDocumentKind.profile), ("living-room.xml", .profile),
            ("cast-connect.xml", .profile), ("castd.xml", .profile),
            ("styles/high-contrast.xml", .style), ("styles/solarized.xml", .style),
        ]
    )
    func validates(name: String, kind: CastConfigDocumentKind) throws {
        #expect(try CastConfigValidator.validate(contentsOfFile: examplesDirectory + "/" + name) == kind)
    }

    @Test("default.xml spells out exactly the built-in defaults")
    func defaultProfile() throws {
        let resolved = try CastProfile(contentsOfFile: examplesDirectory + "/default.xml").resolved()
        let builtIn = try ProfileResolver().resolve()
        let explicit = resolved.provenance.filter { $0.key != "profile" }
        let defaults = builtIn.provenance.filter { $0.key != "profile" }
        #expect(explicit.map(\.key) == defaults.map(\.key))
        #expect(explicit.map(\.value) == defaults.map(\.value))
        // Every scalar setting except the credentials, the style, the state directory and the MQTT site and
        // credentials (whose defaults are the host name and none) is written out.
        #expect(
            Set(explicit.filter { $0.source.kind == .profile }.map(\.key))
                == Set(ProfileResolver.keys.map(\.key)).subtracting([
                    "credentials.data", "credentials.type", "style.path", "session.stateDirectory",
                    "deviceAuth.trustAnchors",
                    "daemon.site", "daemon.brokerUsername", "daemon.brokerPasswordFile", "daemon.brokerCAFile",
                ])
                .union(["staticDevices"])
        )
    }

    @Test("castd.xml opens castd to the network with a token, a media folder and an origin")
    func castd() throws {
        let resolved = try CastProfile(contentsOfFile: examplesDirectory + "/castd.xml").resolved()
        #expect(resolved.daemon.listen == "0.0.0.0:8765")
        #expect(resolved.daemon.tokenHashes.count == 1)
        #expect(resolved.daemon.mediaFolders == ["/srv/media"])
        #expect(resolved.daemon.allowedOrigins == ["https://home.example"])
        #expect(resolved.daemon.requestsPerSecond == 20)
        #expect(resolved.daemon.maximumBodySize == 65536)
        #expect(resolved.options.staticDevices.map(\.friendlyName) == ["Living Room TV"])
    }

    @Test("living-room.xml extends default.xml and uses the Solarized style")
    func livingRoom() throws {
        let resolved = try CastProfile(contentsOfFile: examplesDirectory + "/living-room.xml").resolved()
        #expect(
            resolved.profilePaths.map { $0.split(separator: "/").last.map(String.init) } == [
                "default.xml", "living-room.xml",
            ]
        )
        #expect(resolved.options.requestTimeout == .seconds(5))
        #expect(resolved.options.connectTimeout == .seconds(10))
        #expect(resolved.options.heartbeat.pingInterval == .milliseconds(2500))
        #expect(resolved.options.reconnectPolicy.maximumDelay == .seconds(60))
        #expect(resolved.options.reconnectPolicy.maximumAttempts == 20)
        #expect(resolved.options.volumeStep == 0.05)
        #expect(resolved.options.stopsReceiverApplicationWhenEndingSession)
        #expect(resolved.options.staticDevices.map(\.friendlyName) == ["Living Room TV", "Living Room speakers"])
        #expect(resolved.options.staticDevices.last?.port == 42001)
        #expect(resolved.options.staticDevices.last?.isGroup == false, "a group only once the device says so")
        #expect(resolved.discoveryCriteria.requiredCapabilities == .videoOut)
        #expect(resolved.logFilter.minimumLevel == .notice)
        #expect(resolved.logFilter.level(forCategory: "CastSession.Reconnect") == .debug)
        #expect(resolved.style.style.paths.last?.hasSuffix("styles/solarized.xml") == true)
        #expect(resolved.style.attributes(for: .miniController).backgroundColor == CastColor(parsing: "#073642"))
    }

    @Test("cast-connect.xml launches the Android TV app with credentials")
    func castConnect() throws {
        let resolved = try CastProfile(contentsOfFile: examplesDirectory + "/cast-connect.xml").resolved()
        #expect(resolved.options.receiverApplicationID == "A1B2C3D4")
        #expect(resolved.options.launchOptions.androidReceiverCompatible)
        #expect(resolved.options.launchOptions.language == "en-GB")
        #expect(resolved.options.launchCredentials?.credentialsType == "android")
        #expect(resolved.options.launchTimeout == .seconds(45))
        #expect(
            resolved.discoveryCriteria == DiscoveryCriteria(applicationID: "A1B2C3D4", requiredCapabilities: .videoOut)
        )
        #expect(resolved.logFilter.messagePatterns.count == 1)
        #expect(resolved.style.attributes(for: .castViews).glyph(.play) == "[>]")
    }

    @Test("the example styles resolve as their comments describe")
    func styles() throws {
        let solarized = try CastStyle(contentsOfFile: examplesDirectory + "/styles/solarized.xml").resolved()
        #expect(solarized.attributes(for: .castDialog).headingTextColor == CastColor(parsing: "#b58900"))
        #expect(solarized.attributes(for: .castDialog).iconTintColor == CastColor(parsing: "#859900"))
        #expect(solarized.attributes(for: .queueView).bodyTextColor == CastColor(parsing: "#93a1a1"))
        #expect(solarized.attributes(for: .expandedController).headingTextFont.size == "24pt")
        #expect(solarized.attributes(for: .expandedController).headingTextFont.family == "Source Sans Pro")
        let contrast = try CastStyle(contentsOfFile: examplesDirectory + "/styles/high-contrast.xml").resolved()
        #expect(contrast.attributes(for: .noDevicesScreen).bodyTextColor == CastColor(parsing: "yellow"))
        #expect(contrast.attributes(for: .introductoryOverlay).backgroundColor == CastColor(parsing: "yellow"))
        #expect(contrast.attributes(for: .queueView).glyph(.skipNext) == "[>>|]")
        #expect(contrast.attributes(for: .miniController).bodyTextFont.isBold)
    }

    @Test("the validator rejects unknown documents")
    func unknownDocument() {
        let directory = TemporaryDirectory()
        let path = directory.write("x.xml", "<html/>")
        let error = expectConfigError(.wrongDocumentKind) { () throws(CastConfigError) in
            try CastConfigValidator.validate(contentsOfFile: path)
        }
        #expect(error?.message.contains("unknown document kind <html>") == true)
    }
}
