import CastReceiver
import CastSession
import CastStreaming
import CastTransport
import Foundation
import Testing

/// A sender and the emulator's Cast Streaming receiver over real UDP on loopback: negotiation, frames pushed by a
/// program, and ffmpeg's test pattern mirrored through the encoders, on a clean and on a lossy network.
@Suite struct MirroringEndToEndTests {
    typealias Arrival = (kind: OfferedStream.Kind, frame: ReceivedFrame)

    /// Starts the emulator (with `configure`d streaming options), a session on the mirroring app, and runs `body`
    /// with the session, the device and the stream of frames the receiver completes.
    private func withMirroringSession(
        _ configure: (inout StreamingReceiverEndpoint.Options) -> Void = { _ in },
        _ body: (CastSession, EmulatedDevice, AsyncStream<Arrival>) async throws -> Void
    ) async throws {
        let (arrivals, continuation) = AsyncStream<Arrival>.makeStream()
        var configuration = DeviceConfiguration(friendlyName: "Mirroring TV", port: 0)
        configure(&configuration.streaming)
        configuration.streaming.frameHandler = { kind, frame in continuation.yield((kind, frame)) }
        var options = CastOptions(receiverApplicationID: MirroringSession.applicationID)
        options.stateDirectory =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "cast-streaming-tests-\(UUID().uuidString)"
            ).path
        options.heartbeat.pingInterval = nil
        options.requestTimeout = .seconds(60)
        try await withCastReceiverEmulator(devices: [configuration]) { emulator in
            let context = CastContext(options: options)
            let session = try await context.sessionManager.startSession(with: emulator.devices[0].castDevice)
            defer {
                // The session's own state, and the second sender's that some tests start beside it.
                try? FileManager.default.removeItem(atPath: options.stateDirectory!)
                try? FileManager.default.removeItem(atPath: options.stateDirectory! + "-other")
            }
            do {
                try await body(session, emulator.devices[0], arrivals)
            } catch {
                await context.sessionManager.endSession(stopCasting: true)
                throw error
            }
            await context.sessionManager.endSession(stopCasting: true)
        }
    }

    /// Mirrors a 320x240 test pattern offering `codecs` until the receiver completed `count` video frames.
    private func mirrorTestPattern(
        offering codecs: [String],
        on session: CastSession,
        until count: Int,
        of arrivals: AsyncStream<Arrival>
    ) async -> [ReceivedFrame] {
        var options = ScreenMirror.Options()
        options.video = .testPattern(resolution: Resolution(width: 320, height: 240))
        options.resolution = Resolution(width: 320, height: 240)
        options.videoCodecs = codecs
        let running = Task { try await ScreenMirror(options: options).run(on: session) }
        var frames: [ReceivedFrame] = []
        for await arrival in arrivals where arrival.kind == .video {
            frames.append(arrival.frame)
            if frames.count >= count { break }
        }
        running.cancel()
        _ = await running.result
        return frames
    }

    private func offer(video: Bool = true, audio: Bool = true) -> StreamingOffer {
        var options = ScreenMirror.Options()
        options.video = video ? .testPattern() : nil
        options.audio = audio ? .testPattern() : nil
        // Frames are pushed as fast as they arrive, and a sender refuses one when more than half the target delay
        // is unacknowledged; 2 s (not 400 ms) leaves a saturated machine's late acknowledgements room.
        options.targetDelay = .seconds(2)
        return ScreenMirror(options: options).offer()
    }

    @Test func negotiatesAndCarriesPushedFramesIntact() async throws {
        try await withMirroringSession { session, device, arrivals in
            let mirroring = try await MirroringSession.start(on: session, offer: offer(), answerTimeout: .seconds(30))
            #expect(Set(mirroring.streams.map(\.kind)) == [.audio, .video])
            #expect(device.streamingEndpoint?.answer == mirroring.answer)
            var iterator = arrivals.makeAsyncIterator()
            let start = StreamingMoment.now().monotonic
            for index in 0..<30 {
                // Sizes from one packet to nine, each frame's bytes its own.
                let data = (0..<(index * 457 + 1)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
                let frame = EncodedFrame(
                    data: data,
                    isKeyFrame: index % 10 == 0,
                    captureTime: start + .milliseconds(Int64(index) * 33)
                )
                try mirroring.send(frame, on: .video)
                let arrival = try #require(await iterator.next())
                #expect(arrival.kind == .video && arrival.frame.frameID == Int64(index))
                #expect(arrival.frame.data == data && arrival.frame.isKeyFrame == (index % 10 == 0))
            }
            let received = try #require(device.streamingEndpoint?.statistics[.video])
            #expect(received.framesCompleted == 30 && received.keyFrames == 3 && received.framesLate == 0)
            #expect(received.senderReports >= 1)
            await mirroring.close()
        }
    }

    @Test func aProgramsOwnPicturesAndSoundAreEncodedAndSent() async throws {
        try await withMirroringSession { session, _, arrivals in
            let mirroring = try await MirroringSession.start(on: session, offer: offer(), answerTimeout: .seconds(30))
            let size = Resolution(width: 160, height: 96)
            let video = try VideoFrameEncoder(codec: "vp8", resolution: size)
            let audio = try AudioFrameEncoder()
            var iterator = arrivals.makeAsyncIterator()
            let start = StreamingMoment.now().monotonic
            for index in 0..<5 {
                // A gray picture getting lighter, and 10 ms of silence.
                let picture = [UInt8](repeating: UInt8(40 * index), count: size.width * size.height * 3 / 2)
                let time = start + .milliseconds(Int64(index) * 33)
                let frame = try #require(
                    try video.encode(i420: picture, captureTime: time, keyFrame: mirroring.wantsKeyFrame())
                )
                try mirroring.send(frame, on: .video)
                try mirroring.send(
                    try audio.encode([Int16](repeating: 0, count: audio.samplesPerFrame * 2), captureTime: time),
                    on: .audio
                )
                var kinds: Set<OfferedStream.Kind> = []
                while kinds.count < 2, let arrival = await iterator.next() {
                    kinds.insert(arrival.kind)
                    if arrival.kind == .video {
                        #expect(arrival.frame.frameID == Int64(index) && arrival.frame.data == frame.data)
                        #expect(arrival.frame.isKeyFrame == (index == 0))
                    }
                }
            }
            await mirroring.close()
        }
    }

    @Test func aPictureOfTheWrongSizeIsRefused() throws {
        let encoder = try VideoFrameEncoder(resolution: Resolution(width: 64, height: 48))
        #expect {
            try encoder.encode(i420: [0, 1, 2], captureTime: .seconds(1))
        } throws: {
            ($0 as? CastStreamingError)?.code == .encoderFailed
        }
        #expect { try VideoFrameEncoder(codec: "theora", resolution: Resolution(width: 64, height: 48)) } throws: {
            ($0 as? CastStreamingError)?.code == .encoderFailed
        }
    }

    @Test func renegotiationReplacesTheStreams() async throws {
        try await withMirroringSession { session, device, arrivals in
            let mirroring = try await MirroringSession.start(on: session, offer: offer(), answerTimeout: .seconds(30))
            var iterator = arrivals.makeAsyncIterator()
            let start = StreamingMoment.now().monotonic
            try mirroring.send(EncodedFrame(data: [1, 2, 3], isKeyFrame: true, captureTime: start), on: .video)
            #expect(try #require(await iterator.next()).frame.data == [1, 2, 3])
            let first = try #require(device.streamingEndpoint)

            let second = offer(video: true, audio: false)
            try await mirroring.renegotiate(second, on: session, answerTimeout: .seconds(30))
            #expect(mirroring.streams.map(\.ssrc) == second.streams.map(\.ssrc))
            #expect(device.streamingEndpoint !== first)
            try mirroring.send(
                EncodedFrame(data: [4, 5], isKeyFrame: true, captureTime: start + .milliseconds(40)),
                on: .video
            )
            let arrival = try #require(await iterator.next())
            // A new stream: frame ids restart, and the new key decrypts.
            #expect(arrival.frame.frameID == 0 && arrival.frame.data == [4, 5])
            await mirroring.close()
        }
    }

    @Test func mirrorEndsWhenAnotherSenderReplacesTheApp() async throws {
        try await withMirroringSession { session, device, arrivals in
            var options = ScreenMirror.Options()
            options.video = .testPattern(resolution: Resolution(width: 320, height: 240))
            options.resolution = Resolution(width: 320, height: 240)
            let running = Task { try await ScreenMirror(options: options).run(on: session) }
            var received = 0
            for await arrival in arrivals where arrival.kind == .video {
                received += 1
                if received == 5 { break }
            }
            var other = CastOptions()
            other.stateDirectory = session.options.stateDirectory.map { $0 + "-other" }
            other.heartbeat.pingInterval = nil
            let context = CastContext(options: other)
            _ = try await context.sessionManager.startSession(with: device.castDevice)
            await #expect {
                try await running.value
            } throws: {
                ($0 as? CastStreamingError)?.code == .sessionEnded
            }
            await context.sessionManager.endSession()
        }
    }

    @Test func refusedOfferIsATypedError() async throws {
        try await withMirroringSession({
            $0.videoCodecs = ["av1"]; $0.audioCodecs = []
        }) { session, _, _ in
            await #expect {
                try await MirroringSession.start(on: session, offer: offer(), answerTimeout: .seconds(30))
            } throws: {
                ($0 as? CastStreamingError)?.code == .offerRejected
            }
        }
    }

    @Test func h264IsSentAsAnnexBWithParameterSets() async throws {
        try await withMirroringSession({ $0.videoCodecs = ["h264"] }) { session, device, arrivals in
            let frames = await mirrorTestPattern(offering: ["h264"], on: session, until: 10, of: arrivals)
            let first = try #require(frames.first)
            #expect(first.isKeyFrame && first.data.starts(with: [0, 0, 0, 1]))
            // NAL unit types after each start code: SPS (7) and PPS (8) come before the IDR slice (5).
            let types = (0..<max(0, first.data.count - 4)).compactMap { index -> UInt8? in
                first.data[index..<index + 4].elementsEqual([0, 0, 0, 1]) ? first.data[index + 4] & 0x1F : nil
            }
            #expect(Array(types.prefix(3)) == [7, 8, 5])
            #expect(frames.dropFirst().contains { !$0.isKeyFrame })
            #expect(device.streamingEndpoint?.statistics[.video]?.framesCompleted ?? 0 >= 10)
        }
    }

    @Test func theReceiverPicksAmongOfferedCodecsAndVP9IsEncoded() async throws {
        try await withMirroringSession({ $0.videoCodecs = ["vp9", "vp8"] }) { session, device, arrivals in
            let frames = await mirrorTestPattern(
                offering: ["h264", "vp8", "vp9"],
                on: session,
                until: 10,
                of: arrivals
            )
            let first = try #require(frames.first)
            // A VP9 key frame's uncompressed header: frame marker 2, then its sync code 49 83 42.
            #expect(first.isKeyFrame && first.data[0] >> 6 == 2)
            #expect(first.data[1...3].elementsEqual([0x49, 0x83, 0x42]))
            #expect(device.streamingEndpoint?.statistics[.video]?.framesCompleted ?? 0 >= 10)
        }
    }

    @Test func av1IsSentAsTemporalUnits() async throws {
        try await withMirroringSession({ $0.videoCodecs = ["av1"] }) { session, device, arrivals in
            let frames = await mirrorTestPattern(
                offering: VideoFrameEncoder.codecs,
                on: session,
                until: 5,
                of: arrivals
            )
            let first = try #require(frames.first)
            // A temporal delimiter OBU (type 2, no payload), then the sequence header OBU (type 1) of a key frame.
            #expect(first.isKeyFrame && first.data.starts(with: [0x12, 0x00]))
            #expect(first.data.count > 2 && (first.data[2] >> 3) & 0x0F == 1)
            #expect(device.streamingEndpoint?.statistics[.video]?.framesCompleted ?? 0 >= 5)
        }
    }

    /// ffmpeg's moving test pattern and tone, encoded here (VP8, Opus) and mirrored until two seconds of video
    /// have been received; with `loss`, the receiver drops that share of RTP packets and NACKs them.
    @Test(arguments: [0.0, 0.05])
    func testPatternIsMirroredAndDecodable(loss: Double) async throws {
        try await withMirroringSession({ $0.lossRate = loss }) { session, device, arrivals in
            var options = ScreenMirror.Options()
            options.video = .testPattern(resolution: Resolution(width: 640, height: 360))
            options.audio = .testPattern(resolution: Resolution(width: 640, height: 360))
            options.resolution = Resolution(width: 640, height: 360)
            let mirror = ScreenMirror(options: options)
            let running = Task { try await mirror.run(on: session) }
            var video: [ReceivedFrame] = []
            var audioFrames = 0
            for await arrival in arrivals {
                if arrival.kind == .video { video.append(arrival.frame) } else { audioFrames += 1 }
                if video.count >= 60 { break }
            }
            running.cancel()
            _ = await running.result
            let first = try #require(video.first)
            #expect(first.isKeyFrame)
            // A VP8 key frame: a 3-byte frame tag, then the start code 9d 01 2a, then the size.
            #expect(Array(first.data[3..<6]) == [0x9d, 0x01, 0x2a])
            let width = Int(first.data[6]) | Int(first.data[7] & 0x3f) << 8
            #expect(width == 640)
            #expect(audioFrames > 50)
            let statistics = try #require(device.streamingEndpoint?.statistics[.video])
            // Measured through the sender reports' clock mapping (its figures are the benchmark's business).
            #expect(statistics.delayPercentile(0.5) != nil)
            if loss > 0 {
                #expect(device.streamingEndpoint!.dropped.simulated > 0)
                #expect(statistics.packetsRecovered > 0)
            }
            // Every frame either completed or was dropped as late: the frame ids have no holes.
            let ids = video.map(\.frameID)
            #expect(ids == ids.sorted())
            #expect(Int64(statistics.framesCompleted + statistics.framesLate) >= ids.last! + 1)
        }
    }
}
