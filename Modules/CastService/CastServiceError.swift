import CastMedia
import CastMediaServer
import CastSession
import CastTransport

/// The one error type CastService throws, and what every other module's error becomes at the service's edge:
/// a code (the failing module's own code, so `timedOut` stays `timedOut`), a message, and the HTTP status it is
/// answered with.
public struct CastServiceError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// No device has the id asked for.
        public static let deviceNotFound = Code("deviceNotFound")
        /// The request is malformed; ``CastServiceError/field`` names the offending field.
        public static let invalidRequest = Code("invalidRequest")
        /// The command does not apply to what the device does now (no media to pause, …).
        public static let conflict = Code("conflict")
        /// The service's own settings are wrong (a non-loopback address without tokens, a bad token hash, …).
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// The request carries no bearer token, or one the service does not know (401).
        public static let unauthorized = Code("unauthorized")
        /// The client sent more requests than its rate limit allows (429).
        public static let rateLimited = Code("rateLimited")
        /// A browser request from a web origin that is not allowed (403).
        public static let forbiddenOrigin = Code("forbiddenOrigin")
        /// The request body is over the service's size limit (413).
        public static let bodyTooLarge = Code("bodyTooLarge")
        /// A local file outside the configured media folders, or not a readable media file there (403).
        public static let forbiddenPath = Code("forbiddenPath")
        /// No route has the request's path (404).
        public static let routeNotFound = Code("routeNotFound")
        /// The path exists, but not for the request's method; the answer's `Allow` header lists those it has (405).
        public static let methodNotAllowed = Code("methodNotAllowed")
        /// An error of another module, under its own code name.
        public static func module(_ code: some CustomStringConvertible) -> Code { Code(code.description) }

        /// The code's name, as logs and `--json` output show it.
        public var description: String { name }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// The HTTP status this error is answered with (RFC 9457 `status`).
    public var httpStatus: Int
    /// The request field that was invalid, for ``Code/invalidRequest``.
    public var field: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, httpStatus: Int, field: String? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.field = field
    }

    /// The code and message (and the cause, when there is one), for logs and the command line.
    public var description: String { "\(code): \(message)" }

    /// `error` as the service answers it: unreachable devices are 502, receivers that do not answer in time 504,
    /// commands that do not fit the device's state (and those a receiver refuses for its state) 409, bad arguments (and app ids the device does not have) 400,
    /// local files that cannot play 422, a tool to install (ffmpeg) 501.
    public init(_ error: any Error) {
        switch error {
        case let error as CastServiceError:
            self = error
        case let error as CastSessionError:
            let status: Int
            var message = error.message
            var field: String?
            switch error.code {
            case .timedOut: status = 504
            case .invalidArgument, .invalidNamespace: status = 400
            // Not what the device does (a fixed volume) or will do now (a refusal): a conflict with its state.
            case .noApplicationRunning, .sessionInProgress, .notSupported, .refused: status = 409
            // LAUNCH_ERROR NOT_FOUND or BAD_PARAMETER: the device works, it has no app with the id asked for.
            case .launchFailed where ["NOT_FOUND", "BAD_PARAMETER"].contains(error.receiverReason ?? ""):
                status = 400
                message += " (\(error.receiverReason ?? ""): the device has no such app)"
                field = "appId"
            default: status = 502
            }
            self.init(.module(error.code), message, httpStatus: status, field: field)
        case let error as CastMediaError:
            let status: Int
            switch error.code {
            case .timedOut: status = 504
            // A receiver's refusal of a request the service checked (END_OF_QUEUE, INVALID_COMMAND, an old media
            // session) is about the media's state; its own INVALID_PARAMS and requests refused here are bad requests.
            case .invalidRequest: status = [nil, "INVALID_PARAMS"].contains(error.receiverReason) ? 400 : 409
            case .noMediaSession, .notSupported, .invalidPlayerState: status = 409
            default: status = 502
            }
            self.init(.module(error.code), error.message, httpStatus: status)
        case let error as CastMediaServerError:
            let status: Int
            switch error.code {
            case .notShareable: status = 403
            case .invalidMedia, .unplayable, .invalidSubtitles, .invalidPlaylist: status = 422
            case .toolMissing: status = 501
            case .bindFailed, .unreachable: status = 502
            default: status = 500
            }
            self.init(.module(error.code), error.message, httpStatus: status)
        case let error as CastTransportError:
            self.init(.module(error.code), error.message, httpStatus: error.code == .requestTimedOut ? 504 : 502)
        default:
            self.init(.module("internalError"), "\(error)", httpStatus: 500)
        }
    }
}

extension CastServiceError {
    /// A request body that could not be decoded (not JSON, a missing field, a wrong type), as a 400 naming the
    /// field: what the HTTP API and MQTT's command messages both answer.
    init(unreadableRequest error: any Error) {
        let reason: String
        var field: String?
        switch error {
        case DecodingError.dataCorrupted(let context):
            reason = context.debugDescription
        case DecodingError.keyNotFound(let key, _):
            reason = "'\(key.stringValue)' is missing"
            field = key.stringValue
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            reason = "'\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type"
            field = context.codingPath.last?.stringValue
        default:
            reason = "\(error)"
        }
        self.init(.invalidRequest, "the request could not be read: \(reason)", httpStatus: 400, field: field)
    }
}
