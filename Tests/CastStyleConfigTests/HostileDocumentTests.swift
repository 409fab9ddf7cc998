// swift-cast — Apache-2.0

import Testing

@testable import CastStyleConfig

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite("Hostile documents")
struct HostileDocumentTests {
    @Test("a file:// external entity (XXE) is rejected before parsing, with its line and column")
    func fileExternalEntity() {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE castProfile [
              <!ENTITY xxe SYSTEM "file:///etc/hostname">
            ]>
            <castProfile xmlns="urn:swift-cast:profile:1">
              <credentials data="&xxe;"/>
            </castProfile>
            """
        let error = expectConfigError(.externalEntity) { () throws(CastConfigError) in
            _ = try CastProfile(xml: xml, file: "xxe.xml")
        }
        #expect(error?.file == "xxe.xml")
        #expect(error?.line == 3)
        #expect(error?.column == 3)
        #expect(error?.message.contains("external entity 'xxe'") == true)
        #expect(error?.description.hasPrefix("xxe.xml: line 3, column 3: ") == true)
    }

    @Test("an external DTD over http:// is rejected without any network access")
    func httpDTD() throws {
        let listener = try LoopbackListener()
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE castProfile SYSTEM "http://127.0.0.1:\(listener.port)/evil.dtd">
            <castProfile xmlns="urn:swift-cast:profile:1"/>
            """
        let error = expectConfigError(.externalDTD) { () throws(CastConfigError) in
            _ = try CastProfile(xml: xml, file: "dtd.xml")
        }
        #expect(error?.line == 2)
        #expect(listener.connectionAttempted() == false)
    }

    @Test("with the byte prescan bypassed, libxml2 (NONET, no DTDLOAD) still fetches nothing and the DTD check rejects")
    func noNetworkWithoutPrescan() throws {
        let listener = try LoopbackListener()
        let url = "http://127.0.0.1:\(listener.port)"
        let documents: [(String, Set<CastConfigError.Code>)] = [
            (
                "<!DOCTYPE castProfile SYSTEM \"\(url)/evil.dtd\">\n<castProfile xmlns=\"urn:swift-cast:profile:1\"/>",
                [.externalDTD]
            ),
            // Referenced from content, which libxml2 leaves unexpanded without NOENT; the DTD check rejects it.
            (
                "<!DOCTYPE castProfile [<!ENTITY remote SYSTEM \"\(url)/x\">]>\n"
                    + "<castProfile xmlns=\"urn:swift-cast:profile:1\">&remote;</castProfile>",
                [.externalEntity]
            ),
            // Referenced from an attribute, which XML forbids for external entities: libxml2 reports it.
            (
                "<!DOCTYPE castProfile [<!ENTITY remote SYSTEM \"\(url)/x\">]>\n"
                    + "<castProfile xmlns=\"urn:swift-cast:profile:1\"><credentials data=\"&remote;\"/></castProfile>",
                [.invalidXML]
            ),
            // libxml2 does not fetch the parameter entity (no DTDLOAD, NONET); the DTD check rejects the declaration.
            (
                "<!DOCTYPE castProfile [<!ENTITY % remote SYSTEM \"\(url)/p.dtd\"> %remote;]>\n"
                    + "<castProfile xmlns=\"urn:swift-cast:profile:1\"/>",
                [.externalEntity]
            ),
        ]
        for (xml, codes) in documents {
            do {
                _ = try LibXML2Document.parse(
                    Array(xml.utf8),
                    file: "raw.xml",
                    limits: DocumentLimits(),
                    schema: { (_, _, _) throws(CastConfigError) -> DocumentSchema? in .profile },
                    skipsPrescan: true
                )
                Issue.record("accepted: \(xml)")
            } catch {
                #expect(codes.contains(error.code), "\(error)")
            }
        }
        #expect(listener.connectionAttempted() == false)
    }

    @Test("internal entity declarations are rejected outright")
    func internalEntity() {
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE castProfile [<!ENTITY app "CC1AD845">]>
            <castProfile xmlns="urn:swift-cast:profile:1"><receiver applicationID="&app;"/></castProfile>
            """
        let error = expectConfigError(.entityDeclaration) { () throws(CastConfigError) in
            _ = try CastProfile(xml: xml)
        }
        #expect(error?.line == 2)
        #expect(error?.column == 24)
    }

    @Test("billion laughs is rejected before any expansion", .timeLimit(.minutes(1)))
    func billionLaughs() {
        let error = expectConfigError(.entityDeclaration) { () throws(CastConfigError) in
            _ = try CastProfile(xml: Self.billionLaughs)
        }
        #expect(error?.line == 3, "rejected by the prescan at the entity declaration, before libxml2 expands anything")
    }

    @Test("billion laughs stays harmless even with the prescan bypassed", .timeLimit(.minutes(1)))
    func billionLaughsWithoutPrescan() {
        do {
            _ = try LibXML2Document.parse(
                Array(Self.billionLaughs.utf8),
                file: "lol.xml",
                limits: DocumentLimits(),
                schema: { (_, _, _) throws(CastConfigError) -> DocumentSchema? in .profile },
                skipsPrescan: true
            )
            Issue.record("billion laughs was accepted")
        } catch {
            // libxml2's own amplification guard may fire first; otherwise the DTD check does.
            #expect(error.code == .entityDeclaration || error.code == .invalidXML, "\(error)")
        }
        // An expansion would never finish: the time limit above is the guard, not a wall-clock figure.
    }

    @Test("parameter entities are rejected too")
    func parameterEntity() {
        let xml = """
            <!DOCTYPE castProfile [
            <!ENTITY % p "<!ENTITY x 'y'>">
            %p;
            ]>
            <castProfile xmlns="urn:swift-cast:profile:1"/>
            """
        let error = expectConfigError(.entityDeclaration) { () throws(CastConfigError) in
            _ = try CastProfile(xml: xml)
        }
        #expect(error?.message.contains("parameter entity 'p'") == true)
    }

    @Test(
        "entity declarations are found behind PIs, comments and quoted brackets in the internal subset",
        arguments: [
            #"<?pi don't?><!ENTITY a "b">"#,
            #"<!ATTLIST castProfile x CDATA "]>'"><!ENTITY a "b">"#,
            #"<!-- ] ' " --> <!ELEMENT castProfile ANY> <!ENTITY a "b">"#,
            #"garbage <!ENTITY a "b">"#,
        ]
    )
    func hiddenEntity(subset: String) {
        let xml = "<!DOCTYPE castProfile [\(subset)]>\n<castProfile xmlns=\"urn:swift-cast:profile:1\"/>"
        let error = expectConfigError(.entityDeclaration) { () throws(CastConfigError) in
            _ = try CastProfile(xml: xml)
        }
        #expect(error?.message.contains("entity 'a'") == true)
    }

    @Test("a DOCTYPE that declares nothing is harmless and allowed")
    func plainDoctype() throws {
        let xml = """
            <?xml version="1.0"?>
            <!-- a comment before the DOCTYPE -->
            <!DOCTYPE castProfile>
            <castProfile xmlns="urn:swift-cast:profile:1"><timeouts request="3s"/></castProfile>
            """
        let resolved = try CastProfile(xml: xml).resolved()
        #expect(resolved.options.requestTimeout == .seconds(3))
    }

    @Test("a 100 MB document is rejected by its size before it is read or parsed", .timeLimit(.minutes(2)))
    func hundredMegabytes() {
        let directory = TemporaryDirectory()
        let header = Array("<castProfile xmlns=\"urn:swift-cast:profile:1\">\n".utf8)
        let line = Array("<!-- padding padding padding padding padding padding padding padding padding -->\n".utf8)
        let chunk = Array((0..<(1 << 20) / line.count).map { _ in line }.joined())
        let path = directory.write("huge.xml", chunks: 101) { index in index == 0 ? header : chunk }
        var info = stat()
        stat(path, &info)
        #expect(info.st_size > 100_000_000)

        let error = expectConfigError(.tooLarge) { () throws(CastConfigError) in
            _ = try CastProfile(contentsOfFile: path)
        }
        #expect(error?.file == path)
        // Rejected from its size alone (the message gives the limit, not a parse position): nothing was read.
        #expect(error?.message.contains("limit is 1048576 bytes") == true)
        #expect(error?.line == nil)
    }

    @Test("an oversized in-memory document is rejected before parsing")
    func oversizedInMemory() {
        var limits = DocumentLimits()
        limits.maximumByteCount = 1024
        let xml = profileXML(String(repeating: "<!-- padding -->\n", count: 100))
        expectConfigError(.tooLarge) { () throws(CastConfigError) in
            _ = try CastProfile(xml: xml, limits: limits)
        }
    }

    @Test("10,000-deep nesting is rejected at the first element past the limit")
    func tenThousandDeep() {
        let xml =
            "<castProfile xmlns=\"urn:swift-cast:profile:1\">\n"
            + String(repeating: "<a>", count: 9_999) + String(repeating: "</a>", count: 9_999) + "</castProfile>"
        let error = expectConfigError(.tooDeep) { () throws(CastConfigError) in
            _ = try CastProfile(xml: xml, file: "deep.xml")
        }
        #expect(error?.message == "element 'a' is nested 65 levels deep; the limit is 64")
        #expect(error?.line == 2)
        #expect(error?.column == 1 + 3 * 63)
    }

    @Test("the depth limit is exact and configurable", arguments: [(64, 64, false), (64, 65, true), (8, 9, true)])
    func depthLimit(limit: Int, depth: Int, rejected: Bool) {
        var limits = DocumentLimits()
        limits.maximumDepth = limit
        let inner = depth - 1
        let xml =
            "<castProfile xmlns=\"urn:swift-cast:profile:1\">" + String(repeating: "<a>", count: inner)
            + String(repeating: "</a>", count: inner) + "</castProfile>"
        // Within the limit the document parses, and then fails the schema (no <a> elements exist).
        expectConfigError(rejected ? .tooDeep : .schemaViolation) { () throws(CastConfigError) in
            _ = try CastProfile(xml: xml, limits: limits)
        }
    }

    @Test("invalid UTF-8 is rejected with the position of the bad byte")
    func invalidUTF8() {
        let directory = TemporaryDirectory()
        let before = Array("<castProfile xmlns=\"urn:swift-cast:profile:1\">\n  <!-- caf".utf8)
        let path = directory.write("latin1.xml", bytes: before + [0xE9] + Array(" -->\n</castProfile>\n".utf8))
        let error = expectConfigError(.invalidEncoding) { () throws(CastConfigError) in
            _ = try CastProfile(contentsOfFile: path)
        }
        #expect(error?.line == 2)
        #expect(error?.column == 11)
        #expect(error?.message.contains("0xE9") == true)
    }

    @Test(
        "truncated and overlong UTF-8 sequences are invalid too",
        arguments: [[0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80]]
    )
    func malformedSequences(sequence: [UInt8]) {
        let bytes =
            Array("<castProfile xmlns=\"urn:swift-cast:profile:1\"><!-- ".utf8) + sequence
            + Array(" --></castProfile>".utf8)
        #expect(DocumentPrescan.firstInvalidUTF8Offset(in: bytes) != nil)
    }

    @Test("an encoding declaration other than UTF-8 is rejected")
    func otherEncoding() {
        let xml = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<castProfile xmlns=\"urn:swift-cast:profile:1\"/>"
        let error = expectConfigError(.invalidEncoding) { () throws(CastConfigError) in
            _ = try CastProfile(xml: xml)
        }
        #expect(error?.line == 1)
    }

    @Test("a non-UTF-8 byte order mark is invalid UTF-8")
    func utf16() {
        let bytes: [UInt8] = [0xFF, 0xFE] + Array("<".utf8)
        #expect(DocumentPrescan.firstInvalidUTF8Offset(in: bytes) == 0)
    }

    static let billionLaughs = """
        <?xml version="1.0"?>
        <!DOCTYPE castProfile [
          <!ENTITY lol "lol">
          <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
          <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
          <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
          <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
          <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
          <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
          <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
          <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
          <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
        ]>
        <castProfile xmlns="urn:swift-cast:profile:1"><credentials data="&lol9;"/></castProfile>
        """
}

/// A TCP listener on 127.0.0.1 that never accepts: the kernel still completes any handshake, so a pending
/// connection proves that something tried to connect.
final class LoopbackListener {
    private let descriptor: Int32
    let port: UInt16

    struct SocketError: Error {}

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            close(fd)
            throw SocketError()
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        descriptor = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit {
        close(descriptor)
    }

    /// Whether a connection is waiting to be accepted.
    func connectionAttempted() -> Bool {
        let connection = accept(descriptor, nil, nil)
        if connection >= 0 {
            close(connection)
            return true
        }
        return false
    }
}
