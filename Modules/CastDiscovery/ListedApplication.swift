import CastTransport

/// The one rule for which of the applications a RECEIVER_STATUS lists a sender means when it names none (by
/// session or app id): real devices list more than one — a speaker group member's part in its group's playback
/// (`MultizoneFollower`), or the idle screen beside an app — in any order, so the first is not the one to show,
/// join or control. Device probes (a raw status) and sessions (`DeviceStatus`) both pick by it.
package enum ListedApplication {
    /// The app ids the elected leader of a playing speaker group runs (cast-protocol.md §8).
    package static let multizoneLeaderIDs: Set<String> = ["531A4F84", "MultizoneLeader"]
    /// The app ids the other members of a playing speaker group run.
    package static let multizoneFollowerIDs: Set<String> = ["705D30C6", "MultizoneFollower"]
    /// The Backdrop idle screen's id, an idle screen even when the device does not say `isIdleScreen`.
    package static let backdropID = "E8C28D3C"

    /// How much a sender cares about an app, lowest first: an app of its own, then a member's part in its group's
    /// playback (leader, then follower), then the idle screen.
    package static func relevance(appID: String, isIdleScreen: Bool) -> Int {
        if isIdleScreen { return 3 }
        if multizoneLeaderIDs.contains(appID) { return 1 }
        if multizoneFollowerIDs.contains(appID) { return 2 }
        return 0
    }

    /// The index of the most relevant of `relevances` (the device's order among equals); `nil` when empty.
    package static func mostRelevant(_ relevances: [Int]) -> Int? {
        relevances.indices.min { (relevances[$0], $0) < (relevances[$1], $1) }
    }

    /// Whether a listed app (JSON) is the idle screen: it says so, or, saying nothing, it is Backdrop.
    package static func isIdleScreen(_ app: JSONValue) -> Bool {
        app["isIdleScreen"]?.boolValue ?? (app["appId"]?.stringValue == backdropID)
    }

    /// The most relevant entry of a RECEIVER_STATUS payload's `status.applications`, as JSON.
    package static func mostRelevant(inStatus status: JSONValue) -> JSONValue? {
        let listed = status["status"]?["applications"]?.arrayValue ?? []
        let relevances = listed.map { app in
            relevance(appID: app["appId"]?.stringValue ?? "", isIdleScreen: isIdleScreen(app))
        }
        return mostRelevant(relevances).map { listed[$0] }
    }
}
