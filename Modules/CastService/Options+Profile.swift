import CastStyleConfig

extension CastServiceServer.Options {
    /// The options a profile's `<daemon>` section sets.
    ///
    /// - Throws: ``CastServiceError/Code/invalidConfiguration`` for an address or token hash that does not parse,
    ///   or a combination ``validate()`` refuses (another address without tokens).
    public init(_ settings: DaemonSettings) throws(CastServiceError) {
        self.init()
        address = try ListenAddress(parsing: settings.listen)
        tokens = try settings.tokenHashes.map { text throws(CastServiceError) in try BearerTokenHash(parsing: text) }
        allowedOrigins = settings.allowedOrigins
        maximumBodySize = settings.maximumBodySize
        rateLimit = settings.requestsPerSecond.map { RateLimit(requestsPerSecond: $0, burst: settings.burst) }
        try validate()
    }
}
