import CastTransport

/// A frame size.
public struct Resolution: Sendable, Hashable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// A size of `width`×`height`.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// `WIDTHxHEIGHT`, as the command line takes it.
    public var description: String { "\(width)x\(height)" }
}

/// One stream of an OFFER: what the sender will send if the receiver picks it.
public struct OfferedStream: Sendable, Hashable {
    /// Audio or video.
    public enum Kind: String, Sendable, Hashable {
        case audio = "audio_source"
        case video = "video_source"
    }

    /// Unique within the OFFER; the ANSWER's `sendIndexes` name streams by it.
    public var index: Int
    /// Audio or video.
    public var kind: Kind
    /// `opus`, `aac`, `vp8`, `h264`, `vp9`, `av1`, `hevc`.
    public var codecName: String
    /// The RTP payload type Cast gives the codec.
    public var payloadType: UInt8
    /// The sender's SSRC for the stream.
    public var ssrc: UInt32
    /// RTP ticks per second (`timeBase` 1/N): the sample rate for audio, 90,000 for video.
    public var rtpTimebase: Int
    /// Audio channels; 1 for video.
    public var channels: Int
    /// How far behind capture the receiver plays.
    public var targetDelay: Duration
    /// The stream's AES key and IV mask.
    public var crypto: FrameCrypto
    /// RFC 6381 codec string; empty for none.
    public var codecParameter = ""
    /// Audio: average bits per second (0 lets the sender decide).
    public var bitRate = 0
    /// Video: the highest frame rate, as the OFFER's fraction text (`"30"`, `"30000/1001"`).
    public var maxFrameRate = "30"
    /// Video: the highest bit rate.
    public var maxBitRate = 5_000_000
    /// Video: capture sizes the sender may use.
    public var resolutions: [Resolution] = []

    /// A stream; the kind-specific fields keep their defaults until set.
    public init(
        index: Int,
        kind: Kind,
        codecName: String,
        payloadType: UInt8,
        ssrc: UInt32,
        rtpTimebase: Int,
        channels: Int,
        targetDelay: Duration = .milliseconds(400),
        crypto: FrameCrypto
    ) {
        self.index = index
        self.kind = kind
        self.codecName = codecName
        self.payloadType = payloadType
        self.ssrc = ssrc
        self.rtpTimebase = rtpTimebase
        self.channels = channels
        self.targetDelay = targetDelay
        self.crypto = crypto
    }

    /// The stream as the OFFER lists it: every field current senders send, plus the legacy ones (`sampleRate`,
    /// `rtpExtensions`) older receivers expect.
    public var json: JSONValue {
        var fields: [String: JSONValue] = [
            "index": .number(Double(index)),
            "type": .string(kind.rawValue),
            "codecName": .string(codecName),
            "rtpProfile": "cast",
            "rtpPayloadType": .number(Double(payloadType)),
            "ssrc": .number(Double(ssrc)),
            "timeBase": .string("1/\(rtpTimebase)"),
            "channels": .number(Double(channels)),
            "targetDelay": .number((targetDelay.inSeconds * 1000).rounded()),
            "aesKey": .string(Hex.encode(crypto.key)),
            "aesIvMask": .string(Hex.encode(crypto.ivMask)),
            "receiverRtcpEventLog": true,
            "receiverRtcpDscp": "",
            "codecParameter": .string(codecParameter),
            "rtpExtensions": ["adaptive_playout_delay"],
        ]
        switch kind {
        case .audio:
            fields["bitRate"] = .number(Double(bitRate))
            fields["sampleRate"] = .number(Double(rtpTimebase))
        case .video:
            fields["maxFrameRate"] = .string(maxFrameRate)
            fields["maxBitRate"] = .number(Double(maxBitRate))
            fields["resolutions"] = .array(
                resolutions.map { ["width": .number(Double($0.width)), "height": .number(Double($0.height))] }
            )
            for key in ["profile", "level", "protection", "errorRecoveryMode"] { fields[key] = "" }
        }
        return .object(fields)
    }

    /// Parses a stream as a receiver does; `nil` for a stream type it does not know (skipped, not an error).
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/invalidOffer`` for a missing or invalid
    ///   `index`, `ssrc`, `rtpPayloadType`, `timeBase`, `channels`, key or IV mask, or an audio stream without
    ///   `bitRate`.
    public init?(json: JSONValue) throws {
        guard let kind = json["type"]?.stringValue.flatMap(Kind.init(rawValue:)) else { return nil }
        func invalid(_ what: String) -> CastStreamingError { CastStreamingError(.invalidOffer, "a stream's \(what)") }
        guard let index = json["index"]?.intValue, index >= 0 else { throw invalid("index is missing or negative") }
        guard let ssrc = json["ssrc"]?.doubleValue, ssrc >= 0, ssrc <= Double(UInt32.max), ssrc.rounded() == ssrc
        else { throw invalid("ssrc is missing or not a 32-bit number") }
        guard let payloadType = json["rtpPayloadType"]?.intValue, (96...104).contains(payloadType) || payloadType == 127
        else { throw invalid("rtpPayloadType is missing or not 96–104 or 127") }
        guard let timeBase = json["timeBase"]?.stringValue, timeBase.hasPrefix("1/"),
            let rate = Int(timeBase.dropFirst(2)), (16000...90000).contains(rate)
        else { throw invalid("timeBase is missing or not 1/16000 … 1/90000") }
        let channels = json["channels"]?.intValue ?? (kind == .audio ? 2 : 1)
        guard channels > 0 else { throw invalid("channels is not positive") }
        guard let key = json["aesKey"]?.stringValue, let mask = json["aesIvMask"]?.stringValue else {
            throw invalid("aesKey or aesIvMask is missing: there is no unencrypted mode")
        }
        let delay = json["targetDelay"]?.intValue.flatMap { (1...5000).contains($0) ? $0 : nil } ?? 400
        self.init(
            index: index,
            kind: kind,
            codecName: json["codecName"]?.stringValue ?? "",
            payloadType: UInt8(payloadType),
            ssrc: UInt32(ssrc),
            rtpTimebase: rate,
            channels: channels,
            targetDelay: .milliseconds(Int64(delay)),
            crypto: try FrameCrypto(hexKey: key, hexIVMask: mask)
        )
        codecParameter = json["codecParameter"]?.stringValue ?? ""
        switch kind {
        case .audio:
            guard let bitRate = json["bitRate"]?.intValue, bitRate >= 0 else { throw invalid("bitRate is missing") }
            guard !codecName.isEmpty else { throw invalid("codecName is missing") }
            self.bitRate = bitRate
        case .video:
            maxFrameRate = json["maxFrameRate"]?.stringValue ?? json["maxFrameRate"]?.intValue.map(String.init) ?? "30"
            maxBitRate = json["maxBitRate"]?.intValue ?? 4 << 20
            resolutions = (json["resolutions"]?.arrayValue ?? []).compactMap { item in
                guard let width = item["width"]?.intValue, let height = item["height"]?.intValue else { return nil }
                return Resolution(width: width, height: height)
            }
        }
    }
}

/// An OFFER: the streams a sender proposes, in mirroring (or remoting) mode.
public struct StreamingOffer: Sendable, Hashable {
    /// `mirroring` (the default) or `remoting`.
    public var castMode = "mirroring"
    /// The streams offered; the receiver picks some.
    public var streams: [OfferedStream]

    /// An offer of `streams`, in mirroring mode.
    public init(streams: [OfferedStream]) {
        self.streams = streams
    }

    /// The OFFER message with sequence number `sequenceNumber`.
    public func message(sequenceNumber: Int) -> JSONValue {
        [
            "type": "OFFER",
            "seqNum": .number(Double(sequenceNumber)),
            "offer": ["castMode": .string(castMode), "supportedStreams": .array(streams.map(\.json))],
        ]
    }

    /// Parses the `offer` body of an OFFER message.
    ///
    /// - Throws: ``CastStreamingError`` with ``CastStreamingError/Code/invalidOffer`` when `supportedStreams` is
    ///   not an array, a stream is invalid, or two streams share an index.
    public init(json offer: JSONValue) throws {
        guard let streams = offer["supportedStreams"]?.arrayValue else {
            throw CastStreamingError(.invalidOffer, "the OFFER has no supportedStreams array")
        }
        self.streams = try streams.compactMap(OfferedStream.init(json:))
        castMode = offer["castMode"]?.stringValue ?? "mirroring"
        guard Set(self.streams.map(\.index)).count == self.streams.count else {
            throw CastStreamingError(.invalidOffer, "two streams of the OFFER share an index")
        }
    }

    /// The streams a receiver with these codec preferences picks: for each kind, the first offered stream with
    /// the most preferred codec it supports (the reference receiver's rule).
    public func selectStreams(videoCodecs: [String], audioCodecs: [String]) -> [OfferedStream] {
        var chosen: [OfferedStream] = []
        for (kind, preferences) in [(OfferedStream.Kind.audio, audioCodecs), (.video, videoCodecs)] {
            for codec in preferences {
                if let stream = streams.first(where: { $0.kind == kind && $0.codecName == codec }) {
                    chosen.append(stream)
                    break
                }
            }
        }
        return chosen
    }
}
