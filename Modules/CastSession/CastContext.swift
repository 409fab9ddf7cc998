import CastLogging
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The entry point (GCKCastContext): options, the session manager and logging, for one app.
///
/// Use the process-wide ``shared`` instance as apps using GCK do, or create explicit instances (tests use
/// several at once).
public final class CastContext: Sendable {
    private static let sharedInstance = NIOLockedValueBox<CastContext?>(nil)

    /// The process-wide instance, once ``setSharedInstance(options:logger:)`` was called.
    public static var shared: CastContext? { sharedInstance.withLockedValue { $0 } }

    /// Creates the process-wide instance (again, replacing any earlier one) and returns it.
    @discardableResult
    public static func setSharedInstance(options: CastOptions, logger: Logger = .castDisabled) -> CastContext {
        let context = CastContext(options: options, logger: logger)
        sharedInstance.withLockedValue { $0 = context }
        return context
    }

    /// The options.
    public let options: CastOptions
    /// Starts, ends and resumes sessions.
    public let sessionManager: SessionManager
    /// The context's background logger.
    public let logger: Logger

    /// Creates a context.
    ///
    /// - Parameters:
    ///   - options: What to cast and how.
    ///   - eventLoopGroup: Where network I/O runs.
    ///   - sleep: How the session layer waits (reconnect backoff); tests inject one that does not really sleep.
    ///   - logger: Silent by default.
    public init(
        options: CastOptions,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        logger: Logger = .castDisabled
    ) {
        self.options = options
        self.logger = logger
        self.sessionManager = SessionManager(
            options: options,
            eventLoopGroup: eventLoopGroup,
            sleep: sleep,
            logger: logger
        )
    }
}
