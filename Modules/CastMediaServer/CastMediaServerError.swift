/// The one error type CastMediaServer throws.
public struct CastMediaServerError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case bindFailed, notShareable, invalidSubtitles, invalidPlaylist, unreachable
            case toolMissing, toolFailed, unplayable, invalidMedia
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// No listening socket could be opened on the chosen address and ports.
        public static let bindFailed = Code(.bindFailed)
        /// A file, folder or stream cannot be shared (missing, unreadable, not a regular file, …).
        public static let notShareable = Code(.notShareable)
        /// A subtitle file could not be read or converted at all (single broken cues are skipped, not thrown).
        public static let invalidSubtitles = Code(.invalidSubtitles)
        /// A playlist file (`.m3u`, `.m3u8`, `.pls`) could not be read.
        public static let invalidPlaylist = Code(.invalidPlaylist)
        /// The device did not fetch what was served; ``CastMediaServerError/diagnosis`` says why, most likely.
        public static let unreachable = Code(.unreachable)
        /// An external tool (ffprobe, ffmpeg, yt-dlp) is needed and not installed; the message names the package.
        public static let toolMissing = Code(.toolMissing)
        /// An external tool ran and failed; the message carries the end of what it printed.
        public static let toolFailed = Code(.toolFailed)
        /// The media cannot be played on the device as it is, and transcoding is off or impossible.
        public static let unplayable = Code(.unplayable)
        /// The media file is not what it claims to be (no streams, unreadable container).
        public static let invalidMedia = Code(.invalidMedia)

        /// The code's name, as logs and `--json` output show it.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// For ``Code/unreachable``: what the server saw and what to do about it.
    public var diagnosis: ReachabilityDiagnosis?
    /// The underlying error, if any.
    public var cause: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, diagnosis: ReachabilityDiagnosis? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.diagnosis = diagnosis
        self.cause = cause
    }

    /// The code and message (and the cause, when there is one), for logs and the command line.
    public var description: String { "\(code): \(message)" }
}
