import CastLogging
import Logging
import NIOCore

/// The handlers every Cast connection runs, client or server side, bottom to top:
/// back-pressure → TLS → framing → heartbeat → router.
///
/// Back-pressure first: while the socket cannot take more of what we write (a peer that floods requests and
/// does not read the replies), the connection stops reading, so nothing is buffered without bound.
struct CastPipeline {
    var tlsContext: TLSContext
    var handshakeTimeout: TimeAmount
    var heartbeat: HeartbeatConfiguration
    var localID: String
    var peerID: String
    var logger: Logger

    func install(
        on channel: any Channel,
        handshakePromise: EventLoopPromise<Void>?,
        router: CastMessageRouter
    ) throws {
        let operations = channel.pipeline.syncOperations
        try operations.addHandler(BackPressureHandler())
        try operations.addHandler(
            TLSHandler(context: tlsContext, handshakeTimeout: handshakeTimeout, handshakePromise: handshakePromise)
        )
        try operations.addHandler(CastFrameHandler())
        try operations.addHandler(
            HeartbeatHandler(
                configuration: heartbeat,
                localID: localID,
                peerID: peerID,
                startsAfterHandshake: true,
                logger: logger.withCategory(CastLogCategory.transportHeartbeat)
            )
        )
        try operations.addHandler(router)
    }
}
