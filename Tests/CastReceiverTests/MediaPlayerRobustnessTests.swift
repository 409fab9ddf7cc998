import CastTransport
import Testing

@testable import CastReceiver

// Requests that are legal JSON but carry values a sane sender never sends (times of 1e12 s, NaN, infinities,
// out-of-range indexes): the player must stay total and answer each as a device would.

/// Every number a time, duration or position may carry on the wire, plus the non-finite ones a JSON parser may
/// produce (`1e400`).
private let awkwardTimes: [Double] = [
    0, -1, -5, 1e10, -1e10, 1e12, -1e12, 1e300, -1e300, .greatestFiniteMagnitude, .infinity, -.infinity, .nan,
]

/// Whether every time in a status entry (and its break status) is a finite number.
private func hasFiniteTimes(_ status: JSONValue?) -> Bool {
    guard let status else { return true }
    let times = [
        status["currentTime"], status["breakStatus"]?["currentBreakTime"],
        status["breakStatus"]?["currentBreakClipTime"],
    ]
    return times.allSatisfy { $0 == nil || $0?.doubleValue?.isFinite == true }
}

@Suite("MediaPlayer: awkward values")
struct MediaPlayerAwkwardValueTests {
    /// The requests the tester's senders crashed the emulator with, each with every awkward time.
    private static func requests(with time: Double) -> [(String, [String: JSONValue])] {
        let value = JSONValue.number(time)
        let clip: JSONValue = ["id": "c", "duration": value, "whenSkippable": value]
        return [
            ("LOAD", ["media": Fixture.movie(duration: time)]),
            ("LOAD", ["media": Fixture.movie(duration: nil), "currentTime": value]),
            ("LOAD", ["media": Fixture.movie(), "currentTime": value]),
            (
                "LOAD",
                [
                    "media": Fixture.movie(
                        duration: nil,
                        ["streamType": "LIVE", "breaks": [["id": "b", "breakClipIds": ["c"], "position": value]]]
                    )
                ]
            ),
            (
                "LOAD",
                [
                    "media": Fixture.movie(
                        duration: 100,
                        ["breakClips": [clip], "breaks": [["id": "b", "breakClipIds": ["c"], "position": 0]]]
                    )
                ]
            ),
            (
                "QUEUE_LOAD",
                [
                    "items": [
                        Fixture.item(Fixture.song(1, duration: 10), ["playbackDuration": value, "startTime": value]),
                        Fixture.item(Fixture.song(2, duration: 10), ["preloadTime": value]),
                    ]
                ]
            ),
        ]
    }

    @Test(arguments: awkwardTimes)
    func timesOfAnySizeNeverTrapAndStayFinite(time: Double) {
        for (type, fields) in Self.requests(with: time) {
            var harness = PlayerHarness()
            harness.send(type, fields)
            #expect(hasFiniteTimes(harness.status), "\(type) \(fields): \(String(describing: harness.status))")
            if let deadline = harness.player.nextDeadline(after: harness.now) {
                #expect(deadline.isFinite && deadline >= harness.now, "\(type) with \(time): deadline \(deadline)")
            }
            // Commands with the same value on whatever loaded, then time passing far beyond any sane deadline.
            let value = JSONValue.number(time)
            harness.send("SEEK", ["currentTime": value], expectReply: false)
            harness.send("SEEK", ["relativeTime": value], expectReply: false)
            harness.send("QUEUE_UPDATE", ["currentTime": value], expectReply: false)
            for later in [1.0, 1e6, 1e9, 2e12] {
                harness.advance(to: later)
                #expect(hasFiniteTimes(harness.status), "\(type) with \(time) at \(later)")
                if let deadline = harness.player.nextDeadline(after: later) {
                    #expect(deadline.isFinite, "\(type) with \(time) at \(later): deadline \(deadline)")
                }
            }
            for entry in harness.log.compactMap(\.firstStatus) {
                #expect(hasFiniteTimes(entry), "\(type) with \(time): \(entry)")
            }
        }
    }

    /// A duration far beyond the clock's reach plays (no end is due), and positions never go negative.
    @Test func aDurationOfTenBillionSecondsPlays() {
        var harness = Fixture.loaded(Fixture.movie(duration: 1e10))
        harness.advance(to: 100)
        #expect(harness.status?["playerState"] == "PLAYING")
        #expect(harness.status?["currentTime"] == 100)
        #expect(harness.player.nextDeadline(after: 100) == 1e10)
    }
}

@Suite("MediaPlayer: answers as a device")
struct MediaPlayerDeviceAnswerTests {
    /// Media without a duration plays for the default one, and the status says so (senders show progress and skip
    /// to the end); a live stream reports none.
    @Test func mediaWithoutADurationReportsTheOneItPlaysFor() {
        var settings = Player.Settings()
        settings.defaultDuration = 42
        var harness = PlayerHarness(settings: settings)
        harness.send("LOAD", ["media": Fixture.movie(duration: nil)])
        #expect(harness.status?["media"]?["duration"] == 42)
        harness.send("LOAD", ["media": Fixture.movie(duration: -1)])
        #expect(harness.status?["media"]?["duration"] == 42)
        harness.send("LOAD", ["media": Fixture.movie(duration: 7)])
        #expect(harness.status?["media"]?["duration"] == 7)
        harness.send("LOAD", ["media": Fixture.movie(duration: nil, ["streamType": "LIVE"])])
        #expect(harness.status?["media"]?["duration"] == nil)
    }

    private static let failingAtTwo: JSONValue = [
        Fixture.item(Fixture.song(1, duration: 10)), Fixture.item(Fixture.song(2, duration: 10)),
        Fixture.item(Fixture.movie(url: "https://media.example.com/broken.mp4?fail=1")),
    ]

    /// The item at startIndex is the one loaded: its failure fails the LOAD, its media is the one LOADING shows.
    @Test func aLoadWithQueueDataLoadsTheItemAtStartIndex() throws {
        var harness = PlayerHarness()
        let failed = harness.send(
            "LOAD",
            ["media": Fixture.song(1, duration: 10), "queueData": ["items": Self.failingAtTwo, "startIndex": 2]]
        )
        #expect(failed.reply["type"] == "LOAD_FAILED")
        #expect(failed.reply["detailedErrorCode"] == 104)
        let loading = try #require(failed.broadcasts.first?.firstStatus)
        #expect(loading["extendedStatus"]?["media"]?["contentId"] == "https://media.example.com/broken.mp4?fail=1")

        let second = harness.send("LOAD", ["queueData": ["items": Self.failingAtTwo, "startIndex": 1]])
        #expect(second.status?["media"]?["contentId"] == "https://media.example.com/2.mp3")
        #expect(
            second.broadcasts.first?.firstStatus?["extendedStatus"]?["media"]?["contentId"]
                == "https://media.example.com/2.mp3"
        )
    }

    /// A start index that names no item is refused, in LOAD as in QUEUE_LOAD; absent or null is the first item.
    @Test(arguments: [3, -1, 1.5, "1", true] as [JSONValue])
    func aStartIndexNamingNoItemIsInvalidParams(startIndex: JSONValue) {
        var harness = PlayerHarness()
        let load = harness.send("LOAD", ["queueData": ["items": Fixture.threeSongs, "startIndex": startIndex]])
        #expect(load.reply == ["type": "INVALID_REQUEST", "reason": "INVALID_PARAMS", "requestId": 1])
        let queueLoad = harness.send("QUEUE_LOAD", ["items": Fixture.threeSongs, "startIndex": startIndex])
        #expect(queueLoad.reply == ["type": "INVALID_REQUEST", "reason": "INVALID_PARAMS", "requestId": 2])
        #expect(harness.player.session == nil)
        let null = harness.send("QUEUE_LOAD", ["items": Fixture.threeSongs, "startIndex": .null])
        #expect(null.status?["currentItemId"] == 1)
    }

    /// A negative start position plays from 0, as SEEK clamps.
    @Test func aNegativeCurrentTimePlaysFromTheStart() {
        var harness = Fixture.loaded(Fixture.movie(), ["currentTime": -5])
        #expect(harness.status?["currentTime"] == 0)
        harness.advance(to: 3)
        #expect(harness.status?["currentTime"] == 3)
    }

    /// Removing items no longer in the queue changes nothing: no QUEUE_CHANGE, the sequence number stays; a
    /// removal naming some is announced with the ids actually removed.
    @Test func removingUnknownItemsChangesNothing() {
        var harness = Fixture.queued()
        let unknown = harness.send("QUEUE_REMOVE", ["itemIds": [999]])
        #expect(unknown.reply.type == "MEDIA_STATUS")
        #expect(unknown.queueChanges.isEmpty)
        #expect(harness.player.session?.sequenceNumber == 0)
        #expect(harness.itemIds == [1, 2, 3])
        let some = harness.send("QUEUE_REMOVE", ["itemIds": [999, 2]])
        #expect(some.queueChanges.map { $0["itemIds"] } == [[2]])
        #expect(some.queueChanges.first?["sequenceNumber"] == 1)
        #expect(harness.itemIds == [1, 3])
    }

    @Test func insertingAnItemWithoutMediaIsInvalidParams() {
        var harness = Fixture.queued()
        for items: JSONValue in [[["autoplay": true]], [["media": ["contentType": "audio/mpeg"]]], [["media": 3]]] {
            let outcome = harness.send("QUEUE_INSERT", ["items": items])
            #expect(outcome.reply["reason"] == "INVALID_PARAMS", "\(items)")
            #expect(outcome.queueChanges.isEmpty)
        }
        #expect(harness.itemIds == [1, 2, 3])
    }

    /// LOAD's activeTrackIds must name tracks of the media, as EDIT_TRACKS_INFO's must.
    @Test func loadingWithAMissingTrackIsInvalidParams() {
        var harness = PlayerHarness()
        let media = Fixture.movie(duration: 100, ["tracks": Fixture.tracks])
        for ids: JSONValue in [[9], [1, 9], ["1"], 1] {
            let outcome = harness.send("LOAD", ["media": media, "activeTrackIds": ids])
            #expect(outcome.reply["reason"] == "INVALID_PARAMS", "\(ids)")
        }
        #expect(
            harness.send("LOAD", ["media": Fixture.movie(), "activeTrackIds": [1]]).reply["reason"] == "INVALID_PARAMS"
        )
        let loaded = harness.send("LOAD", ["media": media, "activeTrackIds": [1, 3]])
        #expect(loaded.status?["activeTrackIds"] == [1, 3])
        #expect(harness.send("LOAD", ["media": media, "activeTrackIds": .null]).status?["activeTrackIds"] == [])
    }

    /// SET_VOLUME on the media namespace takes what the receiver namespace takes: null is absent, a level outside
    /// 0…1 or of the wrong type is refused.
    @Test func mediaSetVolumeRefusesWhatTheReceiverNamespaceRefuses() {
        var harness = Fixture.loaded()
        for volume: JSONValue in [
            ["level": .null], [:], ["level": 1.5], ["level": -0.1], ["level": "0.5"], ["muted": "yes"],
        ] {
            #expect(harness.send("SET_VOLUME", ["volume": volume]).reply["reason"] == "INVALID_PARAMS", "\(volume)")
        }
        #expect(harness.status?["volume"] == ["level": 1, "muted": false])
        let muted = harness.send("SET_VOLUME", ["volume": ["level": .null, "muted": true]])
        #expect(muted.status?["volume"] == ["level": 1, "muted": true])
    }
}
