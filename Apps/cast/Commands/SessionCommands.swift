import ArgumentParser
import CastControllers
import CastDiscovery
import CastSession
import CastTransport

/// `cast status`: device, app and media status — of the saved session, or of whatever the device does.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show device, app and media status.",
        discussion: """
            With --device/--host: what that device does, whoever started it (an idle device prints \
            app: null, media: null). Examples: cast status, cast status --host 192.168.1.20 --json, \
            cast status --watch
            """
    )
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Keep printing status changes until interrupted.") var watch = false

    func run() async throws {
        if !watch, try await ViaService.handle(global, .status) { return }
        let runtime = try CLIRuntime(global)
        do {
            // A watch runs until stopped; its first status is bounded by each step's timeout.
            let deadline = watch ? nil : runtime.exitAtTimeout()
            defer { deadline?.cancel() }
            let context = runtime.makeContext()
            switch try await runtime.target(context) {
            case .session(let session):
                do {
                    try await show(session, runtime)
                } catch {
                    await context.sessionManager.endSession(stopCasting: false)
                    throw error
                }
                await context.sessionManager.endSession(stopCasting: false)
            case .device(let device):
                try await observe(device, runtime)
            }
        } catch {
            throw runtime.fail(error)
        }
    }

    private func show(_ session: CastSession, _ runtime: CLIRuntime) async throws {
        try await session.fetchDeviceStatus()
        if session.device.isGroup { _ = try? await session.requestMultizoneStatus() }
        await runtime.printStatus(session)
        guard watch else { return }
        // Until interrupted, or until the session ends (the app stopped, or the device stayed away).
        let states = session.connectionStateUpdates()
        let statuses = session.remoteMediaClient?.statusUpdates()
        let devices = session.deviceStatusUpdates()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await state in states where state == .disconnected { return }
            }
            if let statuses {
                group.addTask { for await _ in statuses { await runtime.printStatus(session) } }
            }
            group.addTask { for await _ in devices { await runtime.printStatus(session) } }
            await group.next()
            group.cancelAll()
        }
        throw CLIError(.noDevice, "the session on \(session.device.friendlyName) ended")
    }

    /// A device this program has no session with: observed, not joined, so nothing changes on it.
    private func observe(_ device: CastDevice, _ runtime: CLIRuntime) async throws {
        var options = runtime.options
        options.heartbeat.pingInterval = watch ? options.heartbeat.pingInterval : nil
        let observer = DeviceObserver(device: device, options: options, logger: runtime.logger)
        let activity = try await observer.start()
        guard activity.application?.groupRole != nil else {
            runtime.printStatus(activity)
            if watch {
                for await activity in observer.updates() { runtime.printStatus(activity) }
            }
            return await observer.stop()
        }
        // A member playing in a group: the group's app and media are what it plays.
        let group = await runtime.playingGroup(of: activity)
        runtime.printStatus(StatusSnapshot(member: activity, playingGroup: group), deviceID: activity.device.id)
        if watch {
            for await activity in observer.updates() {
                runtime.printStatus(
                    StatusSnapshot(member: activity, playingGroup: group),
                    deviceID: activity.device.id
                )
            }
        }
        await observer.stop()
    }
}

/// `cast launch APPID`: start a session with any receiver app.
struct LaunchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "launch",
        abstract: "Launch (or join) a receiver app and leave it running.",
        discussion: "Example: cast launch CC1AD845, cast launch A1B2C3D4 --android-tv --credentials TOKEN"
    )
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The receiver application id.") var appID: String
    @Flag(help: "Accept the app's Android TV version (Cast Connect).") var androidTV = false
    @Flag(help: "Relaunch even when the app already runs.") var relaunch = false
    @Option(help: "Launch credentials (Cast Connect).") var credentials: String?
    @Option(help: "Type of --credentials: android, ios, web, cloud.") var credentialsType: String?

    func run() async throws {
        // Cast Connect's options are not in castd's API: those launches go to the device directly.
        if !androidTV, credentials == nil, try await ViaService.handle(global, .launch(appID, relaunch: relaunch)) {
            return
        }
        let runtime = try CLIRuntime(global) { options in
            options.receiverApplicationID = appID
            options.launchOptions.androidReceiverCompatible = androidTV
            options.launchOptions.relaunchIfRunning = relaunch
            if let credentials {
                options.launchCredentials = CredentialsData(credentials: credentials, credentialsType: credentialsType)
            }
        }
        do {
            let deadline = runtime.exitAtTimeout()
            defer { deadline?.cancel() }
            let device = try await runtime.resolveDevice()
            let context = runtime.makeContext()
            let session = try await context.sessionManager.startSession(with: device)
            await runtime.printStatus(session)
            await context.sessionManager.endSession(stopCasting: false)
        } catch {
            throw runtime.fail(error)
        }
    }
}

/// `cast app stop`: end the receiver app.
struct AppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Control the receiver app.",
        subcommands: [Stop.self]
    )

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop the receiver app (ends casting, whoever started it).",
            discussion: "Examples: cast app stop, cast app stop --host 192.168.1.20"
        )
        @OptionGroup var global: GlobalOptions
        func run() async throws {
            if try await ViaService.handle(global, .stopApp) { return }
            let runtime = try CLIRuntime(global)
            do {
                let deadline = runtime.exitAtTimeout()
                defer { deadline?.cancel() }
                let context = runtime.makeContext()
                let session = try await runtime.controlledSession(context)
                let (device, app) = (session.device, session.application)
                let deviceJSON = StatusSnapshot(session: session).json["device"] ?? .null
                // Stopped for sure (or an error): endSession would end ours even when the STOP never arrived.
                try await session.stopApplication()
                runtime.emit(
                    json: ["stopped": "app", "device": deviceJSON, "app": DeviceText.json(app)],
                    text: "stopped the app \(app.displayName) on \(device.friendlyName); casting ended"
                )
            } catch {
                throw runtime.fail(error)
            }
        }
    }
}

/// `cast leave`: disconnect and leave the app running.
struct LeaveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "leave",
        abstract: "Disconnect from the session; the app keeps running and playing, and can be resumed.",
        discussion: "Examples: cast leave, cast leave --host 192.168.1.20"
    )
    @OptionGroup var global: GlobalOptions
    func run() async throws {
        if try await ViaService.handle(global, .leave) { return }
        try await CLIRuntime.withControlledSession(global) { runtime, session in
            let app = session.application
            runtime.emit(
                json: [
                    "left": true, "sessionId": .string(session.sessionID),
                    "device": StatusSnapshot(session: session).json["device"] ?? .null,
                    "app": DeviceText.json(app),
                ],
                text:
                    "left the session on \(session.device.friendlyName); \(app.displayName) keeps running"
            )
        }
    }
}

/// `cast send`: one message on a custom namespace.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a message on a custom namespace to the running app.",
        discussion: "Example: cast send --namespace urn:x-cast:com.example.echo '{\"hello\":1}' --wait-reply"
    )
    @OptionGroup var global: GlobalOptions
    @Option(help: "The namespace, urn:x-cast:…") var namespace: String
    @Argument(help: "The message text.") var message: String?
    @Option(help: "Read the message from a file.") var file: String?
    @Flag(help: "Wait for and print the first reply.") var waitReply = false

    func validate() throws {
        guard (message == nil) != (file == nil) else { throw ValidationError("give either MESSAGE or --file") }
        guard namespace.hasPrefix("urn:x-cast:") else {
            throw ValidationError("the namespace must start with urn:x-cast:")
        }
    }

    func run() async throws {
        let text = try message ?? FileText.read(file!)
        let (namespace, waitReply) = (self.namespace, self.waitReply)
        if try await ViaService.handle(global, .send(namespace: namespace, message: text, waitForReply: waitReply)) {
            return
        }
        try await CLIRuntime.withControlledSession(global) { runtime, session in
            let channel = try runtime.attachChannel(namespace, to: session)
            if waitReply {
                let timeout = Duration.milliseconds(Int64((runtime.global.timeout ?? 10) * 1000))
                let reply = try await channel.sendTextMessage(text, awaitingReplyWithin: timeout).text
                runtime.emit(json: ["reply": .string(reply)], text: reply)
            } else {
                try await channel.sendTextMessage(text)
                runtime.emit(json: ["sent": true], text: "sent")
            }
        }
    }
}

/// `cast listen`: print messages on a custom namespace.
struct ListenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Print messages the running app sends on a custom namespace.",
        discussion: "Example: cast listen --namespace urn:x-cast:com.example.echo --count 1"
    )
    @OptionGroup var global: GlobalOptions
    @Option(help: "The namespace, urn:x-cast:…") var namespace: String
    @Option(help: "Stop after this many messages.") var count: Int?

    func run() async throws {
        let (namespace, count) = (self.namespace, self.count)
        try await CLIRuntime.withControlledSession(global, bounded: false) { runtime, session in
            let channel = try runtime.attachChannel(namespace, to: session)
            let messages = channel.messages()
            var seen = 0
            for await payload in messages {
                switch payload {
                case .string(let text): runtime.emit(json: ["message": .string(text)], text: text)
                case .binary(let bytes):
                    runtime.emit(json: ["binary": .number(Double(bytes.count))], text: "<\(bytes.count) bytes>")
                }
                seen += 1
                if let count, seen >= count { break }
            }
        }
    }
}

/// `cast remote`: the expanded controller.
struct RemoteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remote",
        abstract: "Full-screen remote control for the running session.",
        discussion:
            "Keys: space play/pause, ←/→ ±10 s, </> ±30 s, n/p next/prev, a skip ad, c subtitles, [/] rate, +/- volume, m mute, u queue, s stop, q leave."
    )
    @OptionGroup var global: GlobalOptions
    func run() async throws {
        let runtime = try CLIRuntime(global)
        guard runtime.isTTY else { throw runtime.fail(CLIError(.usage, "cast remote needs a terminal")) }
        do {
            let context = runtime.makeContext()
            let session: CastSession
            do {
                session = try await runtime.controlledSession(context)
            } catch let error as CLIError where error.exit == CastExit.nothingToControl {
                // An idle device: start the options' app so the remote has something to show.
                session = try await context.sessionManager.startSession(with: try await runtime.resolveDevice())
            }
            if let client = session.remoteMediaClient { _ = try? await client.requestStatus().response() }
            _ = try? await session.fetchDeviceStatus()
            let outcome = await PlayerController(session: session, style: runtime.expandedStyle, interactive: true).run(
                layout: .expanded
            )
            await context.sessionManager.endSession(stopCasting: outcome == .stopped)
        } catch {
            throw runtime.fail(error)
        }
    }
}

/// `cast devices`: the Cast dialog's list, with what each device is doing.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List Cast devices, sorted by name, with what each is doing.",
        discussion: """
            Each device is asked (concurrently, within --timeout) what it runs and plays; a device given with \
            --host is also asked its name, model and capabilities. \
            Examples: cast devices, cast devices --json --timeout 2, cast devices --host 192.168.1.20, \
            cast devices --scan 192.168.2.0/24, cast devices --diagnose, cast devices --watch
            """
    )
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Keep the list live until interrupted.") var watch = false
    @Option(
        help: """
            Also ask every address of this IPv4 range (A.B.C.D/N, at most 4096 addresses; repeatable) on port 8009, \
            for devices mDNS cannot see; the profile's discovery scanRanges are scanned too.
            """
    )
    var scan: [String] = []
    @Flag(help: "Say why no device is found: avahi-daemon, multicast interface and route, firewall, then a browse.")
    var diagnose = false

    func validate() throws { _ = try DeviceScanOptions.ranges(scan) }

    func run() async throws {
        if !watch, !diagnose, scan.isEmpty, try await ViaService.handle(global, .devices) { return }
        let runtime = try CLIRuntime(global) { _ in }
        let ranges = try DeviceScanOptions.ranges(scan)
        if diagnose { return try await DeviceDiagnosis.run(runtime, scanning: ranges) }
        let (found, problem) = await runtime.discoverDevices(scanning: ranges)
        var devices = await DeviceScanOptions.named(found, runtime)
        // Configured devices that did not answer are listed too, unreachable and why, as --host ones are.
        if runtime.global.host.isEmpty {
            devices += runtime.options.staticDevices.filter { configured in
                !devices.contains { $0.host == configured.host && $0.port == configured.port }
            }
        }
        if devices.isEmpty {
            if runtime.global.json {
                runtime.say(
                    JSONValue.object(["devices": [], "problem": problem.map { .string($0) } ?? .null]).jsonString
                )
            } else {
                runtime.warn(NoDevicesScreen.text(problem: problem))
            }
            throw CastExit.noDevice
        }
        let activities = await DeviceObserver.activities(
            of: devices,
            options: runtime.options,
            timeout: .milliseconds(Int64(runtime.discoveryWait * 1000)),
            logger: runtime.logger
        )
        let membership = SpeakerGroupMembership(activities.compactMap { try? $0.get() })
        let rows = zip(devices, activities).map { device, result in
            DeviceText.Row(device: (try? result.get())?.device ?? device, activity: result, membership: membership)
        }.sorted { $0.device.friendlyName.lowercased() < $1.device.friendlyName.lowercased() }
        runtime.emit(
            json: ["devices": .array(rows.map(\.json))],
            text: rows.map(\.line).joined(separator: "\n")
        )
        if watch { try await DeviceWatcher.watch(runtime) }
    }
}

/// How `cast devices` shows a device and what it is doing.
enum DeviceText {
    struct Row {
        var device: CastDevice
        var activity: Result<DeviceActivity, CastSessionError>
        var membership: SpeakerGroupMembership

        /// The groups this device is a member of, by name.
        var groups: [String] { membership.groups(containing: device.deviceID).map(\.device.friendlyName) }

        var json: JSONValue {
            var json: JSONValue = [
                "id": .string(device.id), "name": .string(device.friendlyName),
                "model": device.modelName.map { .string($0) } ?? .null,
                "host": .string(device.host), "port": .number(Double(device.port)),
                "capabilities": .array(DeviceText.capabilities(device).map { .string($0) }),
                "status": device.statusText.map { .string($0) } ?? .null, "static": .bool(device.isStatic),
                "sources": .array(device.sources.names.map { .string($0) }),
                "reachable": false, "app": .null, "media": .null,
                "groups": .array(groups.map(JSONValue.string)),
            ]
            guard case .success(let activity) = activity else {
                if case .failure(let error) = activity { json["error"] = .string(error.message) }
                return json
            }
            json["reachable"] = true
            if let members = activity.groupMembers { json["members"] = .array(members.map(StatusSnapshot.json)) }
            if let role = activity.application?.groupRole {
                json["playingInGroup"] = [
                    "name": membership.playingGroup(of: activity).map { .string($0.device.friendlyName) } ?? .null,
                    "role": .string("\(role)"),
                ]
            }
            json["volume"] = activity.deviceStatus.volumeLevel.map { .number($0) } ?? .null
            json["muted"] = .bool(activity.deviceStatus.isMuted)
            if let app = activity.application {
                var appJSON = DeviceText.json(app)
                appJSON["statusText"] = app.statusText.map { .string($0) } ?? .null
                json["app"] = appJSON
                json["status"] = .string(app.statusText ?? app.displayName)
            } else {
                json["status"] = .string("")
            }
            if let media = activity.mediaStatus {
                json["media"] = [
                    "title": (media.media?.metadata?.displayTitle ?? media.media?.contentID).map { .string($0) }
                        ?? .null,
                    "playerState": .string(media.shownPlayerState.rawValue),
                ]
            } else if let error = activity.mediaStatusError {
                json["mediaError"] = .string(error)
            }
            return json
        }

        var line: String {
            var line = "\(device.friendlyName)  [\(device.modelName ?? "unknown model")]  \(device.host):\(device.port)"
            let kind = DeviceText.capabilities(device)
            if !kind.isEmpty { line += "  \(kind.joined(separator: "+"))" }
            line += "  " + DeviceText.doing(activity, membership: membership)
            if case .success(let activity) = activity, let members = activity.groupMembers {
                line += "\n    members: " + members.map(StatusSnapshot.line).joined(separator: ", ")
            }
            return line
        }
    }

    /// An app as `--json` output names it: `{id, name}`.
    static func json(_ app: ApplicationMetadata) -> JSONValue {
        ["id": .string(app.applicationID), "name": app.name.map { .string($0) } ?? .null]
    }

    static func capabilities(_ device: CastDevice) -> [String] {
        var kind: [String] = []
        if device.capabilities.contains(.videoOut) { kind.append("video") }
        if device.capabilities.contains(.audioOut) { kind.append("audio") }
        if device.isGroup { kind.append("group") }
        return kind
    }

    /// "idle", "YouTube", "playing: Big Buck Bunny (Default Media Receiver)", "playing in group Downstairs", or
    /// why it could not be asked.
    static func doing(
        _ activity: Result<DeviceActivity, CastSessionError>,
        membership: SpeakerGroupMembership = SpeakerGroupMembership([])
    ) -> String {
        switch activity {
        case .failure(let error):
            return "unreachable (\(error.code))"
        case .success(let activity):
            guard let app = activity.application else { return "idle" }
            if app.groupRole != nil {
                return membership.playingGroup(of: activity).map { "playing in group \($0.device.friendlyName)" }
                    ?? "playing in a speaker group"
            }
            let name = app.displayName
            guard let media = activity.mediaStatus else { return name }
            let state = media.shownPlayerState.rawValue.lowercased()
            let title = media.media?.metadata?.displayTitle ?? media.media?.contentID ?? "untitled"
            return "\(state): \(title) (\(name))"
        }
    }
}

/// `cast devices --watch`: devices as they come, change and go, one line (or JSON object) each.
enum DeviceWatcher {
    static func watch(_ runtime: CLIRuntime) async throws {
        var configuration = DiscoveryManager.Configuration()
        let named = !runtime.global.host.isEmpty
        configuration.staticDevices = named ? runtime.global.staticDevices : runtime.options.staticDevices
        configuration.browsesMulticastDNS = !named
        var manager = DiscoveryManager(configuration: configuration, logger: runtime.logger)
        var events = manager.events()
        do {
            try manager.start()
        } catch {
            // No avahi-daemon: the configured devices are still watched; without any, there is nothing to watch.
            guard !configuration.staticDevices.isEmpty else {
                throw runtime.fail(CLIError(.noDevice, NoDevicesScreen.text(problem: "\(error)")))
            }
            runtime.warn("mDNS is not available (\(error)); watching the configured devices only")
            configuration.browsesMulticastDNS = false
            manager = DiscoveryManager(configuration: configuration, logger: runtime.logger)
            events = manager.events()
            try manager.start()
        }
        for await event in events {
            let (name, device): (String, CastDevice?) =
                switch event {
                case .added(let device): ("added", device)
                case .updated(let device): ("updated", device)
                case .removed(let device): ("removed", device)
                case .failed: ("failed", nil)
                }
            var json: JSONValue = ["event": .string(name)]
            if let device {
                json["device"] = [
                    "id": .string(device.id), "name": .string(device.friendlyName), "host": .string(device.host),
                    "port": .number(Double(device.port)),
                ]
            }
            if case .failed(let error) = event { json["error"] = .string(error.message) }
            let text =
                device.map { "\(name): \($0.friendlyName)  \($0.host):\($0.port)" }
                ?? "mDNS failed: \(json["error"]?.stringValue ?? "")"
            runtime.emit(json: json, text: text)
        }
    }
}

enum FileText {
    static func read(_ path: String) throws -> String {
        guard let bytes = LocalFiles.read(path) else { throw CLIError(.usage, "cannot read \(path)") }
        return String(decoding: bytes, as: UTF8.self)
    }
}

#if canImport(Glibc)
import Glibc
#endif
