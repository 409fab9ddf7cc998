import CastTransport

/// An image reference in metadata: a URL with optional dimensions.
public struct WebImage: JSONConvertible, Hashable {
    /// The image URL.
    public var url: String
    /// Width in pixels, if known.
    public var width: Int?
    /// Height in pixels, if known.
    public var height: Int?

    /// Creates an image reference.
    public init(url: String, width: Int? = nil, height: Int? = nil) {
        self.url = url
        self.width = width
        self.height = height
    }

    /// Reads the value from the media namespace's wire JSON, ignoring unknown keys.
    public init(json: JSONValue) throws {
        guard let url = json.string("url") else { throw CastMediaError(.invalidResponse, "an image without url") }
        self.init(url: url, width: json.int("width"), height: json.int("height"))
    }

    /// The value as the media namespace's wire JSON.
    public var json: JSONValue {
        var builder = JSONObjectBuilder()
        builder.set("url", url)
        builder.set("width", width)
        builder.set("height", height)
        return builder.json
    }
}

/// Descriptive data about media (GCKMediaMetadata): a type plus key/value fields and images.
///
/// Standard keys have typed accessors; any other key, including custom ones, is reachable by subscript and
/// survives a round trip unchanged.
public struct MediaMetadata: JSONConvertible, Hashable {
    /// The metadata type (`metadataType`), which decides the standard keys.
    public struct Kind: RawRepresentable, Hashable, Sendable {
        /// The `metadataType` number on the wire.
        public let rawValue: Int
        /// A kind from its `metadataType` number, including ones this library does not name.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Title, subtitle, images, release date.
        public static let generic = Kind(rawValue: 0)
        /// A movie: title, subtitle, studio.
        public static let movie = Kind(rawValue: 1)
        /// A TV episode: series title, episode title, season, episode, original air date.
        public static let tvShow = Kind(rawValue: 2)
        /// A music track: title, album, artist, composer, track and disc numbers.
        public static let musicTrack = Kind(rawValue: 3)
        /// A photo: title, artist, location, coordinates, dimensions, creation time.
        public static let photo = Kind(rawValue: 4)
        /// An audiobook chapter: book title, chapter number and title.
        public static let audiobookChapter = Kind(rawValue: 5)
        /// App-defined metadata.
        public static let user = Kind(rawValue: 100)
    }

    /// The standard keys (cast-protocol.md §7.1).
    public enum Key {
        /// The standard key `title`.
        public static let title = "title"
        /// The standard key `subtitle`.
        public static let subtitle = "subtitle"
        /// The standard key `studio`.
        public static let studio = "studio"
        /// The standard key `seriesTitle`.
        public static let seriesTitle = "seriesTitle"
        /// The standard key `season`.
        public static let season = "season"
        /// The standard key `episode`.
        public static let episode = "episode"
        /// The standard key `originalAirdate`.
        public static let originalAirdate = "originalAirdate"
        /// The standard key `releaseDate`.
        public static let releaseDate = "releaseDate"
        /// The standard key `albumName`.
        public static let albumName = "albumName"
        /// The standard key `albumArtist`.
        public static let albumArtist = "albumArtist"
        /// The standard key `artist`.
        public static let artist = "artist"
        /// The standard key `composer`.
        public static let composer = "composer"
        /// The standard key `trackNumber`.
        public static let trackNumber = "trackNumber"
        /// The standard key `discNumber`.
        public static let discNumber = "discNumber"
        /// The standard key `location`.
        public static let location = "location"
        /// The standard key `latitude`.
        public static let latitude = "latitude"
        /// The standard key `longitude`.
        public static let longitude = "longitude"
        /// The standard key `width`.
        public static let width = "width"
        /// The standard key `height`.
        public static let height = "height"
        /// The standard key `creationDateTime`.
        public static let creationDateTime = "creationDateTime"
        /// The standard key `bookTitle`.
        public static let bookTitle = "bookTitle"
        /// The standard key `chapterNumber`.
        public static let chapterNumber = "chapterNumber"
        /// The standard key `chapterTitle`.
        public static let chapterTitle = "chapterTitle"
        /// The standard key `contentRating`.
        public static let contentRating = "contentRating"
    }

    /// The metadata type.
    public var kind: Kind
    /// Images, largest first by convention.
    public var images: [WebImage]
    private var fields: [String: JSONValue]

    /// Metadata of a type: empty, or with the title and subtitle every sender's controllers show.
    public init(kind: Kind = .generic, title: String? = nil, subtitle: String? = nil, images: [WebImage] = []) {
        self.kind = kind
        self.images = images
        self.fields = [:]
        self.title = title
        self.subtitle = subtitle
    }

    /// Any field by its wire key (standard or custom).
    public subscript(key: String) -> JSONValue? {
        get { fields[key] }
        set { fields[key] = newValue }
    }

    /// Every field other than `metadataType` and `images`.
    public var allFields: [String: JSONValue] { fields }

    private func text(_ key: String) -> String? { fields[key]?.stringValue }
    private mutating func setText(_ key: String, _ value: String?) { fields[key] = value.map { .string($0) } }
    private func number(_ key: String) -> Int? { fields[key]?.intValue }
    private mutating func setNumber(_ key: String, _ value: Int?) { fields[key] = value.map { .number(Double($0)) } }

    /// The title (episode title for TV shows).
    public var title: String? {
        get { text(Key.title) }
        set { setText(Key.title, newValue) }
    }
    /// The subtitle.
    public var subtitle: String? {
        get { text(Key.subtitle) }
        set { setText(Key.subtitle, newValue) }
    }
    /// The studio (movies).
    public var studio: String? {
        get { text(Key.studio) }
        set { setText(Key.studio, newValue) }
    }
    /// The series title (TV shows).
    public var seriesTitle: String? {
        get { text(Key.seriesTitle) }
        set { setText(Key.seriesTitle, newValue) }
    }
    /// The season number (TV shows).
    public var season: Int? {
        get { number(Key.season) }
        set { setNumber(Key.season, newValue) }
    }
    /// The episode number (TV shows).
    public var episode: Int? {
        get { number(Key.episode) }
        set { setNumber(Key.episode, newValue) }
    }
    /// The artist (music, photos).
    public var artist: String? {
        get { text(Key.artist) }
        set { setText(Key.artist, newValue) }
    }
    /// The album name (music).
    public var albumName: String? {
        get { text(Key.albumName) }
        set { setText(Key.albumName, newValue) }
    }
    /// The album artist (music).
    public var albumArtist: String? {
        get { text(Key.albumArtist) }
        set { setText(Key.albumArtist, newValue) }
    }
    /// The composer (music).
    public var composer: String? {
        get { text(Key.composer) }
        set { setText(Key.composer, newValue) }
    }
    /// The track number (music).
    public var trackNumber: Int? {
        get { number(Key.trackNumber) }
        set { setNumber(Key.trackNumber, newValue) }
    }
    /// The release date, ISO 8601.
    public var releaseDate: String? {
        get { text(Key.releaseDate) }
        set { setText(Key.releaseDate, newValue) }
    }
    /// The book title (audiobook chapters).
    public var bookTitle: String? {
        get { text(Key.bookTitle) }
        set { setText(Key.bookTitle, newValue) }
    }
    /// The chapter title (audiobook chapters).
    public var chapterTitle: String? {
        get { text(Key.chapterTitle) }
        set { setText(Key.chapterTitle, newValue) }
    }

    /// The best line to show as a title for any type: title, else series title, chapter or book title (control
    /// characters, such as a terminal's escapes, become spaces: any sender may set it).
    public var displayTitle: String? {
        (title ?? seriesTitle ?? chapterTitle ?? bookTitle)?.withoutControlCharacters
    }
    /// The best second line for any type: subtitle, studio, artist or series title (control characters as spaces).
    public var displaySubtitle: String? {
        (subtitle ?? studio ?? artist ?? (title != nil ? seriesTitle : nil) ?? albumName)?.withoutControlCharacters
    }

    /// Movie metadata.
    public static func movie(title: String, subtitle: String? = nil, studio: String? = nil, images: [WebImage] = [])
        -> MediaMetadata
    {
        var metadata = MediaMetadata(kind: .movie, images: images)
        metadata.title = title
        metadata.subtitle = subtitle
        metadata.studio = studio
        return metadata
    }

    /// Generic metadata.
    public static func generic(title: String, subtitle: String? = nil, images: [WebImage] = []) -> MediaMetadata {
        var metadata = MediaMetadata(kind: .generic, images: images)
        metadata.title = title
        metadata.subtitle = subtitle
        return metadata
    }

    /// Music track metadata.
    public static func musicTrack(title: String, artist: String? = nil, album: String? = nil, images: [WebImage] = [])
        -> MediaMetadata
    {
        var metadata = MediaMetadata(kind: .musicTrack, images: images)
        metadata.title = title
        metadata.artist = artist
        metadata.albumName = album
        return metadata
    }

    /// Reads the value from the media namespace's wire JSON, ignoring unknown keys.
    public init(json: JSONValue) throws {
        guard var object = json.objectValue else { throw CastMediaError(.invalidResponse, "metadata is not an object") }
        kind = Kind(rawValue: object["metadataType"]?.intValue ?? 0)
        images = json.decodeArray("images") ?? []
        object["metadataType"] = nil
        object["images"] = nil
        fields = object.filter { $0.value != .null }
    }

    /// The value as the media namespace's wire JSON.
    public var json: JSONValue {
        var object = fields
        object["metadataType"] = .number(Double(kind.rawValue))
        if !images.isEmpty { object["images"] = .array(images.map(\.json)) }
        return .object(object)
    }
}
