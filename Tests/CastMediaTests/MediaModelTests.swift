import CastMedia
import CastTransport
import Foundation
import Testing

/// The media model maps to exactly the wire JSON of cast-protocol.md §7, tolerantly.
@Suite struct MediaModelTests {
    // MARK: - Fixtures

    static func fullMedia() -> MediaInformation {
        var media = MediaInformation(contentID: "movie-42", contentType: "application/x-mpegURL", streamType: .buffered)
        media.contentURL = "https://media.example.com/movie.m3u8"
        var metadata = MediaMetadata.movie(
            title: "Example Movie",
            subtitle: "The sequel",
            studio: "Example Studio",
            images: [WebImage(url: "https://media.example.com/poster.jpg", width: 600, height: 900)]
        )
        metadata.releaseDate = "2024-05-01"
        metadata["com.example.rating"] = "PG"
        media.metadata = metadata
        media.duration = 5400.5
        var audio = MediaTrack(
            id: 2,
            kind: .audio,
            contentID: "audio-de",
            contentType: "audio/mp4",
            name: "Deutsch",
            language: "de"
        )
        audio.roles = ["main", "dub"]
        audio.customData = ["codec": "ac3"]
        media.tracks = [
            .subtitles(id: 1, url: "https://media.example.com/en.vtt", language: "en-US", name: "English"), audio,
        ]
        media.textTrackStyle = Self.fullStyle()
        var adBreak = AdBreakInfo(id: "b1", breakClipIDs: ["bc1", "bc2"], position: 0)
        adBreak.duration = 30
        adBreak.isEmbedded = false
        media.adBreaks = [adBreak, AdBreakInfo(id: "b2", breakClipIDs: ["bc2"], position: -1, isWatched: true)]
        media.adBreakClips = [Self.fullClip(), AdBreakClipInfo(id: "bc2", duration: 15)]
        media.hlsSegmentFormat = "ts"
        media.customData = ["catalogId": "m-42", "nested": ["list": [1, 2, 3]]]
        media.entity = "https://example.com/entity/42"
        return media
    }

    static func fullStyle() -> TextTrackStyle {
        var style = TextTrackStyle()
        style.backgroundColor = "#00000000"
        style.foregroundColor = "#FFFFFFFF"
        style.edgeColor = "#000000FF"
        style.windowColor = "#11223344"
        style.edgeType = "OUTLINE"
        style.fontScale = 1.5
        style.fontStyle = "BOLD_ITALIC"
        style.fontFamily = "Droid Sans"
        style.fontGenericFamily = "MONOSPACED_SANS_SERIF"
        style.windowType = "ROUNDED_CORNERS"
        style.windowRoundedCornerRadius = 8
        style.customData = ["theme": "dark"]
        return style
    }

    static func fullClip() -> AdBreakClipInfo {
        var clip = AdBreakClipInfo(
            id: "bc1",
            contentID: "https://ads.example.com/ad1.mp4",
            contentType: "video/mp4",
            duration: 15,
            title: "Ad",
            whenSkippable: 5
        )
        clip.contentURL = "https://cdn.example.com/ad1.mp4"
        clip.posterURL = "https://ads.example.com/ad1.jpg"
        clip.clickThroughURL = "https://advertiser.example.com"
        clip.customData = ["campaign": 7]
        return clip
    }

    static func fullQueueItem() -> QueueItem {
        var item = QueueItem(
            media: testMedia("item", duration: 30),
            autoplay: false,
            preloadTime: 10,
            startTime: 2.5,
            activeTrackIDs: [1],
            customData: ["position": 3]
        )
        item.itemID = 12
        item.playbackDuration = 20
        return item
    }

    /// JSON text → value → JSON, and the Codable route agrees with the `json` route.
    static func roundTrip<T: JSONConvertible & Equatable>(_ value: T) throws {
        let decoded = try T(json: value.json)
        #expect(decoded == value)
        let data = try JSONEncoder().encode(value)
        let wire = try JSONDecoder().decode(JSONValue.self, from: data)
        #expect(wire == value.json, "JSONEncoder writes the same keys as `json`")
        #expect(try JSONDecoder().decode(T.self, from: data) == value)
        let text = value.json.jsonString
        #expect(try T(json: JSONValue(parsing: text)) == value)
        #expect(try JSONDecoder().decode(T.self, from: Data(text.utf8)) == value)
    }

    // MARK: - MediaInformation

    @Test func mediaInformationWithEveryFieldRoundTrips() throws {
        let media = Self.fullMedia()
        try Self.roundTrip(media)
        let json = media.json
        #expect(json["contentId"] == "movie-42")
        #expect(json["contentUrl"] == "https://media.example.com/movie.m3u8")
        #expect(json["streamType"] == "BUFFERED")
        #expect(json["contentType"] == "application/x-mpegURL")
        #expect(json["duration"] == 5400.5)
        #expect(json["metadata"]?["metadataType"] == 1)
        #expect(json["tracks"]?[0]?["trackId"] == 1)
        #expect(json["tracks"]?[0]?["type"] == "TEXT")
        #expect(json["tracks"]?[0]?["subtype"] == "SUBTITLES")
        #expect(json["tracks"]?[0]?["trackContentType"] == "text/vtt")
        #expect(json["textTrackStyle"]?["fontScale"] == 1.5)
        #expect(json["breaks"]?[0]?["breakClipIds"] == ["bc1", "bc2"])
        #expect(json["breakClips"]?[0]?["whenSkippable"] == 5)
        #expect(json["hlsSegmentFormat"] == "ts")
        #expect(json["customData"]?["catalogId"] == "m-42")
        #expect(json["entity"] == "https://example.com/entity/42")
        #expect(media.playableURL == "https://media.example.com/movie.m3u8")
    }

    @Test func theProtocolExampleDecodes() throws {
        let text = """
            {"contentId":"https://media.example.com/movie.m3u8","contentType":"application/x-mpegURL",
             "streamType":"BUFFERED","duration":5400.5,"hlsSegmentFormat":"ts",
             "metadata":{"metadataType":1,"title":"Example Movie","studio":"Example Studio",
                         "images":[{"url":"https://media.example.com/poster.jpg","width":600,"height":900}]},
             "tracks":[{"trackId":1,"type":"TEXT","subtype":"SUBTITLES","language":"en-US","name":"English",
                        "trackContentId":"https://media.example.com/en.vtt","trackContentType":"text/vtt"}],
             "textTrackStyle":{"backgroundColor":"#00000000","foregroundColor":"#FFFFFFFF","edgeType":"OUTLINE",
                               "edgeColor":"#000000FF","fontScale":1.0},
             "breakClips":[{"id":"bc1","contentId":"https://ads.example.com/ad1.mp4","contentType":"video/mp4",
                            "duration":15,"title":"Ad","whenSkippable":5}],
             "breaks":[{"id":"b1","breakClipIds":["bc1"],"position":0,"isWatched":false}],
             "customData":{"catalogId":"m-42"},
             "vmapAdsRequest":{"adTagUrl":"https://ads.example.com/vmap"},"startAbsoluteTime":12345}
            """
        let media = try MediaInformation(json: JSONValue(parsing: text))
        #expect(media.contentID == "https://media.example.com/movie.m3u8")
        #expect(media.contentURL == nil)
        #expect(media.streamType == .buffered)
        #expect(media.duration == 5400.5)
        #expect(media.metadata?.kind == .movie)
        #expect(media.metadata?.title == "Example Movie")
        #expect(media.metadata?.studio == "Example Studio")
        #expect(
            media.metadata?.images == [WebImage(url: "https://media.example.com/poster.jpg", width: 600, height: 900)]
        )
        #expect(
            media.tracks == [
                .subtitles(id: 1, url: "https://media.example.com/en.vtt", language: "en-US", name: "English")
            ]
        )
        #expect(media.textTrackStyle?.edgeType == "OUTLINE")
        #expect(media.textTrackStyle?.fontScale == 1)
        #expect(
            media.adBreakClips == [
                AdBreakClipInfo(
                    id: "bc1",
                    contentID: "https://ads.example.com/ad1.mp4",
                    contentType: "video/mp4",
                    duration: 15,
                    title: "Ad",
                    whenSkippable: 5
                )
            ]
        )
        #expect(media.adBreaks == [AdBreakInfo(id: "b1", breakClipIDs: ["bc1"], position: 0)])
        #expect(media.customData == ["catalogId": "m-42"])
        #expect(try JSONDecoder().decode(MediaInformation.self, from: Data(text.utf8)) == media)
    }

    @Test func mediaInformationToleratesNullsAndOddValues() throws {
        let text = """
            {"contentId":"https://example.com/a.mp4","contentType":"video/mp4","streamType":"LIVE",
             "metadata":null,"duration":null,"tracks":[{"trackId":1},{"trackId":2,"type":"VIDEO"}],
             "customData":null,"entity":null,"breaks":"not a list","textTrackStyle":7}
            """
        let media = try MediaInformation(json: JSONValue(parsing: text))
        #expect(media.streamType == .live)
        #expect(media.metadata == nil)
        #expect(media.duration == nil)
        #expect(media.tracks == [MediaTrack(id: 2, kind: .video)], "a track without type is dropped, not fatal")
        #expect(media.customData == nil)
        #expect(media.entity == nil)
        #expect(media.adBreaks == nil)

        let negative = try MediaInformation(json: ["contentId": "live", "streamType": "LIVE", "duration": -1])
        #expect(negative.duration == nil, "−1 means no duration")
        let urlOnly = try MediaInformation(json: ["contentUrl": "https://example.com/b.mp4"])
        #expect(urlOnly.contentID == "https://example.com/b.mp4")
        #expect(urlOnly.contentType == "")
        #expect(urlOnly.streamType == .buffered)
        #expect {
            try MediaInformation(json: ["contentType": "video/mp4"])
        } throws: { ($0 as? CastMediaError)?.code == .invalidResponse }
    }

    // MARK: - MediaMetadata

    static func metadataOfEveryKind() -> [MediaMetadata] {
        let images = [
            WebImage(url: "https://example.com/large.jpg", width: 1280, height: 720),
            WebImage(url: "https://example.com/small.jpg"),
        ]
        var generic = MediaMetadata.generic(title: "Generic", subtitle: "Sub", images: images)
        generic.releaseDate = "2020-01-01"
        let movie = MediaMetadata.movie(title: "Movie", subtitle: "Sub", studio: "Studio", images: images)
        var tv = MediaMetadata(kind: .tvShow, images: images)
        tv.seriesTitle = "Series"
        tv.title = "Episode"
        tv.season = 2
        tv.episode = 7
        tv[MediaMetadata.Key.originalAirdate] = "2019-09-09"
        var music = MediaMetadata.musicTrack(title: "Song", artist: "Artist", album: "Album", images: images)
        music.albumArtist = "Album Artist"
        music.composer = "Composer"
        music.trackNumber = 4
        music[MediaMetadata.Key.discNumber] = 1
        var photo = MediaMetadata(kind: .photo, images: images)
        photo.title = "Photo"
        photo.artist = "Photographer"
        photo[MediaMetadata.Key.location] = "Zürich"
        photo[MediaMetadata.Key.latitude] = 47.3769
        photo[MediaMetadata.Key.longitude] = 8.5417
        photo[MediaMetadata.Key.width] = 4000
        photo[MediaMetadata.Key.height] = 3000
        photo[MediaMetadata.Key.creationDateTime] = "2021-07-01T12:00:00Z"
        var chapter = MediaMetadata(kind: .audiobookChapter)
        chapter.bookTitle = "Book"
        chapter.chapterTitle = "Chapter One"
        chapter[MediaMetadata.Key.chapterNumber] = 1
        chapter[MediaMetadata.Key.contentRating] = "PG"
        var user = MediaMetadata(kind: .user)
        user["com.example.anything"] = ["nested": [true, false]]
        user["com.example.count"] = 3
        return [generic, movie, tv, music, photo, chapter, user]
    }

    @Test(arguments: MediaModelTests.metadataOfEveryKind())
    func metadataOfEveryKindRoundTrips(_ metadata: MediaMetadata) throws {
        try Self.roundTrip(metadata)
        #expect(metadata.json["metadataType"] == .number(Double(metadata.kind.rawValue)))
        if !metadata.images.isEmpty {
            #expect(metadata.json["images"]?[0]?["url"] == "https://example.com/large.jpg")
            #expect(metadata.json["images"]?[1]?["width"] == nil)
        }
    }

    @Test func theShortInitializersSetMetadataAndDuration() throws {
        let metadata = MediaMetadata(kind: .movie, title: "Sintel", subtitle: "Blender Foundation")
        #expect(metadata.title == "Sintel" && metadata.subtitle == "Blender Foundation")
        #expect(MediaMetadata(kind: .movie).allFields.isEmpty)
        let media = MediaInformation(
            contentID: "https://e.x/s.mp4",
            contentType: "video/mp4",
            metadata: metadata,
            duration: 888
        )
        #expect(media.metadata == metadata && media.duration == 888)
        let json = media.json
        #expect(json["duration"] == 888)
        #expect(json["metadata"]?["title"] == "Sintel")
        #expect(try MediaInformation(json: json) == media)
    }

    @Test func metadataAccessorsAndCustomKeys() throws {
        let all = Self.metadataOfEveryKind()
        #expect(all.map(\.kind.rawValue) == [0, 1, 2, 3, 4, 5, 100])
        let tv = all[2]
        #expect(tv.json["seriesTitle"] == "Series")
        #expect(tv.json["season"] == 2)
        #expect(tv.json["episode"] == 7)
        #expect(tv.json["originalAirdate"] == "2019-09-09")
        #expect(tv.displayTitle == "Episode")
        let music = all[3]
        #expect(music.json["albumName"] == "Album")
        #expect(music.json["albumArtist"] == "Album Artist")
        #expect(music.json["trackNumber"] == 4)
        #expect(music.json["discNumber"] == 1)
        #expect(music.displaySubtitle == "Artist")
        let photo = all[4]
        #expect(photo[MediaMetadata.Key.latitude] == 47.3769)
        #expect(photo.json["location"] == "Zürich")
        let chapter = all[5]
        #expect(chapter.displayTitle == "Chapter One")
        #expect(chapter.json["bookTitle"] == "Book")
        let user = all[6]
        #expect(user["com.example.count"] == 3)
        #expect(user.allFields.keys.sorted() == ["com.example.anything", "com.example.count"])

        // From the wire: deprecated and unknown keys survive, nulls and broken images do not.
        let wire: JSONValue = [
            "metadataType": 3, "songName": "Old key", "title": "Song", "releaseDate": .null,
            "images": [["url": "https://example.com/a.jpg", "width": 10], ["width": 5], "junk"],
            "x-custom": ["a": 1],
        ]
        let decoded = try MediaMetadata(json: wire)
        #expect(decoded.kind == .musicTrack)
        #expect(decoded["songName"] == "Old key")
        #expect(decoded["x-custom"] == ["a": 1])
        #expect(decoded.releaseDate == nil)
        #expect(decoded["releaseDate"] == nil)
        #expect(decoded.images == [WebImage(url: "https://example.com/a.jpg", width: 10)])
        #expect(try MediaMetadata(json: ["title": "No type"]).kind == .generic)
        #expect {
            try MediaMetadata(json: "not an object")
        } throws: { ($0 as? CastMediaError)?.code == .invalidResponse }
    }

    // MARK: - Tracks, styles, ad breaks

    @Test func tracksAndStylesRoundTrip() throws {
        for track in Self.fullMedia().tracks ?? [] { try Self.roundTrip(track) }
        try Self.roundTrip(MediaTrack(id: 3, kind: .video))
        try Self.roundTrip(Self.fullStyle())
        try Self.roundTrip(TextTrackStyle())
        #expect(TextTrackStyle().json == [:], "an empty style sends no keys")
        let style = Self.fullStyle().json
        #expect(
            style.objectValue?.keys.sorted() == [
                "backgroundColor", "customData", "edgeColor", "edgeType", "fontFamily", "fontGenericFamily",
                "fontScale",
                "fontStyle", "foregroundColor", "windowColor", "windowRoundedCornerRadius", "windowType",
            ]
        )
        let audio = try #require(Self.fullMedia().tracks?.last)
        #expect(
            audio.json == [
                "trackId": 2, "type": "AUDIO", "trackContentId": "audio-de", "trackContentType": "audio/mp4",
                "name": "Deutsch",
                "language": "de", "roles": ["main", "dub"], "customData": ["codec": "ac3"],
            ]
        )
        #expect {
            try MediaTrack(json: ["type": "TEXT"])
        } throws: { ($0 as? CastMediaError)?.code == .invalidResponse }
    }

    @Test func adBreaksAndClipsRoundTrip() throws {
        for adBreak in Self.fullMedia().adBreaks ?? [] { try Self.roundTrip(adBreak) }
        for clip in Self.fullMedia().adBreakClips ?? [] { try Self.roundTrip(clip) }
        #expect(
            Self.fullClip().json == [
                "id": "bc1", "contentId": "https://ads.example.com/ad1.mp4",
                "contentUrl": "https://cdn.example.com/ad1.mp4",
                "contentType": "video/mp4", "duration": 15, "title": "Ad",
                "posterUrl": "https://ads.example.com/ad1.jpg",
                "clickThroughUrl": "https://advertiser.example.com", "whenSkippable": 5, "customData": ["campaign": 7],
            ]
        )
        let postRoll = try #require(Self.fullMedia().adBreaks?.last)
        #expect(postRoll.json == ["id": "b2", "breakClipIds": ["bc2"], "position": -1, "isWatched": true])
        #expect {
            try AdBreakInfo(json: ["position": 0])
        } throws: { ($0 as? CastMediaError)?.code == .invalidResponse }
        #expect {
            try AdBreakClipInfo(json: ["duration": 3])
        } throws: { ($0 as? CastMediaError)?.code == .invalidResponse }

        var status = AdBreakStatus(breakID: "b1", breakClipID: "bc1")
        status.currentBreakTime = 18
        status.currentBreakClipTime = 3
        status.whenSkippable = 5
        try Self.roundTrip(status)
        #expect(!status.isSkippable)
        #expect(status.secondsUntilSkippable == 2)
        status.currentBreakClipTime = 5
        #expect(status.isSkippable)
        #expect(status.secondsUntilSkippable == 0)
        status.whenSkippable = nil
        #expect(!status.isSkippable)
        #expect(status.secondsUntilSkippable == nil)
    }

    // MARK: - Queues

    @Test func queueItemsAndQueueDataRoundTrip() throws {
        let item = Self.fullQueueItem()
        try Self.roundTrip(item)
        #expect(item.json["itemId"] == 12)
        #expect(item.json["autoplay"] == false)
        #expect(item.json["preloadTime"] == 10)
        #expect(item.json["startTime"] == 2.5)
        #expect(item.json["playbackDuration"] == 20)
        #expect(item.json["activeTrackIds"] == [1])
        #expect(item.json["customData"] == ["position": 3])
        let fresh = QueueItem(media: testMedia())
        #expect(fresh.json["itemId"] == nil)
        #expect(fresh.json["autoplay"] == true)
        #expect(try QueueItem(json: ["media": testMedia().json]).autoplay, "autoplay defaults to true")
        #expect {
            try QueueItem(json: ["itemId": 3])
        } throws: { ($0 as? CastMediaError)?.code == .invalidResponse }

        var queue = QueueData(items: [item, fresh], startIndex: 1, repeatMode: .allAndShuffle, name: "Mix")
        queue.id = "q-1"
        queue.queueDescription = "A mix"
        queue.queueType = "PLAYLIST"
        queue.startTime = 4
        try Self.roundTrip(queue)
        #expect(queue.json["description"] == "A mix")
        #expect(queue.json["queueType"] == "PLAYLIST")
        #expect(queue.json["repeatMode"] == "REPEAT_ALL_AND_SHUFFLE")
        #expect(queue.json["startIndex"] == 1)
        #expect(queue.json["items"]?.arrayValue?.count == 2)
        #expect(
            RepeatMode.allCases.map(\.rawValue) == [
                "REPEAT_OFF", "REPEAT_ALL", "REPEAT_SINGLE", "REPEAT_ALL_AND_SHUFFLE",
            ]
        )

        let tolerant = try QueueData(json: [
            "items": "nope", "repeatMode": "REPEAT_SOMETIMES", "shuffle": true, "entity": "x",
        ])
        #expect(tolerant.items.isEmpty)
        #expect(tolerant.repeatMode == nil)
    }

    // MARK: - MediaStatus

    static let fullStatusText = """
        {"mediaSessionId":7,"playerState":"PLAYING","currentTime":42.5,"playbackRate":1.25,
         "supportedMediaCommands":275151,"volume":{"level":0.5,"muted":true},"activeTrackIds":[1,2],
         "currentItemId":3,"loadingItemId":4,"preloadedItemId":4,"repeatMode":"REPEAT_ALL",
         "items":[{"itemId":3,"autoplay":true,"media":{"contentId":"https://example.com/3.mp4","contentType":"video/mp4","streamType":"BUFFERED"}},
                  {"itemId":4,"autoplay":false,"preloadTime":5,"media":{"contentId":"https://example.com/4.mp4","contentType":"video/mp4","streamType":"BUFFERED"}}],
         "queueData":{"id":"q","name":"Queue","queueType":"VIDEO_PLAYLIST","repeatMode":"REPEAT_ALL","startIndex":0},
         "breakStatus":{"breakId":"b1","breakClipId":"bc1","currentBreakTime":3.0,"currentBreakClipTime":3.0,"whenSkippable":5},
         "videoInfo":{"width":3840,"height":2160,"hdrType":"hdr"},
         "liveSeekableRange":{"start":10,"end":3600,"isMovingWindow":true,"isLiveDone":false},
         "customData":{"playerState":1081},
         "media":{"contentId":"https://example.com/3.mp4","contentType":"video/mp4","streamType":"BUFFERED","duration":60,
                  "metadata":{"metadataType":0,"title":"Three"}},
         "someFutureKey":{"deeply":{"nested":[1,2,3]}},"userActionStates":[]}
        """

    @Test func aFullStatusDecodes() throws {
        let status = try MediaStatus(json: JSONValue(parsing: Self.fullStatusText))
        #expect(status.mediaSessionID == 7)
        #expect(status.playerState == .playing)
        #expect(status.idleReason == nil)
        #expect(status.extendedPlayerState == nil)
        #expect(status.currentTime == 42.5)
        #expect(status.playbackRate == 1.25)
        #expect(status.supportedMediaCommands.contains(.allBasicMedia))
        #expect(status.supportedMediaCommands.isSuperset(of: [.queueNext, .queuePrevious, .skipAd, .streamTransfer]))
        #expect(!status.supportedMediaCommands.contains(.queueShuffle))
        #expect(status.supportedMediaCommands.rawValue == 275_151)
        #expect(status.volumeLevel == 0.5)
        #expect(status.isMuted == true)
        #expect(status.activeTrackIDs == [1, 2])
        #expect(status.currentItemID == 3)
        #expect(status.loadingItemID == 4)
        #expect(status.preloadedItemID == 4)
        #expect(status.items?.map(\.itemID) == [3, 4])
        #expect(status.items?.last?.autoplay == false)
        #expect(status.currentItem?.media.contentID == "https://example.com/3.mp4")
        #expect(status.repeatMode == .all)
        #expect(status.queueData?.queueType == "VIDEO_PLAYLIST")
        #expect(status.queueData?.name == "Queue")
        #expect(status.adBreakStatus?.breakID == "b1")
        #expect(status.adBreakStatus?.whenSkippable == 5)
        #expect(status.isPlayingAd)
        #expect(status.videoInfo == VideoInfo(width: 3840, height: 2160, hdrType: "hdr"))
        #expect(status.liveSeekableRange == 10...3600)
        #expect(status.customData == ["playerState": 1081])
        #expect(status.media?.metadata?.title == "Three")
        #expect(status.media?.duration == 60)
        #expect(!status.isLiveStream)
        try Self.roundTrip(status)
        #expect(try JSONDecoder().decode(MediaStatus.self, from: Data(Self.fullStatusText.utf8)) == status)
    }

    @Test func aStatusTakesUnchangedMediaAndItemsFromTheRecordOfTheOneBefore() throws {
        let first = try JSONValue(parsing: Self.fullStatusText)
        var parts = MediaStatus.DecodedParts()
        #expect(try MediaStatus(json: first, reusing: nil, recording: &parts) == MediaStatus(json: first))
        #expect(parts.media?.json == first["media"])
        #expect(try parts.media?.value == MediaInformation(json: first["media"] ?? .null))
        #expect(parts.items?.json == first["items"] && parts.items?.value?.map(\.itemID) == [3, 4])

        // A record whose JSON matches is taken as it is: planted values show that nothing was decoded again.
        let planted = MediaInformation(contentID: "planted", contentType: "video/mp4")
        var record = parts
        record.media?.value = planted
        var plantedItem = QueueItem(media: planted)
        plantedItem.itemID = 99
        record.items?.value = [plantedItem]
        var next = first
        next["currentTime"] = 50
        var nextParts = MediaStatus.DecodedParts()
        let reused = try MediaStatus(json: next, reusing: record, recording: &nextParts)
        #expect(reused.currentTime == 50)
        #expect(reused.media?.contentID == "planted")
        #expect(reused.items?.map(\.itemID) == [99])
        #expect(nextParts.media?.value?.contentID == "planted", "what was taken is recorded for the next status")

        // Changed media and items are decoded, not taken.
        var changed = next
        changed["media"]?["contentId"] = "https://example.com/4.mp4"
        changed["items"] = [
            ["itemId": 9, "media": ["contentId": "https://example.com/9.mp4", "contentType": "video/mp4"]]
        ]
        var changedParts = MediaStatus.DecodedParts()
        let fresh = try MediaStatus(json: changed, reusing: record, recording: &changedParts)
        #expect(try fresh == MediaStatus(json: changed))
        #expect(fresh.media?.contentID == "https://example.com/4.mp4")
        #expect(fresh.items?.map(\.itemID) == [9])
        #expect(changedParts.media?.json == changed["media"] && changedParts.items?.json == changed["items"])

        // A status without them leaves the record as it was.
        var without = changedParts
        _ = try MediaStatus(
            json: ["mediaSessionId": 7, "playerState": "PAUSED"],
            reusing: changedParts,
            recording: &without
        )
        #expect(without.media?.json == changed["media"] && without.items?.json == changed["items"])
    }

    @Test func aStatusAndItsMediaAreOneWordAndCopiesStayIndependent() throws {
        #expect(MemoryLayout<MediaStatus>.size == MemoryLayout<Int>.size)
        #expect(MemoryLayout<MediaStatus?>.size == MemoryLayout<Int>.size)
        #expect(MemoryLayout<MediaInformation>.size == MemoryLayout<Int>.size)
        let original = try MediaStatus(json: JSONValue(parsing: Self.fullStatusText))
        var copy = original
        #expect(copy == original)
        copy.playerState = .paused
        copy.items?.removeLast()
        copy.media?.metadata = nil
        #expect(original.playerState == .playing)
        #expect(original.items?.count == 2)
        #expect(original.media?.metadata?.title == "Three")
        #expect(copy.playerState == .paused && copy.items?.count == 1 && copy.media?.metadata == nil)
        #expect(copy != original)
        copy.playerState = .playing
        copy.items = original.items
        copy.media = original.media
        #expect(copy == original)
        #expect(copy.hashValue == original.hashValue)
        #expect(Set([copy, original]).count == 1)
    }

    @Test(arguments: [
        ("CANCELLED", IdleReason.cancelled), ("INTERRUPTED", .interrupted), ("FINISHED", .finished), ("ERROR", .error),
    ])
    func idleReasons(_ wire: String, _ reason: IdleReason) throws {
        let status = try MediaStatus(json: ["mediaSessionId": 1, "playerState": "IDLE", "idleReason": .string(wire)])
        #expect(status.playerState == .idle)
        #expect(status.idleReason == reason)
        #expect(status.json["idleReason"] == .string(wire))
        try Self.roundTrip(status)
    }

    @Test func loadingLivesInExtendedStatus() throws {
        let text = """
            {"mediaSessionId":2,"playerState":"IDLE","currentTime":0,"playbackRate":1,"supportedMediaCommands":12303,
             "volume":{"level":1,"muted":false},"currentItemId":1,
             "extendedStatus":{"playerState":"LOADING","mediaSessionId":2,
               "media":{"contentId":"https://radio.example.com/live.m3u8","contentType":"audio/mpeg","streamType":"LIVE",
                        "metadata":{"metadataType":0,"title":"Radio"}}}}
            """
        let status = try MediaStatus(json: JSONValue(parsing: text))
        #expect(status.playerState == .idle)
        #expect(status.extendedPlayerState == .loading)
        #expect(status.media?.metadata?.title == "Radio", "the loading media comes from extendedStatus")
        #expect(status.isLiveStream)
        #expect(status.json["playerState"] == "IDLE")
        #expect(status.json["extendedStatus"]?["playerState"] == "LOADING")
        try Self.roundTrip(status)
    }

    @Test func unknownKeysNullsAndWrongTypesAreNotFatal() throws {
        let text = """
            {"mediaSessionId":9,"playerState":7,"currentTime":"soon","playbackRate":null,"supportedMediaCommands":"all",
             "volume":5,"activeTrackIds":"1","currentItemId":"3","items":{"a":1},"repeatMode":"REPEAT_NEVER",
             "media":null,"breakStatus":null,"idleReason":null,"customData":null,"queueData":[1],
             "liveSeekableRange":{"start":9,"end":1},"brandNewField":true}
            """
        let status = try MediaStatus(json: JSONValue(parsing: text))
        #expect(status.mediaSessionID == 9)
        #expect(status.playerState == .idle)
        #expect(status.currentTime == 0)
        #expect(status.playbackRate == 1)
        #expect(status.supportedMediaCommands == [])
        #expect(status.volumeLevel == nil)
        #expect(status.isMuted == nil)
        #expect(status.activeTrackIDs == [])
        #expect(status.currentItemID == nil)
        #expect(status.items == nil)
        #expect(status.repeatMode == nil)
        #expect(status.media == nil)
        #expect(status.adBreakStatus == nil)
        #expect(status.idleReason == nil)
        #expect(status.customData == nil)
        #expect(status.liveSeekableRange == nil)

        let nullMedia: JSONValue = [
            "mediaSessionId": 1, "playerState": "PAUSED",
            "media": [
                "contentId": "a", "contentType": "video/mp4", "metadata": .null, "duration": .null, "tracks": .null,
            ],
        ]
        let paused = try MediaStatus(json: nullMedia)
        #expect(paused.playerState == .paused)
        #expect(paused.media?.metadata == nil)
        #expect(paused.media?.duration == nil)
        #expect(paused.media?.tracks == nil)

        #expect {
            try MediaStatus(json: ["playerState": "PLAYING"])
        } throws: { ($0 as? CastMediaError)?.code == .invalidResponse }
        #expect {
            try MediaStatus(json: ["mediaSessionId": "7"])
        } throws: { ($0 as? CastMediaError)?.code == .invalidResponse }
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(MediaStatus.self, from: Data("{\"currentTime\":1}".utf8))
        }
    }

    @Test func supportedMediaCommandsMatchTheProtocolBits() {
        let bits: [(MediaCommands, Int)] = [
            (.pause, 1), (.seek, 2), (.streamVolume, 4), (.streamMute, 8), (.skipForward, 16), (.skipBackward, 32),
            (.queueNext, 64), (.queuePrevious, 128), (.queueShuffle, 256), (.skipAd, 512), (.queueRepeatAll, 1024),
            (.queueRepeatOne, 2048), (.queueRepeat, 3072), (.editTracks, 4096), (.playbackRate, 8192), (.like, 16384),
            (.dislike, 32768), (.follow, 65536), (.unfollow, 131_072), (.streamTransfer, 262_144),
        ]
        for (command, value) in bits { #expect(command.rawValue == value) }
        #expect(MediaCommands.allBasicMedia == [.pause, .seek, .streamVolume, .streamMute, .editTracks, .playbackRate])
        #expect(MediaCommands.allBasicMedia.rawValue == 12303)
    }

    @Test func videoInfoDefaultsToSDR() throws {
        try Self.roundTrip(VideoInfo(width: 1920, height: 1080))
        #expect(try VideoInfo(json: ["width": 1280, "height": 720]).hdrType == "sdr")
        #expect(
            VideoInfo(width: 3840, height: 2160, hdrType: "dv").json == [
                "width": 3840, "height": 2160, "hdrType": "dv",
            ]
        )
    }
}
