import CastStreaming
import CastTransport
import Testing

/// OFFER and ANSWER as JSON: what is sent, what a receiver accepts or refuses, and real devices' ANSWERs.
@Suite struct OfferAnswerTests {
    private func offer() -> StreamingOffer {
        var audio = OfferedStream(
            index: 0,
            kind: .audio,
            codecName: "opus",
            payloadType: 127,
            ssrc: 31415,
            rtpTimebase: 48000,
            channels: 2,
            crypto: testCrypto
        )
        audio.bitRate = 128_000
        var video = OfferedStream(
            index: 1,
            kind: .video,
            codecName: "vp8",
            payloadType: 96,
            ssrc: 77777,
            rtpTimebase: 90000,
            channels: 1,
            crypto: .random()
        )
        video.resolutions = [Resolution(width: 1280, height: 720)]
        return StreamingOffer(streams: [audio, video])
    }

    @Test func offerCarriesEveryRequiredFieldAndParsesBack() throws {
        let message = offer().message(sequenceNumber: 5)
        #expect(message["type"]?.stringValue == "OFFER" && message["seqNum"]?.intValue == 5)
        let streams = try #require(message["offer"]?["supportedStreams"]?.arrayValue)
        #expect(streams[0]["aesKey"]?.stringValue == "000102030405060708090a0b0c0d0e0f")
        #expect(streams[0]["timeBase"]?.stringValue == "1/48000" && streams[0]["bitRate"]?.intValue == 128_000)
        #expect(streams[1]["type"]?.stringValue == "video_source" && streams[1]["rtpPayloadType"]?.intValue == 96)
        #expect(streams[1]["resolutions"]?[0]?["width"]?.intValue == 1280)
        let parsed = try StreamingOffer(json: message["offer"]!)
        #expect(parsed == offer().withVideoCrypto(parsed.streams[1].crypto))
    }

    @Test func receiverPicksByItsPreferences() throws {
        var h264 = offer().streams[1]
        h264.index = 2
        h264.codecName = "h264"
        let choices = StreamingOffer(streams: offer().streams + [h264])
        #expect(choices.selectStreams(videoCodecs: ["h264", "vp8"], audioCodecs: ["opus"]).map(\.index) == [0, 2])
        #expect(choices.selectStreams(videoCodecs: ["av1"], audioCodecs: ["aac"]).isEmpty)
    }

    @Test(arguments: [
        ("aesKey", JSONValue.null, "no key"),
        ("aesIvMask", "0011", "short mask"),
        ("rtpPayloadType", 8, "payload type"),
        ("timeBase", "1/8000", "time base"),
        ("ssrc", -1, "negative ssrc"),
        ("channels", 0, "no channels"),
        ("bitRate", .null, "audio without bitRate"),
    ])
    func refusesInvalidStreams(field: String, value: JSONValue, what: String) throws {
        var stream = try #require(offer().streams[0].json.objectValue)
        if value == .null { stream[field] = nil } else { stream[field] = value }
        let body: JSONValue = ["supportedStreams": [.object(stream)]]
        #expect(streamingErrorCode { _ = try StreamingOffer(json: body) } == .invalidOffer, "\(what)")
    }

    @Test func unknownStreamTypesAreSkipped() throws {
        let body: JSONValue = ["supportedStreams": [["type": "subtitle_source", "index": 9]]]
        #expect(try StreamingOffer(json: body).streams.isEmpty)
        #expect(streamingErrorCode { _ = try StreamingOffer(json: ["castMode": "mirroring"]) } == .invalidOffer)
    }

    @Test func realDeviceAnswerParses() throws {
        let text = """
            {"answer":{"receiverRtcpEventLog":[0,1],"rtpExtensions":[["adaptive_playout_delay"],["adaptive_playout_delay"]],\
            "sendIndexes":[0,1],"ssrcs":[40863,759293],"udpPort":50691,"castMode":"mirroring"},"result":"ok",\
            "seqNum":989031000,"type":"ANSWER"}
            """
        let answer = try StreamingAnswer(message: JSONValue(parsing: text))
        #expect(answer.udpPort == 50691 && answer.sendIndexes == [0, 1] && answer.receiverSSRCs == [40863, 759293])
        #expect(answer.constraints == nil && answer.maximumVideoBitRate == nil)
    }

    @Test func answerWithConstraintsExposesLimits() throws {
        let answer = StreamingAnswer(
            udpPort: 2344,
            sendIndexes: [1],
            receiverSSRCs: [77778],
            constraints: ["video": ["maxBitRate": 2_000_000, "maxDimensions": ["width": 1280, "height": 720]]]
        )
        let parsed = try StreamingAnswer(message: answer.message(sequenceNumber: 1))
        #expect(parsed.maximumVideoBitRate == 2_000_000)
        #expect(parsed.maximumVideoResolution == Resolution(width: 1280, height: 720))
    }

    @Test func errorsAndBrokenAnswersAreTyped() throws {
        let refused = StreamingAnswer.errorMessage(sequenceNumber: 1, code: 10107, description: "no stream")
        #expect(streamingErrorCode { _ = try StreamingAnswer(message: refused) } == .offerRejected)
        #expect(
            streamingErrorCode { _ = try StreamingAnswer(message: ["type": "ANSWER", "seqNum": 1]) } == .offerRejected
        )
        let mismatched: JSONValue = [
            "result": "ok", "answer": ["udpPort": 2344, "sendIndexes": [0, 1], "ssrcs": [5]],
        ]
        #expect(streamingErrorCode { _ = try StreamingAnswer(message: mismatched) } == .invalidAnswer)
        let noPort: JSONValue = ["result": "ok", "answer": ["udpPort": 0, "sendIndexes": [0], "ssrcs": [5]]]
        #expect(streamingErrorCode { _ = try StreamingAnswer(message: noPort) } == .invalidAnswer)
    }
}

extension StreamingOffer {
    fileprivate func withVideoCrypto(_ crypto: FrameCrypto) -> StreamingOffer {
        var copy = self
        copy.streams[1].crypto = crypto
        return copy
    }
}
