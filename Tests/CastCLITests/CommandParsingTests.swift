import ArgumentParser
import CastControllers
import CastMedia
import CastTransport
import Testing

@testable import cast

@Suite struct CommandParsingTests {
    @Test func playParsesEveryOption() throws {
        let command = try PlayCommand.parse([
            "https://a.example/x.mp4", "https://a.example/y.mp3", "--title", "X", "--subtitle", "S", "--image",
            "https://i",
            "--content-type", "video/webm", "--stream-type", "live", "--start", "12", "--rate", "1.5",
            "--subtitles", "https://a.example/x.vtt", "--subtitles-lang", "de", "--queue", "--repeat", "shuffle",
            "--app", "A1B2C3D4", "--android-tv", "--credentials", "tok", "--credentials-type", "android", "--detach",
            "--host", "127.0.0.1:9000", "--json", "--timeout", "3",
        ])
        #expect(command.urls.count == 2)
        #expect(command.title == "X")
        #expect(command.streamType == .live)
        #expect(command.repeat == .shuffle)
        #expect(command.androidTV)
        #expect(command.detach)
        #expect(command.global.json)
        #expect(command.global.staticDevices.first?.port == 9000)
        #expect(command.global.staticDevices.first?.host == "127.0.0.1")
    }

    @Test func playValidation() {
        #expect(throws: (any Error).self) { try PlayCommand.parse([]) }
        #expect(throws: (any Error).self) { try PlayCommand.parse(["u", "--rate", "3"]) }
        #expect(throws: (any Error).self) { try PlayCommand.parse(["u", "--credentials-type", "android"]) }
        #expect(throws: (any Error).self) { try PlayCommand.parse(["u", "--repeat", "sometimes"]) }
    }

    @Test(arguments: [
        ("90", 90.0, false), ("+30", 30.0, true), ("-10", -10.0, true), ("1:30", 90.0, false),
        ("1:02:03", 3723.0, false),
    ])
    func seekPositions(text: String, seconds: Double, relative: Bool) throws {
        let parsed = try #require(TimeFormatting.parseSeek(text))
        #expect(parsed.seconds == seconds)
        #expect(parsed.isRelative == relative)
        _ = try SeekCommand.parse([text])
    }

    /// A seek outside the media is named (the receiver clamps it silently); one inside it, or in a live stream or
    /// media of unknown length, is not.
    @Test func seeksOutsideTheMediaAreNamed() throws {
        func status(duration: Double?, streamType: String = "BUFFERED") throws -> MediaStatus {
            var media: [String: JSONValue] = [
                "contentId": "https://a.example/x.mp4", "contentType": "video/mp4", "streamType": .string(streamType),
            ]
            if let duration { media["duration"] = .number(duration) }
            return try MediaStatus(json: [
                "mediaSessionId": 1, "playerState": "PLAYING", "currentTime": 5, "media": .object(media),
            ])
        }
        let movie = try status(duration: 600)
        #expect(
            SeekCommand.note(seekingTo: 9000, in: movie)
                == "2:30:00 is past the end of the media (10:00 long): the receiver went to its end"
        )
        #expect(SeekCommand.note(seekingTo: -5, in: movie)?.contains("before the start") == true)
        for inside in [0.0, 300, 600, 600.4, -0.4] { #expect(SeekCommand.note(seekingTo: inside, in: movie) == nil) }
        #expect(SeekCommand.note(seekingTo: 9000, in: try status(duration: nil)) == nil)
        #expect(SeekCommand.note(seekingTo: 9000, in: try status(duration: 600, streamType: "LIVE")) == nil)
        #expect(SeekCommand.note(seekingTo: 9000, in: nil) == nil)
    }

    @Test(arguments: ["abc", "1:99", "", "1:2:3:4", "+"])
    func invalidSeekPositions(text: String) {
        #expect(TimeFormatting.parseSeek(text) == nil)
        #expect(throws: (any Error).self) { try SeekCommand.parse([text]) }
    }

    @Test func volumeForms() {
        guard case .level(let level)? = VolumeCommand.parse("0.35") else { Issue.record("level"); return }
        #expect(level == 0.35)
        guard case .level(let percent)? = VolumeCommand.parse("40%") else { Issue.record("percent"); return }
        #expect(abs(percent - 0.4) < 1e-9)
        guard case .steps(let steps)? = VolumeCommand.parse("+2") else { Issue.record("steps"); return }
        #expect(steps == 2)
        #expect(VolumeCommand.parse("1.5") == nil)
        #expect(VolumeCommand.parse("loud") == nil)
    }

    /// `cast volume -1` is a step down, not an unknown option, wherever the options are.
    @Test func negativeVolumeStepsParseAsArguments() throws {
        for arguments in [["-1"], ["-1", "--host", "10.0.0.2"], ["--host", "10.0.0.2", "-3"], ["+2"]] {
            let command = try VolumeCommand.parse(arguments)
            #expect(["-1", "-3", "+2"].contains(command.value), "\(arguments)")
        }
        let command = try VolumeCommand.parse(["-1", "--host", "10.0.0.2"])
        #expect(command.global.staticDevices.map(\.host) == ["10.0.0.2"])
        #expect(throws: (any Error).self) { try VolumeCommand.parse([]) }
        #expect(throws: (any Error).self) { try VolumeCommand.parse(["-1", "+2"]) }
        #expect(throws: (any Error).self) { try VolumeCommand.parse(["-x"]) }
    }

    @Test func hostForms() throws {
        let command = try StatusCommand.parse([
            "--host", "10.0.0.2", "--host", "[fe80::1]:8010", "--host", "tv.local:8009", "--port", "8011",
        ])
        let devices = command.global.staticDevices
        #expect(devices.map(\.host) == ["10.0.0.2", "fe80::1", "tv.local"])
        #expect(devices.map(\.port) == [8011, 8010, 8009])
    }

    @Test func subcommandsParse() throws {
        _ = try QueueCommand.Add.parse(["https://x", "--next"])
        _ = try QueueCommand.Move.parse(["4", "--before", "2"])
        _ = try QueueCommand.Repeat.parse(["all"])
        _ = try TracksCommand.Enable.parse(["1", "2"])
        _ = try TracksCommand.Style.parse(["--font-scale", "1.5", "--foreground", "#FFFF00FF"])
        #expect(throws: (any Error).self) { try TracksCommand.Style.parse(["--foreground", "yellowish"]) }
        _ = try SendCommand.parse(["--namespace", "urn:x-cast:com.example.echo", "hi", "--wait-reply"])
        #expect(throws: (any Error).self) { try SendCommand.parse(["--namespace", "com.example", "hi"]) }
        #expect(throws: (any Error).self) { try SendCommand.parse(["--namespace", "urn:x-cast:a"]) }
        _ = try LaunchCommand.parse(["A1B2C3D4", "--android-tv", "--credentials", "t"])
        _ = try RateCommand.parse(["1.25"])
        #expect(throws: (any Error).self) { try RateCommand.parse(["0.1"]) }
    }

    @Test func contentTypeGuesses() {
        #expect(MediaTypes.guess("https://x/a.m3u8?token=1") == "application/x-mpegURL")
        #expect(MediaTypes.guess("https://x/a.mp3") == "audio/mpeg")
        #expect(MediaTypes.guess("https://x/a") == "video/mp4")
        #expect(MediaTypes.name(of: "https://x/dir/movie.mkv?x=1") == "movie.mkv")
    }

    @Test func clockFormatting() {
        #expect(TimeFormatting.clock(0) == "0:00")
        #expect(TimeFormatting.clock(65) == "1:05")
        #expect(TimeFormatting.clock(3723) == "1:02:03")
        #expect(TimeFormatting.clock(nil) == "--:--")
        #expect(TimeFormatting.clock(.nan) == "--:--")
    }
}
