import CastTransport
import NIOCore
import NIOHTTP1
import NIOPosix

/// What a device says about itself on its HTTP API (`GET /setup/eureka_info` on port 8008, cast-protocol.md §11.4):
/// its name, id and model for a sender that knows only its address and whose `GET_DEVICE_INFO` went unanswered,
/// and the speaker groups it belongs to (`multizone.groups`), which a scan reports as group devices.
public struct EurekaInfo: Sendable, Hashable {
    /// The friendly name (`name`).
    public var friendlyName: String?
    /// The device id: `ssdp_udn` without hyphens, lowercased, the form of the mDNS `id`.
    public var deviceID: String?
    /// The model (`device_info.model_name`).
    public var modelName: String?
    /// The manufacturer (`device_info.manufacturer`).
    public var manufacturer: String?
    /// Whether the device has a display (`device_info.capabilities.display_supported`).
    public var displaySupported: Bool?
    /// Whether the device can join speaker groups (`device_info.capabilities.multizone_supported`).
    public var multizoneSupported: Bool?
    /// The speaker groups the device belongs to (`multizone.groups` and `multizone.dynamic_groups`).
    public var groups: [Group]

    /// One speaker group a device belongs to.
    public struct Group: Sendable, Hashable {
        /// The group's name.
        public var name: String
        /// The group's id: its `uuid` without hyphens, lowercased (its mDNS `id`).
        public var id: String
        /// The leader's address, from `elected_leader` `ip:port`; `nil` when it is `self` (the answering device).
        /// The port in `elected_leader` is not the Cast port, so it is not kept.
        public var leaderHost: String?
        /// The group's Cast port on the leader (`cast_port`); `nil` when not given.
        public var castPort: Int?

        /// Creates a group entry.
        public init(name: String, id: String, leaderHost: String? = nil, castPort: Int? = nil) {
            self.name = name
            self.id = id
            self.leaderHost = leaderHost
            self.castPort = castPort
        }
    }

    /// Creates a description.
    public init(
        friendlyName: String? = nil,
        deviceID: String? = nil,
        modelName: String? = nil,
        manufacturer: String? = nil,
        displaySupported: Bool? = nil,
        multizoneSupported: Bool? = nil,
        groups: [Group] = []
    ) {
        self.friendlyName = friendlyName
        self.deviceID = deviceID
        self.modelName = modelName
        self.manufacturer = manufacturer
        self.displaySupported = displaySupported
        self.multizoneSupported = multizoneSupported
        self.groups = groups
    }

    /// Reads an `eureka_info` document liberally: any field may be missing or of another type, and is then left
    /// out; a group without a name or uuid is skipped.
    public init(json: JSONValue) {
        let info = json["device_info"]
        func text(_ value: JSONValue?) -> String? {
            guard let value = value?.stringValue, !value.isEmpty else { return nil }
            return value
        }
        friendlyName = text(json["name"])?.withoutControlCharacters
        deviceID = (text(json["ssdp_udn"]) ?? text(info?["ssdp_udn"])).map(CastDeviceID.normalized)
        modelName = text(info?["model_name"])
        manufacturer = text(info?["manufacturer"])
        displaySupported = info?["capabilities"]?["display_supported"]?.boolValue
        multizoneSupported = info?["capabilities"]?["multizone_supported"]?.boolValue
        let entries =
            (json["multizone"]?["groups"]?.arrayValue ?? [])
            + (json["multizone"]?["dynamic_groups"]?.arrayValue ?? [])
        var groups: [Group] = []
        for entry in entries {
            guard let name = text(entry["name"]), let uuid = text(entry["uuid"]) else { continue }
            let id = CastDeviceID.normalized(uuid)
            guard !groups.contains(where: { $0.id == id }) else { continue }
            var leaderHost: String?
            if let leader = text(entry["elected_leader"]), leader != "self" {
                // `ip:port`, `[v6]:port` or a bare address.
                if leader.hasPrefix("["), let close = leader.firstIndex(of: "]") {
                    leaderHost = String(leader[leader.index(after: leader.startIndex)..<close])
                } else if leader.filter({ $0 == ":" }).count == 1, let colon = leader.firstIndex(of: ":") {
                    leaderHost = String(leader[..<colon])
                } else {
                    leaderHost = leader
                }
            }
            let port = entry["cast_port"]?.intValue.flatMap { (1...65535).contains($0) ? $0 : nil }
            groups.append(Group(name: name, id: id, leaderHost: leaderHost, castPort: port))
        }
        self.groups = groups
    }

    /// What this adds to ``DeviceInfo``, for ``CastDevice/apply(_:)``: name, id, model, and capabilities
    /// guessed from `display_supported` (video and audio out, or audio out alone).
    public var deviceInfo: DeviceInfo {
        DeviceInfo(
            deviceID: deviceID,
            friendlyName: friendlyName,
            modelName: modelName,
            capabilities: displaySupported.map { $0 ? [.videoOut, .audioOut] : [.audioOut] }
        )
    }

    /// The groups as devices to list, for groups whose Cast port is known: at the leader's address (the answering
    /// device's `host` when it leads), model "Google Cast Group", the group capability bit.
    public func groupDevices(reportedBy host: String) -> [CastDevice] {
        groups.compactMap { group in
            guard let port = group.castPort else { return nil }
            return CastDevice(
                id: group.id,
                friendlyName: group.name,
                modelName: "Google Cast Group",
                capabilities: [.multizoneGroup, .audioOut],
                addresses: [DeviceAddress(group.leaderHost ?? host)],
                port: port,
                sources: .scan
            )
        }
    }

    /// The `params` asked for: what names, ids and groups need.
    public static let path = "/setup/eureka_info?params=name,device_info,multizone"

    /// The HTTP port of a device whose Cast port is `castPort`: 8008 beside the standard 8009, else none (a
    /// group's or an emulator's port says nothing about where its HTTP API is).
    public static func port(forCastPort castPort: Int) -> Int? { castPort == 8009 ? 8008 : nil }

    /// Asks `host:port` for its `eureka_info`.
    ///
    /// - Throws: ``CastDiscoveryError/Code/deviceUnreachable`` when the device cannot be reached within
    ///   `timeout`, answers other than 200, or sends something that is not a JSON object.
    public static func fetch(
        host: String,
        port: Int = 8008,
        timeout: Duration = .seconds(2),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws(CastDiscoveryError) -> EurekaInfo {
        let endpoint = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let response: HTTPGet.Response
        do {
            response = try await HTTPGet.fetch(
                host: host,
                port: port,
                path: path,
                timeout: timeout,
                eventLoopGroup: eventLoopGroup
            )
        } catch {
            throw CastDiscoveryError(.deviceUnreachable, "cannot read eureka_info from \(endpoint)", cause: error)
        }
        guard response.status == 200 else {
            throw CastDiscoveryError(.deviceUnreachable, "\(endpoint) answered eureka_info with \(response.status)")
        }
        guard let json = try? JSONValue(parsing: String(decoding: response.body, as: UTF8.self)),
            json.objectValue != nil
        else {
            throw CastDiscoveryError(.deviceUnreachable, "\(endpoint) sent an eureka_info that is not a JSON object")
        }
        return EurekaInfo(json: json)
    }
}

/// One HTTP/1.1 GET over a fresh connection, for a device's small HTTP API; the body is capped.
enum HTTPGet {
    struct Response: Sendable {
        var status: Int
        var body: [UInt8]
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The largest body read; `eureka_info` is a few kilobytes.
    static let maximumBodySize = 256 * 1024

    static func fetch(
        host: String,
        port: Int,
        path: String,
        timeout: Duration,
        eventLoopGroup: any EventLoopGroup
    ) async throws -> Response {
        let eventLoop = eventLoopGroup.next()
        let promise = eventLoop.makePromise(of: Response.self)
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: eventLoop)
                .connectTimeout(TimeAmount(timeout))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(Collector(promise: promise))
                    }
                }
                .connect(host: host, port: port).get()
        } catch {
            promise.fail(error)  // never left pending
            throw error
        }
        let deadline = eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            promise.fail(Failure(description: "no complete answer within \(timeout)"))
        }
        promise.futureResult.whenComplete { _ in
            deadline.cancel()
            channel.close(promise: nil)
        }
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
        head.headers.add(name: "Host", value: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
        head.headers.add(name: "Accept", value: "application/json")
        head.headers.add(name: "Connection", value: "close")
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        return try await promise.futureResult.get()
    }

    private final class Collector: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        let promise: EventLoopPromise<Response>
        var status = 0
        var body: [UInt8] = []

        init(promise: EventLoopPromise<Response>) { self.promise = promise }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                status = Int(head.status.code)
            case .body(let buffer):
                guard body.count + buffer.readableBytes <= HTTPGet.maximumBodySize else {
                    promise.fail(Failure(description: "the answer is larger than \(HTTPGet.maximumBodySize) bytes"))
                    return
                }
                body += buffer.readableBytesView
            case .end:
                promise.succeed(Response(status: status, body: body))
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.fail(error)
        }

        func channelInactive(context: ChannelHandlerContext) {
            promise.fail(Failure(description: "the connection closed before the answer was complete"))
        }
    }
}
