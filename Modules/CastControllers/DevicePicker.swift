import CastDiscovery
import CastTransport

/// The Cast dialog in a terminal: a list of devices to choose from with the arrow keys and Enter.
public struct DevicePicker: Sendable {
    private let terminal: Terminal
    private let style: ControllerStyle

    /// A picker drawing with `style`.
    public init(terminal: Terminal = Terminal(), style: ControllerStyle = .plain) {
        self.terminal = terminal
        self.style = style
    }

    /// Shows `devices` and returns the chosen one, or `nil` when the user pressed q, Esc or Ctrl-C.
    public func choose(from devices: [CastDevice]) async -> CastDevice? {
        guard !devices.isEmpty else { return nil }
        terminal.enterRawMode()
        defer { terminal.restore() }
        var selected = 0
        var drawn = 0
        func draw() {
            var output = drawn > 0 ? "\u{1B}[\(drawn)A\r" : ""
            var lines = [
                style.paint("Cast to:", style.heading)
                    + style.paint("  ↑/↓ choose, Enter cast, q cancel", style.caption)
            ]
            for (index, device) in devices.enumerated() {
                let marker = index == selected ? style.paint("›", style.button) : " "
                let name = index == selected ? style.paint(device.friendlyName, style.heading) : device.friendlyName
                lines.append(
                    " \(marker) \(name)"
                        + style.paint("  \(device.modelName ?? "")  \(device.host):\(device.port)", style.caption)
                )
            }
            output += lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n")
            terminal.write(output)
            drawn = lines.count - 1
        }
        draw()
        for await key in terminal.keys() {
            switch key {
            case .up, .character("k"): selected = (selected + devices.count - 1) % devices.count
            case .down, .character("j"), .tab: selected = (selected + 1) % devices.count
            case .enter:
                terminal.write("\r\n")
                return devices[selected]
            case .escape, .interrupt, .character("q"):
                terminal.write("\r\n")
                return nil
            default: break
            }
            draw()
        }
        return nil
    }
}

/// The one-time hint the first interactive run shows (GCKIntroductoryOverlay); whether it was shown is stored
/// under `$XDG_STATE_HOME/cast`.
public struct IntroductoryOverlay: Sendable {
    /// The marker file.
    public let markerPath: String

    /// An overlay whose state lives in `stateDirectory`.
    public init(stateDirectory: String) { markerPath = stateDirectory + "/intro-shown" }

    /// The hint text, styled.
    public func text(deviceName: String, style: ControllerStyle) -> String {
        style.paint("\(style.glyph("cast")) Found \(deviceName).", style.heading) + "\n"
            + style.paint("  Cast something:      cast play https://example.com/video.mp4", style.body) + "\n"
            + style.paint(
                "  Control it later:    cast remote   (or cast pause, cast seek +30, cast status)",
                style.body
            ) + "\n"
    }

    /// Returns the hint once: the first call writes the marker, later calls return `nil`.
    public func consume(deviceName: String, style: ControllerStyle) -> String? {
        if access(markerPath, F_OK) == 0 { return nil }
        LocalFiles.makeDirectories(String(markerPath[..<(markerPath.lastIndex(of: "/") ?? markerPath.endIndex)]))
        let descriptor = open(markerPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        close(descriptor)
        return text(deviceName: deviceName, style: style)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
