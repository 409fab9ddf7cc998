import ArgumentParser
import CastControllers
import CastDiscovery
import CastLogging
import CastMedia
import CastMediaServer
import CastSession
import CastStreaming
import CastStyleConfig
import CastTransport
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Options every command accepts.
struct GlobalOptions: ParsableArguments {
    @Option(help: "The device to use, by friendly name or id.") var device: String?
    @Option(help: "Use this device address (HOST or HOST:PORT, repeatable) instead of discovering devices.")
    var host: [String] = []
    @Option(help: "The Cast port with --host.") var port: Int = 8009
    @Option(help: "An XML option profile.") var profile: String?
    @Option(help: "An XML style for the terminal controllers.") var style: String?
    @Flag(help: "Machine-readable JSON output.") var json = false
    @Option(help: "Minimum log level (trace, debug, info, notice, warning, error, critical, off).")
    var logLevel: String?
    @Option(help: "Log filter: CATEGORY-GLOB=LEVEL or /REGEX/[i], comma separated.") var logFilter: String?
    @Option(
        help:
            "Seconds a command that controls a session may take in all (exit 4 after), and to wait for a device to answer and for each reply (default: each step the profile's request timeout, 10 s)."
    )
    var timeout: Double?
    @Option(
        help: """
            Send the command to a running castd (http://HOST:PORT) whose session is already open; also CAST_VIA. \
            'direct' for none.
            """
    )
    var via: String?
    @Option(help: "castd's bearer token for --via (also CAST_VIA_TOKEN).") var viaToken: String?
    @Option(
        help: """
            Device authentication: off, warn (report a device that cannot prove it is genuine) or require \
            (refuse it, exit 6). Default: the profile's, warn.
            """
    )
    var deviceAuth: String?
    @Option(help: "PEM file of the root certificates devices must chain to (Google's Cast roots, or your own).")
    var trustAnchors: String?

    /// The --host entries as static devices.
    var staticDevices: [CastDevice] { host.map { CastDevice.staticDevice(address: $0, defaultPort: port) } }

    func validate() throws {
        if let timeout { guard timeout > 0 else { throw ValidationError("--timeout must be positive") } }
        guard (1...65535).contains(port) else { throw ValidationError("--port must be 1…65535") }
        if let deviceAuth, DeviceAuthPolicy(rawValue: deviceAuth) == nil {
            throw ValidationError("--device-auth must be off, warn or require")
        }
    }
}

/// Exit codes (documented in `cast --help`).
enum CastExit {
    static let failed = ExitCode(1)
    static let usage = ExitCode(2)
    static let noDevice = ExitCode(3)
    static let timedOut = ExitCode(4)
    static let nothingToControl = ExitCode(5)
    static let deviceNotAuthenticated = ExitCode(6)
}

/// What every command needs: logging, options, output, device and session lookup, error mapping.
struct CLIRuntime: Sendable {
    let global: GlobalOptions
    let logger: Logger
    let options: CastOptions
    let style: ControllerStyle
    let isTTY: Bool

    /// The effective profile (options, logging, style) with where each value came from.
    let profile: ResolvedProfile
    /// How long discovery waits for devices.
    let discoveryWait: Double

    /// - Parameter throughService: Whether the command goes through castd (``ViaService``); an explicit `--via`
    ///   on a command that cannot is a usage error rather than silently ignored.
    init(
        _ global: GlobalOptions,
        throughService: Bool = false,
        configure: (inout CastOptions) -> Void = { _ in }
    ) throws {
        if !throughService, let via = global.via, via != "direct" {
            throw CLIError(.usage, "this command, with these options, does not go through castd yet; leave out --via")
        }
        self.global = global
        let environment = ProcessInfo.processInfo.environment
        // Command-line flags are the top layer of the profile resolution (CLI > environment > profile > defaults).
        // The settings table says which settings each flag sets (--timeout: both timeouts).
        let overrides = ProfileResolver.overrides(flags: [
            "--style": global.style,
            "--timeout": global.timeout.map { "\(Int($0 * 1000))ms" },
            "--log-level": global.logLevel,
            "--device-auth": global.deviceAuth,
            "--trust-anchors": global.trustAnchors,
        ])
        // A profile, style or log setting that cannot be used is a usage error, said as the command's others are.
        do {
            profile = try ProfileResolver.standard(
                cliOverrides: overrides,
                explicitProfilePath: global.profile,
                environment: environment
            ).resolve()
            LoggingBootstrap.once(try profile.commandLineLogFilter(adding: global.logFilter))
        } catch {
            throw Self.fail(error, json: global.json)
        }
        logger = Logger(label: CastLogCategory.app)

        var options = profile.options
        // A command rides through a dropped connection within its timeout: requests wait for the reconnection,
        // and one the drop interrupted is sent again only when the receiver had not acted on it.
        options.requestsWaitWhileSuspended = true
        options.staticDevices += global.staticDevices
        configure(&options)
        self.options = options
        discoveryWait = global.timeout ?? 3
        isTTY = Terminal.isTTY(STDOUT_FILENO) && Terminal.isTTY(STDIN_FILENO)
        let mode =
            global.json ? TerminalColorMode.none : TerminalColorMode.detect(environment: environment, isTTY: isTTY)
        style = ControllerStyle(style: profile.style, view: .miniController, mode: mode)
        expandedStyle = ControllerStyle(style: profile.style, view: .expandedController, mode: mode)
        dialogStyle = ControllerStyle(style: profile.style, view: .castDialog, mode: mode)
        overlayStyle = ControllerStyle(style: profile.style, view: .introductoryOverlay, mode: mode)
    }

    /// Styles for the expanded controller, the device picker and the introductory overlay.
    let expandedStyle: ControllerStyle
    let dialogStyle: ControllerStyle
    let overlayStyle: ControllerStyle

    func makeContext() -> CastContext { CastContext(options: options, logger: logger) }

    // MARK: Output

    /// Prints `json` with --json, else `text`.
    func emit(json: JSONValue, text: @autoclosure () -> String) {
        if global.json { say(json.jsonString) } else { say(text()) }
    }

    func say(_ text: String) {
        LocalFiles.write(text.hasSuffix("\n") ? text : text + "\n", to: STDOUT_FILENO)
    }

    func warn(_ text: String) {
        FileHandleOutput.standardError("cast: " + text)
    }

    // MARK: Failures

    /// Reports `error` on stderr (or as JSON) and turns it into the documented exit code.
    func fail(_ error: any Error) -> ExitCode { Self.fail(error, json: global.json) }

    /// ``fail(_:)`` before a runtime exists (a profile that cannot be read, say).
    static func fail(_ error: any Error, json: Bool) -> ExitCode {
        if let exit = error as? ExitCode { return exit }
        let (code, kind): (ExitCode, String) = {
            switch error {
            case let error as CastSessionError:
                switch error.code {
                case .deviceAuthenticationFailed where (error.cause as? CastTransportError)?.code == .authNotConfigured:
                    return (CastExit.usage, "configuration")
                case .deviceAuthenticationFailed: return (CastExit.deviceNotAuthenticated, "device-auth")
                case .connectFailed, .sessionNotFound, .notConnected, .connectionLost, .resumeFailed:
                    return (CastExit.noDevice, "no-device")
                case .timedOut: return (CastExit.timedOut, "timeout")
                case .noApplicationRunning: return (CastExit.nothingToControl, "nothing-to-control")
                case .invalidNamespace: return (CastExit.usage, "usage")
                // Refused before sending (a fixed volume) or by the receiver: exit 1 like any refusal.
                case .notSupported: return (CastExit.failed, "unsupported")
                default: return (CastExit.failed, "receiver")
                }
            case let error as CastMediaError:
                switch error.code {
                case .timedOut: return (CastExit.timedOut, "timeout")
                case .notConnected, .connectionLost: return (CastExit.noDevice, "no-device")
                case .noMediaSession: return (CastExit.nothingToControl, "nothing-to-control")
                case .notSupported: return (CastExit.failed, "unsupported")
                // Refused before sending (a message too large): the request is at fault; refused by the receiver
                // (an unknown item, say): exit 1 like any refusal.
                case .invalidRequest where error.cause is CastTransportError: return (CastExit.usage, "usage")
                default: return (CastExit.failed, "receiver")
                }
            case let error as CastTransportError where error.isDeviceAuthFailure:
                return (CastExit.deviceNotAuthenticated, "device-auth")
            case let error as CastTransportError:
                return error.code == .requestTimedOut
                    ? (CastExit.timedOut, "timeout") : (CastExit.noDevice, "no-device")
            case is CastLoggingError, is ValidationError:
                return (CastExit.usage, "usage")
            case is CastConfigError:
                return (CastExit.usage, "configuration")
            case let error as CastMediaServerError:
                switch error.code {
                case .unreachable: return (CastExit.failed, "unreachable")
                case .toolMissing: return (CastExit.failed, "missing-tool")
                case .notShareable, .invalidSubtitles, .invalidPlaylist: return (CastExit.usage, "usage")
                default: return (CastExit.failed, "media")
                }
            case let error as CastStreamingError:
                switch error.code {
                case .toolMissing: return (CastExit.failed, "missing-tool")
                case .answerTimedOut: return (CastExit.timedOut, "timeout")
                default: return (CastExit.failed, "streaming")
                }
            case let error as CLIError:
                return (error.exit, error.kind)
            default:
                return (CastExit.failed, "error")
            }
        }()
        if json {
            var object: JSONValue = [
                "kind": .string(kind), "message": .string("\(error)"), "exitCode": .number(Double(code.rawValue)),
            ]
            if let diagnosis = (error as? CastMediaServerError)?.diagnosis { object["diagnosis"] = diagnosis.json }
            LocalFiles.write(JSONValue.object(["error": object]).jsonString + "\n", to: STDOUT_FILENO)
        } else {
            FileHandleOutput.standardError("cast: error: \(error)")
        }
        return code
    }

    // MARK: Devices

    /// Finds devices (static and mDNS) for up to --timeout seconds, returning early once `until` is satisfied;
    /// with scan ranges (the profile's and `scanRanges`), also until the scan is done. `--host` entries are the
    /// only devices then (with the scan's): as given, or — `describingHosts`, to find one by its name — each asked
    /// what it is called.
    func discoverDevices(
        scanning scanRanges: [AddressRange] = [],
        describingHosts: Bool = false,
        until: @escaping @Sendable ([CastDevice]) -> Bool = { _ in false }
    ) async -> (devices: [CastDevice], problem: String?) {
        let ranges = profile.discoveryScanRanges + scanRanges
        if !global.host.isEmpty, !describingHosts, ranges.isEmpty { return (global.staticDevices, nil) }
        var configuration = DiscoveryManager.Configuration()
        configuration.staticDevices = global.host.isEmpty ? options.staticDevices : global.staticDevices
        configuration.criteria = profile.discoveryCriteria
        configuration.scanRanges = ranges
        configuration.browsesMulticastDNS = global.host.isEmpty
        var manager = DiscoveryManager(configuration: configuration, logger: logger)
        var problem: String?
        var until = until
        if !global.host.isEmpty, ranges.isEmpty {
            // Done once every host answered.
            let (wanted, count) = (until, global.staticDevices.count)
            until = { devices in wanted(devices) || devices.count == count }
        }
        do {
            try manager.start()
        } catch {
            problem = "\(error)"
            // Nothing to wait for: no daemon to browse, no static device to probe, no range to scan.
            if options.staticDevices.isEmpty, ranges.isEmpty { return ([], problem) }
            // Static devices need no daemon: probe them alone, and stop waiting once all of them answered.
            configuration.browsesMulticastDNS = false
            manager = DiscoveryManager(configuration: configuration, logger: logger)
            try? manager.start()
            let (wanted, count) = (until, options.staticDevices.count)
            if ranges.isEmpty { until = { devices in wanted(devices) || devices.count == count } }
        }
        let events = manager.events()
        let deadline = ContinuousClock.now + .milliseconds(Int64(discoveryWait * 1000))
        await withTaskGroup(of: Void.self) { [manager, until] group in
            group.addTask {
                if until(manager.devices) { return }
                for await _ in events where until(manager.devices) { return }
            }
            // Without mDNS, a scan is what to wait for (its own timeouts bound it), not the deadline.
            if ranges.isEmpty || manager.isBrowsing {
                group.addTask { try? await Task.sleep(until: deadline) }
            } else {
                group.addTask { await manager.scanCompleted() }
            }
            await group.next()
            group.cancelAll()
        }
        if !ranges.isEmpty, !until(manager.devices) { await manager.scanCompleted() }
        let devices = manager.devices
        await manager.stop()
        return (devices, problem)
    }

    /// The device to cast to: --host, --device NAME|ID, the only device found, or one the user picks.
    func resolveDevice() async throws -> CastDevice {
        if global.host.count == 1 {
            var device = global.staticDevices[0]
            if let name = global.device { device.friendlyName = name }
            return device
        }
        let wanted = global.device?.lowercased()
        let (devices, problem) = await discoverDevices(describingHosts: wanted != nil) { devices in
            guard let wanted else { return false }
            return devices.contains { $0.id.lowercased() == wanted || $0.friendlyName.lowercased() == wanted }
        }
        if let wanted {
            if let match = devices.first(where: {
                $0.id.lowercased() == wanted || $0.friendlyName.lowercased() == wanted
            }) {
                return match
            }
            // A configured device that did not answer: connecting to it says why.
            if let configured = options.staticDevices.first(where: {
                $0.id.lowercased() == wanted || $0.friendlyName.lowercased() == wanted
            }) {
                return configured
            }
            throw CLIError(.noDevice, "no device named '\(global.device!)'" + listing(devices))
        }
        switch devices.count {
        case 0:
            throw CLIError(.noDevice, NoDevicesScreen.text(problem: problem))
        case 1:
            return devices[0]
        default:
            if isTTY, !global.json, let chosen = await DevicePicker(style: dialogStyle).choose(from: devices) {
                return chosen
            }
            throw CLIError(.usage, "several devices found; choose one with --device" + listing(devices))
        }
    }

    private func listing(_ devices: [CastDevice]) -> String {
        devices.isEmpty
            ? ""
            : ":\n" + devices.map { "  \($0.friendlyName)  (\($0.id), \($0.host):\($0.port))" }.joined(separator: "\n")
    }

    // MARK: Sessions (what a command acts on: SessionTargets.swift)

    /// A custom channel for `namespace`, attached to `session`; fails when the running app does not list it.
    func attachChannel(_ namespace: String, to session: CastSession) throws -> GenericChannel {
        let channel = try GenericChannel(namespace: namespace)
        session.add(channel)
        guard channel.isConnected else {
            throw CLIError(
                .failed,
                "the running app (\(session.application.applicationID)) does not list \(namespace)"
            )
        }
        return channel
    }

    /// Prints the session's status.
    func printStatus(_ session: CastSession) async {
        // The status's `items` is a window around the current item (a queue's first eleven, say): its ids say
        // the real position and length.
        if let client = session.remoteMediaClient, client.queue.itemIDs == nil,
            (client.mediaStatus?.items?.count ?? 0) > 1
        {
            _ = try? await client.queue.reload()
        }
        printStatus(StatusSnapshot(session: session), deviceID: session.device.id)
    }

    /// Prints an observed device's status.
    func printStatus(_ activity: DeviceActivity) {
        printStatus(StatusSnapshot(activity: activity), deviceID: activity.device.id)
    }

    /// Prints a status, with what background `cast play --detach` processes serve to that device.
    func printStatus(_ snapshot: StatusSnapshot, deviceID: String? = nil) {
        let serving = deviceID.map { BackgroundServing.records(forDevice: $0) } ?? []
        var json = snapshot.json
        var lines = snapshot.lines(style: style)
        if !serving.isEmpty {
            json["serving"] = .array(
                serving.map { ["pid": .number(Double($0.pid)), "items": .array($0.items.map(JSONValue.string))] }
            )
            lines += serving.map {
                "serving from this computer: \(Self.summary(of: $0.items)) (process \($0.pid))"
            }
        }
        emit(json: json, text: lines.joined(separator: "\n"))
    }

    /// What a server serves, in a line: the first three names, then how many more.
    static func summary(of items: [String]) -> String {
        guard items.count > 3 else { return items.joined(separator: ", ") }
        return items.prefix(3).joined(separator: ", ") + " and \(items.count - 3) more"
    }
}

/// A command-line failure with its exit code.
struct CLIError: Error, CustomStringConvertible {
    enum Kind { case failed, usage, noDevice, timedOut, nothingToControl }
    let exit: ExitCode
    let kind: String
    let message: String

    init(_ kind: Kind, _ message: String) {
        switch kind {
        case .failed: (exit, self.kind) = (CastExit.failed, "receiver")
        case .usage: (exit, self.kind) = (CastExit.usage, "usage")
        case .noDevice: (exit, self.kind) = (CastExit.noDevice, "no-device")
        case .timedOut: (exit, self.kind) = (CastExit.timedOut, "timeout")
        case .nothingToControl: (exit, self.kind) = (CastExit.nothingToControl, "nothing-to-control")
        }
        self.message = message
    }

    var description: String { message }
}

/// The "no devices found" screen: the reasons and fixes.
enum NoDevicesScreen {
    static func text(problem: String?) -> String {
        var text = "no Cast devices found.\n"
        if let problem { text += "  Discovery problem: \(problem)\n" }
        text += """
              Things to check:
                • avahi-daemon is running (systemctl status avahi-daemon; sudo systemctl start avahi-daemon)
                • the firewall allows mDNS (UDP port 5353)
                • this machine and the device are on the same subnet/VLAN (mDNS does not cross routers)
                • the device is awake and on the network
              Or skip discovery: cast play --host 192.168.1.20 URL   (add --port for speaker groups)
            """
        return text
    }
}

/// Logging is bootstrapped once per process.
enum LoggingBootstrap {
    nonisolated(unsafe) private static var done = false
    static func once(_ filter: LogFilter) {
        guard !done else { return }
        done = true
        CastLoggingSystem.bootstrap(filter: filter)
    }
}
