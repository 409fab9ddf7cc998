internal import CAvahi
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The only file that calls libavahi-client. Threading follows avahi's docs/THREADS:
// - an AvahiThreadedPoll runs the client on its own helper thread and invokes callbacks there with the poll lock held;
// - every call from another thread happens between avahi_threaded_poll_lock/unlock (``AvahiConnection/withAvahi``);
// - callbacks only copy what they are given and hand it to `handler` (which just enqueues it); they never call back
//   into this class, so they never wait for its lock;
// - stop and free happen in ``AvahiConnection/close()``, which runs on the caller's thread, never on the helper thread
//   (nothing on the helper thread holds a strong reference to the connection, so even `deinit` cannot run there).

/// One service instance as the daemon reports it: a name, seen on one interface over one IP protocol.
///
/// A device on a dual-stack network with two interfaces yields four keys; discovery merges them by TXT `id`.
struct ServiceKey: Hashable, Sendable, CustomStringConvertible {
    /// The daemon's interface index.
    var interfaceIndex: Int32
    /// Whether the service was seen over IPv6 (it is then resolved to an IPv6 address).
    var isIPv6: Bool
    /// The instance name, e.g. `Chromecast-99f3c58bf3471cc10cd87f79d33599cf`.
    var name: String
    /// The service type, e.g. `_googlecast._tcp`.
    var type: String
    /// The domain, normally `local`.
    var domain: String

    var description: String { "'\(name)' (interface \(interfaceIndex), \(isIPv6 ? "IPv6" : "IPv4"))" }
}

/// What resolving a ``ServiceKey`` gave: SRV, TXT and one address, copied out of Avahi's memory.
struct ResolvedService: Sendable {
    var key: ServiceKey
    /// The SRV target, e.g. `castlab.local`.
    var hostName: String
    /// The address of ``hostName`` in the key's protocol.
    var address: DeviceAddress?
    var port: Int
    /// The TXT record's strings in wire order (avahi-client hands a resolver's list over first-first).
    var txt: [[UInt8]]
}

/// Everything the daemon tells us, as plain values. Produced on Avahi's helper thread.
enum AvahiEvent: Sendable {
    /// The client lost the daemon (or the bus); nothing works on this connection any more.
    case clientFailed(CastDiscoveryError)
    /// A browse found a service instance.
    case serviceFound(ServiceKey)
    /// A browse saw a service instance go (goodbye packet or TTL expiry).
    case serviceRemoved(ServiceKey)
    /// The browse has reported what the cache and the first queries gave.
    case allForNow
    /// The browse failed.
    case browseFailed(CastDiscoveryError)
    /// A resolver found (or, after a change, found again) a service's records.
    case resolved(ResolvedService)
    /// A resolver gave up (timeout, the records went away).
    case resolveFailed(ServiceKey, String)
    /// Entry group `id` is on the network.
    case groupEstablished(Int)
    /// Entry group `id` lost a name conflict during probing; its records were withdrawn.
    case groupCollision(Int)
    /// Entry group `id` failed; its records were withdrawn.
    case groupFailed(Int, String)
}

/// Identifies a callback's source; passed to Avahi unretained as userdata and kept alive by the connection's state
/// until the object it belongs to has been freed.
private final class CallbackContext: Sendable {
    enum Role: Sendable {
        case client, browser
        case resolver(ServiceKey)
        case group(Int)
    }

    let role: Role
    let handler: @Sendable (AvahiEvent) -> Void

    init(_ role: Role, handler: @escaping @Sendable (AvahiEvent) -> Void) {
        self.role = role
        self.handler = handler
    }

    var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ userdata: UnsafeMutableRawPointer?) -> CallbackContext? {
        guard let userdata else { return nil }
        return Unmanaged<CallbackContext>.fromOpaque(userdata).takeUnretainedValue()
    }
}

/// A C handle; only touched under the connection's lock plus the poll lock, or after the poll thread has stopped.
private struct Handle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// An avahi-client connection on its own threaded poll: browsing, resolving and entry groups.
///
/// Created by ``DiscoveryManager`` and ``DevicePublisher``; never part of the public API.
final class AvahiConnection: Sendable {
    private struct State: Sendable {
        var poll: Handle?
        var client: Handle?
        var clientContext: CallbackContext
        var browsers: [(Handle, CallbackContext)] = []
        var resolvers: [ServiceKey: (Handle, CallbackContext)] = [:]
        var groups: [Int: (Handle, CallbackContext)] = [:]
    }

    private let state: NIOLockedValueBox<State>
    private let handler: @Sendable (AvahiEvent) -> Void

    /// Connects to avahi-daemon over the D-Bus system bus (`DBUS_SYSTEM_BUS_ADDRESS`, read once per process by
    /// libdbus) and starts the helper thread.
    ///
    /// Fails at once, without waiting for the daemon to appear, when the bus or the daemon is missing.
    ///
    /// - Parameter handler: Receives every event, on Avahi's helper thread; it must only copy and enqueue.
    /// - Throws: ``CastDiscoveryError/Code/daemonUnavailable``.
    init(handler: @escaping @Sendable (AvahiEvent) -> Void) throws(CastDiscoveryError) {
        guard let poll = avahi_threaded_poll_new() else {
            throw CastDiscoveryError(.daemonUnavailable, "cannot create Avahi's poll (out of memory)")
        }
        let clientContext = CallbackContext(.client, handler: handler)
        var error: Int32 = 0
        guard
            let client = avahi_client_new(
                avahi_threaded_poll_get(poll),
                AvahiClientFlags(0),
                clientCallback,
                clientContext.userdata,
                &error
            )
        else {
            avahi_threaded_poll_free(poll)
            throw Self.unavailable(code: error)
        }
        guard avahi_threaded_poll_start(poll) >= 0 else {
            avahi_client_free(client)
            avahi_threaded_poll_free(poll)
            throw CastDiscoveryError(.daemonUnavailable, "cannot start Avahi's helper thread")
        }
        self.handler = handler
        self.state = NIOLockedValueBox(
            State(poll: Handle(pointer: poll), client: Handle(pointer: client), clientContext: clientContext)
        )
    }

    deinit { close() }

    /// Stops the helper thread and frees every Avahi object (which withdraws published entry groups). Idempotent.
    ///
    /// Must not run on Avahi's helper thread; it never does, because callbacks hold no reference to the connection.
    func close() {
        let taken = state.withLockedValue { state -> (Handle, Handle, [CallbackContext])? in
            guard let poll = state.poll, let client = state.client else { return nil }
            let contexts =
                [state.clientContext] + state.browsers.map(\.1) + state.resolvers.values.map(\.1)
                + state.groups.values.map(\.1)
            state.poll = nil
            state.client = nil
            state.browsers = []
            state.resolvers = [:]
            state.groups = [:]
            return (poll, client, contexts)
        }
        guard let (poll, client, contexts) = taken else { return }
        avahi_threaded_poll_stop(poll.pointer)  // joins the helper thread: no callback runs after this
        avahi_client_free(client.pointer)  // frees browsers, resolvers and entry groups too
        avahi_threaded_poll_free(poll.pointer)
        withExtendedLifetime(contexts) {}
    }

    /// Runs `body` with the client, holding both our lock and the poll lock.
    private func withAvahi<Result>(
        _ body: (inout State, OpaquePointer) throws(CastDiscoveryError) -> Result
    ) throws(CastDiscoveryError) -> Result {
        // The lock's closure rethrows untyped errors: carry the typed one out in a Swift.Result.
        let outcome = state.withLockedValue { state -> Swift.Result<Result, CastDiscoveryError> in
            guard let poll = state.poll, let client = state.client else {
                return .failure(CastDiscoveryError(.notRunning, "the Avahi connection is closed"))
            }
            avahi_threaded_poll_lock(poll.pointer)
            defer { avahi_threaded_poll_unlock(poll.pointer) }
            do throws(CastDiscoveryError) { return .success(try body(&state, client.pointer)) } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    // MARK: - Browsing

    /// Browses `serviceType` on every interface and protocol the daemon uses.
    func browse(serviceType: String) throws(CastDiscoveryError) {
        try withAvahi { state, client throws(CastDiscoveryError) in
            let context = CallbackContext(.browser, handler: handler)
            guard
                let browser = avahi_service_browser_new(
                    client,
                    CAvahi_IF_UNSPEC,
                    CAvahi_PROTO_UNSPEC,
                    serviceType,
                    nil,
                    AvahiLookupFlags(0),
                    browseCallback,
                    context.userdata
                )
            else {
                throw CastDiscoveryError(
                    .browseFailed,
                    "avahi-daemon refused to browse \(serviceType): \(Self.describe(avahi_client_errno(client)))"
                )
            }
            state.browsers.append((Handle(pointer: browser), context))
        }
    }

    /// Starts resolving `key` (SRV, TXT and an address in the key's protocol) unless a resolver already runs.
    ///
    /// The resolver stays open and reports again when the records change (a new TXT record, port or address),
    /// until ``stopResolving(_:)``.
    func resolve(_ key: ServiceKey) {
        try? withAvahi { state, client in
            guard state.resolvers[key] == nil else { return }
            let context = CallbackContext(.resolver(key), handler: handler)
            let proto = key.isIPv6 ? CAvahi_PROTO_INET6 : CAvahi_PROTO_INET
            guard
                let resolver = avahi_service_resolver_new(
                    client,
                    key.interfaceIndex,
                    proto,
                    key.name,
                    key.type,
                    key.domain,
                    proto,
                    AvahiLookupFlags(0),
                    resolveCallback,
                    context.userdata
                )
            else {
                handler(.resolveFailed(key, Self.describe(avahi_client_errno(client))))
                return
            }
            state.resolvers[key] = (Handle(pointer: resolver), context)
        }
    }

    /// Frees the resolver of `key`, if any.
    func stopResolving(_ key: ServiceKey) {
        try? withAvahi { state, _ in
            guard let (resolver, _) = state.resolvers.removeValue(forKey: key) else { return }
            avahi_service_resolver_free(resolver.pointer)
        }
    }

    // MARK: - Publishing

    /// Advertises one service in entry group `id` (created on first use, reset before re-use) and commits it.
    ///
    /// - Returns: `nil` when committed (``AvahiEvent/groupEstablished(_:)`` follows once probing is done), or the
    ///   Avahi error code, `CAvahi_ERR_COLLISION` meaning the name is taken by another local advertisement.
    func publish(group id: Int, name: String, type: String, port: Int, txt: [[UInt8]]) throws(CastDiscoveryError)
        -> PublishResult
    {
        try withAvahi { state, client throws(CastDiscoveryError) -> PublishResult in
            let group: OpaquePointer
            if let (existing, _) = state.groups[id] {
                group = existing.pointer
                avahi_entry_group_reset(group)
            } else {
                let context = CallbackContext(.group(id), handler: handler)
                guard let created = avahi_entry_group_new(client, groupCallback, context.userdata) else {
                    throw CastDiscoveryError(
                        .publishFailed,
                        "avahi-daemon refused an entry group: \(Self.describe(avahi_client_errno(client)))"
                    )
                }
                state.groups[id] = (Handle(pointer: created), context)
                group = created
            }
            let list = Self.stringList(txt)
            defer { avahi_string_list_free(list) }
            var result = avahi_entry_group_add_service_strlst(
                group,
                CAvahi_IF_UNSPEC,
                CAvahi_PROTO_UNSPEC,
                AVAHI_PUBLISH_NO_COOKIE,
                name,
                type,
                nil,
                nil,
                UInt16(port),
                list
            )
            if result >= 0 { result = avahi_entry_group_commit(group) }
            if result >= 0 { return .committed }
            avahi_entry_group_reset(group)
            return result == CAvahi_ERR_COLLISION ? .collision : .failed(Self.describe(result))
        }
    }

    /// What ``publish(group:name:type:port:txt:)`` did.
    enum PublishResult: Sendable, Equatable {
        case committed
        case collision
        case failed(String)
    }

    /// Replaces the TXT record of a committed service in place (no re-probing; the name and port stay).
    func updateTXT(group id: Int, name: String, type: String, txt: [[UInt8]]) throws(CastDiscoveryError) {
        try withAvahi { state, client throws(CastDiscoveryError) in
            guard let (group, _) = state.groups[id] else {
                throw CastDiscoveryError(.notRunning, "nothing is published for this advertisement")
            }
            let list = Self.stringList(txt)
            defer { avahi_string_list_free(list) }
            let result = avahi_entry_group_update_service_txt_strlst(
                group.pointer,
                CAvahi_IF_UNSPEC,
                CAvahi_PROTO_UNSPEC,
                AVAHI_PUBLISH_NO_COOKIE,
                name,
                type,
                nil,
                list
            )
            guard result >= 0 else {
                throw CastDiscoveryError(
                    .publishFailed,
                    "cannot update the TXT record of '\(name)': \(Self.describe(result))"
                )
            }
        }
    }

    /// Withdraws and frees entry group `id` (goodbye packets go out at once).
    func removeGroup(_ id: Int) {
        try? withAvahi { state, _ in
            guard let (group, _) = state.groups.removeValue(forKey: id) else { return }
            avahi_entry_group_free(group.pointer)
        }
    }

    // MARK: - Helpers

    /// Avahi's next name after a collision: "Name" → "Name #2" → "Name #3".
    static func alternativeServiceName(_ name: String) -> String {
        guard let alternative = avahi_alternative_service_name(name) else { return name + " #2" }
        defer { avahi_free(alternative) }
        return String(cString: alternative)
    }

    /// Avahi's text for an error code.
    static func describe(_ code: Int32) -> String {
        guard let text = avahi_strerror(code) else { return "Avahi error \(code)" }
        return String(cString: text)
    }

    /// The bus the client talks to, for messages.
    static var systemBusAddress: String {
        if let value = getenv("DBUS_SYSTEM_BUS_ADDRESS"), value.pointee != 0 { return String(cString: value) }
        return "unix:path=/run/dbus/system_bus_socket (the default)"
    }

    private static func unavailable(code: Int32) -> CastDiscoveryError {
        CastDiscoveryError(
            .daemonUnavailable,
            "avahi-daemon is not reachable (\(describe(code)); D-Bus system bus \(systemBusAddress)). "
                + "Start it (`systemctl start avahi-daemon`, or `avahi-daemon -D` with a running D-Bus system bus), "
                + "or use static hosts instead of mDNS (static devices in the discovery options, `--host`/`--port`)."
        )
    }

    /// An avahi string list that goes on the wire in the order given: avahi-client sends the list head last, so
    /// prepending in order is right (avahi-publish builds its lists the same way).
    private static func stringList(_ strings: [[UInt8]]) -> UnsafeMutablePointer<AvahiStringList>? {
        var list: UnsafeMutablePointer<AvahiStringList>? = nil
        for string in strings {
            list = string.withUnsafeBufferPointer { buffer in
                avahi_string_list_add_arbitrary(list, buffer.baseAddress ?? UnsafePointer(bitPattern: 1), buffer.count)
            }
        }
        return list
    }
}

// MARK: - Callbacks (Avahi's helper thread, poll lock held: copy, hand on, return)

private func string(_ pointer: UnsafePointer<CChar>?) -> String {
    pointer.map { String(cString: $0) } ?? ""
}

private func clientCallback(_ client: OpaquePointer?, _ state: AvahiClientState, _ userdata: UnsafeMutableRawPointer?) {
    guard let context = CallbackContext.from(userdata), let client, state == AVAHI_CLIENT_FAILURE else { return }
    let code = avahi_client_errno(client)
    context.handler(
        .clientFailed(
            CastDiscoveryError(
                .daemonDisconnected,
                "lost avahi-daemon (\(AvahiConnection.describe(code))); restart it, or use static hosts"
            )
        )
    )
}

private func browseCallback(
    _ browser: OpaquePointer?,
    _ interface: AvahiIfIndex,
    _ proto: AvahiProtocol,
    _ event: AvahiBrowserEvent,
    _ name: UnsafePointer<CChar>?,
    _ type: UnsafePointer<CChar>?,
    _ domain: UnsafePointer<CChar>?,
    _ flags: AvahiLookupResultFlags,
    _ userdata: UnsafeMutableRawPointer?
) {
    guard let context = CallbackContext.from(userdata) else { return }
    func key() -> ServiceKey {
        ServiceKey(
            interfaceIndex: interface,
            isIPv6: proto == CAvahi_PROTO_INET6,
            name: string(name),
            type: string(type),
            domain: string(domain)
        )
    }
    switch event {
    case AVAHI_BROWSER_NEW:
        context.handler(.serviceFound(key()))
    case AVAHI_BROWSER_REMOVE:
        context.handler(.serviceRemoved(key()))
    case AVAHI_BROWSER_ALL_FOR_NOW:
        context.handler(.allForNow)
    case AVAHI_BROWSER_FAILURE:
        let code = browser.map { avahi_client_errno(avahi_service_browser_get_client($0)) } ?? 0
        context.handler(
            .browseFailed(CastDiscoveryError(.browseFailed, "browsing failed: \(AvahiConnection.describe(code))"))
        )
    default:
        break
    }
}

private func resolveCallback(
    _ resolver: OpaquePointer?,
    _ interface: AvahiIfIndex,
    _ proto: AvahiProtocol,
    _ event: AvahiResolverEvent,
    _ name: UnsafePointer<CChar>?,
    _ type: UnsafePointer<CChar>?,
    _ domain: UnsafePointer<CChar>?,
    _ hostName: UnsafePointer<CChar>?,
    _ address: UnsafePointer<AvahiAddress>?,
    _ port: UInt16,
    _ txt: UnsafeMutablePointer<AvahiStringList>?,
    _ flags: AvahiLookupResultFlags,
    _ userdata: UnsafeMutableRawPointer?
) {
    guard let context = CallbackContext.from(userdata), case .resolver(let key) = context.role else { return }
    guard event == AVAHI_RESOLVER_FOUND else {
        let code = resolver.map { avahi_client_errno(avahi_service_resolver_get_client($0)) } ?? 0
        context.handler(.resolveFailed(key, AvahiConnection.describe(code)))
        return
    }
    var resolvedAddress: DeviceAddress?
    if let address {
        var buffer = [CChar](repeating: 0, count: CAvahi_ADDRESS_STR_MAX)
        if avahi_address_snprint(&buffer, buffer.count, address) != nil {
            let ip = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            var interfaceName: String?
            // The scope of a link-local address, named in this process's network namespace (the daemon's
            // normally; in the lab the sender runs inside the daemon's namespace).
            if address.pointee.proto == CAvahi_PROTO_INET6, ip.lowercased().hasPrefix("fe80") {
                var nameBuffer = [CChar](repeating: 0, count: CAvahi_IF_NAMESIZE)
                if if_indextoname(UInt32(bitPattern: interface), &nameBuffer) != nil {
                    interfaceName = nameBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                } else {
                    interfaceName = String(interface)
                }
            }
            resolvedAddress = DeviceAddress(ip, interfaceName: interfaceName)
        }
    }
    var strings: [[UInt8]] = []
    var node = txt
    while let current = node {
        let size = avahi_string_list_get_size(current)
        let text = avahi_string_list_get_text(current)
        strings.append(text.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        node = avahi_string_list_get_next(current)
    }
    context.handler(
        .resolved(
            ResolvedService(
                key: key,
                hostName: string(hostName),
                address: resolvedAddress,
                port: Int(port),
                txt: strings
            )
        )
    )
}

private func groupCallback(_ group: OpaquePointer?, _ state: AvahiEntryGroupState, _ userdata: UnsafeMutableRawPointer?)
{
    guard let context = CallbackContext.from(userdata), case .group(let id) = context.role else { return }
    switch state {
    case AVAHI_ENTRY_GROUP_ESTABLISHED:
        context.handler(.groupEstablished(id))
    case AVAHI_ENTRY_GROUP_COLLISION:
        context.handler(.groupCollision(id))
    case AVAHI_ENTRY_GROUP_FAILURE:
        let code = group.map { avahi_client_errno(avahi_entry_group_get_client($0)) } ?? 0
        context.handler(.groupFailed(id, AvahiConnection.describe(code)))
    default:
        break
    }
}
