import CastLogging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One thing `cast devices --diagnose` checked about why mDNS finds nothing, and what it found.
public struct DiscoveryCheck: Sendable, Hashable {
    /// How a check came out.
    public enum Outcome: String, Sendable, Hashable {
        /// Nothing wrong found.
        case ok
        /// Something that keeps mDNS from working.
        case problem
        /// The check could not be made (the tool it needs is missing, or not allowed).
        case notChecked = "not-checked"
    }

    /// What was checked: `avahi-daemon`, `multicast interface`, `multicast route`, `firewall`.
    public var name: String
    /// How it came out.
    public var outcome: Outcome
    /// What was found, or what to do.
    public var detail: String

    /// Creates a check result.
    public init(name: String, outcome: Outcome, detail: String) {
        self.name = name
        self.outcome = outcome
        self.detail = detail
    }
}

/// Why discovery may find nothing, checked on this host: is avahi-daemon reachable, is there an interface and a
/// route for multicast, does a firewall rule drop mDNS (UDP 5353). Read-only: it changes nothing.
public enum DiscoveryDiagnosis {
    /// Runs every check, in the order above.
    public static func run() -> [DiscoveryCheck] {
        [checkDaemon(), checkInterfaces(), checkRoute(), checkFirewall()]
    }

    /// Whether avahi-daemon answers over the D-Bus system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set).
    public static func checkDaemon() -> DiscoveryCheck {
        do {
            let connection = try AvahiConnection { _ in }
            connection.close()
            return DiscoveryCheck(name: "avahi-daemon", outcome: .ok, detail: "reachable over D-Bus")
        } catch {
            return DiscoveryCheck(name: "avahi-daemon", outcome: .problem, detail: error.message)
        }
    }

    /// Whether a non-loopback interface is up with MULTICAST and an IPv4 address.
    public static func checkInterfaces() -> DiscoveryCheck {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else {
            return DiscoveryCheck(name: "multicast interface", outcome: .notChecked, detail: "getifaddrs failed")
        }
        defer { freeifaddrs(list) }
        var found: [String] = []
        var cursor = list
        while let entry = cursor?.pointee {
            defer { cursor = entry.ifa_next }
            let flags = Int32(entry.ifa_flags)
            guard let address = entry.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                flags & Int32(IFF_UP) != 0, flags & Int32(IFF_MULTICAST) != 0, flags & Int32(IFF_LOOPBACK) == 0
            else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let length = socklen_t(MemoryLayout<sockaddr_in>.size)
            guard getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else {
                continue
            }
            let ip = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            found.append("\(String(cString: entry.ifa_name)) \(ip)")
        }
        guard !found.isEmpty else {
            return DiscoveryCheck(
                name: "multicast interface",
                outcome: .problem,
                detail: "no interface besides loopback is up with MULTICAST and an IPv4 address"
            )
        }
        return DiscoveryCheck(name: "multicast interface", outcome: .ok, detail: found.joined(separator: ", "))
    }

    /// Whether `/proc/net/route` has a default route or one covering 224.0.0.251 (mDNS's group).
    public static func checkRoute(table path: String = "/proc/net/route") -> DiscoveryCheck {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            return DiscoveryCheck(name: "multicast route", outcome: .notChecked, detail: "cannot read \(path)")
        }
        let verdict = multicastRoute(inRouteTable: text)
        guard let route = verdict else {
            return DiscoveryCheck(
                name: "multicast route",
                outcome: .problem,
                detail: "no default route and no 224.0.0.0/4 route (ip route add 224.0.0.0/4 dev IFACE)"
            )
        }
        return DiscoveryCheck(name: "multicast route", outcome: .ok, detail: route)
    }

    /// The route of `/proc/net/route` text that carries 224.0.0.251, described (`default via eth0`), or `nil`.
    static func multicastRoute(inRouteTable text: String) -> String? {
        // Columns: Iface Destination Gateway Flags RefCnt Use Metric Mask …; addresses are little-endian hex.
        let mdns: UInt32 = 0xFB00_00E0  // 224.0.0.251, as the kernel prints it
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 8, let destination = UInt32(fields[1], radix: 16),
                let mask = UInt32(fields[7], radix: 16), let flags = Int(fields[3], radix: 16), flags & 1 != 0
            else { continue }
            guard mdns & mask == destination else { continue }
            return mask == 0 ? "default route via \(fields[0])" : "multicast route via \(fields[0])"
        }
        return nil
    }

    /// Whether an nftables or iptables rule drops or rejects UDP port 5353 (`nft list ruleset`, else
    /// `iptables-save`); not checked when neither tool is there or allowed.
    public static func checkFirewall() -> DiscoveryCheck {
        if let nft = executable("nft") {
            guard let rules = run(nft, ["-nn", "list", "ruleset"]) else {
                return DiscoveryCheck(name: "firewall", outcome: .notChecked, detail: "nft list ruleset failed")
            }
            return verdict(droppingRules(inNftRuleset: rules), tool: "nftables")
        }
        if let iptables = executable("iptables-save") {
            guard let rules = run(iptables, []) else {
                return DiscoveryCheck(name: "firewall", outcome: .notChecked, detail: "iptables-save failed")
            }
            return verdict(droppingRules(inIptables: rules), tool: "iptables")
        }
        return DiscoveryCheck(name: "firewall", outcome: .notChecked, detail: "neither nft nor iptables-save found")
    }

    private static func verdict(_ rules: [String], tool: String) -> DiscoveryCheck {
        guard rules.isEmpty else {
            return DiscoveryCheck(
                name: "firewall",
                outcome: .problem,
                detail: "\(tool) drops mDNS (UDP 5353): " + rules.joined(separator: "; ")
            )
        }
        return DiscoveryCheck(name: "firewall", outcome: .ok, detail: "no \(tool) rule drops UDP 5353")
    }

    /// Rules of an `nft list ruleset` listing that drop or reject UDP port 5353.
    static func droppingRules(inNftRuleset text: String) -> [String] {
        text.split(separator: "\n").map { String($0.trimmingWhitespace()) }.filter { rule in
            let words = rule.split(separator: " ")
            let port = words.contains("5353") || words.contains("mdns")
            return port && (words.contains("drop") || words.contains("reject")) && !rule.contains("tcp dport")
        }
    }

    /// Rules of an `iptables-save` listing that drop or reject UDP port 5353.
    static func droppingRules(inIptables text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { rule in
            rule.hasPrefix("-A") && rule.contains("--dport 5353") && !rule.contains("-p tcp")
                && (rule.contains("-j DROP") || rule.contains("-j REJECT"))
        }
    }

    private static func executable(_ name: String) -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/sbin:/usr/bin:/sbin:/bin"
        for directory in path.split(separator: ":") + ["/usr/sbin", "/sbin"] {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Runs `path` with `arguments` (standard error to /dev/null); its standard output, or `nil` when it fails.
    private static func run(_ path: String, _ arguments: [String]) -> String? {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child = pid_t()
        let spawned = posix_spawn(&child, path, &actions, nil, argv, environ)
        close(pipeEnds[1])
        defer { close(pipeEnds[0]) }
        guard spawned == 0 else { return nil }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(pipeEnds[0], &buffer, buffer.count)
            if count > 0 {
                output += buffer[0..<count]
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0, errno == EINTR {}
        // Exited (the low 7 bits are 0) with status 0.
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else { return nil }
        return String(decoding: output, as: UTF8.self)
    }
}
