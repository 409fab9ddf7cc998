import CastLogging
import CastStyleConfig
import CastTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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

extension MQTTBridge.Options {
    /// The MQTT options a profile's `<daemon>` section sets, or `nil` when it names no broker.
    ///
    /// - Parameters:
    ///   - settings: The profile's `<daemon>` section.
    ///   - hostName: The site when the profile names none.
    /// - Throws: ``CastServiceError/Code/invalidConfiguration`` for a broker URL that does not parse or a password
    ///   file that cannot be read.
    public init?(_ settings: DaemonSettings, hostName: String) throws(CastServiceError) {
        guard let url = settings.broker else { return nil }
        let site = settings.site ?? MQTTBridge.topicLevel(hostName)
        var broker = try MQTTBrokerOptions(url: url, clientID: "castd-\(site)")
        if let username = settings.brokerUsername { broker.username = username }
        if let file = settings.brokerPasswordFile {
            guard let bytes = LocalFiles.read(file) else {
                throw CastServiceError(
                    .invalidConfiguration,
                    "cannot read the broker password file \(file)",
                    httpStatus: 500,
                    field: "brokerPasswordFile"
                )
            }
            broker.password = String(String(decoding: bytes, as: UTF8.self).trimmingWhitespace())
        }
        if let caFile = settings.brokerCAFile {
            var tls = broker.tls ?? .init()
            tls.caFile = caFile
            broker.tls = tls
        }
        self.init(broker: broker, site: site)
        topicPrefix = settings.topicPrefix
        homeAssistantDiscovery = settings.homeAssistant
        discoveryPrefix = settings.discoveryPrefix
    }
}
