// swift-cast — Apache-2.0

import CastStyleConfig
import Testing

@Suite("Styles")
struct StyleTests {
    private let red = CastColor(red: 255, green: 0, blue: 0)
    private let blue = CastColor(red: 0, green: 0, blue: 255)
    private let green = CastColor(red: 0, green: 128, blue: 0)

    private let cascading = """
        <castViews xmlns="urn:swift-cast:style:1" bodyTextColor="red" headingTextFont="italic 20pt">
          <glyphs play="P"/>
          <mediaControllers bodyTextColor="blue">
            <glyphs play="[>]" pause="[||]"/>
            <expandedController bodyTextColor="green" headingTextFont="underline"/>
            <miniController><glyphs pause="="/></miniController>
          </mediaControllers>
        </castViews>
        """

    @Test("a view's value beats its ancestors', which beat the built-in default")
    func cascade() throws {
        let style = try CastStyle(xml: cascading).resolved()
        #expect(style.attributes(for: .expandedController).bodyTextColor == green)
        #expect(style.attributes(for: .miniController).bodyTextColor == blue)
        #expect(style.attributes(for: .queueView).bodyTextColor == blue)
        #expect(style.attributes(for: .mediaControllers).bodyTextColor == blue)
        #expect(style.attributes(for: .castDialog).bodyTextColor == red)
        #expect(style.attributes(for: .castViews).bodyTextColor == red)
        #expect(style.attributes(for: .introductoryOverlay).bodyTextColor == red)
        // Never declared: the built-in default everywhere.
        #expect(
            style.attributes(for: .miniController).progressFilledColor
                == StyleAttributes.builtInDefault.progressFilledColor
        )
        #expect(style.attributes(for: .castDialog).captionTextFont == FontStyle(isDim: true))
    }

    @Test("fonts replace an ancestor's font as a whole")
    func fontsReplace() throws {
        let style = try CastStyle(xml: cascading).resolved()
        #expect(style.attributes(for: .miniController).headingTextFont == FontStyle(isItalic: true, size: "20pt"))
        #expect(style.attributes(for: .expandedController).headingTextFont == FontStyle(isUnderlined: true))
    }

    @Test("glyphs cascade one by one")
    func glyphs() throws {
        let style = try CastStyle(xml: cascading).resolved()
        let mini = style.attributes(for: .miniController)
        #expect(mini.glyph(.play) == "[>]")
        #expect(mini.glyph(.pause) == "=")
        #expect(mini.glyph(.stop) == "⏹")
        #expect(style.attributes(for: .castDialog).glyph(.play) == "P")
        #expect(style.attributes(for: .castDialog).glyph(.pause) == "⏸")
        #expect(mini.glyphsByName["skipNext"] == "⏭")
        #expect(mini.glyphs.count == ButtonGlyph.allGlyphs.count)
    }

    @Test("the built-in style gives every view the defaults")
    func builtIn() {
        for view in StyleView.allViews {
            #expect(ResolvedStyle.builtIn.attributes(for: view) == .builtInDefault)
        }
        #expect(StyleAttributes.builtInDefault.glyphs.count == ButtonGlyph.allGlyphs.count)
    }

    @Test("the hierarchy mirrors GCKUIStyle")
    func hierarchy() {
        #expect(StyleView.miniController.path == "castViews.mediaControllers.miniController")
        #expect(StyleView.noDevicesScreen.ancestors == [.deviceControllers, .castViews])
        #expect(StyleView.castViews.children == [.deviceControllers, .mediaControllers, .introductoryOverlay])
        #expect(StyleView.mediaControllers.children == [.miniController, .expandedController, .queueView])
        #expect(StyleView.castViews.parent == nil)
        #expect(StyleView.named("queueView") == .queueView)
    }

    @Test("the dump lists every view's resolved attributes and where they came from")
    func dump() throws {
        let directory = TemporaryDirectory()
        let path = directory.write("cascade.xml", cascading)
        let style = try CastStyle(contentsOfFile: path).resolved()
        let dump = style.dump()
        for view in StyleView.allViews {
            #expect(dump.contains("\n" + view.path + "\n"), "\(view)")
        }
        let entries = style.entries(for: .expandedController)
        #expect(entries.count == 14 + ButtonGlyph.allGlyphs.count)
        let body = try #require(entries.first { $0.attribute == "bodyTextColor" })
        #expect(body.value == "#008000")
        #expect(body.origin == "expandedController (cascade.xml:5)")
        let play = try #require(entries.first { $0.attribute == "glyph.play" })
        #expect(play.origin == "mediaControllers (cascade.xml:4)")
        let filled = try #require(entries.first { $0.attribute == "progressFilledColor" })
        #expect(filled.origin == "default")
        #expect(dump.contains("  bodyTextColor "))
        #expect(style.entries.count == StyleView.allViews.count * entries.count)
    }

    @Test("styles extend styles, view by view and attribute by attribute")
    func extends() throws {
        let directory = TemporaryDirectory()
        directory.write(
            "base.xml",
            #"<castViews xmlns="urn:swift-cast:style:1" bodyTextColor="red">"#
                + #"<mediaControllers captionTextColor="blue"/></castViews>"#
        )
        let child = directory.write(
            "child.xml",
            #"<castViews xmlns="urn:swift-cast:style:1" extends="base.xml">"#
                + #"<mediaControllers bodyTextColor="green"/></castViews>"#
        )
        let style = try CastStyle(contentsOfFile: child)
        #expect(style.paths.count == 2)
        let mini = style.resolved().attributes(for: .miniController)
        #expect(mini.bodyTextColor == green)
        #expect(mini.captionTextColor == blue)
        #expect(style.resolved().attributes(for: .castDialog).bodyTextColor == red)
    }

    @Test("an unknown color name is invalidValue, located, with a suggestion")
    func unknownColorName() {
        let xml = """
            <castViews xmlns="urn:swift-cast:style:1">
              <mediaControllers>
                <miniController backgroundColor="#000" bodyTextColor="darkslategrye"/>
              </mediaControllers>
            </castViews>
            """
        let error = expectConfigError(.invalidValue) { () throws(CastConfigError) in
            _ = try CastStyle(xml: xml, file: "s.xml")
        }
        #expect(error?.line == 3)
        #expect(error?.column == 44)
        #expect(
            error?.message
                == "element 'miniController': attribute 'bodyTextColor' must be a color: #RGB, #RRGGBB, #RRGGBBAA or a "
                + "CSS color name; 'darkslategrye' is not a CSS color name (did you mean 'darkslategray'?)"
        )
    }

    @Test("malformed colors and fonts fail the schema or the mapping")
    func malformedValues() {
        let color = expectConfigError(.schemaViolation) { () throws(CastConfigError) in
            _ = try CastStyle(xml: ##"<castViews xmlns="urn:swift-cast:style:1" iconTintColor="#12345"/>"##)
        }
        #expect(color?.message.contains("must be a color: #RGB, #RRGGBB, #RRGGBBAA or a CSS color name") == true)
        expectConfigError(.invalidValue) { () throws(CastConfigError) in
            _ = try CastStyle(xml: #"<castViews xmlns="urn:swift-cast:style:1" bodyTextFont="bold 'Noto"/>"#)
        }
        let glyph = expectConfigError(.schemaViolation) { () throws(CastConfigError) in
            _ = try CastStyle(xml: #"<castViews xmlns="urn:swift-cast:style:1"><glyphs play=""/></castViews>"#)
        }
        #expect(glyph?.message.contains("glyph of 1 to 16 characters") == true)
    }

    @Test("views nest only where GCKUIStyle nests them")
    func wrongNesting() {
        let error = expectConfigError(.schemaViolation) { () throws(CastConfigError) in
            _ = try CastStyle(xml: #"<castViews xmlns="urn:swift-cast:style:1"><miniController/></castViews>"#)
        }
        #expect(
            error?.message
                == "element 'miniController' is not allowed in 'castViews'; expected one of glyphs, deviceControllers, "
                + "mediaControllers, introductoryOverlay"
        )
    }

    @Test("a profile where a style is expected is the wrong kind")
    func wrongKind() {
        expectConfigError(.wrongDocumentKind) { () throws(CastConfigError) in
            _ = try CastStyle(xml: #"<castProfile xmlns="urn:swift-cast:profile:1"/>"#)
        }
    }
}

@Suite("Fonts")
struct FontStyleTests {
    @Test(
        "the shorthand parses in any order",
        arguments: [
            ("bold", FontStyle(isBold: true)),
            ("italic underline dim", FontStyle(isItalic: true, isUnderlined: true, isDim: true)),
            ("bold 18pt 'Roboto Condensed'", FontStyle(isBold: true, family: "Roboto Condensed", size: "18pt")),
            ("\"Noto Sans\" 1.5em italic", FontStyle(isItalic: true, family: "Noto Sans", size: "1.5em")),
            ("Menlo 12", FontStyle(family: "Menlo", size: "12")),
            ("normal", FontStyle.regular),
            ("BOLD Faint", FontStyle(isBold: true, isDim: true)),
        ]
    )
    func parse(text: String, expected: FontStyle) {
        #expect(FontStyle(parsing: text) == expected)
    }

    @Test("invalid shorthands", arguments: ["", "   ", "bold 'unterminated"])
    func invalid(text: String) {
        #expect(FontStyle(parsing: text) == nil)
    }

    @Test("the description parses back")
    func roundTrip() {
        let font = FontStyle(isBold: true, isUnderlined: true, family: "Source Sans Pro", size: "16pt")
        #expect(font.description == "bold underline 16pt 'Source Sans Pro'")
        #expect(FontStyle(parsing: font.description) == font)
        #expect(FontStyle.regular.description == "normal")
    }
}
