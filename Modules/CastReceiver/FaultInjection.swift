/// Ways an emulated device misbehaves on purpose, so senders can be tested against real-device quirks and
/// failures. Every field defaults to "behave well".
public struct FaultInjection: Sendable, Hashable {
    /// Close every new connection before TLS starts, like a device whose Cast service is down.
    public var refusesConnections = false
    /// Drop the connection without a TLS close_notify after this many inbound messages on it.
    public var closesAfterMessages: Int?
    /// Stop answering PINGs after answering this many on a connection (a stuck device).
    public var stopsAnsweringPingsAfter: Int?
    /// Delay every reply (and broadcast) by this many seconds on the emulator's clock.
    public var replyDelay: Double?
    /// Answer LAUNCH and STOP only with a `requestId` 0 broadcast, never a reply carrying the request's id.
    public var launchRepliesOnlyByBroadcast = false
    /// Answer every request whose reply is a status (RECEIVER_STATUS, MEDIA_STATUS) only by broadcasting it with
    /// `requestId` 0, to the requester as to everyone else: no reply carries the request's id (errors still do).
    public var statusOnlyByBroadcast = false
    /// List a launched app without its transport id and namespaces until this many seconds (on the emulator's
    /// clock) after its launch, then broadcast its whole status: senders must wait for a status they can use.
    public var listsLaunchedAppWholeAfter: Double?
    /// List this app before the running one in every RECEIVER_STATUS, with a session of its own that STOP does not
    /// know (`INVALID_SESSION_ID`), as devices list a speaker group member's part in its group's playback
    /// (``EmulatedApp/multizoneFollower``) or their idle screen beside the app a sender launched: senders must pick
    /// the app by its id or session id, not take the first listed.
    public var listsAppBeforeRunningApp: EmulatedApp?
    /// Answer SET_VOLUME with INVALID_REQUEST `INVALID_COMMAND`, changing nothing, as a device that will not set
    /// its volume does.
    public var refusesVolumeChanges = false
    /// Address replies to `*` instead of the requesting sender.
    public var addressesRepliesToBroadcast = false
    /// Give launched apps a `web-N` transport id different from their session id (older firmware).
    public var transportIDDiffersFromSessionID = false
    /// Split every outgoing frame into TLS records of at most this many bytes.
    public var writesInChunksOf: Int?
    /// Send those pieces this far apart (with ``writesInChunksOf`` of 1 and 1 s: a device answering a byte per
    /// second). `nil` sends them at once.
    public var chunkInterval: Duration?
    /// While media is loaded, broadcast this many MEDIA_STATUS messages per second to every sender (a flooding
    /// device: senders must keep memory bounded and the latest status).
    public var statusFloodPerSecond: Int?
    /// Leave `GET_DEVICE_INFO` unanswered, as receivers that do not know it do: senders must name the device
    /// another way (`eureka_info`).
    public var ignoresDeviceInfo = false
    /// Send a malformed frame after this many inbound messages on a connection.
    public var sendsMalformedFrameAfterMessages: Int?

    /// Drop the connection (no close_notify) when a message of this `type` arrives (`LAUNCH`, `LOAD`, …),
    /// without acting on it: the request never took effect.
    public var dropsOn: String?
    /// Act on the next message of this `type`, then drop the connection without answering it: the reply is lost
    /// in flight, as when Wi-Fi drops, and the sender cannot tell whether the request took effect. Other senders
    /// still get the broadcasts it caused.
    public var losesReplyTo: String?
    /// How many connections the drop faults (``closesAfterMessages``, ``dropsOn``, ``losesReplyTo``) end before
    /// the device behaves again, as after a brief outage; `nil` ends every connection that meets them.
    public var dropLimit: Int?

    /// A well-behaved device.
    public init() {}
}
