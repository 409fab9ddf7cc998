import CastMedia

/// A transport command for what a device plays, as the API and MQTT name them.
public enum MediaCommand: Sendable, Hashable {
    case play, pause, stop
    /// To a position in seconds, or by an offset when `relative`.
    case seek(position: Double, relative: Bool)
    /// A playback rate (1 is normal speed).
    case rate(Double)
    case next, previous, skipAd

    /// Sends the command through `client`.
    func request(on client: RemoteMediaClient) -> MediaRequest {
        switch self {
        case .play: client.play()
        case .pause: client.pause()
        case .stop: client.stop()
        case .seek(let position, let relative): client.seek(relative ? .by(position) : .to(position))
        case .rate(let rate): client.setPlaybackRate(rate)
        case .next: client.queueNext()
        case .previous: client.queuePrevious()
        case .skipAd: client.skipAd()
        }
    }
}
