import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Which local address a device can reach: the one the kernel picks as the source for a datagram socket
/// connected to the device. No packet is sent; the routing table answers, so a VPN, a second interface or a
/// bridge is chosen only when it really is the way to the device.
enum ServingAddress {
    /// Where to listen, and the address URLs give the device (the same, unless listening on all interfaces).
    struct Choice: Sendable, Equatable {
        var listen: String
        var advertised: String
        var reason: String
    }

    /// The given address, else the one routed towards the device. A given "all interfaces" address (`0.0.0.0`,
    /// `::`) is listened on, but a device cannot fetch from it: URLs get the address routed towards the device.
    static func choose(
        given: String?,
        deviceHost: String?,
        eventLoopGroup: any EventLoopGroup
    ) async throws -> Choice {
        if let given, !isUnspecified(given) {
            return Choice(listen: given, advertised: given, reason: "given with --serve-address")
        }
        guard let deviceHost else {
            let loopback = given.map { $0.contains(":") ? "::1" : "127.0.0.1" } ?? "127.0.0.1"
            let listening = given.map { "listening on all interfaces (\($0)); " } ?? ""
            return Choice(
                listen: given ?? loopback,
                advertised: loopback,
                reason: listening + "no device address known: loopback only"
            )
        }
        let routed = try await route(to: deviceHost, eventLoopGroup: eventLoopGroup)
        let reason = "the address this computer uses to reach \(deviceHost)"
        guard let given else { return Choice(listen: routed, advertised: routed, reason: reason) }
        if !given.contains(":"), routed.contains(":") {
            throw CastMediaServerError(
                .bindFailed,
                "\(given) listens on IPv4 only, and \(deviceHost) is reached over IPv6 (from \(routed)): "
                    + "give :: to listen on every interface, or an address to listen on"
            )
        }
        return Choice(listen: given, advertised: routed, reason: "listening on all interfaces (\(given)); " + reason)
    }

    /// Whether `address` means every interface rather than one (`0.0.0.0`, `::`), which no device can connect to.
    static func isUnspecified(_ address: String) -> Bool {
        ["0.0.0.0", "::"].contains(FetchLog.normalized(address))
    }

    /// The local address the kernel picks as the source towards `deviceHost`.
    private static func route(to deviceHost: String, eventLoopGroup: any EventLoopGroup) async throws -> String {
        do {
            let channel = try await DatagramBootstrap(group: eventLoopGroup).connect(host: deviceHost, port: 8009).get()
            defer { channel.close(promise: nil) }
            guard let address = channel.localAddress?.ipAddress else {
                throw CastMediaServerError(.bindFailed, "no local address routes to \(deviceHost)")
            }
            return FetchLog.normalized(address)
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
