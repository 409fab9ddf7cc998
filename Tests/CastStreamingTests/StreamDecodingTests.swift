import CastReceiver
import CastStreaming
import Foundation
import Testing

/// What the emulator does with the frames it receives: real encoders' output recorded to files ffmpeg reads
/// (IVF, Annex B, Ogg Opus) and decoded by ffmpeg frame by frame (`cast-receiver --decode`).
@Suite struct StreamDecodingTests {
    /// `count` frames of a picture getting lighter, as the receiver would complete them (90 kHz timestamps).
    private func videoFrames(codec: String, count: Int, firstID: Int64 = 0) throws -> [ReceivedFrame] {
        let size = Resolution(width: 160, height: 96)
        let encoder = try VideoFrameEncoder(codec: codec, resolution: size)
        var frames: [ReceivedFrame] = []
        for index in 0..<count {
            let picture = [UInt8](repeating: UInt8(truncatingIfNeeded: 20 + 7 * index), count: 160 * 96 * 3 / 2)
            let time = Duration.milliseconds(Int64(index) * 33)
            guard let frame = try encoder.encode(i420: picture, captureTime: time, keyFrame: index == 0) else {
                continue
            }
            frames.append(
                ReceivedFrame(
                    frameID: firstID + Int64(frames.count),
                    rtpTimestamp: UInt32(index * 3000),
                    isKeyFrame: frame.isKeyFrame,
                    data: frame.data
                )
            )
        }
        return frames
    }

    /// `count` Opus packets of a 440 Hz tone (48 kHz stereo, 10 ms each).
    private func audioFrames(count: Int) throws -> [ReceivedFrame] {
        let encoder = try AudioFrameEncoder()
        let samples = encoder.samplesPerFrame
        return try (0..<count).map { index in
            let tone = (0..<samples).flatMap { sample -> [Int16] in
                let value = Int16(8000 * sin(2 * Double.pi * 440 * Double(index * samples + sample) / 48000))
                return [value, value]
            }
            let frame = try encoder.encode(tone, captureTime: .milliseconds(Int64(index) * 10))
            return ReceivedFrame(
                frameID: Int64(index),
                rtpTimestamp: UInt32(index * samples),
                isKeyFrame: true,
                data: frame.data
            )
        }
    }

    @Test(arguments: VideoFrameEncoder.codecs)
    func everyVideoCodecDecodesFrameByFrame(codec: String) async throws {
        let decoder = try StreamDecoder(kind: .video)
        let frames = try videoFrames(codec: codec, count: 12)
        for frame in frames { decoder.decode(.video, frame) }
        decoder.decode(.audio, try audioFrames(count: 1)[0])
        let decoded = await decoder.finish()
        #expect(decoded.codec == codec)
        #expect(decoded.framesFed == frames.count && decoded.framesDecoded == frames.count)
        #expect(decoded.errors == 0, "\(decoded.lastError ?? "")")
    }

    @Test func opusDecodesPacketByPacket() async throws {
        let decoder = try StreamDecoder(kind: .audio)
        for frame in try audioFrames(count: 50) { decoder.decode(.audio, frame) }
        let decoded = await decoder.finish()
        #expect(decoded.codec == "opus" && decoded.framesFed == 50 && decoded.errors == 0)
        // ffmpeg's Opus decoder drops the pre-skip's worth of output at the start: at most one packet.
        #expect((49...50).contains(decoded.framesDecoded))
    }

    @Test func framesBeforeTheFirstKeyFrameAreSkipped() async throws {
        let decoder = try StreamDecoder(kind: .video)
        let frames = try videoFrames(codec: "vp8", count: 6)
        for frame in frames.dropFirst() { decoder.decode(.video, frame) }
        let decoded = await decoder.finish()
        #expect(decoded.framesFed == 0 && decoded.framesDecoded == 0 && decoded.codec == nil)
    }

    @Test func aNewStreamStartsANewDecoderAndCountsAddUp() async throws {
        let decoder = try StreamDecoder(kind: .video)
        // A VP8 stream, then a new OFFER: frame ids restart with an H.264 stream.
        for frame in try videoFrames(codec: "vp8", count: 5) { decoder.decode(.video, frame) }
        for frame in try videoFrames(codec: "h264", count: 7) { decoder.decode(.video, frame) }
        let decoded = await decoder.finish()
        #expect(decoded.codec == "h264" && decoded.framesFed == 12 && decoded.framesDecoded == 12)
        #expect(decoded.errors == 0, "\(decoded.lastError ?? "")")
    }

    @Test func corruptFramesAreDecodingErrors() async throws {
        let decoder = try StreamDecoder(kind: .video)
        var frames = try videoFrames(codec: "vp8", count: 8)
        // Garbage where inter frames' compressed data should be.
        for index in 2..<frames.count {
            frames[index].data =
                [frames[index].data[0], frames[index].data[1], frames[index].data[2]]
                + (0..<400).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ index) }
        }
        for frame in frames { decoder.decode(.video, frame) }
        let decoded = await decoder.finish()
        #expect(decoded.framesFed == 8)
        #expect(decoded.errors > 0 && decoded.lastError != nil)
    }

    @Test func soundIsRecordedAsOggOpusThatFFmpegReads() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("recorded-\(UUID()).ogg").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = try StreamRecorder(path: path, kind: .audio)
        for frame in try audioFrames(count: 100) { recorder.record(.audio, frame) }
        recorder.record(.video, try videoFrames(codec: "vp8", count: 1)[0])
        #expect(recorder.framesRecorded == 100)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(bytes.starts(with: Array("OggS".utf8)) && bytes[5] == 0x02)
        // ffmpeg reads it back as one second of 48 kHz Opus, every page's checksum checked.
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = [
            "ffprobe", "-v", "error", "-show_entries",
            "stream=codec_name,sample_rate,channels:format=duration", "-of", "default=noprint_wrappers=1", path,
        ]
        let output = Pipe()
        probe.standardOutput = output
        probe.standardError = output
        try probe.run()
        probe.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(!text.contains("mismatch"), "\(text)")
        #expect(text.contains("codec_name=opus") && text.contains("sample_rate=48000") && text.contains("channels=2"))
        let duration = text.split(separator: "\n").first { $0.hasPrefix("duration=") }.flatMap {
            Double($0.dropFirst("duration=".count))
        }
        #expect(abs((duration ?? 0) - 1.0) < 0.02, "\(text)")
    }
}
