// swift-cast — Apache-2.0

#if DEBUG || CAST_FUZZING
import CastTransport
import NIOConcurrencyHelpers
import Synchronization

@testable import CastReceiver

/// The emulator's request handling, at the narrowest entry points that still hold the whole device state: the
/// platform endpoint's handler (`receiver-0`) and the running app's media player, with the device's own
/// rescheduling and delivery logic around them, and time as an input.
///
/// The input is lines, each starting with a command character:
/// - `R` / `r` + JSON: a `urn:x-cast:com.google.cast.receiver` request from sender 1 / sender 2;
/// - `M` / `m` + JSON: a `urn:x-cast:com.google.cast.media` request to the running app from sender 1 / 2;
/// - `T` + a number: time passes (seconds, clamped to 0…86,400), firing item ends, ad clips, preloads
///   deadline by deadline.
/// Other lines are ignored. The Default Media Receiver is launched before the first line, so media requests
/// reach a player even in inputs without a LAUNCH.
enum ReceiverFuzz {
    static func requests(_ bytes: [UInt8]) {
        let sessions = SessionIDs()
        var configuration = DeviceConfiguration(friendlyName: "Fuzz", port: 0)
        configuration.id = "0123456789abcdef0123456789abcdef"
        configuration.sessionIDGenerator = { sessions.next() }
        let device = EmulatedDevice(configuration: configuration, clock: ManualCastClock())
        let senders = [
            EmulatedDevice.Requester(connectionID: 1, senderID: "sender-0"),
            EmulatedDevice.Requester(connectionID: 2, senderID: "sender-1"),
        ]
        var now = 0.0
        receiver(["type": "LAUNCH", "appId": "CC1AD845", "requestId": 1], from: senders[0], on: device, at: now)
        for line in FuzzInput.lines(bytes).prefix(128) {
            guard let command = line.first else { continue }
            let rest = Array(line.dropFirst())
            switch command {
            case UInt8(ascii: "R"), UInt8(ascii: "r"):
                guard let json = FuzzInput.json(rest), json.objectValue != nil else { continue }
                receiver(json, from: senders[command == UInt8(ascii: "R") ? 0 : 1], on: device, at: now)
            case UInt8(ascii: "M"), UInt8(ascii: "m"):
                guard let request = FuzzInput.json(rest)?.objectValue else { continue }
                media(request, from: senders[command == UInt8(ascii: "M") ? 0 : 1], on: device, at: now)
            case UInt8(ascii: "T"):
                guard let seconds = Double(FuzzInput.text(rest).filter { !$0.isWhitespace }), seconds.isFinite
                else { continue }
                now = tick(device, from: now, to: now + min(max(seconds, 0), 86_400))
            default:
                continue
            }
        }
    }

    /// What the device does with a receiver-namespace request (its dispatch checks that the payload is an object).
    private static func receiver(
        _ json: JSONValue,
        from requester: EmulatedDevice.Requester,
        on device: EmulatedDevice,
        at now: Double
    ) {
        device.state.withLockedValue { state in
            _ = device.handleReceiver(json, from: requester, state: &state, now: now)
        }
    }

    /// What the device does with a media-namespace request to the running app.
    private static func media(
        _ request: [String: JSONValue],
        from requester: EmulatedDevice.Requester,
        on device: EmulatedDevice,
        at now: Double
    ) {
        device.state.withLockedValue { state in
            guard state.running.player != nil else { return }
            let deliveries = state.running.player!.handle(request, from: requester, at: now)
            device.rescheduleMedia(state: &state, now: now)
            _ = device.resolve(deliveries, state: state)
        }
    }

    /// Time passing from `now` to `target`, as the device's timer makes it pass: the timer fires at each of the
    /// player's deadlines in turn (at most 256 per line; the rest of the time is dropped), the player advances to
    /// it, and the timer is re-armed for the next deadline. Returns the time reached.
    ///
    /// A deadline that is still due right after the player advanced to it would re-arm the timer with no delay,
    /// forever (on the real clock: a busy loop broadcasting MEDIA_STATUS), so that traps.
    private static func tick(_ device: EmulatedDevice, from now: Double, to target: Double) -> Double {
        var now = now
        for _ in 0..<256 {
            let due = device.state.withLockedValue { state -> Bool in
                guard let deadline = state.running.player?.nextDeadline(after: now), deadline <= target else {
                    return false
                }
                now = max(now, deadline)
                let deliveries = state.running.player!.advance(to: now)
                device.rescheduleMedia(state: &state, now: now)
                _ = device.resolve(deliveries, state: state)
                if let next = state.running.player!.nextDeadline(after: now), next <= now {
                    fatalError("the media player is still due at \(next) after advancing to \(now): it would spin")
                }
                return true
            }
            guard due else { return target }
        }
        return now
    }
}

/// Deterministic application session ids, so an input always behaves the same.
private final class SessionIDs: Sendable {
    private let counter = Atomic<Int>(0)

    func next() -> String {
        let value = counter.add(1, ordering: .relaxed).newValue
        return "00000000-0000-0000-0000-\(String(repeating: "0", count: 12 - String(value).count))\(value)"
    }
}
#endif
