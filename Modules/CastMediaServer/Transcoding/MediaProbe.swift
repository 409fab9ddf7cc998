import CastTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `ffprobe` says a file holds: its container, duration and streams. The input to a ``PlaybackPlan``.
public struct MediaProbe: Sendable, Hashable {
    /// One stream of the file.
    public struct Stream: Sendable, Hashable {
        /// What a stream carries.
        public enum Kind: String, Sendable, Hashable {
            case video, audio, subtitle, other
        }

        /// The stream's index in the file (ffmpeg's `0:N`).
        public var index: Int
        /// Video, audio, subtitles or something else.
        public var kind: Kind
        /// ffmpeg's codec name: `h264`, `hevc`, `aac`, `ac3`, `subrip`, …
        public var codec: String
        /// `High`, `Main 10`, `LC`, … when the codec has profiles.
        public var profile: String?
        /// ffmpeg's level number (H.264: 41 is 4.1; HEVC: 120 is 4.0).
        public var level: Int?
        /// `yuv420p`, `yuv420p10le`, … for video.
        public var pixelFormat: String?
        /// The picture's width in pixels, for video.
        public var width: Int?
        /// The picture's height in pixels, for video.
        public var height: Int?
        /// Audio channels.
        public var channels: Int?
        /// The `language` tag (`eng`, `fra`, …), when set.
        public var language: String?
        /// The `title` tag, when set.
        public var title: String?
        /// Whether the file marks this stream as its default.
        public var isDefault: Bool
        /// Cover art stored as a video stream (an MP3's picture): not video to play.
        public var isAttachedPicture: Bool

        /// ``language`` as a BCP 47 tag for a track (`fr` for `fra` or `fre`); the ISO 639-2 code itself when
        /// the language has no two-letter code.
        public var languageTag: String? {
            guard let language = language?.lowercased() else { return nil }
            let terminology = Self.bibliographicCodes[language] ?? language
            return Self.twoLetterCodes[terminology] ?? terminology
        }

        /// ISO 639-2's bibliographic codes (common in Matroska files) and their terminology twins.
        private static let bibliographicCodes = [
            "alb": "sqi", "arm": "hye", "baq": "eus", "bur": "mya", "chi": "zho", "cze": "ces", "dut": "nld",
            "fre": "fra", "geo": "kat", "ger": "deu", "gre": "ell", "ice": "isl", "mac": "mkd", "mao": "mri",
            "may": "msa", "per": "fas", "rum": "ron", "slo": "slk", "tib": "bod", "wel": "cym",
        ]

        /// ISO 639-2 terminology codes and their ISO 639-1 two-letter codes (from Debian's iso-codes), every language
        /// that has one.
        private static let twoLetterCodes = [
            "aar": "aa", "abk": "ab", "afr": "af", "aka": "ak", "amh": "am", "ara": "ar", "arg": "an", "asm": "as",
            "ava": "av", "ave": "ae", "aym": "ay", "aze": "az", "bak": "ba", "bam": "bm", "bel": "be", "ben": "bn",
            "bih": "bh", "bis": "bi", "bod": "bo", "bos": "bs", "bre": "br", "bul": "bg", "cat": "ca", "ces": "cs",
            "cha": "ch", "che": "ce", "chu": "cu", "chv": "cv", "cor": "kw", "cos": "co", "cre": "cr", "cym": "cy",
            "dan": "da", "deu": "de", "div": "dv", "dzo": "dz", "ell": "el", "eng": "en", "epo": "eo", "est": "et",
            "eus": "eu", "ewe": "ee", "fao": "fo", "fas": "fa", "fij": "fj", "fin": "fi", "fra": "fr", "fry": "fy",
            "ful": "ff", "gla": "gd", "gle": "ga", "glg": "gl", "glv": "gv", "grn": "gn", "guj": "gu", "hat": "ht",
            "hau": "ha", "heb": "he", "her": "hz", "hin": "hi", "hmo": "ho", "hrv": "hr", "hun": "hu", "hye": "hy",
            "ibo": "ig", "ido": "io", "iii": "ii", "iku": "iu", "ile": "ie", "ina": "ia", "ind": "id", "ipk": "ik",
            "isl": "is", "ita": "it", "jav": "jv", "jpn": "ja", "kal": "kl", "kan": "kn", "kas": "ks", "kat": "ka",
            "kau": "kr", "kaz": "kk", "khm": "km", "kik": "ki", "kin": "rw", "kir": "ky", "kom": "kv", "kon": "kg",
            "kor": "ko", "kua": "kj", "kur": "ku", "lao": "lo", "lat": "la", "lav": "lv", "lim": "li", "lin": "ln",
            "lit": "lt", "ltz": "lb", "lub": "lu", "lug": "lg", "mah": "mh", "mal": "ml", "mar": "mr", "mkd": "mk",
            "mlg": "mg", "mlt": "mt", "mon": "mn", "mri": "mi", "msa": "ms", "mya": "my", "nau": "na", "nav": "nv",
            "nbl": "nr", "nde": "nd", "ndo": "ng", "nep": "ne", "nld": "nl", "nno": "nn", "nob": "nb", "nor": "no",
            "nya": "ny", "oci": "oc", "oji": "oj", "ori": "or", "orm": "om", "oss": "os", "pan": "pa", "pli": "pi",
            "pol": "pl", "por": "pt", "pus": "ps", "que": "qu", "roh": "rm", "ron": "ro", "run": "rn", "rus": "ru",
            "sag": "sg", "san": "sa", "sin": "si", "slk": "sk", "slv": "sl", "sme": "se", "smo": "sm", "sna": "sn",
            "snd": "sd", "som": "so", "sot": "st", "spa": "es", "sqi": "sq", "srd": "sc", "srp": "sr", "ssw": "ss",
            "sun": "su", "swa": "sw", "swe": "sv", "tah": "ty", "tam": "ta", "tat": "tt", "tel": "te", "tgk": "tg",
            "tgl": "tl", "tha": "th", "tir": "ti", "ton": "to", "tsn": "tn", "tso": "ts", "tuk": "tk", "tur": "tr",
            "twi": "tw", "uig": "ug", "ukr": "uk", "urd": "ur", "uzb": "uz", "ven": "ve", "vie": "vi", "vol": "vo",
            "wln": "wa", "wol": "wo", "xho": "xh", "yid": "yi", "yor": "yo", "zha": "za", "zho": "zh", "zul": "zu",
        ]

        /// A stream with no tags and no flags.
        public init(index: Int, kind: Kind, codec: String) {
            self.index = index
            self.kind = kind
            self.codec = codec
            self.isDefault = false
            self.isAttachedPicture = false
        }
    }

    /// ffprobe's format names, for example `["mov", "mp4", "m4a", "3gp", "3g2", "mj2"]` or `["matroska", "webm"]`.
    public var formatNames: [String]
    /// The duration in seconds, when the file declares one.
    public var duration: Double?
    /// The file's streams, in file order.
    public var streams: [Stream]

    /// A probe result (tests build their own).
    public init(formatNames: [String], duration: Double?, streams: [Stream]) {
        self.formatNames = formatNames
        self.duration = duration
        self.streams = streams
    }

    /// The video to play: the default (or first) video stream that is not cover art.
    public var video: Stream? { preferred(.video) }
    /// The audio to play: the default (or first) audio stream.
    public var audio: Stream? { preferred(.audio) }
    /// Subtitle streams that are text (and so can become WebVTT); pictures (PGS, DVD) cannot.
    public var textSubtitles: [Stream] {
        streams.filter { $0.kind == .subtitle && Self.textSubtitleCodecs.contains($0.codec) }
    }

    static let textSubtitleCodecs: Set<String> = ["subrip", "srt", "ass", "ssa", "mov_text", "webvtt", "text"]

    private func preferred(_ kind: Stream.Kind) -> Stream? {
        let candidates = streams.filter { $0.kind == kind && !$0.isAttachedPicture }
        return candidates.first(where: \.isDefault) ?? candidates.first
    }

    /// Probes `file` with ffprobe.
    ///
    /// - Throws: ``CastMediaServerError/Code/toolMissing`` without ffprobe; ``CastMediaServerError/Code/invalidMedia``
    ///   when ffprobe finds no media in it.
    public static func probe(file: String, ffprobe: String = "ffprobe") async throws -> MediaProbe {
        let tool = try ExternalTool.require(ffprobe, for: "checking what a file holds")
        let output: String
        do {
            output = try await tool.output(
                arguments: ["-v", "error", "-print_format", "json", "-show_format", "-show_streams", inputURL(file)],
                limit: 4 << 20
            )
        } catch let error as CastMediaServerError where error.code == .toolFailed {
            throw CastMediaServerError(.invalidMedia, "\(file) is not media ffprobe knows: \(error.message)")
        }
        return try MediaProbe(ffprobeJSON: Data(output.utf8))
    }

    /// A path as ffmpeg's input: `file:` and absolute, so a name with a colon or a leading dash is not read as
    /// a protocol or an option.
    static func inputURL(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return "file:" + absolute
    }

    /// Reads `ffprobe -print_format json -show_format -show_streams` output; liberal about missing fields.
    public init(ffprobeJSON data: Data) throws {
        guard let root = (try? JSONValue(parsing: String(decoding: data, as: UTF8.self)))?.objectValue else {
            throw CastMediaServerError(.invalidMedia, "ffprobe's answer is not JSON")
        }
        let format = root["format"]?.objectValue ?? [:]
        formatNames = format["format_name"]?.stringValue?.split(separator: ",").map(String.init) ?? []
        duration = Self.number(format["duration"]).flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
        streams = (root["streams"]?.arrayValue ?? []).compactMap(\.objectValue).enumerated().map { position, fields in
            let kind = Stream.Kind(rawValue: fields["codec_type"]?.stringValue ?? "") ?? .other
            var stream = Stream(
                index: Self.number(fields["index"]).map { Int($0) } ?? position,
                kind: kind,
                codec: (fields["codec_name"]?.stringValue ?? "unknown").lowercased()
            )
            stream.profile = fields["profile"]?.stringValue
            stream.level = Self.number(fields["level"]).map { Int($0) }
            stream.pixelFormat = fields["pix_fmt"]?.stringValue
            stream.width = Self.number(fields["width"]).map { Int($0) }
            stream.height = Self.number(fields["height"]).map { Int($0) }
            stream.channels = Self.number(fields["channels"]).map { Int($0) }
            let tags = (fields["tags"]?.objectValue ?? [:]).reduce(into: [String: String]()) { tags, tag in
                if let value = tag.value.stringValue { tags[tag.key.lowercased()] = value }
            }
            stream.language = tags["language"].flatMap { $0.isEmpty || $0 == "und" ? nil : $0 }
            stream.title = tags["title"].flatMap { $0.isEmpty ? nil : $0 }
            let disposition = fields["disposition"]?.objectValue ?? [:]
            stream.isDefault = Self.number(disposition["default"]) == 1
            stream.isAttachedPicture = Self.number(disposition["attached_pic"]) == 1
            return stream
        }
        guard !streams.isEmpty else {
            throw CastMediaServerError(.invalidMedia, "ffprobe found no audio or video in it")
        }
    }

    /// ffprobe writes numbers as JSON numbers or as strings, depending on the field.
    private static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .number(let number): number
        case .string(let text): Double(text)
        case .bool(let flag): flag ? 1 : 0
        default: nil
        }
    }
}
