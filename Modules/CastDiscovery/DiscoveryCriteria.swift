/// Which devices discovery lists, as `GCKDiscoveryCriteria` decides it for the Cast dialog.
///
/// Every value has a documented default; the default criteria list every device found.
///
/// ```swift
/// var options = DiscoveryManager.Configuration()
/// options.criteria = .application(DiscoveryCriteria.defaultMediaReceiverID)
/// options.criteria.requiredCapabilities = .videoOut   // hide speakers
/// ```
public struct DiscoveryCriteria: Sendable, Hashable {
    /// The Default Media Receiver's application id.
    public static let defaultMediaReceiverID = "CC1AD845"

    /// Lists a device only when this receiver application is available on it: `GET_APP_AVAILABILITY` answers
    /// `APP_AVAILABLE`. Asked once per device and application and cached; a device appears when the answer comes,
    /// and other devices are listed meanwhile. `nil` (the default) lists devices whatever they run.
    public var applicationID: String?

    /// Lists only devices whose `ca` capabilities include all of these, for example ``DeviceCapabilities/videoOut``
    /// to hide audio-only devices. Static devices have no TXT record, so this does not apply to them.
    /// Defaults to none.
    public var requiredCapabilities: DeviceCapabilities

    /// Creates criteria; the defaults list every device.
    public init(applicationID: String? = nil, requiredCapabilities: DeviceCapabilities = []) {
        self.applicationID = applicationID
        self.requiredCapabilities = requiredCapabilities
    }

    /// Every device.
    public static let all = DiscoveryCriteria()

    /// Devices on which `applicationID` is available.
    public static func application(_ applicationID: String) -> DiscoveryCriteria {
        DiscoveryCriteria(applicationID: applicationID)
    }

    /// Devices with all of `capabilities` (see ``requiredCapabilities``).
    public static func capabilities(_ capabilities: DeviceCapabilities) -> DiscoveryCriteria {
        DiscoveryCriteria(requiredCapabilities: capabilities)
    }
}

/// What happens to the device list, for subscribers of ``DiscoveryManager/events()``.
public enum DiscoveryEvent: Sendable, Hashable {
    /// A device is now listed: found and resolved, a static device answered, or it qualified under the criteria.
    case added(CastDevice)
    /// A listed device changed: its name, status, addresses or port (a speaker group's leader moved, an
    /// interface came or went).
    case updated(CastDevice)
    /// A device left the list: gone from the network for longer than the removal delay, no longer qualifying, or
    /// discovery stopped. Carries the device as it was last listed.
    case removed(CastDevice)
    /// mDNS browsing failed (avahi-daemon went away); the devices found over mDNS are removed, static devices stay
    /// listed. Reported once per loss: the manager keeps trying to reconnect (see
    /// ``DiscoveryManager/Configuration/reconnectDelay``) and browsing resumes, with devices added again, once the
    /// daemon is back.
    case failed(CastDiscoveryError)
}
