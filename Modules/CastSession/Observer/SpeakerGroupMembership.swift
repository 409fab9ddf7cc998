import CastDiscovery
import CastTransport

/// Which speaker groups each device belongs to, and which group a member plays in, worked out from what devices
/// are doing (``DeviceActivity``, with the groups' ``DeviceActivity/groupMembers``). A member only says that it
/// leads or follows a group's playback (``ApplicationMetadata/groupRole``); the group's own status says who its
/// members are — as Home Assistant's cast integration combines them.
public struct SpeakerGroupMembership: Sendable {
    /// The groups among the activities, each with its members.
    public let groups: [DeviceActivity]

    /// Collects the groups of `activities` (devices that are groups and told their members).
    public init(_ activities: [DeviceActivity]) {
        groups = activities.filter { $0.device.isGroup && $0.groupMembers != nil }
    }

    /// The groups `deviceID` is a member of, by name.
    public func groups(containing deviceID: String) -> [DeviceActivity] {
        let id = CastDeviceID.normalized(deviceID)
        return groups.filter { group in group.groupMembers?.contains { $0.id == id } == true }
            .sorted { $0.device.friendlyName.lowercased() < $1.device.friendlyName.lowercased() }
    }

    /// The group whose playback `member` takes part in: `member` runs the multizone leader or follower app and
    /// the group it belongs to runs an app. `nil` when it plays on its own (or the group is not among the
    /// activities).
    public func playingGroup(of member: DeviceActivity) -> DeviceActivity? {
        guard member.deviceStatus.application?.groupRole != nil else { return nil }
        let candidates = groups(containing: member.device.deviceID)
        return candidates.first { $0.application != nil } ?? candidates.first
    }
}
