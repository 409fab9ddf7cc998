// swift-cast — Apache-2.0

import Testing

@testable import CastStyleConfig

/// Schema violations come back located and in plain words, saying what was expected.
@Suite("Schema errors")
struct SchemaErrorTests {
    /// Loads `body` inside a profile named profile.xml; expects a schema violation.
    private func violation(_ body: String, sourceLocation: SourceLocation = #_sourceLocation) -> CastConfigError? {
        expectConfigError(.schemaViolation, sourceLocation: sourceLocation) { () throws(CastConfigError) in
            _ = try CastProfile(xml: profileXML(body), file: "profile.xml")
        }
    }

    @Test("a malformed duration names the element, the attribute and the expected form")
    func badDuration() {
        let error = violation(
            """
              <timeouts connect="10s"/>
              <reconnect initialDelay="1s"
                  maximumDelay="5x"/>
            """
        )
        #expect(
            error?.message
                == "element 'reconnect': attribute 'maximumDelay' must be a duration like 5s or 500ms (found '5x')"
        )
        #expect(error?.line == 5)
        #expect(error?.column == 7)
        #expect(
            error?.description
                == "profile.xml: line 5, column 7: element 'reconnect': attribute 'maximumDelay' must be a duration "
                + "like 5s or 500ms (found '5x')"
        )
    }

    @Test("heartbeat durations may also be none")
    func heartbeatDuration() {
        let error = violation(#"  <heartbeat interval="5 s"/>"#)
        #expect(
            error?.message
                == "element 'heartbeat': attribute 'interval' must be a duration like 5s or 500ms, or none "
                + "(found '5 s')"
        )
        #expect(error?.column == 14)
    }

    @Test(
        "value errors say what was expected",
        arguments: [
            (#"<device host="tv" port="70000"/>"#, "device", "port", "a port number from 1 to 65535 (found '70000')"),
            (#"<device host="a b"/>"#, "device", "host", "a host name or IP address (found 'a b')"),
            (#"<launch relaunchIfRunning="yes"/>"#, "launch", "relaunchIfRunning", "true or false (found 'yes')"),
            (
                #"<credentials data="x" type="tv"/>"#, "credentials", "type",
                "one of android, ios, web, cloud (found 'tv')"
            ),
            (#"<reconnect jitter="1.5"/>"#, "reconnect", "jitter", "a number from 0 to 1, like 0.2 (found '1.5')"),
            (
                #"<reconnect maximumAttempts="0"/>"#, "reconnect", "maximumAttempts",
                "a whole number of at least 1, or unlimited (found '0')"
            ),
            (
                #"<volume step="0"/>"#, "volume", "step",
                "a volume fraction above 0 and at most 1, like 0.05, or receiver (found '0')"
            ),
            (
                #"<receiver applicationID="cc1ad845"/>"#, "receiver", "applicationID",
                "default-media-receiver or an application id of 8 hex digits like CC1AD845 (found 'cc1ad845')"
            ),
            (
                #"<logging level="verbose"/>"#, "logging", "level",
                "one of trace, debug, info, notice, warning, error, critical, off (found 'verbose')"
            ),
            (
                #"<discovery requiredCapabilities="video"/>"#, "discovery", "requiredCapabilities",
                "a space-separated list of videoOut, videoIn, audioOut, audioIn, developerMode, multizoneGroup "
                    + "(or none) (found 'video')"
            ),
        ]
    )
    func valueErrors(body: String, element: String, attribute: String, expectation: String) {
        let wrapped = element == "device" ? "<staticDevices>\(body)</staticDevices>" : body
        let error = violation(wrapped)
        #expect(error?.message == "element '\(element)': attribute '\(attribute)' must be \(expectation)")
        #expect(error?.line == 3)
    }

    @Test("an unknown attribute lists the ones accepted")
    func unknownAttribute() {
        let error = violation(#"  <heartbeat interval="5s" timeout="3s"/>"#)
        #expect(
            error?.message
                == "element 'heartbeat' has no attribute 'timeout'; it accepts interval, deadAfter, timerSlack"
        )
        #expect(error?.column == 28)
    }

    @Test("a missing required attribute is named, with what it must be")
    func missingAttribute() {
        let error = violation(#"  <staticDevices><device port="8009"/></staticDevices>"#)
        #expect(error?.message == "element 'device' needs attribute 'host' (a host name or IP address)")
        #expect(error?.line == 3)
        #expect(error?.column == 18)
    }

    @Test("an unknown element lists the elements allowed where it is")
    func unknownElement() {
        let error = violation("  <timeouts/>\n  <timeout request=\"5s\"/>")
        #expect(
            error?.message
                == "element 'timeout' is not allowed in 'castProfile'; expected one of receiver, discovery, launch, "
                + "credentials, timeouts, heartbeat, reconnect, session, deviceAuth, volume, staticDevices, logging, style, "
                + "daemon"
        )
        #expect(error?.line == 4)
        #expect(error?.column == 3)
    }

    @Test("an element given twice is reported as repeated")
    func repeatedElement() {
        let error = violation(#"  <timeouts connect="1s"/><heartbeat/><timeouts request="2s"/>"#)
        #expect(error?.message == "element 'timeouts' appears more than once in 'castProfile'; it is allowed once")
        #expect(error?.column == 39)
    }

    @Test("text where none belongs is reported")
    func unexpectedText() {
        let error = violation("  <timeouts>10s</timeouts>")
        #expect(error?.message == "element 'timeouts' may not contain text")
    }

    @Test("a root without the namespace says what the root must be")
    func missingNamespace() {
        let error = expectConfigError(.schemaViolation) { () throws(CastConfigError) in
            _ = try CastProfile(xml: "<castProfile>\n</castProfile>", file: "p.xml")
        }
        #expect(
            error?.message
                == "the root element of a profile must be <castProfile xmlns=\"urn:swift-cast:profile:1\">, not "
                + "<castProfile> in no namespace"
        )
        #expect(error?.line == 1)
        #expect(error?.column == 1)
    }

    @Test("later problems are counted")
    func moreProblems() {
        let error = violation(#"  <timeouts connect="x" request="y"/><volume step="2"/>"#)
        #expect(error?.message.hasSuffix("(2 more problems after this one)") == true)
    }

    @Test("malformed XML is invalidXML with libxml2's line and column")
    func malformed() {
        let error = expectConfigError(.invalidXML) { () throws(CastConfigError) in
            _ = try CastProfile(xml: profileXML("  <timeouts connect=\"1s\">\n  </heartbeat>"), file: "bad.xml")
        }
        #expect(error?.file == "bad.xml")
        #expect(error?.line == 4)
        #expect(error?.column != nil)
        #expect(error?.message.hasPrefix("not well-formed XML: ") == true)
        #expect(error?.message.contains("mismatch") == true)
    }

    @Test("an empty document is invalidXML")
    func emptyDocument() {
        expectConfigError(.invalidXML) { () throws(CastConfigError) in
            _ = try CastProfile(xml: "")
        }
    }

    @Test("an undeclared entity reference is invalidXML, not expanded")
    func undeclaredEntity() {
        expectConfigError(.invalidXML) { () throws(CastConfigError) in
            _ = try CastProfile(xml: profileXML(#"<credentials data="&secret;"/>"#))
        }
    }

    @Test("the schema vocabulary is read from the XSDs")
    func vocabulary() {
        let profile = SchemaVocabulary(xsd: profileXSD)
        #expect(profile.attributes["heartbeat"] == ["interval", "deadAfter", "timerSlack"])
        #expect(profile.children["staticDevices"] == ["device"])
        #expect(profile.expectation(forAttribute: "level", of: "category")?.hasPrefix("one of trace") == true)
        #expect(profile.expectation(forAttribute: "level", of: "logging")?.hasSuffix("critical, off") == true)
        let style = SchemaVocabulary(xsd: styleXSD)
        #expect(style.children["mediaControllers"] == ["glyphs", "miniController", "expandedController", "queueView"])
        #expect(style.attributes["miniController"]?.count == 14)
        #expect(style.attributes["glyphs"]?.count == ButtonGlyph.allGlyphs.count)
        #expect(style.expectation(forAttribute: "bodyTextColor", of: "queueView")?.hasPrefix("a color") == true)
    }
}
