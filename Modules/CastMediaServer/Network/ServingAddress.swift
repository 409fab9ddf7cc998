import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Which local address a device can reach: the one the kernel picks as the source for a datagram socket
/// connected to the device. No packet is sent; the routing table answers, so a VPN, a second interface or a
/// bridge is chosen only when it really is the way to the device.
enum ServingAddress {
    static func choose(
        given: String?,
        deviceHost: String?,
        eventLoopGroup: any EventLoopGroup
    ) async throws -> (address: String, reason: String) {
        if let given { return (given, "given with --serve-address") }
        guard let deviceHost else { return ("127.0.0.1", "no device address known: loopback only") }
        do {
            let channel = try await DatagramBootstrap(group: eventLoopGroup).connect(host: deviceHost, port: 8009).get()
            defer { channel.close(promise: nil) }
            guard let address = channel.localAddress?.ipAddress else {
                throw CastMediaServerError(.bindFailed, "no local address routes to \(deviceHost)")
            }
            let local = FetchLog.normalized(address)
            return (local, "the address this computer uses to reach \(deviceHost)")
        } catch let error as CastMediaServerError {
            throw error
        } catch {
            throw CastMediaServerError(
                .bindFailed,
                "no local address routes to \(deviceHost) (\(error)); give one with --serve-address",
                cause: error
            )
        }
    }

    /// The address as a URL host: IPv6 in brackets, a zone's `%` escaped.
    static func urlHost(_ address: String) -> String {
        guard address.contains(":") else { return address }
        return "[" + address.replacingPercent() + "]"
    }
}

extension String {
    fileprivate func replacingPercent() -> String {
        var result = ""
        for character in self { result += character == "%" ? "%25" : String(character) }
        return result
    }
}

/// File-system questions asked when sharing.
enum FileKind {
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }
}
