/// Where pictures or sound come from. ffmpeg reads the source and hands raw frames to this process over a pipe
/// (I420 video at the stream's size and rate, 48 kHz stereo 16-bit audio); the encoders run here, so key frames
/// and bit-rate changes reach them at once.
public struct CaptureSource: Sendable, Hashable, CustomStringConvertible {
    /// ffmpeg's arguments that open the input (everything before the output options).
    public var inputArguments: [String]
    /// Whether the source is live (a screen, a monitor); files and test patterns are read at their own rate.
    public var isLive: Bool
    /// What to call it in messages.
    public var description: String

    /// A source from ffmpeg input arguments.
    public init(inputArguments: [String], isLive: Bool, description: String) {
        self.inputArguments = inputArguments
        self.isLive = isLive
        self.description = description
    }

    /// An area of the screen: `width`×`height` at `x`,`y`.
    public struct Region: Sendable, Hashable {
        /// The width in pixels.
        public var width: Int
        /// The height in pixels.
        public var height: Int
        /// The left edge, in pixels from the screen's left.
        public var x: Int
        /// The top edge, in pixels from the screen's top.
        public var y: Int

        /// A region of `width`×`height` at `x`,`y`.
        public init(width: Int, height: Int, x: Int = 0, y: Int = 0) {
            self.width = width
            self.height = height
            self.x = x
            self.y = y
        }

        /// Parses `WxH+X+Y` (X11's geometry form; the offset is optional).
        public init?(geometry: String) {
            let parts = geometry.split(whereSeparator: { $0 == "x" || $0 == "+" }).map { Int($0) }
            guard parts.count == 2 || parts.count == 4, parts.allSatisfy({ $0 != nil && $0! >= 0 }),
                parts[0]! > 0, parts[1]! > 0
            else { return nil }
            self.init(
                width: parts[0]!,
                height: parts[1]!,
                x: parts.count == 4 ? parts[2]! : 0,
                y: parts.count == 4 ? parts[3]! : 0
            )
        }
    }

    /// An X11 screen (`display`, for example `:0`), whole or a region of it, grabbed at `frameRate`.
    public static func screen(display: String, region: Region? = nil, frameRate: Int = 30) -> CaptureSource {
        var arguments = ["-f", "x11grab", "-framerate", "\(frameRate)", "-draw_mouse", "1"]
        var input = display
        if let region {
            arguments += ["-video_size", "\(region.width)x\(region.height)"]
            input += "+\(region.x),\(region.y)"
        }
        return CaptureSource(
            inputArguments: arguments + ["-i", input],
            isLive: true,
            description: region.map { "\(display) \($0.width)x\($0.height)+\($0.x)+\($0.y)" } ?? "screen \(display)"
        )
    }

    /// One X11 window by its id (`0x1e00007`), following it as it moves.
    public static func window(id: String, display: String, frameRate: Int = 30) -> CaptureSource {
        CaptureSource(
            inputArguments: ["-f", "x11grab", "-framerate", "\(frameRate)", "-window_id", id, "-i", display],
            isLive: true,
            description: "window \(id) on \(display)"
        )
    }

    /// Any file or URL ffmpeg can read, played at its own pace (`-re`), looped when `loops`.
    public static func input(_ url: String, loops: Bool = false) -> CaptureSource {
        CaptureSource(
            inputArguments: ["-re"] + (loops ? ["-stream_loop", "-1"] : []) + ["-i", url],
            isLive: false,
            description: url
        )
    }

    /// ffmpeg's moving test pattern (`testsrc2`) with a tone, for trying a receiver without a screen.
    public static func testPattern(resolution: Resolution = Resolution(width: 1280, height: 720), frameRate: Int = 30)
        -> CaptureSource
    {
        CaptureSource(
            inputArguments: [
                "-re", "-f", "lavfi", "-i", "testsrc2=size=\(resolution.width)x\(resolution.height):rate=\(frameRate)",
                "-re", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
            ],
            isLive: false,
            description: "test pattern"
        )
    }

    /// The desktop's sound: the PulseAudio (or PipeWire's Pulse server) monitor of the default output.
    public static func desktopAudio(monitor: String = "@DEFAULT_MONITOR@") -> CaptureSource {
        CaptureSource(inputArguments: ["-f", "pulse", "-i", monitor], isLive: true, description: "desktop audio")
    }
}
