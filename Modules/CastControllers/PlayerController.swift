import CastMedia
import CastSession
import CastTransport
import NIOConcurrencyHelpers

/// The terminal counterparts of the SDK's mini controller and expanded controller: live status with
/// position, progress, ad and queue state, and key bindings for every media command.
///
/// Keys: space play/pause (play/stop for live), ←/→ seek 10 s, `<`/`>` seek 30 s, `n`/`p` next/previous,
/// `a` skip ad, `c` cycle subtitles, `[`/`]` rate, `+`/`-` volume, `m` mute, `u` queue view (expanded),
/// `s` stop casting, `q`/Esc/Ctrl-C leave (the session keeps running).
public final class PlayerController: Sendable {
    /// Compact (a few lines in place) or full screen.
    public enum Layout: Sendable { case mini, expanded }

    /// Why the controller returned.
    public enum Outcome: Sendable, Equatable {
        /// Playback ended (finished, stopped by someone, or failed).
        case finished
        /// The user left; the session keeps running on the receiver.
        case left
        /// The user stopped casting.
        case stopped
        /// The session ended (the app stopped or the connection could not be restored).
        case sessionEnded
    }

    private enum Input: Sendable {
        case key(Key)
        case status
        case tick
        case connection(CastSession.ConnectionState)
    }

    private struct ViewState {
        var showsQueue = false
        var message: String?
        var renderedLines = 0
        var sawMedia = false
    }

    private let session: CastSession
    private let style: ControllerStyle
    private let terminal: Terminal
    private let interactive: Bool
    private let view = NIOLockedValueBox(ViewState())

    /// A controller for `session`; `interactive` enables raw-mode keys (use it only on a TTY).
    public init(session: CastSession, style: ControllerStyle, terminal: Terminal = Terminal(), interactive: Bool) {
        self.session = session
        self.style = style
        self.terminal = terminal
        self.interactive = interactive
    }

    /// Shows the controller until playback ends or the user leaves.
    public func run(layout: Layout) async -> Outcome {
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        var feeders: [Task<Void, Never>] = []
        if let client = session.remoteMediaClient {
            let updates = client.statusUpdates()
            feeders.append(Task { for await _ in updates { continuation.yield(.status) } })
            if client.queue.itemIDs == nil, (client.mediaStatus?.items?.count ?? 0) > 1 {
                // The status's `items` is only a window of the queue: its ids give the position and length.
                feeders.append(
                    Task {
                        _ = try? await client.queue.reload()
                        continuation.yield(.status)
                    }
                )
            }
        }
        let states = session.connectionStateUpdates()
        feeders.append(Task { for await state in states { continuation.yield(.connection(state)) } })
        feeders.append(
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(500))
                    continuation.yield(.tick)
                }
            }
        )
        if interactive {
            terminal.enterRawMode(alternateScreen: layout == .expanded)
            let keys = terminal.keys()
            feeders.append(Task { for await key in keys { continuation.yield(.key(key)) } })
        }
        defer {
            for feeder in feeders { feeder.cancel() }
            continuation.finish()
            if interactive { terminal.restore() }
        }
        render(layout)
        for await input in inputs {
            switch input {
            case .key(let key):
                if let outcome = await handle(key) {
                    if layout == .mini { terminal.write("\n") }
                    return outcome
                }
            case .connection(.disconnected):
                render(layout)
                return .sessionEnded
            case .status, .tick, .connection:
                break
            }
            if let status = session.remoteMediaClient?.mediaStatus {
                view.withLockedValue { $0.sawMedia = true }
                if status.hasEnded {
                    render(layout)
                    if layout == .mini || !interactive { terminal.write("\n") }
                    return .finished
                }
            } else if view.withLockedValue({ $0.sawMedia }), session.connectionState == .connected {
                render(layout)
                return .finished
            }
            render(layout)
        }
        return .left
    }

    // MARK: - Keys

    private func handle(_ key: Key) async -> Outcome? {
        guard let client = session.remoteMediaClient else {
            return key == .character("q") || key == .escape || key == .interrupt ? .left : nil
        }
        let status = client.mediaStatus
        var request: MediaRequest?
        switch key {
        case .character("q"), .escape, .interrupt:
            return .left
        case .character("s"):
            _ = try? await client.stop().response()
            await SessionEnder.end(session)
            return .stopped
        case .character(" "), .character("k"):
            request = client.togglePlayback()
        case .left: request = client.seek(.by(-10))
        case .right: request = client.seek(.by(10))
        case .character("<"): request = client.seek(.by(-30))
        case .character(">"): request = client.seek(.by(30))
        case .character("n"): request = client.queueNext()
        case .character("p"): request = client.queuePrevious()
        case .character("a"): request = client.skipAd()
        case .character("c"): request = cycleSubtitles(client)
        case .character("["): request = client.setPlaybackRate(max(0.5, (status?.playbackRate ?? 1) - 0.25))
        case .character("]"): request = client.setPlaybackRate(min(2, (status?.playbackRate ?? 1) + 0.25))
        case .character("+"), .character("="), .up:
            await run { try await self.session.adjustDeviceVolume(bySteps: 1) }
        case .character("-"), .down:
            await run { try await self.session.adjustDeviceVolume(bySteps: -1) }
        case .character("m"):
            let muted = session.deviceStatus?.isMuted ?? false
            await run { try await self.session.setDeviceMuted(!muted) }
        case .character("u"):
            view.withLockedValue { $0.showsQueue.toggle() }
            if client.queue.itemIDs == nil { _ = try? await client.queue.reload() }
        default:
            break
        }
        if let request {
            do {
                try await request.response()
                view.withLockedValue { $0.message = nil }
            } catch {
                view.withLockedValue { $0.message = "\(error)" }
            }
        }
        return nil
    }

    private func run(_ action: @Sendable () async throws -> Void) async {
        do {
            try await action()
            view.withLockedValue { $0.message = nil }
        } catch {
            view.withLockedValue { $0.message = "\(error)" }
        }
    }

    private func cycleSubtitles(_ client: RemoteMediaClient) -> MediaRequest {
        let status = client.mediaStatus
        let textTracks = (status?.media?.tracks ?? []).filter { $0.kind == .text }
        let active = status?.activeTrackIDs ?? []
        let currentIndex = textTracks.firstIndex { active.contains($0.id) }
        let others = active.filter { id in !textTracks.contains { $0.id == id } }
        switch currentIndex {
        case nil: return client.setActiveTrackIDs(others + (textTracks.first.map { [$0.id] } ?? []))
        case let index? where index + 1 < textTracks.count:
            return client.setActiveTrackIDs(others + [textTracks[index + 1].id])
        default: return client.setActiveTrackIDs(others)
        }
    }

    // MARK: - Drawing

    /// The lines the controller would draw now, without running it (for scripted output such as `cast demo`).
    public func currentLines(layout: Layout) -> [String] {
        let snapshot = StatusSnapshot(session: session)
        return layout == .mini ? miniLines(snapshot) : expandedLines(snapshot)
    }

    private func render(_ layout: Layout) {
        let snapshot = StatusSnapshot(session: session)
        let lines = layout == .mini ? miniLines(snapshot) : expandedLines(snapshot)
        if layout == .expanded && interactive {
            terminal.write("\u{1B}[H\u{1B}[2J" + lines.joined(separator: "\r\n"))
            return
        }
        guard interactive else {
            // Not a terminal: one line per change, no cursor tricks.
            let line = lines.joined(separator: " | ")
            let previous = view.withLockedValue { state -> Bool in
                defer { state.message = line }
                return state.message == line
            }
            if !previous { terminal.write(line + "\n") }
            return
        }
        let previousCount = view.withLockedValue { state -> Int in
            defer { state.renderedLines = lines.count }
            return state.renderedLines
        }
        var output = ""
        if previousCount > 1 { output += "\u{1B}[\(previousCount - 1)A" }
        // Each line within one row (the last cell left free): a wrapped line would shift every redraw.
        let columns = max(1, terminal.size.columns - 1)
        output +=
            "\r" + lines.map { TerminalText.clipped($0, toColumns: columns) + "\u{1B}[K" }.joined(separator: "\r\n")
        terminal.write(output)
    }

    private func progressLine(_ snapshot: StatusSnapshot, width: Int) -> String {
        guard let media = snapshot.media else { return "" }
        if media.isLiveStream { return style.paint(style.glyph("live"), style.button) }
        let position = snapshot.position ?? media.currentTime
        let duration = media.media?.duration ?? 0
        let fraction = duration > 0 ? position / duration : 0
        let left = TimeFormatting.clock(position)
        let right = TimeFormatting.clock(media.media?.duration)
        let barWidth = max(10, width - left.count - right.count - 4)
        return style.paint(left, style.caption) + "  "
            + style.progressBar(fraction: fraction, width: barWidth, isAd: media.isPlayingAd)
            + "  " + style.paint(right, style.caption)
    }

    private func stateGlyph(_ snapshot: StatusSnapshot) -> String {
        switch snapshot.media?.playerState {
        case .playing?: return style.glyph("play")
        case .paused?: return style.glyph("pause")
        case .buffering?: return "…"
        default: return style.glyph("stop")
        }
    }

    private func miniLines(_ snapshot: StatusSnapshot) -> [String] {
        let width = interactive ? terminal.size.columns : 100
        let title =
            snapshot.media?.media?.metadata?.displayTitle ?? snapshot.media?.media?.contentID ?? "Nothing playing"
        var first = style.paint(stateGlyph(snapshot), style.button) + " " + style.paint(title, style.heading)
        if let subtitle = snapshot.media?.media?.metadata?.displaySubtitle {
            first += style.paint("  \(subtitle)", style.caption)
        }
        first += style.paint("  on \(snapshot.deviceName)", style.caption)
        if session.connectionState == .suspended { first += style.paint("  (reconnecting…)", style.caption) }
        var second = progressLine(snapshot, width: min(width, 80) - 2)
        if let ad = snapshot.media?.adBreakStatus {
            second +=
                "  " + style.paint(style.glyph("ad"), style.button)
                + (ad.isSkippable ? " a: skip" : " skip in \(Int((ad.secondsUntilSkippable ?? 0).rounded()))s")
        }
        var lines = [first, second]
        if interactive {
            let help =
                view.withLockedValue { $0.message } ?? "space play/pause  ←/→ seek  n/p next/prev  s stop  q leave"
            lines.append(style.paint(help, style.caption))
        }
        return lines
    }

    private func expandedLines(_ snapshot: StatusSnapshot) -> [String] {
        let (columns, rows) = terminal.size
        let width = max(30, columns)
        var lines: [String] = []
        let connection: String
        switch session.connectionState {
        case .connected: connection = "connected"
        case .suspended: connection = "suspended — reconnecting…"
        case .disconnected: connection = "disconnected"
        }
        lines.append(
            style.paint("\(style.glyph("cast")) \(snapshot.deviceName)", style.heading)
                + style.paint("  \(connection)", style.caption)
        )
        lines.append("")
        let metadata = snapshot.media?.media?.metadata
        // Artwork placeholder: a box holding the image's file name, as terminals cannot show the picture.
        let boxWidth = min(width - 4, 36)
        let art = metadata?.images.first.map { String($0.url.split(separator: "/").last ?? "") } ?? "no artwork"
        lines.append("  ┌" + String(repeating: "─", count: boxWidth) + "┐")
        for row in 0..<3 {
            let text = row == 1 ? String(art.prefix(boxWidth - 2)) : ""
            let padding = boxWidth - text.count
            lines.append(
                "  │" + String(repeating: " ", count: padding / 2) + style.paint(text, style.caption)
                    + String(repeating: " ", count: padding - padding / 2) + "│"
            )
        }
        lines.append("  └" + String(repeating: "─", count: boxWidth) + "┘")
        lines.append("")
        lines.append(
            style.paint(metadata?.displayTitle ?? snapshot.media?.media?.contentID ?? "Nothing playing", style.heading)
        )
        if let subtitle = metadata?.subtitle ?? metadata?.seriesTitle {
            lines.append(style.paint(subtitle, style.body))
        }
        if let studio = metadata?.studio ?? metadata?.artist { lines.append(style.paint(studio, style.caption)) }
        lines.append("")
        lines.append(progressLine(snapshot, width: width - 2))
        let playPause =
            snapshot.media?.playerState == .playing
            ? style.glyph(snapshot.media?.isLiveStream == true ? "stop" : "pause") : style.glyph("play")
        var controls = [
            style.glyph("skipPrevious"), style.glyph("rewind"), playPause, style.glyph("forward"),
            style.glyph("skipNext"),
        ]
        .map { style.paint($0, style.button) }.joined(separator: "   ")
        let textTracks = (snapshot.media?.media?.tracks ?? []).filter { $0.kind == .text }
        if !textTracks.isEmpty { controls += "   " + style.paint(style.glyph("subtitles"), style.button) }
        let volume = snapshot.deviceVolume.map { "\(Int(($0 * 100).rounded()))%" } ?? "?"
        controls +=
            "   " + style.paint(style.glyph(snapshot.deviceMuted == true ? "muteOn" : "muteOff"), style.button)
            + " \(volume)"
        if let rate = snapshot.media?.playbackRate, rate != 1 { controls += "   ×\(rate)" }
        lines.append(controls)
        if let ad = snapshot.media?.adBreakStatus {
            lines.append(
                style.paint(style.glyph("ad"), style.button)
                    + (ad.isSkippable
                        ? "  press a to skip the ad"
                        : "  skip available in \(Int((ad.secondsUntilSkippable ?? 0).rounded())) s")
            )
        }
        if !textTracks.isEmpty {
            let active = textTracks.first { snapshot.media?.activeTrackIDs.contains($0.id) == true }
            lines.append(style.paint("Subtitles: \(active?.name ?? active?.language ?? "off")", style.caption))
        }
        if let index = snapshot.queueIndex, let count = snapshot.queueCount {
            lines.append(style.paint("Queue: item \(index + 1) of \(count)", style.caption))
        }
        if view.withLockedValue({ $0.showsQueue }), let client = session.remoteMediaClient {
            lines.append(style.paint("Up next", style.heading))
            for id in (client.queue.itemIDs ?? []).prefix(max(1, rows - lines.count - 3)) {
                let item = client.queue.cachedItem(withID: id) ?? snapshot.media?.items?.first { $0.itemID == id }
                let marker = id == snapshot.media?.currentItemID ? style.glyph("play") : " "
                lines.append(
                    "  \(marker) \(item?.media.metadata?.displayTitle ?? item?.media.contentID ?? "item \(id)")"
                )
            }
        }
        // Fill to the bottom but never past it: one line too many would scroll the header away.
        lines = Array(lines.prefix(max(1, rows - 3)))
        while lines.count < rows - 3 { lines.append("") }
        let help =
            width >= 130
            ? "space ⏯  ←/→ ±10s  </> ±30s  n/p next/prev  a skip ad  c subtitles  [/] rate  +/- volume  m mute  u queue  s stop  q leave"
            : "space ⏯  ←/→ seek  n/p next/prev  a ad  c subs  [/] rate  +/- vol  m mute  u queue  s stop  q leave"
        lines.append(style.paint(String((view.withLockedValue { $0.message } ?? "").prefix(width - 1)), style.caption))
        lines.append(style.paint(String(help.prefix(width - 1)), style.caption))
        return lines
    }
}

/// Ends a session with casting stopped (used by the `s` key).
enum SessionEnder {
    static func end(_ session: CastSession) async {
        _ = try? await session.remoteMediaClient?.stop().response()
    }
}
