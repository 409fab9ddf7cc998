// swift-cast — Apache-2.0

import CastDiscovery
import CastLogging
import CastSession
import Testing

@testable import CastStyleConfig

@Suite("Option profiles")
struct ProfileTests {
    @Test("every element maps onto CastOptions, DiscoveryCriteria and LogFilter")
    func fullProfile() throws {
        let xml = profileXML(
            """
              <receiver applicationID="A1B2C3D4"/>
              <discovery applicationID="default-media-receiver" requiredCapabilities="videoOut audioOut"/>
              <launch language="de-DE" relaunchIfRunning="true" androidReceiverCompatible="1"/>
              <credentials data="token-123" type="android"/>
              <timeouts connect="2.5s" request="500ms" launch="2m"/>
              <heartbeat interval="none" deadAfter="1h"/>
              <reconnect initialDelay="250ms" maximumDelay="45s" multiplier="1.5" jitter="0" maximumAttempts="7"/>
              <session resumeSavedSessions="false" stopReceiverApplicationOnEnd="true" waitWhileSuspended="true"
                       stateDirectory="/var/tmp/cast-state"/>
              <volume step="0.05"/>
              <staticDevices>
                <device host="192.168.1.20" name="Living Room TV"/>
                <device host="fe80::1" port="42001"/>
              </staticDevices>
              <logging level="debug">
                <category pattern="CastSession*" level="trace"/>
                <category pattern="CastTransport.Heartbeat" level="error"/>
                <message pattern="^LOAD" caseInsensitive="true"/>
                <message pattern="SEEK"/>
              </logging>
            """
        )
        let resolved = try CastProfile(xml: xml).resolved()
        let options = resolved.options
        #expect(options.receiverApplicationID == "A1B2C3D4")
        #expect(options.launchOptions.language == "de-DE")
        #expect(options.launchOptions.relaunchIfRunning)
        #expect(options.launchOptions.androidReceiverCompatible)
        #expect(options.launchCredentials == CredentialsData(credentials: "token-123", credentialsType: "android"))
        #expect(options.connectTimeout == .milliseconds(2500))
        #expect(options.requestTimeout == .milliseconds(500))
        #expect(options.launchTimeout == .seconds(120))
        #expect(options.heartbeat.pingInterval == nil)
        #expect(options.heartbeat.deadAfter == .seconds(3600))
        #expect(options.reconnectPolicy.initialDelay == .milliseconds(250))
        #expect(options.reconnectPolicy.maximumDelay == .seconds(45))
        #expect(options.reconnectPolicy.multiplier == 1.5)
        #expect(options.reconnectPolicy.jitter == 0)
        #expect(options.reconnectPolicy.maximumAttempts == 7)
        #expect(options.resumesSavedSessions == false)
        #expect(options.stopsReceiverApplicationWhenEndingSession)
        #expect(options.requestsWaitWhileSuspended)
        #expect(options.stateDirectory == "/var/tmp/cast-state")
        #expect(options.volumeStep == 0.05)
        #expect(
            options.staticDevices == [
                .staticDevice(host: "192.168.1.20", port: 8009, name: "Living Room TV"),
                .staticDevice(host: "fe80::1", port: 42001),
            ]
        )
        #expect(resolved.discoveryCriteria.applicationID == "CC1AD845")
        #expect(resolved.discoveryCriteria.requiredCapabilities == [.videoOut, .audioOut])

        let filter = resolved.logFilter
        #expect(filter.minimumLevel == .debug)
        #expect(filter.level(forCategory: "CastSession.Reconnect") == .trace)
        #expect(filter.level(forCategory: "CastTransport.Heartbeat") == .error)
        #expect(filter.level(forCategory: "CastMedia") == .debug)
        #expect(filter.messagePatterns.map(\.description) == ["/^LOAD/i", "/SEEK/"])
        #expect(filter.allows(.trace, category: "CastSession", message: "load started"))
        #expect(!filter.allows(.info, category: "CastMedia", message: "PLAY"))
    }

    @Test("an empty profile resolves to the built-in defaults")
    func emptyProfile() throws {
        let resolved = try CastProfile(xml: profileXML("")).resolved()
        let defaults = CastOptions()
        #expect(resolved.options.receiverApplicationID == defaults.receiverApplicationID)
        #expect(resolved.options.connectTimeout == defaults.connectTimeout)
        #expect(resolved.options.requestTimeout == defaults.requestTimeout)
        #expect(resolved.options.launchTimeout == defaults.launchTimeout)
        #expect(resolved.options.heartbeat == defaults.heartbeat)
        #expect(resolved.options.reconnectPolicy == defaults.reconnectPolicy)
        #expect(resolved.options.launchOptions == defaults.launchOptions)
        #expect(resolved.options.launchCredentials == nil)
        #expect(resolved.options.staticDevices.isEmpty)
        #expect(resolved.options.volumeStep == nil)
        #expect(resolved.discoveryCriteria == DiscoveryCriteria())
        #expect(resolved.logFilter == LogFilter())
        #expect(resolved.style == .builtIn)
        #expect(resolved.provenance.filter { $0.key != "profile" }.allSatisfy { $0.source == .builtInDefault })
    }

    @Test("the default-media-receiver alias means CC1AD845")
    func defaultMediaReceiverAlias() throws {
        let resolved = try CastProfile(xml: profileXML(#"<receiver applicationID="default-media-receiver"/>"#))
            .resolved()
        #expect(resolved.options.receiverApplicationID == CastOptions.defaultMediaReceiverApplicationID)
    }

    @Test("profile values carry the file and line that set them")
    func valuesCarryLocations() throws {
        let profile = try CastProfile(
            xml: profileXML(#"  <timeouts request="4s"/>"# + "\n" + #"  <credentials data="secret"/>"#),
            file: "/etc/cast/p.xml"
        )
        #expect(
            profile.values.map(\.description) == [
                "credentials.data = <redacted>  (profile /etc/cast/p.xml:4)",
                "timeouts.request = 4s  (profile /etc/cast/p.xml:3)",
            ]
        )
    }

    @Test("a bad value that passes the schema still fails when the profile loads")
    func invalidRegularExpression() {
        let error = expectConfigError(.invalidValue) { () throws(CastConfigError) in
            _ = try CastProfile(xml: profileXML(#"<logging><message pattern="(unclosed"/></logging>"#), file: "p.xml")
        }
        #expect(error?.line == 3)
        #expect(error?.message.contains("attribute 'pattern' must be a valid regular expression") == true)
    }

    @Test("discovery scanRanges lists the ranges to scan; a range over 4096 addresses fails where it is written")
    func scanRanges() throws {
        let resolved = try CastProfile(xml: profileXML(#"<discovery scanRanges="192.168.2.0/24 10.0.0.7/30"/>"#))
            .resolved()
        #expect(resolved.discoveryScanRanges.map(\.description) == ["192.168.2.0/24", "10.0.0.4/30"])
        #expect(resolved.value(forKey: "discovery.scanRanges")?.value == "192.168.2.0/24 10.0.0.4/30")
        #expect(try CastProfile(xml: profileXML("")).resolved().discoveryScanRanges.isEmpty)

        let error = expectConfigError(.invalidValue) { () throws(CastConfigError) in
            _ = try CastProfile(xml: profileXML(#"<discovery scanRanges="10.0.0.0/8"/>"#), file: "p.xml")
        }
        #expect(error?.line == 3)
        #expect(
            error?.message
                == "element 'discovery': attribute 'scanRanges' must be none or a list of IPv4 ranges A.B.C.D/N of "
                + "at most 4096 addresses each (found '10.0.0.0/8')"
        )
        let schemaError = expectConfigError(.schemaViolation) { () throws(CastConfigError) in
            _ = try CastProfile(xml: profileXML(#"<discovery scanRanges="fe80::/120"/>"#), file: "p.xml")
        }
        #expect(schemaError?.message.contains("IPv4 ranges") == true)
    }

    @Test("a style document where a profile is expected is the wrong kind")
    func wrongKind() {
        let error = expectConfigError(.wrongDocumentKind) { () throws(CastConfigError) in
            _ = try CastProfile(xml: #"<castViews xmlns="urn:swift-cast:style:1"/>"#)
        }
        #expect(error?.message.contains("expected a profile") == true)
    }

    @Test("a missing profile file is fileNotFound")
    func missingFile() {
        let error = expectConfigError(.fileNotFound) { () throws(CastConfigError) in
            _ = try CastProfile(contentsOfFile: "/nonexistent/cast/profile.xml")
        }
        #expect(error?.file == "/nonexistent/cast/profile.xml")
    }

    @Test("a directory is not a profile")
    func directory() {
        let directory = TemporaryDirectory()
        expectConfigError(.unreadableFile) { () throws(CastConfigError) in
            _ = try CastProfile(contentsOfFile: directory.path)
        }
    }
}

@Suite("Profile extends")
struct ProfileExtendsTests {
    @Test("extends resolves relative to the including file; values override, lists append")
    func relativeExtends() throws {
        let directory = TemporaryDirectory()
        directory.write(
            "base/base.xml",
            profileXML(
                """
                  <timeouts connect="3s" request="4s"/>
                  <staticDevices><device host="10.0.0.1" name="Base"/></staticDevices>
                  <logging level="warning"><category pattern="Cast*" level="info"/></logging>
                """
            )
        )
        let child = directory.write(
            "profiles/child.xml",
            profileXML(
                """
                  <timeouts request="6s"/>
                  <staticDevices><device host="10.0.0.2" name="Child"/></staticDevices>
                  <logging><category pattern="CastMedia" level="trace"/></logging>
                """,
                extends: "../base/base.xml"
            )
        )
        let profile = try CastProfile(contentsOfFile: child)
        #expect(profile.paths == [directory.url("profiles/../base/base.xml"), child])
        let resolved = try profile.resolved()
        #expect(resolved.options.connectTimeout == .seconds(3))
        #expect(resolved.options.requestTimeout == .seconds(6))
        #expect(resolved.options.staticDevices.map(\.friendlyName) == ["Base", "Child"])
        #expect(resolved.logFilter.minimumLevel == .warning)
        #expect(resolved.logFilter.categoryLevels.map(\.pattern.text) == ["Cast*", "CastMedia"])
        #expect(resolved.value(forKey: "timeouts.connect")?.source.name == directory.url("profiles/../base/base.xml"))
        #expect(resolved.value(forKey: "timeouts.request")?.source.name == child)
    }

    @Test("inherit=\"false\" replaces the base's lists")
    func inheritFalse() throws {
        let directory = TemporaryDirectory()
        directory.write(
            "base.xml",
            profileXML(
                """
                  <staticDevices><device host="10.0.0.1"/></staticDevices>
                  <logging><category pattern="Cast*" level="info"/><message pattern="x"/></logging>
                """
            )
        )
        let child = directory.write(
            "child.xml",
            profileXML(
                """
                  <staticDevices inherit="false"><device host="10.0.0.2"/></staticDevices>
                  <logging inherit="false"/>
                """,
                extends: "base.xml"
            )
        )
        let resolved = try CastProfile(contentsOfFile: child).resolved()
        #expect(resolved.options.staticDevices.map(\.host) == ["10.0.0.2"])
        #expect(resolved.logFilter.categoryLevels.isEmpty)
        #expect(resolved.logFilter.messagePatterns.isEmpty)
    }

    @Test("a cycle is detected and named, at the extends attribute that closes it")
    func cycle() {
        let directory = TemporaryDirectory()
        let a = directory.write("a.xml", profileXML("", extends: "b.xml"))
        directory.write("b.xml", profileXML("", extends: "sub/c.xml"))
        directory.write("sub/c.xml", profileXML("", extends: "../a.xml"))
        let error = expectConfigError(.extendsCycle) { () throws(CastConfigError) in
            _ = try CastProfile(contentsOfFile: a)
        }
        #expect(error?.message == "extends cycle: a.xml → b.xml → c.xml → a.xml")
        #expect(error?.file == directory.url("b.xml").replacingLastComponent(with: "sub/c.xml"))
        #expect(error?.line == 2)
        #expect(error?.column == 47)
    }

    @Test("a profile extending itself, also through a symbolic link, is a cycle")
    func selfCycle() {
        let directory = TemporaryDirectory()
        let path = directory.write("self.xml", profileXML("", extends: "link.xml"))
        directory.symlink("link.xml", to: path)
        let error = expectConfigError(.extendsCycle) { () throws(CastConfigError) in
            _ = try CastProfile(contentsOfFile: path)
        }
        #expect(error?.message == "extends cycle: self.xml → link.xml")
    }

    @Test("chains longer than the limit are rejected")
    func tooDeep() throws {
        let directory = TemporaryDirectory()
        for index in 0..<9 {
            directory.write("p\(index).xml", profileXML("", extends: index < 8 ? "p\(index + 1).xml" : nil))
        }
        expectConfigError(.extendsTooDeep) { () throws(CastConfigError) in
            _ = try CastProfile(contentsOfFile: directory.url("p0.xml"))
        }
        // Eight documents are fine.
        #expect(try CastProfile(contentsOfFile: directory.url("p1.xml")).paths.count == 8)
    }

    @Test("a missing base is fileNotFound, located at the extends attribute")
    func missingBase() {
        let directory = TemporaryDirectory()
        let path = directory.write("child.xml", profileXML("", extends: "missing.xml"))
        let error = expectConfigError(.fileNotFound) { () throws(CastConfigError) in
            _ = try CastProfile(contentsOfFile: path)
        }
        #expect(error?.file == path)
        #expect(error?.line == 2)
        #expect(error?.message.contains("missing.xml") == true)
    }

    @Test(
        "extends must be a local path, never a URL",
        arguments: ["http://example.com/base.xml", "file:///etc/base.xml"]
    )
    func urlRejected(reference: String) {
        let error = expectConfigError(.schemaViolation) { () throws(CastConfigError) in
            _ = try CastProfile(xml: profileXML("", extends: reference))
        }
        #expect(error?.message.contains("must be a local file path") == true)
    }

    @Test("a bad base fails the whole chain with the base's location")
    func badBase() {
        let directory = TemporaryDirectory()
        directory.write("base.xml", profileXML(#"<timeouts request="soon"/>"#))
        let child = directory.write("child.xml", profileXML("", extends: "base.xml"))
        let error = expectConfigError(.schemaViolation) { () throws(CastConfigError) in
            _ = try CastProfile(contentsOfFile: child)
        }
        #expect(error?.file == directory.url("base.xml"))
        #expect(error?.line == 3)
    }
}

extension String {
    /// The path with its last component replaced by `component`.
    fileprivate func replacingLastComponent(with component: String) -> String {
        guard let slash = lastIndex(of: "/") else { return component }
        return String(self[...slash]) + component
    }
}
