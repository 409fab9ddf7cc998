import CastTransport

/// What a ``RemoteMediaClient`` sends through: the media namespace of the running receiver app.
///
/// CastSession provides the real one (a virtual connection to the app's transport id); tests can provide
/// their own. Inbound messages reach the client through ``RemoteMediaClient/receive(_:)``.
public protocol MediaChannel: Sendable {
    /// Sends one media-namespace request (a JSON object with `type`; the channel adds `requestId`) and returns
    /// the reply's JSON.
    ///
    /// - Throws: ``CastTransportError`` (not connected, timed out, connection lost) or another error.
    func sendMediaRequest(_ payload: JSONValue, timeout: Duration?) async throws -> JSONValue
}
