import Hummingbird
import NIOCore

/// The request context of castd's router: Hummingbird's basics plus the client's address, which the rate limit
/// is keyed by.
struct ServiceRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The client as the rate limit knows it: its IP address (ports change per connection).
    var clientKey: String { remoteAddress?.ipAddress ?? "unknown" }
}
