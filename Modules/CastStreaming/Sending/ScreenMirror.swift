import CastLogging
import CastSession
import Logging
import NIOConcurrencyHelpers

/// Mirrors a capture to a receiver: ffmpeg captures, libvpx and libopus encode here (key frames the moment the
/// receiver asks, bit rate adapted to its feedback), ``MirroringSession`` sends. What `cast screen` and
/// `cast audio` run.
public struct ScreenMirror: Sendable {
    /// What to send.
    public struct Options: Sendable {
        /// The picture, or `nil` for sound only.
        public var video: CaptureSource?
        /// The sound, or `nil` for a silent picture.
        public var audio: CaptureSource?
        /// The picture's size. Defaults to 1280×720.
        public var resolution = Resolution(width: 1280, height: 720)
        /// Frames per second. Defaults to 30.
        public var frameRate = 30
        /// The highest video bit rate. Defaults to 5 Mbit/s, Chrome's.
        public var maximumBitRate = 5_000_000
        /// The lowest video bit rate adaptation may choose. Defaults to 300 kbit/s.
        public var minimumBitRate = 300_000
        /// The audio bit rate. Defaults to 128 kbit/s.
        public var audioBitRate = 128_000
        /// The target playout delay: how far behind capture the receiver plays. Defaults to 400 ms.
        public var targetDelay: Duration = .milliseconds(400)
        /// Video codecs to offer, each as its own stream; the receiver picks one by its own preference (any of
        /// ``VideoFrameEncoder/codecs``). Defaults to VP8 alone, which every receiver decodes.
        public var videoCodecs = ["vp8"]

        /// The defaults: no source yet.
        public init() {}
    }

    /// Figures for a status line: every half second, then once for the whole run when it ends.
    public struct Progress: Sendable {
        /// Video frames encoded per second over the last period.
        public var framesPerSecond: Double
        /// The video bit rate the encoder targets now.
        public var targetBitRate: Int
        /// Bits per second actually sent over the last period (all streams, retransmissions included).
        public var sentBitRate: Double
        /// The picture's size now: ``Options/resolution``, or half of it while the network cannot carry more.
        public var resolution: Resolution
        /// Frames sent of those captured: 1 normally, 2 or 4 while the lowest bit rate is too much.
        public var frameInterval: Int
        /// The video stream's counts, when video is sent.
        public var video: StreamStatistics?
        /// The audio stream's counts, when audio is sent.
        public var audio: StreamStatistics?
    }

    /// What is captured, how it is encoded, and where it goes.
    public let options: Options

    /// A mirror with `options`.
    public init(options: Options) {
        self.options = options
    }

    /// The OFFER for ``options``: an audio stream (Opus, PT 127, SSRC in 1…50000) and/or a video stream per codec
    /// (PT 96, SSRC in 50001…100000), each with a fresh random key and IV mask.
    public func offer() -> StreamingOffer {
        var streams: [OfferedStream] = []
        if options.audio != nil {
            var audio = OfferedStream(
                index: 0,
                kind: .audio,
                codecName: "opus",
                payloadType: RTPPacket.audioPayloadType,
                ssrc: .random(in: 1...50000),
                rtpTimebase: 48000,
                channels: 2,
                targetDelay: options.targetDelay,
                crypto: .random()
            )
            audio.bitRate = options.audioBitRate
            streams.append(audio)
        }
        for codec in options.video == nil ? [] : options.videoCodecs {
            var video = OfferedStream(
                index: streams.count,
                kind: .video,
                codecName: codec,
                payloadType: RTPPacket.videoPayloadType,
                ssrc: .random(in: 50001...100_000),
                rtpTimebase: 90000,
                channels: 1,
                targetDelay: options.targetDelay,
                crypto: .random()
            )
            video.maxFrameRate = "\(options.frameRate)"
            video.maxBitRate = options.maximumBitRate
            video.resolutions = [options.resolution]
            streams.append(video)
        }
        return StreamingOffer(streams: streams)
    }

    /// Negotiates on `session` (which runs the mirroring app) and mirrors until the capture ends, the session
    /// disconnects or the task is cancelled; `progress` gets figures every 500 ms.
    ///
    /// - Throws: ``CastStreamingError`` — the negotiation's errors, ``CastStreamingError/Code/captureFailed``,
    ///   ``CastStreamingError/Code/toolMissing``, ``CastStreamingError/Code/encoderFailed``,
    ///   ``CastStreamingError/Code/sessionEnded``.
    public func run(
        on session: CastSession,
        logger: Logger = .castDisabled,
        progress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) async throws {
        let mirroring = try await MirroringSession.start(on: session, offer: offer(), logger: logger)
        do {
            try await stream(through: mirroring, session: session, progress: progress)
        } catch {
            await mirroring.close()
            throw error
        }
        await mirroring.close()
    }

    /// Streams the capture through an already negotiated session.
    public func stream(
        through mirroring: MirroringSession,
        session: CastSession? = nil,
        progress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) async throws {
        let videoCapture = try mirroring.stream(.video).flatMap { _ in options.video }.map {
            try RawCapture.video($0, resolution: options.resolution, frameRate: options.frameRate)
        }
        let audioCapture = try mirroring.stream(.audio).flatMap { _ in options.audio }.map { try RawCapture.audio($0) }
        let limit =
            mirroring.answer.maximumVideoBitRate.map { min($0, options.maximumBitRate) } ?? options.maximumBitRate
        let controller = NIOLockedValueBox(
            BitrateController(minimum: options.minimumBitRate, maximum: limit, start: min(limit, 2_500_000))
        )
        let encodedFrames = NIOLockedValueBox(0)
        let started = StreamingMoment.now().monotonic
        let currentResolution = { @Sendable in
            controller.withLockedValue { $0.resolutionDivisor } == 1
                ? options.resolution : I420.halved(options.resolution)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            if let videoCapture {
                let codec = mirroring.stream(.video)?.codecName ?? "vp8"
                let makeEncoder = { @Sendable (resolution: Resolution, bitRate: Int) in
                    try VideoFrameEncoder(
                        codec: codec,
                        resolution: resolution,
                        frameRate: options.frameRate,
                        bitRate: bitRate
                    )
                }
                // Replaced when the controller halves the picture, or restores it.
                let encoder = NIOLockedValueBox(
                    try makeEncoder(options.resolution, controller.withLockedValue { $0.current })
                )
                let captured = NIOLockedValueBox(0)
                group.addTask {
                    try await videoCapture.run { frame in
                        let (bitRate, interval, divisor) = controller.withLockedValue {
                            ($0.current, $0.frameInterval, $0.resolutionDivisor)
                        }
                        // When even the lowest bit rate is too much, frames are skipped here, before encoding.
                        let count = captured.withLockedValue { count -> Int in
                            defer { count += 1 }
                            return count
                        }
                        guard count % interval == 0 else { return }
                        let size = divisor == 1 ? options.resolution : I420.halved(options.resolution)
                        var current = encoder.withLockedValue { $0 }
                        var newSize = false
                        if current.resolution != size {
                            current = try makeEncoder(size, bitRate)
                            encoder.withLockedValue { $0 = current }
                            newSize = true
                        }
                        current.setBitRate(bitRate)
                        let picture = divisor == 1 ? frame.bytes : I420.halve(frame.bytes, from: options.resolution)
                        guard
                            let encoded = try current.encode(
                                i420: picture,
                                captureTime: frame.arrival.monotonic,
                                // A new size starts with a key frame, which carries it.
                                keyFrame: newSize || mirroring.wantsKeyFrame(on: .video)
                            )
                        else { return }
                        encodedFrames.withLockedValue { $0 += 1 }
                        // A refused frame is dropped; the sender then asks for a key frame.
                        try? mirroring.send(encoded, on: .video)
                    }
                }
            }
            if let audioCapture {
                let encoder = try AudioFrameEncoder(bitRate: options.audioBitRate)
                group.addTask {
                    try await audioCapture.run { frame in
                        let pcm = frame.bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
                        let encoded = try encoder.encode(pcm, captureTime: frame.arrival.monotonic)
                        try? mirroring.send(encoded, on: .audio)
                    }
                }
            }
            group.addTask {
                var lastBytes = 0
                var lastFrames = 0
                while true {
                    // Cancellation ends the mirror normally: the whole run's figures still follow.
                    try? await Task.sleep(for: .milliseconds(500))
                    if Task.isCancelled { return }
                    if let session, session.connectionState == .disconnected {
                        throw CastStreamingError(.sessionEnded, "the mirroring session ended")
                    }
                    let statistics = mirroring.statistics
                    let bitRate = statistics[.video].map { video in
                        controller.withLockedValue { $0.update(with: video) }
                    }
                    let bytes = statistics.values.reduce(0) { $0 + $1.bytesSent }
                    let frames = encodedFrames.withLockedValue { $0 }
                    progress(
                        Progress(
                            framesPerSecond: Double(frames - lastFrames) * 2,
                            targetBitRate: bitRate ?? 0,
                            sentBitRate: Double(bytes - lastBytes) * 16,
                            resolution: currentResolution(),
                            frameInterval: controller.withLockedValue { $0.frameInterval },
                            video: statistics[.video],
                            audio: statistics[.audio]
                        )
                    )
                    lastBytes = bytes
                    lastFrames = frames
                }
            }
            // The first capture to end (a file played out) ends the mirror.
            try await group.next()
            group.cancelAll()
        }
        // The whole run's figures, last.
        let elapsed = max(0.001, (StreamingMoment.now().monotonic - started).inSeconds)
        let statistics = mirroring.statistics
        progress(
            Progress(
                framesPerSecond: Double(encodedFrames.withLockedValue { $0 }) / elapsed,
                targetBitRate: controller.withLockedValue { $0.current },
                sentBitRate: Double(statistics.values.reduce(0) { $0 + $1.bytesSent } * 8) / elapsed,
                resolution: currentResolution(),
                frameInterval: controller.withLockedValue { $0.frameInterval },
                video: statistics[.video],
                audio: statistics[.audio]
            )
        )
    }
}
