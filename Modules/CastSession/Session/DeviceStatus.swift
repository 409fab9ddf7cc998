import CastDiscovery
import CastTransport

/// The receiver's own status (RECEIVER_STATUS): device volume, standby, input and the running app.
public struct DeviceStatus: Sendable, Hashable {
    /// Device volume, 0…1; `nil` when the receiver did not say (a missing or null `level`).
    public var volumeLevel: Double?
    /// Whether the device is muted.
    public var isMuted: Bool
    /// The receiver's volume step.
    public var volumeStepInterval: Double?
    /// `attenuation`, `fixed` (volume cannot be set) or `master`.
    public var volumeControlType: String?
    /// HDMI-CEC: whether the TV is in standby (TV dongles only).
    public var isStandBy: Bool?
    /// HDMI-CEC: whether this input is selected (TV dongles only).
    public var isActiveInput: Bool?
    /// Every application the device lists, in its order. Real devices list more than one: a speaker group
    /// member's part in its group's playback (`MultizoneFollower`) or the idle screen beside the app a sender
    /// launched, in any order, so the first is not necessarily the one that matters.
    public var applications: [ApplicationMetadata]

    /// The most relevant application listed, if any (the idle screen included): see
    /// ``application(sessionID:applicationID:)``.
    public var application: ApplicationMetadata? { application(sessionID: nil, applicationID: nil) }

    /// The most relevant application unless it is the idle screen: what a sender can join.
    public var runningApplication: ApplicationMetadata? {
        guard let application, !application.isIdleScreen else { return nil }
        return application
    }

    /// The listed application a sender means, chosen in this one place so that launching, joining, resuming,
    /// controlling and stopping all pick the same one: the app of `sessionID` when one is given (`nil` when the
    /// device no longer lists it), else the first of `applicationID` when one is given, else the most relevant —
    /// an app of its own before a member's part in its group's playback (leader, then follower), and those before
    /// the idle screen; the device's order among equals.
    public func application(sessionID: String? = nil, applicationID: String? = nil) -> ApplicationMetadata? {
        if let sessionID {
            return applications.first {
                $0.sessionID == sessionID && (applicationID == nil || $0.applicationID == applicationID)
            }
        }
        if let applicationID { return applications.first { $0.applicationID == applicationID } }
        return ListedApplication.mostRelevant(applications.map(\.relevance)).map { applications[$0] }
    }

    /// Whether the device's volume cannot be set (`controlType` `fixed`, cast-protocol.md §6.2): its sound is
    /// turned up or down where it comes out (the TV, the amplifier), and a SET_VOLUME is ignored or refused.
    public var hasFixedVolume: Bool { volumeControlType == "fixed" }

    /// Refuses a volume or mute change locally on a fixed-volume device, instead of sending a SET_VOLUME the
    /// device ignores (so that "volume 30%" would be reported while nothing changed) or refuses.
    ///
    /// - Throws: ``CastSessionError/Code/notSupported`` when ``hasFixedVolume``.
    func requireSettableVolume(of deviceName: String) throws {
        guard hasFixedVolume else { return }
        throw CastSessionError(
            .notSupported,
            "this device's volume is fixed: \(deviceName) cannot set or mute it; change it on the TV or amplifier "
                + "it plays through"
        )
    }

    /// The status a receiver command (SET_VOLUME, …) answers with.
    ///
    /// - Throws: ``CastSessionError/Code/refused`` when the receiver answered INVALID_REQUEST (it will not do
    ///   it: an unknown command, a session id it does not know, …), ``CastSessionError/Code/invalidResponse``
    ///   when the answer is anything else but a RECEIVER_STATUS.
    init(commandReply reply: JSONValue, to command: String) throws {
        if reply["type"]?.stringValue == "INVALID_REQUEST" {
            throw CastSessionError(
                .refused,
                "the receiver refused \(command)",
                receiverReason: reply["reason"]?.stringValue
            )
        }
        guard reply["type"]?.stringValue == "RECEIVER_STATUS" else {
            throw CastSessionError(
                .invalidResponse,
                "the receiver answered \(reply["type"]?.stringValue ?? "nothing")",
                receiverReason: reply["reason"]?.stringValue
            )
        }
        self.init(json: reply)
    }

    /// The level `steps` steps of `step` from `current`, within 0…1 (to a thousandth).
    ///
    /// - Throws: ``CastSessionError/Code/invalidArgument`` when the current level is unknown: a relative change
    ///   from a guess could blast a quiet room.
    package static func level(from current: Double?, bySteps steps: Int, of step: Double) throws -> Double {
        guard let current else {
            throw CastSessionError(
                .invalidArgument,
                "the device has not said its volume; set a level (0…1) instead of steps"
            )
        }
        return (min(1, max(0, current + Double(steps) * step)) * 1000).rounded() / 1000
    }

    init(json: JSONValue) {
        let status = json["status"] ?? .object([:])
        volumeLevel = status["volume"]?["level"]?.doubleValue
        isMuted = status["volume"]?["muted"]?.boolValue ?? false
        volumeStepInterval = status["volume"]?["stepInterval"]?.doubleValue
        volumeControlType = status["volume"]?["controlType"]?.stringValue
        isStandBy = status["isStandBy"]?.boolValue
        isActiveInput = status["isActiveInput"]?.boolValue
        applications = status["applications"]?.arrayValue?.compactMap(ApplicationMetadata.init(json:)) ?? []
    }
}

/// A running receiver application (GCKApplicationMetadata).
public struct ApplicationMetadata: Sendable, Hashable {
    /// The Backdrop idle screen's id.
    public static let backdropApplicationID = ListedApplication.backdropID

    /// The app's id, for example `CC1AD845` (the Default Media Receiver).
    public var applicationID: String
    /// The app's display name, when the device gives one.
    public var name: String?
    /// The receiver's session id: what another sender joins, and what a saved session resumes.
    public var sessionID: String
    /// The endpoint to address app messages to.
    public var transportID: String
    /// The namespaces the app serves.
    public var namespaces: [String]
    /// What the app says it is doing, for example the title playing.
    public var statusText: String?

    /// The app's display name, or its id when it has none: what to call it in messages.
    public var displayName: String { name ?? applicationID }
    /// Whether this is the idle screen (no real session).
    public var isIdleScreen: Bool

    /// Whether the app speaks the media namespace (and so can be paused, sought, …).
    public var playsMedia: Bool { namespaces.contains(CastNamespace.media) }

    /// Whether the device lists the app whole: a transport id to reach it and the namespaces it serves (a
    /// multizone leader serves none). An app still starting is listed without them.
    let isListedWhole: Bool

    /// How much a sender cares about this app among several listed (``ListedApplication``), lowest first.
    var relevance: Int { ListedApplication.relevance(appID: applicationID, isIdleScreen: isIdleScreen) }

    /// A device's part in a speaker group's playback.
    public enum GroupRole: Sendable, Hashable {
        /// The member that leads the group's playback (`MultizoneLeader`, `531A4F84`).
        case leader
        /// A member that follows it (`MultizoneFollower`, `705D30C6`).
        case follower
    }

    /// The app ids members run while their group plays (cast-protocol.md §8, §11.5).
    public static let multizoneLeaderIDs = ListedApplication.multizoneLeaderIDs
    /// See ``multizoneLeaderIDs``.
    public static let multizoneFollowerIDs = ListedApplication.multizoneFollowerIDs

    /// Whether this app is a member's part in its group's playback rather than an app of its own: such a device
    /// is "playing in group X" — the group's session is the one to join or control.
    public var groupRole: GroupRole? {
        if Self.multizoneLeaderIDs.contains(applicationID) { return .leader }
        if Self.multizoneFollowerIDs.contains(applicationID) { return .follower }
        return nil
    }

    init?(json: JSONValue) {
        guard let id = json["appId"]?.stringValue, let sessionID = json["sessionId"]?.stringValue else { return nil }
        applicationID = id
        name = json["displayName"]?.stringValue?.withoutControlCharacters
        self.sessionID = sessionID
        transportID = json["transportId"]?.stringValue ?? sessionID
        namespaces = json["namespaces"]?.arrayValue?.compactMap { $0["name"]?.stringValue ?? $0.stringValue } ?? []
        statusText = json["statusText"]?.stringValue?.withoutControlCharacters
        isIdleScreen = json["isIdleScreen"]?.boolValue ?? (id == Self.backdropApplicationID)
        isListedWhole =
            json["transportId"]?.stringValue?.isEmpty == false
            && (!namespaces.isEmpty || Self.multizoneLeaderIDs.contains(id))
    }
}
