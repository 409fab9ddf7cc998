import CastTransport

/// An ANSWER: the receiver's UDP port and the streams it chose, each with the SSRC it reports as.
public struct StreamingAnswer: Sendable, Hashable {
    /// The receiver's UDP port for every chosen stream (RTP in, RTCP both ways).
    public var udpPort: Int
    /// The `index` of each chosen stream of the OFFER.
    public var sendIndexes: [Int]
    /// The receiver's SSRC for each of ``sendIndexes``, in the same order.
    public var receiverSSRCs: [UInt32]
    /// The receiver's limits (`audio`/`video` objects), kept as sent.
    public var constraints: JSONValue?
    /// The receiver's display (`dimensions`, `aspectRatio`, `scaling`), kept as sent.
    public var display: JSONValue?

    /// An ANSWER (tests and the emulator build their own).
    public init(
        udpPort: Int,
        sendIndexes: [Int],
        receiverSSRCs: [UInt32],
        constraints: JSONValue? = nil,
        display: JSONValue? = nil
    ) {
        self.udpPort = udpPort
        self.sendIndexes = sendIndexes
        self.receiverSSRCs = receiverSSRCs
        self.constraints = constraints
        self.display = display
    }

    /// The highest video bit rate the constraints allow, if they say.
    public var maximumVideoBitRate: Int? { constraints?["video"]?["maxBitRate"]?.intValue }

    /// The largest video size the constraints allow, if they say.
    public var maximumVideoResolution: Resolution? {
        guard let dimensions = constraints?["video"]?["maxDimensions"],
            let width = dimensions["width"]?.intValue, let height = dimensions["height"]?.intValue
        else { return nil }
        return Resolution(width: width, height: height)
    }

    /// The ANSWER message replying to the OFFER `sequenceNumber`.
    public func message(sequenceNumber: Int) -> JSONValue {
        var answer: [String: JSONValue] = [
            "udpPort": .number(Double(udpPort)),
            "sendIndexes": .array(sendIndexes.map { .number(Double($0)) }),
            "ssrcs": .array(receiverSSRCs.map { .number(Double($0)) }),
            "castMode": "mirroring",
            "rtpExtensions": .array(sendIndexes.map { _ in ["adaptive_playout_delay"] }),
        ]
        if let constraints { answer["constraints"] = constraints }
        if let display { answer["display"] = display }
        return ["type": "ANSWER", "seqNum": .number(Double(sequenceNumber)), "result": "ok", "answer": .object(answer)]
    }

    /// An error ANSWER (`result: "error"`).
    public static func errorMessage(sequenceNumber: Int, code: Int, description: String) -> JSONValue {
        [
            "type": "ANSWER", "seqNum": .number(Double(sequenceNumber)), "result": "error",
            "error": ["code": .number(Double(code)), "description": .string(description)],
        ]
    }

    /// Parses an ANSWER message, leniently: unknown members and any `rtpExtensions` shape are accepted.
    ///
    /// - Throws: ``CastStreamingError`` — ``CastStreamingError/Code/offerRejected`` for `result` other than
    ///   `ok` (with the receiver's code and description), ``CastStreamingError/Code/invalidAnswer`` when
    ///   `udpPort`, `sendIndexes` or `ssrcs` is missing, out of range, or of different lengths.
    public init(message: JSONValue) throws {
        guard message["result"]?.stringValue?.lowercased() == "ok" else {
            let code = message["error"]?["code"]?.intValue.map(String.init) ?? "no code"
            let description = message["error"]?["description"]?.stringValue ?? "no description"
            throw CastStreamingError(.offerRejected, "the receiver refused the OFFER (\(code)): \(description)")
        }
        guard let answer = message["answer"], answer.objectValue != nil else {
            throw CastStreamingError(.invalidAnswer, "the ANSWER has no answer object")
        }
        guard let port = answer["udpPort"]?.intValue, (1...65535).contains(port) else {
            throw CastStreamingError(.invalidAnswer, "the ANSWER's udpPort is missing or not 1–65535")
        }
        guard let indexes = answer["sendIndexes"]?.arrayValue?.compactMap(\.intValue), !indexes.isEmpty,
            let ssrcs = answer["ssrcs"]?.arrayValue?.compactMap(\.doubleValue), ssrcs.count == indexes.count,
            ssrcs.allSatisfy({ $0 >= 0 && $0 <= Double(UInt32.max) })
        else {
            throw CastStreamingError(
                .invalidAnswer,
                "the ANSWER needs sendIndexes and as many 32-bit ssrcs: \(answer.jsonString)"
            )
        }
        self.init(
            udpPort: port,
            sendIndexes: indexes,
            receiverSSRCs: ssrcs.map { UInt32($0) },
            constraints: answer["constraints"],
            display: answer["display"]
        )
    }
}
