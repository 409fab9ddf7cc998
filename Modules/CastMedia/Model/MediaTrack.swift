import CastTransport

/// A text, audio or video track of a media item (GCKMediaTrack).
public struct MediaTrack: JSONConvertible, Hashable, Identifiable {
    /// The track type.
    public enum Kind: String, Sendable, Hashable {
        case text = "TEXT", audio = "AUDIO", video = "VIDEO"
    }
    /// What a text track is for.
    public enum TextSubtype: String, Sendable, Hashable {
        case subtitles = "SUBTITLES", captions = "CAPTIONS", descriptions = "DESCRIPTIONS"
        case chapters = "CHAPTERS", metadata = "METADATA"
    }

    /// The id, unique within the media item; referenced by active track ids.
    public var id: Int
    /// The track type.
    public var kind: Kind
    /// The track's URL or id (`trackContentId`).
    public var contentID: String?
    /// The track's MIME type (`trackContentType`), for example `text/vtt`.
    public var contentType: String?
    /// The text subtype (text tracks only).
    public var subtype: TextSubtype?
    /// A human-readable name.
    public var name: String?
    /// RFC 5646 language (required for subtitles).
    public var language: String?
    /// Roles, for example `main` or `alternate`.
    public var roles: [String]?
    /// App-specific data.
    public var customData: JSONValue?

    /// Creates a track.
    public init(
        id: Int,
        kind: Kind,
        contentID: String? = nil,
        contentType: String? = nil,
        subtype: TextSubtype? = nil,
        name: String? = nil,
        language: String? = nil
    ) {
        self.id = id
        self.kind = kind
        self.contentID = contentID
        self.contentType = contentType
        self.subtype = subtype
        self.name = name
        self.language = language
    }

    /// A WebVTT subtitle track.
    public static func subtitles(id: Int, url: String, language: String, name: String? = nil) -> MediaTrack {
        MediaTrack(
            id: id,
            kind: .text,
            contentID: url,
            contentType: "text/vtt",
            subtype: .subtitles,
            name: name ?? language,
            language: language
        )
    }

    /// Reads the value from the media namespace's wire JSON, ignoring unknown keys.
    public init(json: JSONValue) throws {
        guard let id = json.int("trackId"), let kind = json.string("type").flatMap(Kind.init(rawValue:)) else {
            throw CastMediaError(.invalidResponse, "a track without trackId or type")
        }
        self.init(id: id, kind: kind)
        contentID = json.string("trackContentId")
        contentType = json.string("trackContentType")
        subtype = json.string("subtype").flatMap(TextSubtype.init(rawValue:))
        name = json.string("name")?.withoutControlCharacters
        language = json.string("language")
        roles = json.strings("roles")
        customData = json.value("customData")
    }

    /// The value as the media namespace's wire JSON.
    public var json: JSONValue {
        var builder = JSONObjectBuilder()
        builder.set("trackId", id)
        builder.set("type", kind.rawValue)
        builder.set("trackContentId", contentID)
        builder.set("trackContentType", contentType)
        builder.set("subtype", subtype?.rawValue)
        builder.set("name", name)
        builder.set("language", language)
        builder["roles"] = roles.map { .array($0.map { .string($0) }) }
        builder["customData"] = customData
        return builder.json
    }
}

/// How text tracks are drawn (GCKMediaTextTrackStyle). Colors are `#RRGGBBAA`.
public struct TextTrackStyle: JSONConvertible, Hashable {
    /// The text's background.
    public var backgroundColor: String?
    /// The text's color.
    public var foregroundColor: String?
    /// The color of the text's edge (see ``edgeType``).
    public var edgeColor: String?
    /// The caption window's color.
    public var windowColor: String?
    /// `NONE OUTLINE DROP_SHADOW RAISED DEPRESSED`.
    public var edgeType: String?
    /// Scale of the default font size; 1 is the default.
    public var fontScale: Double?
    /// `NORMAL BOLD BOLD_ITALIC ITALIC`.
    public var fontStyle: String?
    /// A font family name, when the receiver has it.
    public var fontFamily: String?
    /// `SANS_SERIF MONOSPACED_SANS_SERIF SERIF MONOSPACED_SERIF CASUAL CURSIVE SMALL_CAPITALS`.
    public var fontGenericFamily: String?
    /// `NONE NORMAL ROUNDED_CORNERS`.
    public var windowType: String?
    /// The window's corner radius, in pixels, with `ROUNDED_CORNERS`.
    public var windowRoundedCornerRadius: Double?
    /// App-specific data.
    public var customData: JSONValue?

    /// A style with every attribute left to the receiver's default.
    public init() {}

    /// Reads the value from the media namespace's wire JSON, ignoring unknown keys.
    public init(json: JSONValue) throws {
        backgroundColor = json.string("backgroundColor")
        foregroundColor = json.string("foregroundColor")
        edgeColor = json.string("edgeColor")
        windowColor = json.string("windowColor")
        edgeType = json.string("edgeType")
        fontScale = json.double("fontScale")
        fontStyle = json.string("fontStyle")
        fontFamily = json.string("fontFamily")
        fontGenericFamily = json.string("fontGenericFamily")
        windowType = json.string("windowType")
        windowRoundedCornerRadius = json.double("windowRoundedCornerRadius")
        customData = json.value("customData")
    }

    /// The value as the media namespace's wire JSON.
    public var json: JSONValue {
        var builder = JSONObjectBuilder()
        builder.set("backgroundColor", backgroundColor)
        builder.set("foregroundColor", foregroundColor)
        builder.set("edgeColor", edgeColor)
        builder.set("windowColor", windowColor)
        builder.set("edgeType", edgeType)
        builder.set("fontScale", fontScale)
        builder.set("fontStyle", fontStyle)
        builder.set("fontFamily", fontFamily)
        builder.set("fontGenericFamily", fontGenericFamily)
        builder.set("windowType", windowType)
        builder.set("windowRoundedCornerRadius", windowRoundedCornerRadius)
        builder["customData"] = customData
        return builder.json
    }
}
