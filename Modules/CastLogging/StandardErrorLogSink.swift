// swift-cast — Apache-2.0

import Logging
import NIOConcurrencyHelpers

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A ready-made sink for command-line apps: one human-readable, grep-friendly line per record on standard error.
///
/// Lines look like
/// `2026-11-22T10:00:00.123Z debug [CastTransport.Heartbeat] sent PING cast.peer=127.0.0.1:8009`:
/// an ISO-8601 UTC timestamp with milliseconds, the level, the category, the message, then metadata sorted by key
/// as `key=value` (quoted when the value is empty or has spaces or quotes), then `error=…` if an error was logged.
/// Standard error keeps logs out of a CLI's standard output, which may be piped.
public enum StandardErrorLogSink {
    private static let lock = NIOLockedValueBox(())

    /// Writes `record` as one line; safe to call from any thread, lines never interleave.
    public static func write(_ record: LogRecord) {
        var line = format(record)
        line.append("\n")
        lock.withLockedValue { _ in
            line.withUTF8 { bytes in
                writeFully(bytes)
            }
        }
    }

    /// The line ``write(_:)`` emits for `record`, without the trailing newline.
    package static func format(_ record: LogRecord) -> String {
        var line = timestamp(record.date)
        line += " \(record.level.rawValue) [\(record.category)] "
        line += escapingLineBreaks(record.message)
        for (key, value) in record.metadata.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(quotedIfNeeded("\(value)"))"
        }
        if let error = record.error {
            line += " error=\(quotedIfNeeded(String(describing: error)))"
        }
        return line
    }

    /// `YYYY-MM-DDThh:mm:ss.sssZ`, computed arithmetically: cheaper than a formatter and free of locale/time zone.
    package static func timestamp(_ date: Date) -> String {
        // Round to microseconds first so a value like .123 stored as .12299999 still prints as .123.
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let millis = floorDivide(micros, 1_000)
        let seconds = floorDivide(millis, 1_000)
        let days = floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400

        // Civil-from-days, after Howard Hinnant's public-domain date algorithms.
        let shifted = days + 719_468
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)

        return padded(year, 4) + "-" + padded(month, 2) + "-" + padded(day, 2) + "T"
            + padded(secondOfDay / 3_600, 2) + ":" + padded(secondOfDay / 60 % 60, 2) + ":"
            + padded(secondOfDay % 60, 2) + "." + padded(millis - seconds * 1_000, 3) + "Z"
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    private static func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// Keeps one record on one line, so `grep` and line-oriented tools see whole records.
    private static func escapingLineBreaks(_ text: String) -> String {
        guard text.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else {
            return text
        }
        var result = ""
        for character in text {
            switch character {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\r\n": result += "\\r\\n"
            default: result.append(character)
            }
        }
        return result
    }

    private static func quotedIfNeeded(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0.isWhitespace || $0 == "\"" }) else {
            return value
        }
        var result = "\""
        for character in value {
            switch character {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\r\n": result += "\\r\\n"
            case "\t": result += "\\t"
            default: result.append(character)
            }
        }
        return result + "\""
    }

    private static func writeFully(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard var pointer = bytes.baseAddress else {
            return
        }
        var remaining = bytes.count
        while remaining > 0 {
            let written = Glibc.write(STDERR_FILENO, pointer, remaining)
            if written < 0 {
                if errno == EINTR {
                    continue
                }
                return  // Nowhere left to report a failure to write the log.
            }
            pointer += written
            remaining -= written
        }
    }
}
