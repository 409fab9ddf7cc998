import CastControllers
import CastDiscovery
import CastMedia
import CastSession
import CastTransport

#if canImport(Glibc)
import Glibc
#endif

/// What a command acts on. What the user says beats what the program remembers: with `--device`/`--host` the
/// command acts on that device — the saved session when that device still runs it, otherwise whatever the
/// device runs, joined. Without them it acts on the most recent saved session that still runs, else on the
/// only device found; several devices are listed with what each is doing.
extension CLIRuntime {
    /// Whether the user named a device (`--device` or `--host`).
    var namesDevice: Bool { global.device != nil || !global.host.isEmpty }

    /// The session to control on `context`: resumed or joined as the type's comment says.
    ///
    /// - Throws: ``CLIError`` with exit 5 when the device is idle; 3 when no device is found or reachable; 2 when
    ///   several devices are found and none is named.
    func controlledSession(_ context: CastContext) async throws -> CastSession {
        switch try await target(context) {
        case .session(let session): return session
        case .device(let device):
            do {
                return try await context.sessionManager.joinSession(on: device)
            } catch let error as CastSessionError where error.code == .noApplicationRunning {
                // The error names the device as it calls itself.
                throw CLIError(
                    .nothingToControl,
                    error.message + ": nothing to control; start something with 'cast play URL'"
                )
            }
        }
    }

    /// A saved session that still runs (named device or not), or the device to act on.
    enum Target {
        case session(CastSession)
        case device(CastDevice)
    }

    func target(_ context: CastContext) async throws -> Target {
        let manager = context.sessionManager
        if namesDevice {
            let device = try await resolveDevice()
            do {
                return .session(try await manager.resumeSavedSession(candidates: [device]))
            } catch let error as CastSessionError where error.code == .connectFailed {
                throw error
            } catch {
                return .device(device)
            }
        }
        if let session = try? await manager.resumeSavedSession() { return .session(session) }
        let (devices, problem) = await discoverDevices()
        switch devices.count {
        case 0: throw CLIError(.noDevice, NoDevicesScreen.text(problem: problem))
        case 1: return .device(devices[0])
        default: throw CLIError(.usage, await candidatesListing(devices))
        }
    }

    /// The group `member` plays in: the other devices found (mDNS, profile and `--host` entries) that are or may
    /// be groups are asked what they do and who their members are; `nil` when none has it as a member.
    func playingGroup(of member: DeviceActivity) async -> DeviceActivity? {
        let candidates = await discoverDevices().devices.filter { device in
            device.id != member.device.id && !(device.host == member.device.host && device.port == member.device.port)
                && (device.isGroup || device.capabilities.isEmpty)
        }
        let activities = await DeviceObserver.activities(
            of: candidates,
            options: options,
            timeout: .milliseconds(Int64(discoveryWait * 1000)),
            logger: logger
        )
        return SpeakerGroupMembership(activities.compactMap { try? $0.get() }).playingGroup(of: member)
    }

    /// "Several devices": each with what it is doing, and how to choose.
    private func candidatesListing(_ devices: [CastDevice]) async -> String {
        let activities = await DeviceObserver.activities(
            of: devices,
            options: options,
            timeout: .milliseconds(Int64(discoveryWait * 1000)),
            logger: logger
        )
        let lines = zip(devices, activities).map { device, result in
            "  \(device.friendlyName)  (\(device.host):\(device.port))  \(DeviceText.doing(result))"
        }
        return "several devices found; choose one with --device NAME or --host HOST[:PORT]:\n"
            + lines.joined(separator: "\n")
    }

    /// The session's media client, or exit 5 when the running app plays no media.
    func mediaClient(_ session: CastSession) throws -> RemoteMediaClient {
        guard let client = session.remoteMediaClient else {
            let app = session.application.displayName
            throw CLIError(
                .nothingToControl,
                "the app running on \(session.device.friendlyName) (\(app)) plays no media: there is nothing to "
                    + "pause or seek; 'cast status' shows what it does"
            )
        }
        return client
    }

    /// Runs `body` with the session to control, then leaves it running (disconnects without stopping it).
    func withControlledSession<Result: Sendable>(_ body: (CastSession) async throws -> Result) async throws -> Result {
        let context = makeContext()
        let session = try await controlledSession(context)
        do {
            let result = try await body(session)
            await context.sessionManager.endSession(stopCasting: false)
            return result
        } catch {
            await context.sessionManager.endSession(stopCasting: false)
            throw error
        }
    }

    /// The whole of a command that acts on a session: builds the runtime, finds the session (``target(_:)``),
    /// runs `body`, leaves the session running, and turns any failure into the documented exit code.
    ///
    /// With `--timeout`, the whole command ends within it (exit 4), whatever its steps and reconnections; a
    /// command that runs until stopped (`listen`) passes `bounded: false`.
    static func withControlledSession(
        _ global: GlobalOptions,
        bounded: Bool = true,
        _ body: @escaping @Sendable (CLIRuntime, CastSession) async throws -> Void
    ) async throws {
        let runtime = try CLIRuntime(global)
        do {
            let deadline = bounded ? runtime.exitAtTimeout() : nil
            defer { deadline?.cancel() }
            try await runtime.withControlledSession { session in try await body(runtime, session) }
        } catch {
            throw runtime.fail(error)
        }
    }

    /// With `--timeout`, ends the process once it has passed (exit 4), whatever step the command is in: a reply
    /// being awaited does not stop for a task's cancellation, a command may reconnect and retry within it, and
    /// nothing is printed after the timeout is told. Cancel the task when the part it bounds is done.
    func exitAtTimeout() -> Task<Void, Never>? {
        guard let seconds = global.timeout else { return nil }
        return Task { [self] in
            guard (try? await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))) != nil else { return }
            let shown = seconds == seconds.rounded() ? "\(Int(seconds))" : "\(seconds)"
            let code = fail(CLIError(.timedOut, "the command did not finish within its --timeout of \(shown) s"))
            exit(code.rawValue)
        }
    }
}
