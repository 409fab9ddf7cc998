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

/// Runs `body` with a new context and leaves its session when `body` returns, throws or is cancelled: the
/// structured way to use a context in a program or a test, as `withCastReceiverEmulator` is for the emulator.
///
/// Leaving ends the session's connection and every task it started, but not the receiver app: media keeps
/// playing, and the saved session (with ``CastOptions/stateDirectory``) stays for a later process to resume. To
/// stop the app, end the session inside `body` (`endSession(stopCasting: true)`).
///
/// - Parameters:
///   - options: What to cast and how.
///   - eventLoopGroup: Where network I/O runs.
///   - logger: Silent by default.
///   - isolation: Where `body` runs: the caller's actor, by default.
///   - body: Uses the context.
/// - Returns: What `body` returns.
public func withCastContext<Result>(
    options: CastOptions,
    eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
    logger: Logger = .castDisabled,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (CastContext) async throws -> sending Result
) async throws -> sending Result {
    let context = CastContext(options: options, eventLoopGroup: eventLoopGroup, logger: logger)
    do {
        let result = try await body(context)
        await context.sessionManager.endSession(stopCasting: false)
        return result
    } catch {
        await context.sessionManager.endSession(stopCasting: false)
        throw error
    }
}
