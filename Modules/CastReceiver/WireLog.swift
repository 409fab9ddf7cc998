import CastStreaming
import CastTransport
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes every frame in and out as one JSON line, in the shape of shared/golden (`dir`, `source_id`,
/// `destination_id`, `namespace`, `payload_type`, `payload_utf8` or `payload_binary`, `frame_hex`, `t`), and what
/// each mirroring session received when it ends.
public final class WireLog: Sendable {
    private let descriptor: Int32
    private let lock = NIOLockedValueBox(())
    private let clock: any CastClock

    /// Opens (appends to) `path`.
    public init(path: String, clock: any CastClock) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw CastReceiverError(.invalidConfiguration, "cannot open the wire log \(path): errno \(errno)")
        }
        self.descriptor = descriptor
        self.clock = clock
    }

    deinit { close(descriptor) }

    /// Records one message; `direction` is `recv` or `send`.
    func record(_ message: CastMessage, direction: String, device: String) {
        var line: JSONValue = [
            "t": timestamp,
            "dir": .string(direction),
            "device": .string(device),
            "source_id": .string(message.sourceID),
            "destination_id": .string(message.destinationID),
            "namespace": .string(message.namespace),
        ]
        switch message.payload {
        case .string(let text):
            line["payload_type"] = "STRING"
            line["payload_utf8"] = .string(text)
            if let json = try? message.json() { line["payload"] = json }
        case .binary(let bytes):
            line["payload_type"] = "BINARY"
            line["payload_binary"] = .string(bytes.hex)
        }
        if let frame = try? message.encodedFrame() { line["frame_hex"] = .string(frame.hex) }
        append(line)
    }

    /// Records what a Cast Streaming receiver received, when its session ends (`dir` is `stream`): per stream,
    /// packets, frames completed, late and recovered, NACKs, sender reports and capture-to-receipt delays.
    func recordStreaming(_ endpoint: StreamingReceiverEndpoint, device: String) {
        var streams: [String: JSONValue] = ["simulatedLoss": .number(Double(endpoint.dropped.simulated))]
        for (kind, statistics) in endpoint.statistics { streams[kind == .video ? "video" : "audio"] = statistics.json }
        append([
            "t": timestamp, "dir": "stream", "device": .string(device),
            "udp_port": .number(Double(endpoint.answer.udpPort)), "statistics": .object(streams),
        ])
    }

    /// The clock's time in seconds, to the millisecond.
    private var timestamp: JSONValue { .number((clock.now.inSeconds * 1000).rounded() / 1000) }

    private func append(_ line: JSONValue) {
        let text = Array((line.jsonString + "\n").utf8)
        lock.withLockedValue { _ in
            _ = text.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        }
    }
}

extension [UInt8] {
    var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
