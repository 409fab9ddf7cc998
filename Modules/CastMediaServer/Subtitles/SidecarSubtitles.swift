#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A subtitle file stored next to a media file and named after it, as players find them: `movie.srt`,
/// `movie.en.srt`, `movie.pt-BR.ass`, `movie.english.forced.vtt` beside `movie.mkv`.
///
/// The part of the name between the media's base name and the extension says what the subtitles are: a language
/// (a 2 or 3 letter code, a code with a region or script such as `pt-BR`, or a common English name such as
/// `french`) and anything else, kept as a title (`forced`, `sdh`), so that a sender can offer them as tracks.
public struct SidecarSubtitle: Sendable, Hashable {
    /// The subtitle file: in the media file's folder, written the way the media path was.
    public var path: String
    /// The file's format, from its extension.
    public var format: SubtitleFormat
    /// A BCP 47 language tag (`en`, `pt-BR`), when the name gives one.
    public var language: String?
    /// The rest of the name between base name and extension, words separated by spaces (`forced`, `sdh`).
    public var title: String?

    /// Creates a description of a sidecar subtitle file.
    public init(path: String, format: SubtitleFormat, language: String? = nil, title: String? = nil) {
        self.path = path
        self.format = format
        self.language = language
        self.title = title
    }

    /// The subtitle files next to the media file at `mediaPath`, the one named exactly like it (`movie.srt`) first,
    /// then by language (files without one last), title and format.
    ///
    /// The base name is compared without regard to case, as are extensions: files copied from other systems are
    /// often `Movie.SRT` beside `movie.mkv`. A folder that cannot be read has no sidecar files: subtitles are an
    /// extra, and the media can be played without them.
    public static func find(forMediaAt mediaPath: String) -> [SidecarSubtitle] {
        let folder: String
        let mediaName: String
        let pathPrefix: String
        if let slash = mediaPath.lastIndex(of: "/") {
            folder = slash == mediaPath.startIndex ? "/" : String(mediaPath[..<slash])
            mediaName = String(mediaPath[mediaPath.index(after: slash)...])
            pathPrefix = String(mediaPath[...slash])
        } else {
            folder = "."
            mediaName = mediaPath
            pathPrefix = ""
        }
        guard !mediaName.isEmpty, let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            return []
        }
        let baseName = self.baseName(of: mediaName)
        var found: [SidecarSubtitle] = []
        for name in names where name != mediaName {
            guard let sidecar = sidecar(named: name, mediaBaseName: baseName, pathPrefix: pathPrefix) else { continue }
            // A regular file only: a named pipe would block the read for ever (a directory cannot be read).
            guard FileKind.isRegularFile(sidecar.path) else { continue }
            found.append(sidecar)
        }
        return found.sorted(by: Self.precedes)
    }

    /// The media file name without its extension (`movie.2024.mkv` → `movie.2024`).
    static func baseName(of fileName: String) -> String {
        guard let dot = fileName.lastIndex(of: "."), dot != fileName.startIndex else { return fileName }
        return String(fileName[..<dot])
    }

    /// What the file called `name` is, when it is a subtitle file for the media whose base name is given.
    static func sidecar(named name: String, mediaBaseName: String, pathPrefix: String = "") -> SidecarSubtitle? {
        guard name.count > mediaBaseName.count,
            name.prefix(mediaBaseName.count).lowercased() == mediaBaseName.lowercased()
        else { return nil }
        let rest = name.dropFirst(mediaBaseName.count)
        guard rest.first == "." else { return nil }
        var parts = rest.dropFirst().split(separator: ".", omittingEmptySubsequences: true)
        guard let fileExtension = parts.popLast(), let format = SubtitleFormat(fileExtension: String(fileExtension))
        else { return nil }
        var language: String?
        var titleWords: [Substring] = []
        for part in parts {
            if language == nil, let tag = languageTag(part) {
                language = tag
            } else {
                titleWords.append(part)
            }
        }
        return SidecarSubtitle(
            path: pathPrefix + name,
            format: format,
            language: language,
            title: titleWords.isEmpty ? nil : titleWords.joined(separator: " ")
        )
    }

    /// The language tag a part of a file name stands for: `en`, `eng` and `english` are `en`; `pt-BR`, `pt_br` are
    /// `pt-BR`; `zh-Hant` and `es-419` keep their script and region. `nil` for words that are not languages.
    static func languageTag(_ word: Substring) -> String? {
        let lowered = word.lowercased()
        if let code = languageNames[lowered] { return code }
        guard !notLanguages.contains(lowered) else { return nil }
        let subtags = lowered.split(separator: "-", omittingEmptySubsequences: false).flatMap {
            $0.split(separator: "_", omittingEmptySubsequences: false)
        }
        guard let first = subtags.first, (2...3).contains(first.count), first.allSatisfy(isASCIILetter),
            subtags.count <= 3
        else { return nil }
        var tag = threeLetterCodes[String(first)] ?? String(first)
        for subtag in subtags.dropFirst() {
            if subtag.count == 2 && subtag.allSatisfy(isASCIILetter) {
                tag += "-" + subtag.uppercased()
            } else if subtag.count == 3 && subtag.allSatisfy(\.isASCII) && subtag.allSatisfy(\.isNumber) {
                tag += "-" + subtag
            } else if subtag.count == 4 && subtag.allSatisfy(isASCIILetter) {
                tag += "-" + subtag.prefix(1).uppercased() + subtag.dropFirst()
            } else {
                return nil
            }
        }
        return tag
    }

    private static func isASCIILetter(_ character: Character) -> Bool {
        character.isASCII && character.isLetter
    }

    /// Language names seen in file names, English and native.
    private static let languageNames: [String: String] = [
        "english": "en", "french": "fr", "francais": "fr", "français": "fr", "german": "de", "deutsch": "de",
        "spanish": "es", "espanol": "es", "español": "es", "italian": "it", "italiano": "it",
        "portuguese": "pt", "portugues": "pt", "português": "pt", "brazilian": "pt-BR", "dutch": "nl",
        "nederlands": "nl", "swedish": "sv", "norwegian": "no", "danish": "da", "finnish": "fi", "polish": "pl",
        "russian": "ru", "greek": "el", "turkish": "tr", "arabic": "ar", "hebrew": "he", "hindi": "hi",
        "japanese": "ja", "chinese": "zh", "korean": "ko",
    ]

    /// ISO 639-2 codes of common languages, which BCP 47 writes with their two-letter ISO 639-1 code.
    private static let threeLetterCodes: [String: String] = [
        "eng": "en", "fre": "fr", "fra": "fr", "ger": "de", "deu": "de", "spa": "es", "ita": "it", "por": "pt",
        "dut": "nl", "nld": "nl", "swe": "sv", "nor": "no", "dan": "da", "fin": "fi", "pol": "pl", "rus": "ru",
        "gre": "el", "ell": "el", "tur": "tr", "ara": "ar", "heb": "he", "hin": "hi", "jpn": "ja", "chi": "zh",
        "zho": "zh", "kor": "ko",
    ]

    /// Short words in subtitle file names that are not languages, though two or three letters long.
    private static let notLanguages: Set<String> = ["sdh", "cc", "hd", "dvd", "web", "sub", "srt", "ass", "ssa", "vtt"]

    /// The order of ``find(forMediaAt:)``.
    private static func precedes(_ left: SidecarSubtitle, _ right: SidecarSubtitle) -> Bool {
        func key(_ sidecar: SidecarSubtitle) -> (Int, String, String, Int, String) {
            let rank = sidecar.language == nil && sidecar.title == nil ? 0 : sidecar.language == nil ? 2 : 1
            let formatOrder = SubtitleFormat.allCases.firstIndex(of: sidecar.format) ?? 0
            return (rank, sidecar.language ?? "", sidecar.title ?? "", formatOrder, sidecar.path)
        }
        return key(left) < key(right)
    }
}
