import CastDiscovery
import CastSession
import NIOConcurrencyHelpers
import NIOCore

/// One change the service saw, numbered: the unit of `GET /v1/events` and of MQTT state updates.
public struct ServiceEvent: Sendable {
    /// What changed.
    public enum Change: Sendable {
        case deviceAdded(CastDevice)
        case deviceUpdated(CastDevice)
        case deviceRemoved(CastDevice)
        /// A followed device's receiver or media status changed.
        case status(DeviceActivity)
        /// One of castd's sessions with a device's app started, ended, was suspended or resumed, or failed.
        case session(CastDevice, SessionChange)
    }

    /// Increases by one per event, from 1; a subscriber passes the last one it saw to catch up.
    public var id: Int {
        didSet { serverSentText = OnceText() }
    }
    /// What changed.
    public var change: Change {
        didSet { serverSentText = OnceText() }
    }
    /// The event as the event stream sends it, encoded by the first subscriber that sends it and shared by all.
    var serverSentText = OnceText()

    /// Creates an event.
    public init(id: Int, change: Change) {
        self.id = id
        self.change = change
    }

    /// The event's name on the stream (`device-added`, `device-updated`, `device-removed`, `status`).
    public var name: String {
        switch change {
        case .deviceAdded: "device-added"
        case .deviceUpdated: "device-updated"
        case .deviceRemoved: "device-removed"
        case .status: "status"
        case .session: "session"
        }
    }

    /// The device the event is about.
    public var device: CastDevice {
        switch change {
        case .deviceAdded(let device), .deviceUpdated(let device), .deviceRemoved(let device): device
        case .status(let activity): activity.device
        case .session(let device, _): device
        }
    }
}

/// A text made once, by whoever needs it first, and shared by the copies of the value that holds it.
final class OnceText: Sendable {
    private let text = NIOLockedValueBox<String?>(nil)

    func value(_ make: () -> String) -> String {
        text.withLockedValue { text in
            if let text { return text }
            let made = make()
            text = made
            return made
        }
    }
}

/// What happened to one of castd's sessions (GCKSessionManagerListener's events, without the "will" ones).
public struct SessionChange: Sendable {
    /// The kinds of change.
    public enum Kind: String, Sendable, Hashable {
        case started, startFailed, ended, suspended, resumed, resumeFailed
    }

    /// What happened.
    public var kind: Kind
    /// The session's id, when it had one.
    public var sessionID: String?
    /// The app the session is with, when known.
    public var applicationID: String?
    /// Why it failed, ended with an error, or was suspended.
    public var reason: String?
    /// The session's device as the session knows it, when the event names one.
    var device: CastDevice?

    /// The change a session manager's event stands for; `nil` for the announcements before a change.
    init?(_ event: SessionEvent) {
        switch event {
        case .willStart, .willEnd, .willResume, .didAuthenticateDevice:
            return nil
        case .didStart(let session):
            self.init(kind: .started, session: session)
        case .didFailToStart(let device, let error):
            self.init(kind: .startFailed, reason: error.code.description)
            self.device = device
        case .didEnd(let session, let error):
            self.init(kind: .ended, session: session, reason: error?.code.description)
        case .didSuspend(let session, let reason):
            self.init(
                kind: .suspended,
                session: session,
                reason: reason == .heartbeatTimeout ? "heartbeatTimeout" : "networkLost"
            )
        case .didResume(let session, _):
            self.init(kind: .resumed, session: session)
        case .didFailToResume(let session, let error):
            self.init(kind: .resumeFailed, reason: error.code.description)
            if let session { self.init(kind: .resumeFailed, session: session, reason: error.code.description) }
        }
    }

    private init(kind: Kind, session: CastSession? = nil, reason: String? = nil) {
        self.kind = kind
        self.sessionID = session?.sessionID
        self.applicationID = session?.application.applicationID
        self.reason = reason
        self.device = session?.device
    }
}

/// The numbered events of the last `window` changes, and their subscribers.
///
/// A subscriber is ended instead of buffered without bound once it falls `subscriberBuffer + window` events behind
/// (a new subscriber may start with the whole window to replay); it reconnects with its last id and catches up
/// from the window.
final class EventLog: Sendable {
    private struct Subscriber {
        var continuation: AsyncStream<ServiceEvent>.Continuation
    }

    private struct State {
        var nextID = 1
        var recent = CircularBuffer<ServiceEvent>()
        var subscribers: [Int: Subscriber] = [:]
        var nextSubscriber = 0
        var isFinished = false
    }

    private let window: Int
    private let subscriberBuffer: Int
    private let state = NIOLockedValueBox(State())

    /// - Parameter firstID: The first event's id. castd starts from the time in microseconds, so that ids go on
    ///   growing across restarts: a client that reconnects to a new process with the last id it saw then gets
    ///   all the new process has, instead of nothing until the new ids pass its old one.
    init(window: Int, subscriberBuffer: Int, firstID: Int = 1) {
        self.window = max(1, window)
        self.subscriberBuffer = max(1, subscriberBuffer)
        state.withLockedValue { $0.nextID = firstID }
    }

    /// How many subscribers follow the log now.
    var subscriberCount: Int { state.withLockedValue { $0.subscribers.count } }

    /// The id the next event gets.
    var nextID: Int { state.withLockedValue { $0.nextID } }

    func append(_ change: ServiceEvent.Change) {
        let behind = state.withLockedValue { state -> [Subscriber] in
            guard !state.isFinished else { return [] }
            let event = ServiceEvent(id: state.nextID, change: change)
            state.nextID += 1
            state.recent.append(event)
            if state.recent.count > window { state.recent.removeFirst() }
            var behind: [Subscriber] = []
            for (key, subscriber) in state.subscribers {
                if case .dropped = subscriber.continuation.yield(event) {
                    behind.append(subscriber)
                    state.subscribers[key] = nil
                }
            }
            return behind
        }
        // Too far behind: end their streams rather than buffer more (outside the lock: finishing runs
        // onTermination); they reconnect with Last-Event-ID and catch up from the window.
        for subscriber in behind { subscriber.continuation.finish() }
    }

    /// The kept events after `lastID`, then every new one; without `lastID`, new ones only.
    func subscribe(after lastID: Int?) -> AsyncStream<ServiceEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ServiceEvent.self,
            bufferingPolicy: .bufferingOldest(subscriberBuffer + window)
        )
        state.withLockedValue { state in
            guard !state.isFinished else {
                continuation.finish()
                return
            }
            if let lastID {
                for event in state.recent where event.id > lastID { continuation.yield(event) }
            }
            let key = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[key] = Subscriber(continuation: continuation)
            continuation.onTermination = { [weak self] _ in
                self?.state.withLockedValue { _ = $0.subscribers.removeValue(forKey: key) }
            }
        }
        return stream
    }

    /// Ends every subscriber's stream.
    func finish() {
        let subscribers = state.withLockedValue { state in
            state.isFinished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.continuation.finish() }
    }
}
