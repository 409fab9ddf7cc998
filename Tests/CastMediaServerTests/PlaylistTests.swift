import CastTransport
import Testing

@testable import CastMediaServer

/// Playlist files as people keep them: M3U written by players and by hand, PLS from radio sites.
@Suite struct PlaylistTests {
    static func entries(_ text: String, at path: String = "/home/ann/Music/list.m3u") throws -> [PlaylistEntry] {
        try PlaylistFile.entries(in: Array(text.utf8), playlistPath: path)
    }

    static func expectInvalid(_ bytes: [UInt8], path: String = "/tmp/list.m3u") {
        let error = #expect(throws: CastMediaServerError.self) {
            try PlaylistFile.entries(in: bytes, playlistPath: path)
        }
        #expect(error?.code == .invalidPlaylist)
    }

    // MARK: - M3U

    @Test func simpleM3UResolvesRelativePathsAgainstThePlaylistFolder() throws {
        let text = """
            # my favourites
            01 Intro.mp3

            sub/02 Song.flac
            ../Videos/clip.mkv
            ./sub/../03.ogg
            /srv/media/film.mp4
            http://radio.example.com:8000/stream?id=1
            """
        let entries = try Self.entries(text)
        #expect(
            entries.map(\.location) == [
                .file("/home/ann/Music/01 Intro.mp3"), .file("/home/ann/Music/sub/02 Song.flac"),
                .file("/home/ann/Videos/clip.mkv"), .file("/home/ann/Music/03.ogg"), .file("/srv/media/film.mp4"),
                .url("http://radio.example.com:8000/stream?id=1"),
            ]
        )
        #expect(entries.allSatisfy { $0.title == nil && $0.duration == nil })
    }

    @Test func extendedM3UGivesTitlesToTheNextEntryOnly() throws {
        let text = """
            #EXTM3U
            #PLAYLIST:Road trip
            #EXTINF:123,Artist - Title
            #EXTVLCOPT:network-caching=1000
            one.mp3
            two.mp3
            #EXTINF:-1 tvg-id="news" group-title="News, World",BBC World, English
            https://live.example.com/bbc.m3u8
            #EXTINF:42,
            three.mp3
            """
        let entries = try Self.entries(text)
        #expect(entries.count == 4)
        #expect(
            entries[0]
                == PlaylistEntry(location: .file("/home/ann/Music/one.mp3"), title: "Artist - Title", duration: 123)
        )
        #expect(entries[1] == PlaylistEntry(location: .file("/home/ann/Music/two.mp3")))
        #expect(entries[2].title == "BBC World, English")
        #expect(entries[2].duration == nil)
        #expect(entries[2].location == .url("https://live.example.com/bbc.m3u8"))
        #expect(entries[3].title == nil)
        #expect(entries[3].duration == 42)
    }

    @Test func fileURLsBecomePercentDecodedPaths() throws {
        let text = """
            file:///home/ann/My%20Music/caf%C3%A9.mp3
            file://localhost/srv/a%2Fb%zz.mp3
            FILE:///srv/x.ogg#fragment
            file:/srv/single-slash.mp3
            file://nas.local/share/film.mkv
            """
        let entries = try Self.entries(text)
        #expect(
            entries.map(\.location) == [
                .file("/home/ann/My Music/café.mp3"), .file("/srv/a/b%zz.mp3"), .file("/srv/x.ogg"),
                .file("/srv/single-slash.mp3"), .url("file://nas.local/share/film.mkv"),
            ]
        )
    }

    @Test func crlfAndByteOrderMarkAreIgnored() throws {
        let bytes: [UInt8] =
            [0xEF, 0xBB, 0xBF] + Array("#EXTM3U\r\n#EXTINF:5,Five\r\nfive.mp3\r\n\r\nsix.mp3\r\n".utf8)
        let entries = try PlaylistFile.entries(in: bytes, playlistPath: "/m/list.m3u8")
        #expect(
            entries == [
                PlaylistEntry(location: .file("/m/five.mp3"), title: "Five", duration: 5),
                .init(location: .file("/m/six.mp3")),
            ]
        )
        // Old Mac line ends (CR alone) too.
        let mac = try PlaylistFile.entries(in: Array("a.mp3\rb.mp3\r".utf8), playlistPath: "/m/list.m3u")
        #expect(mac.map(\.location) == [.file("/m/a.mp3"), .file("/m/b.mp3")])
    }

    @Test func legacyAndUTF16EncodingsAreDecoded() throws {
        // Windows-1252: é is 0xE9, the curly apostrophe 0x92.
        let legacy: [UInt8] = Array("Caf".utf8) + [0xE9, 0x20, 0x92] + Array("s.mp3\n".utf8)
        let entries = try PlaylistFile.entries(in: legacy, playlistPath: "/m/old.m3u")
        #expect(entries.map(\.location) == [.file("/m/Café \u{2019}s.mp3")])

        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in "#EXTM3U\r\nnaïve.mp3\r\n".utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(
            try PlaylistFile.entries(in: utf16, playlistPath: "/m/u.m3u").map(\.location) == [.file("/m/naïve.mp3")]
        )
    }

    @Test func windowsBackslashesAndRelativePlaylistPaths() throws {
        let entries = try Self.entries("Album\\01 Track.mp3\n", at: "/media/list.m3u")
        #expect(entries.map(\.location) == [.file("/media/Album/01 Track.mp3")])
        let relative = try Self.entries("a.mp3\n../b.mp3\nsub/./c.mp3\n", at: "lists/list.m3u")
        #expect(relative.map(\.location) == [.file("lists/a.mp3"), .file("b.mp3"), .file("lists/sub/c.mp3")])
        let here = try Self.entries("a.mp3\n", at: "list.m3u")
        #expect(here.map(\.location) == [.file("a.mp3")])
        let root = try Self.entries("a.mp3\n../../b.mp3\n", at: "/list.m3u")
        #expect(root.map(\.location) == [.file("/a.mp3"), .file("/b.mp3")])
    }

    @Test func remotePlaylistResolvesEntriesToURLs() throws {
        let text = "song.mp3\n../other/clip.mp4\n/abs/x.mp3\n//cdn.example.com/y.mp3\nhttps://else.example.com/z.mp3\n"
        let entries = try Self.entries(text, at: "http://host.example.com:8080/music/list.m3u?token=1")
        #expect(
            entries.map(\.location) == [
                .url("http://host.example.com:8080/music/song.mp3"),
                .url("http://host.example.com:8080/other/clip.mp4"),
                .url("http://host.example.com:8080/abs/x.mp3"), .url("http://cdn.example.com/y.mp3"),
                .url("https://else.example.com/z.mp3"),
            ]
        )
        let fromFileURL = try Self.entries("a.mp3\n", at: "file:///srv/My%20Lists/list.m3u")
        #expect(fromFileURL.map(\.location) == [.file("/srv/My Lists/a.mp3")])
    }

    // MARK: - PLS

    @Test func plsEntriesAreOrderedByNumberWithCaseInsensitiveKeys() throws {
        let text = """
            [playlist]
            ; comment
            NumberOfEntries=2
            File3=third.ogg
            title3=Third
            FILE1=http://radio.example.com/live
            Title1 = Radio One
            Length1=-1
            file2 = /srv/second.mp3
            Length2=180
            File10=tenth.mp3
            Title99=no file for this one
            Version=2
            """
        let entries = try Self.entries(text, at: "/pl/radio.pls")
        #expect(
            entries == [
                PlaylistEntry(location: .url("http://radio.example.com/live"), title: "Radio One"),
                PlaylistEntry(location: .file("/srv/second.mp3"), duration: 180),
                PlaylistEntry(location: .file("/pl/third.ogg"), title: "Third"),
                PlaylistEntry(location: .file("/pl/tenth.mp3")),
            ]
        )
    }

    @Test func plsIsRecognisedByItsHeaderWhateverTheExtension() throws {
        let text = "\u{FEFF}[Playlist]\r\nFile1=file:///srv/a%20b.mp3\r\nTitle1=A B\r\n"
        let entries = try Self.entries(text, at: "/pl/list.m3u")
        #expect(entries == [PlaylistEntry(location: .file("/srv/a b.mp3"), title: "A B")])
    }

    // MARK: - Invalid input

    @Test func binaryOrEmptyPlaylistsAreInvalid() {
        Self.expectInvalid([])
        Self.expectInvalid(Array("#EXTM3U\n\n# nothing here\n".utf8))
        Self.expectInvalid(Array("[playlist]\nNumberOfEntries=0\n".utf8), path: "/tmp/x.pls")
        Self.expectInvalid([0x00, 0x00, 0x00, 0x20, 0x66, 0x74, 0x79, 0x70] + Array(repeating: 0x00, count: 64))
        var generator = SplitMix64(seed: 7)
        for _ in 0..<200 {
            let garbage = (0..<Int(generator.next() % 512 + 64)).map { _ in UInt8(truncatingIfNeeded: generator.next())
            }
            Self.expectInvalid(garbage)
        }
        // Control characters without NUL are still binary.
        Self.expectInvalid(Array(repeating: 0x01, count: 10) + Array("a.mp3\n".utf8))
    }

    @Test func arbitraryBytesNeverCrash() {
        var generator = SplitMix64(seed: 11)
        let alphabet =
            Array("#EXTINF:,[playlist]File1=Title=/\\.%:\r\n file://a ".utf8) + [0xFF, 0xFE, 0xEF, 0xBB, 0xBF, 0x92]
        for _ in 0..<2000 {
            let count = Int(generator.next() % 120)
            let bytes = (0..<count).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            _ = try? PlaylistFile.entries(in: bytes, playlistPath: "/a/b.m3u")
            _ = try? PlaylistFile.entries(in: bytes, playlistPath: "http://h/b.pls")
            _ = PlaylistFile.isHLSMediaPlaylist(bytes)
        }
    }

    // MARK: - Classification

    @Test func playlistExtensions() {
        #expect(PlaylistFile.isPlaylist(path: "/a/b.m3u"))
        #expect(PlaylistFile.isPlaylist(path: "/a/b.M3U8"))
        #expect(PlaylistFile.isPlaylist(path: "radio.pls"))
        #expect(!PlaylistFile.isPlaylist(path: "/a/b.mp3"))
        #expect(!PlaylistFile.isPlaylist(path: "/a/m3u"))
        #expect(!PlaylistFile.isPlaylist(path: "/a.m3u/b"))
        #expect(!PlaylistFile.isPlaylist(path: ".m3u"))
    }

    @Test func hlsPlaylistsAreToldFromListsOfFiles() {
        let media = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nseg0.ts\n"
        let master = "\u{FEFF}#EXTM3U\r\n#EXT-X-STREAM-INF:BANDWIDTH=800000\r\nlow/index.m3u8\r\n"
        let list = "#EXTM3U\n#EXTINF:100,Song\nsong.mp3\n"
        let notFirst = "song.mp3\n#EXTM3U\n#EXT-X-TARGETDURATION:10\n"
        #expect(PlaylistFile.isHLSMediaPlaylist(Array(media.utf8)))
        #expect(PlaylistFile.isHLSMediaPlaylist(Array(master.utf8)))
        #expect(!PlaylistFile.isHLSMediaPlaylist(Array(list.utf8)))
        #expect(!PlaylistFile.isHLSMediaPlaylist(Array(notFirst.utf8)))
        #expect(!PlaylistFile.isHLSMediaPlaylist([0x00, 0x01, 0x02]))
    }
}
