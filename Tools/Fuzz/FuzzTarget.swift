// swift-cast — Apache-2.0

import CastTransport

/// One fuzz target: a parser of bytes that come from a peer or a file, driven the way the package drives it.
///
/// Each target takes arbitrary bytes and must neither trap, nor touch memory it does not own, nor hang. A few
/// targets also check cheap properties (a decoded frame re-encodes to itself, JSON the writer prints parses);
/// a violated property traps, so libFuzzer reports it like a crash.
struct FuzzTarget: Sendable {
    /// The name used by `CAST_FUZZ_TARGET`, `cast-fuzz replay` and the corpus folder `corpus/<name>`.
    var name: String
    /// What the target feeds, in one line.
    var summary: String
    /// Runs one input.
    var run: @Sendable ([UInt8]) -> Void

    /// Every target, in the order `Tools/fuzz.sh` runs them.
    static let all: [FuzzTarget] =
        [
            FuzzTarget(
                name: "frame",
                summary: "length-prefixed frames: CastMessage(frame:), one frame or a stream, re-encoded",
                run: TransportFuzz.frames
            ),
            FuzzTarget(
                name: "cast-message",
                summary: "a frame body: the CastMessage protobuf and its validation",
                run: TransportFuzz.castMessage
            ),
            FuzzTarget(name: "json", summary: "JSONValue(parsing:) and the writer", run: TransportFuzz.json),
            FuzzTarget(
                name: "media-status",
                summary: "MediaStatus(json:) with media, queue items, tracks, ad breaks, queue data",
                run: MediaFuzz.mediaStatus
            ),
            FuzzTarget(name: "device-info", summary: "DeviceInfo(json:) from DEVICE_INFO", run: SessionFuzz.deviceInfo),
            FuzzTarget(
                name: "eureka-info",
                summary: "EurekaInfo(json:) and its group devices, from GET /setup/eureka_info",
                run: SessionFuzz.eurekaInfo
            ),
            FuzzTarget(
                name: "profile",
                summary: "CastProfile(xml:), resolved, and the file loader",
                run: ConfigFuzz.profile
            ),
            FuzzTarget(name: "style", summary: "CastStyle(xml:), resolved, and the file loader", run: ConfigFuzz.style),
            FuzzTarget(
                name: "subtitles",
                summary: "SubtitleConverter.webVTT for SRT, ASS/SSA and WebVTT, checked for its cues",
                run: MediaServerFuzz.subtitles
            ),
            FuzzTarget(
                name: "playlist",
                summary: ".m3u/.pls entries, the HLS check and HLSPlaylist.parse",
                run: MediaServerFuzz.playlist
            ),
            FuzzTarget(
                name: "media-file",
                summary: "MediaSniffer.sniff and MediaDuration for MP4, Matroska, WAV, FLAC and HLS",
                run: MediaServerFuzz.mediaFile
            ),
            FuzzTarget(name: "rtp", summary: "a Cast Streaming RTP packet, re-serialized", run: StreamingFuzz.rtp),
            FuzzTarget(
                name: "rtcp",
                summary: "a Cast Streaming RTCP compound (SR, RR, XR, PLI, Cast feedback), rebuilt",
                run: StreamingFuzz.rtcp
            ),
            FuzzTarget(
                name: "streaming-control",
                summary: "an OFFER (streams chosen) or an ANSWER on the webrtc namespace",
                run: StreamingFuzz.controlMessage
            ),
        ] + internalTargets

    /// The target called `name`.
    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }

    /// Targets whose parser is internal to its module: they need `@testable` imports, so a debug build or the
    /// fuzzing build (which compiles the modules with `-enable-testing`).
    #if DEBUG || CAST_FUZZING
    static let internalTargets: [FuzzTarget] = [
        FuzzTarget(
            name: "frame-stream",
            summary: "the connection's CastFrameHandler: reads of any size, then EOF",
            run: StreamFuzz.frames
        ),
        FuzzTarget(
            name: "device-status",
            summary: "DeviceStatus(json:) and ApplicationMetadata from RECEIVER_STATUS",
            run: SessionFuzz.deviceStatus
        ),
        FuzzTarget(
            name: "queue-change",
            summary: "QueueChange(json:) and a reply through RemoteMediaClient.interpret",
            run: MediaFuzz.queueChange
        ),
        FuzzTarget(
            name: "media-client",
            summary: "a RemoteMediaClient fed JSON lines through receive(_:), then commands",
            run: MediaFuzz.mediaClient
        ),
        FuzzTarget(
            name: "receiver",
            summary: "the emulator: receiver-0 and media requests, clock ticks (R/M/T lines)",
            run: ReceiverFuzz.requests
        ),
        FuzzTarget(
            name: "http-request",
            summary: "a media server request path (tokens, traversal) and a Range header",
            run: MediaServerFuzz.request
        ),
        FuzzTarget(
            name: "txt",
            summary: "a DNS TXT record (length-prefixed strings) through the _googlecast._tcp reader",
            run: DiscoveryFuzz.txtRecord
        ),
        FuzzTarget(
            name: "stream-receiver",
            summary: "a Cast Streaming receiver fed RTP datagrams and clock steps, feedback after each",
            run: StreamingFuzz.streamReceiver
        ),
    ]
    #else
    static let internalTargets: [FuzzTarget] = []
    #endif
}

/// Small helpers the targets share.
enum FuzzInput {
    /// The bytes as text, invalid UTF-8 repaired, as the transport hands payloads over.
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// The bytes parsed as one JSON document, or `nil`.
    static func json(_ bytes: [UInt8]) -> JSONValue? { try? JSONValue(parsing: text(bytes)) }

    /// The input split at newlines (empty lines dropped), for targets that take a sequence of messages.
    static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
    }

    /// Checks that the writer's output for `value` parses again and prints the same: whatever a model re-encodes
    /// must be valid JSON.
    static func checkWritable(_ value: JSONValue) {
        let written = value.jsonString
        guard let again = try? JSONValue(parsing: written) else {
            fatalError("the JSON writer printed text its parser rejects: \(written)")
        }
        precondition(again.jsonString == written, "printing re-parsed JSON changed it: \(written)")
    }
}
