// swift-cast — Apache-2.0

import CastDiscovery
import CastLogging
import CastSession
import CastStyleConfig
import CastTransport
import Testing

@Suite("Precedence and provenance")
struct ResolverTests {
    @Test(
        "command line > environment > profile > default, setting by setting",
        arguments: [
            (true, true, true, "9s", ConfigSource(kind: .commandLine, name: "timeouts.request")),
            (false, true, true, "8s", ConfigSource(kind: .environment, name: "CAST_REQUEST_TIMEOUT")),
            (false, false, true, "7s", nil),
            (false, false, false, "10s", ConfigSource.builtInDefault),
        ]
    )
    func precedence(commandLine: Bool, environment: Bool, profile: Bool, expected: String, source: ConfigSource?) throws
    {
        let directory = TemporaryDirectory()
        let path = directory.write("profile.xml", profileXML(profile ? #"  <timeouts request="7s"/>"# : ""))
        let resolver = ProfileResolver(
            cliOverrides: commandLine ? ["timeouts.request": "9s"] : [:],
            environment: environment ? ["CAST_REQUEST_TIMEOUT": "8s"] : [:],
            userProfilePath: path
        )
        let resolved = try resolver.resolve()
        #expect(resolved.options.requestTimeout == ConfigDuration.parse(expected))
        let row = try #require(resolved.value(forKey: "timeouts.request"))
        #expect(row.value == expected)
        #expect(row.source == (source ?? ConfigSource(kind: .profile, name: path, line: 3)))
        // Other settings are untouched by the overrides.
        #expect(resolved.value(forKey: "timeouts.connect")?.source == .builtInDefault)
    }

    @Test("each layer wins only the settings it sets")
    func mixedLayers() throws {
        let directory = TemporaryDirectory()
        let path = directory.write(
            "profile.xml",
            profileXML(#"  <receiver applicationID="A1B2C3D4"/><heartbeat interval="2s" deadAfter="6s"/>"#)
        )
        let resolved = try ProfileResolver(
            cliOverrides: ["heartbeat.deadAfter": "none"],
            environment: ["CAST_HEARTBEAT_INTERVAL": "1s", "CAST_LOG_LEVEL": "off", "UNRELATED": "x"],
            userProfilePath: path
        ).resolve()
        #expect(resolved.options.receiverApplicationID == "A1B2C3D4")
        #expect(resolved.options.heartbeat.pingInterval == .seconds(1))
        #expect(resolved.options.heartbeat.deadAfter == nil)
        #expect(resolved.logFilter.isDisabled)
        #expect(resolved.value(forKey: "receiver.applicationID")?.source.kind == .profile)
        #expect(resolved.value(forKey: "heartbeat.interval")?.source.kind == .environment)
        #expect(resolved.value(forKey: "heartbeat.deadAfter")?.value == "none")
        #expect(resolved.value(forKey: "heartbeat.deadAfter")?.source.kind == .commandLine)
        #expect(
            resolved.value(forKey: "profile")
                == ConfigValue(
                    key: "profile",
                    value: path,
                    source: ConfigSource(kind: .builtInDefault, name: "user profile")
                )
        )
    }

    @Test("every key appears once in the provenance, in a stable order")
    func provenanceRows() throws {
        let resolved = try ProfileResolver().resolve()
        let keys = resolved.provenance.map(\.key)
        #expect(keys == ["profile"] + ProfileResolver.keys.map(\.key) + ["staticDevices"])
        #expect(resolved.value(forKey: "profile")?.value == "none")
        for key in ProfileResolver.keys {
            #expect(resolved.value(forKey: key.key)?.value == key.defaultValue, "\(key.key)")
        }
        let table = resolved.formattedProvenance()
        let lines = table.split(separator: "\n")
        #expect(lines.first?.hasPrefix("KEY") == true)
        #expect(lines.contains { $0.hasPrefix("timeouts.request") && $0.contains("10s") && $0.hasSuffix("default") })
    }

    @Test("the user profile lives under XDG_CONFIG_HOME, else ~/.config")
    func userProfilePath() {
        #expect(
            ProfileResolver.defaultUserProfilePath(environment: ["XDG_CONFIG_HOME": "/x/config", "HOME": "/home/me"])
                == "/x/config/cast/profile.xml"
        )
        #expect(
            ProfileResolver.defaultUserProfilePath(environment: ["HOME": "/home/me"])
                == "/home/me/.config/cast/profile.xml"
        )
        // A relative XDG_CONFIG_HOME is invalid per the XDG spec and ignored.
        #expect(
            ProfileResolver.defaultUserProfilePath(environment: ["XDG_CONFIG_HOME": "config", "HOME": "/home/me"])
                == "/home/me/.config/cast/profile.xml"
        )
        #expect(ProfileResolver.defaultUserProfilePath(environment: [:]) == nil)
        let standard = ProfileResolver.standard(environment: ["XDG_CONFIG_HOME": "/x/config"])
        #expect(standard.userProfilePath == "/x/config/cast/profile.xml")
    }

    @Test("the standard resolver reads the user profile from XDG_CONFIG_HOME")
    func standardResolverReadsUserProfile() throws {
        let directory = TemporaryDirectory()
        directory.write("cast/profile.xml", profileXML(#"  <volume step="0.1"/>"#))
        let resolved = try ProfileResolver.standard(environment: ["XDG_CONFIG_HOME": directory.path]).resolve()
        #expect(resolved.options.volumeStep == 0.1)
        #expect(resolved.profilePaths == [directory.url("cast/profile.xml")])
    }

    @Test("a missing user profile means defaults; a missing explicit profile is an error")
    func missingProfiles() throws {
        let resolved = try ProfileResolver(userProfilePath: "/nonexistent/profile.xml").resolve()
        #expect(resolved.profilePaths.isEmpty)
        expectConfigError(.fileNotFound) { () throws(CastConfigError) in
            _ = try ProfileResolver(explicitProfilePath: "/nonexistent/explicit.xml").resolve()
        }
        expectConfigError(.fileNotFound) { () throws(CastConfigError) in
            _ = try ProfileResolver(environment: ["CAST_PROFILE": "/nonexistent/env.xml"]).resolve()
        }
    }

    @Test("an explicit profile replaces the user profile; CAST_PROFILE does too")
    func explicitProfile() throws {
        let directory = TemporaryDirectory()
        let user = directory.write("user.xml", profileXML(#"  <timeouts connect="1s" request="1s"/>"#))
        let explicit = directory.write("explicit.xml", profileXML(#"  <timeouts connect="2s"/>"#))
        let viaFlag = try ProfileResolver(userProfilePath: user, explicitProfilePath: explicit).resolve()
        #expect(viaFlag.options.connectTimeout == .seconds(2))
        #expect(viaFlag.options.requestTimeout == .seconds(10))
        #expect(viaFlag.value(forKey: "profile")?.source == ConfigSource(kind: .commandLine, name: "--profile"))
        let viaEnvironment = try ProfileResolver(environment: ["CAST_PROFILE": explicit], userProfilePath: user)
            .resolve()
        #expect(viaEnvironment.options.connectTimeout == .seconds(2))
        #expect(
            viaEnvironment.value(forKey: "profile")?.source == ConfigSource(kind: .environment, name: "CAST_PROFILE")
        )
    }

    @Test("a bad user profile fails resolution instead of falling back to defaults")
    func badUserProfile() {
        let directory = TemporaryDirectory()
        let path = directory.write("profile.xml", profileXML(#"  <heartbeat interval="often"/>"#))
        let error = expectConfigError(.schemaViolation) { () throws(CastConfigError) in
            _ = try ProfileResolver(userProfilePath: path).resolve()
        }
        #expect(error?.file == path)
        #expect(error?.line == 3)
    }

    @Test("a bad environment value names the variable and the expected form")
    func badEnvironment() {
        let error = expectConfigError(.invalidValue) { () throws(CastConfigError) in
            _ = try ProfileResolver(environment: ["CAST_REQUEST_TIMEOUT": "5"]).resolve()
        }
        #expect(
            error?.description == "environment: CAST_REQUEST_TIMEOUT must be a duration like 5s or 500ms (found '5')"
        )
    }

    @Test("bad command-line values and unknown keys are errors")
    func badCommandLine() {
        let error = expectConfigError(.invalidValue) { () throws(CastConfigError) in
            _ = try ProfileResolver(cliOverrides: ["launch.relaunchIfRunning": "maybe"]).resolve()
        }
        #expect(error?.description == "command line: launch.relaunchIfRunning must be true or false (found 'maybe')")
        let unknown = expectConfigError(.invalidValue) { () throws(CastConfigError) in
            _ = try ProfileResolver(cliOverrides: ["timeout.request": "5s"]).resolve()
        }
        #expect(unknown?.message.hasPrefix("unknown setting 'timeout.request'") == true)
    }

    @Test("empty environment variables count as unset")
    func emptyEnvironment() throws {
        let resolved = try ProfileResolver(environment: ["CAST_APP_ID": "", "CAST_DEVICES": ""]).resolve()
        #expect(resolved.options.receiverApplicationID == CastOptions.defaultMediaReceiverApplicationID)
        #expect(resolved.value(forKey: "receiver.applicationID")?.source == .builtInDefault)
    }

    @Test(
        "environment and command-line values accept the same forms as profiles",
        arguments: [
            ("CAST_APP_ID", "default-media-receiver", "receiver.applicationID", "CC1AD845"),
            ("CAST_DISCOVERY_APP_ID", "E0C40001", "discovery.applicationID", "E0C40001"),
            ("CAST_DISCOVERY_CAPABILITIES", "videoOut,audioOut", "discovery.requiredCapabilities", "videoOut audioOut"),
            ("CAST_SCAN_RANGES", "192.168.2.0/24,10.0.0.9", "discovery.scanRanges", "192.168.2.0/24 10.0.0.9/32"),
            ("CAST_LANGUAGE", "none", "launch.language", "none"),
            ("CAST_RELAUNCH_IF_RUNNING", "yes", "launch.relaunchIfRunning", "true"),
            ("CAST_ANDROID_RECEIVER_COMPATIBLE", "on", "launch.androidReceiverCompatible", "true"),
            ("CAST_CREDENTIALS", "tok", "credentials.data", "<redacted>"),
            ("CAST_CONNECT_TIMEOUT", "1500ms", "timeouts.connect", "1.5s"),
            ("CAST_LAUNCH_TIMEOUT", "120s", "timeouts.launch", "2m"),
            ("CAST_HEARTBEAT_INTERVAL", "none", "heartbeat.interval", "none"),
            ("CAST_RECONNECT_INITIAL_DELAY", "0.25s", "reconnect.initialDelay", "250ms"),
            ("CAST_RECONNECT_MAXIMUM_DELAY", "1h", "reconnect.maximumDelay", "1h"),
            ("CAST_RECONNECT_MULTIPLIER", "3", "reconnect.multiplier", "3"),
            ("CAST_RECONNECT_JITTER", "0.5", "reconnect.jitter", "0.5"),
            ("CAST_RECONNECT_MAXIMUM_ATTEMPTS", "12", "reconnect.maximumAttempts", "12"),
            ("CAST_RESUME_SAVED_SESSIONS", "0", "session.resumeSavedSessions", "false"),
            ("CAST_STOP_RECEIVER_APPLICATION_ON_END", "true", "session.stopReceiverApplicationOnEnd", "true"),
            ("CAST_WAIT_WHILE_SUSPENDED", "1", "session.waitWhileSuspended", "true"),
            ("CAST_STATE_DIRECTORY", "/tmp/state", "session.stateDirectory", "/tmp/state"),
            ("CAST_VOLUME_STEP", "0.1", "volume.step", "0.1"),
            ("CAST_LOG_LEVEL", "TRACE", "logging.level", "trace"),
        ]
    )
    func environmentForms(variable: String, value: String, key: String, shown: String) throws {
        let fromEnvironment = try ProfileResolver(environment: [variable: value]).resolve()
        #expect(fromEnvironment.value(forKey: key)?.value == shown)
        #expect(fromEnvironment.value(forKey: key)?.source == ConfigSource(kind: .environment, name: variable))
        let fromCommandLine = try ProfileResolver(cliOverrides: [key: value]).resolve()
        #expect(fromCommandLine.value(forKey: key)?.value == shown)
        #expect(ProfileResolver.keys.contains { $0.key == key && $0.environmentVariable == variable })
    }

    @Test("CAST_DEVICES lists host[:port][=name] and replaces the profile's devices")
    func staticDevices() throws {
        let directory = TemporaryDirectory()
        let path = directory.write("p.xml", profileXML(#"<staticDevices><device host="10.0.0.9"/></staticDevices>"#))
        let resolved = try ProfileResolver(
            environment: ["CAST_DEVICES": "192.168.1.20=Living Room TV, 192.168.1.21:42001, [fe80::1]:8010=Kitchen"],
            userProfilePath: path
        ).resolve()
        #expect(
            resolved.options.staticDevices == [
                .staticDevice(host: "192.168.1.20", name: "Living Room TV"),
                .staticDevice(host: "192.168.1.21", port: 42001),
                .staticDevice(host: "fe80::1", port: 8010, name: "Kitchen"),
            ]
        )
        #expect(
            resolved.provenance.filter { $0.key == "staticDevices.device" }.map(\.value) == [
                "192.168.1.20:8009 \"Living Room TV\"", "192.168.1.21:42001", "[fe80::1]:8010 \"Kitchen\"",
            ]
        )
        let cleared = try ProfileResolver(cliOverrides: ["staticDevices": "none"], userProfilePath: path).resolve()
        #expect(cleared.options.staticDevices.isEmpty)
        #expect(cleared.value(forKey: "staticDevices")?.source.kind == .commandLine)
        // A port out of range, colons that make no IPv6 address, and a name without a host are refused (the last
        // two were taken as hosts `garbage:::` and `Name`).
        for bad in ["host:99999", "garbage:::", "=Name"] {
            expectConfigError(.invalidValue) { () throws(CastConfigError) in
                _ = try ProfileResolver(environment: ["CAST_DEVICES": bad]).resolve()
            }
        }
        let bare = try ProfileResolver(environment: ["CAST_DEVICES": "fe80::2"]).resolve()
        #expect(bare.options.staticDevices.map(\.host) == ["fe80::2"], "a bare IPv6 address is all host")
    }

    @Test("CAST_LOG_FILTER rules follow the profile's, so they win ties; its message patterns replace the profile's")
    func logFilterLayers() throws {
        let directory = TemporaryDirectory()
        let path = directory.write(
            "p.xml",
            profileXML(#"<logging><category pattern="CastSession*" level="debug"/><message pattern="LOAD"/></logging>"#)
        )
        let resolved = try ProfileResolver(
            cliOverrides: ["logging.filter": "CastSession*=error"],
            environment: ["CAST_LOG_FILTER": "CastSession*=trace,/SEEK/i"],
            userProfilePath: path
        ).resolve()
        #expect(resolved.logFilter.level(forCategory: "CastSession.Reconnect") == .error)
        #expect(resolved.logFilter.categoryLevels.map(\.level) == [.debug, .trace, .error])
        #expect(resolved.logFilter.messagePatterns.map(\.description) == ["/SEEK/i"])
        #expect(
            resolved.provenance.filter { $0.key == "logging.category" }.map(\.source.kind) == [
                .profile, .environment, .commandLine,
            ]
        )
        expectConfigError(.invalidValue) { () throws(CastConfigError) in
            _ = try ProfileResolver(environment: ["CAST_LOG_FILTER": "CastSession=loud"]).resolve()
        }
    }

    @Test("credentials are redacted, and a type without credentials is an error")
    func credentials() throws {
        let resolved = try ProfileResolver(environment: ["CAST_CREDENTIALS": "s3cret", "CAST_CREDENTIALS_TYPE": "web"])
            .resolve()
        #expect(resolved.options.launchCredentials == CredentialsData(credentials: "s3cret", credentialsType: "web"))
        #expect(resolved.value(forKey: "credentials.data")?.value == "<redacted>")
        #expect(!resolved.formattedProvenance().contains("s3cret"))
        expectConfigError(.invalidValue) { () throws(CastConfigError) in
            _ = try ProfileResolver(environment: ["CAST_CREDENTIALS_TYPE": "web"]).resolve()
        }
    }

    @Test("deviceAuth reads its trust anchors relative to the profile and refuses a policy or file it cannot use")
    func deviceAuth() throws {
        let directory = TemporaryDirectory()
        let root = try CastDeviceCredentials.makeTestChain(
            {
                var options = CastDeviceCredentials.ChainOptions()
                options.keyBits = 1024
                options.includesCRL = false
                return options
            }()
        ).rootCertificatePEM
        directory.write("certs/cast-roots.pem", root)
        let path = directory.write(
            "profiles/p.xml",
            profileXML(#"<deviceAuth policy="require" trustAnchors="../certs/cast-roots.pem" allowSHA1="true"/>"#)
        )
        let resolved = try ProfileResolver(userProfilePath: path).resolve()
        #expect(resolved.options.deviceAuth.policy == .require)
        #expect(resolved.options.deviceAuth.allowsSHA1)
        #expect(resolved.options.deviceAuth.trustAnchors?.certificates.count == 1)
        #expect(
            resolved.value(forKey: "deviceAuth.trustAnchors")?.value
                == directory.url("profiles/../certs/cast-roots.pem")
        )
        expectConfigError(.invalidValue) { () throws(CastConfigError) in
            _ = try ProfileResolver(environment: ["CAST_DEVICE_AUTH": "always"]).resolve()
        }
        expectConfigError(.invalidValue) { () throws(CastConfigError) in
            _ = try ProfileResolver(environment: ["CAST_TRUST_ANCHORS": directory.url("profiles/p.xml")]).resolve()
        }
    }

    @Test("a profile's style path is relative to the profile; CAST_STYLE overrides it")
    func stylePath() throws {
        let directory = TemporaryDirectory()
        directory.write("styles/red.xml", #"<castViews xmlns="urn:swift-cast:style:1" bodyTextColor="red"/>"#)
        let blue = directory.write("blue.xml", #"<castViews xmlns="urn:swift-cast:style:1" bodyTextColor="blue"/>"#)
        let path = directory.write("profiles/p.xml", profileXML(#"<style path="../styles/red.xml"/>"#))
        let resolved = try ProfileResolver(userProfilePath: path).resolve()
        #expect(resolved.style.attributes(for: .miniController).bodyTextColor == CastColor(red: 255, green: 0, blue: 0))
        #expect(resolved.value(forKey: "style.path")?.value == directory.url("profiles/../styles/red.xml"))
        let overridden = try ProfileResolver(environment: ["CAST_STYLE": blue], userProfilePath: path).resolve()
        #expect(
            overridden.style.attributes(for: .miniController).bodyTextColor == CastColor(red: 0, green: 0, blue: 255)
        )
        let builtIn = try ProfileResolver(cliOverrides: ["style.path": "built-in"], userProfilePath: path).resolve()
        #expect(builtIn.style == .builtIn)
    }

    @Test("a bad style named by the profile fails resolution")
    func badStyle() {
        let directory = TemporaryDirectory()
        let style = directory.write("s.xml", #"<castViews xmlns="urn:swift-cast:style:1" bodyTextColor="blu"/>"#)
        let error = expectConfigError(.invalidValue) { () throws(CastConfigError) in
            _ = try ProfileResolver(environment: ["CAST_STYLE": style]).resolve()
        }
        #expect(error?.file == style)
    }
}
