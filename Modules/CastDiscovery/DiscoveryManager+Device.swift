import CastLogging
import CastTransport
import Logging

extension DiscoveryManager {
    /// The one device a small program casts to: the device at `address` (`HOST[:PORT]`, as a `--host` option
    /// gives it; see ``CastDevice/staticDevice(address:defaultPort:)``), taken as it is without any discovery, or,
    /// when `address` is `nil`, the first device mDNS finds within `timeout`.
    ///
    /// ```swift
    /// let device = try await DiscoveryManager.device(at: hostOption)
    /// try await CastContext(options: CastOptions()).sessionManager.startSession(with: device)
    /// ```
    ///
    /// - Throws: ``CastDiscoveryError`` — ``CastDiscoveryError/Code/daemonUnavailable`` (no avahi-daemon to
    ///   browse with), ``CastDiscoveryError/Code/noDeviceFound`` when nothing answers within `timeout`.
    public static func device(
        at address: String?,
        within timeout: Duration = .seconds(5),
        logger: Logger = .castDisabled
    ) async throws -> CastDevice {
        if let address { return .staticDevice(address: address) }
        let manager = DiscoveryManager(logger: logger)
        try manager.start()
        let found = try? await withTimeLimit(timeout) {
            CastDiscoveryError(.noDeviceFound, "")
        } _: {
            await manager.devices(atLeast: 1).first
        }
        await manager.stop()
        guard let found else {
            throw CastDiscoveryError(
                .noDeviceFound,
                "no Cast device answered within \(timeout.inSeconds) s; name one with its address (HOST[:PORT])"
            )
        }
        return found
    }
}
