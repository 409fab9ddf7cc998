import CastTransport
import Dispatch
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A key press, decoded from the terminal's byte stream.
public enum Key: Sendable, Hashable {
    case character(Character)
    case up, down, left, right, enter, escape, backspace, tab
    /// Ctrl-C in raw mode (no SIGINT is raised then).
    case interrupt
}

/// The controlling terminal: raw mode, the alternate screen, its size and its keys.
///
/// Raw mode is always undone: by ``restore()``, at process exit, and on SIGINT/SIGTERM/SIGHUP (the handlers
/// restore the saved settings, then re-raise the signal with its default action).
public final class Terminal: Sendable {
    /// Whether `descriptor` is a terminal.
    public static func isTTY(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

    /// A dispatch source, which is thread-safe though not marked Sendable.
    private struct SourceBox: @unchecked Sendable {
        let source: any DispatchSourceRead
    }

    private struct State {
        var isRaw = false
        var source: SourceBox?
    }

    private let state = NIOLockedValueBox(State())

    /// The terminal on standard input/output.
    public init() {}

    /// Columns and rows (80×24 when unknown).
    public var size: (columns: Int, rows: Int) {
        var window = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0 else { return (80, 24) }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    /// Switches to raw mode (keys arrive one by one, no echo), optionally on the alternate screen with the
    /// cursor hidden.
    public func enterRawMode(alternateScreen: Bool = false) {
        let entered = state.withLockedValue { state -> Bool in
            guard !state.isRaw else { return false }
            state.isRaw = true
            return true
        }
        guard entered else { return }
        TerminalRestore.save(alternateScreen: alternateScreen)
        var raw = TerminalRestore.saved!
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        raw.c_cc.6 = 1  // VMIN
        raw.c_cc.5 = 0  // VTIME
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw)
        if alternateScreen { write("\u{1B}[?1049h\u{1B}[?25l") }
    }

    /// Leaves raw mode and the alternate screen; harmless when not in raw mode.
    public func restore() {
        let box = state.withLockedValue { state -> SourceBox? in
            state.isRaw = false
            defer { state.source = nil }
            return state.source
        }
        box?.source.cancel()
        TerminalRestore.restore()
    }

    /// Writes text to standard output at once.
    public func write(_ text: String) {
        LocalFiles.write(text, to: STDOUT_FILENO)
    }

    /// Key presses from standard input, decoded (arrow keys from their escape sequences). Event driven: a
    /// dispatch read source on the descriptor, no polling.
    public func keys() -> AsyncStream<Key> {
        let (stream, continuation) = AsyncStream.makeStream(of: Key.self)
        let source = DispatchSource.makeReadSource(
            fileDescriptor: STDIN_FILENO,
            queue: DispatchQueue(label: "cast.terminal.keys")
        )
        let decoder = KeyDecoder()
        source.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = read(STDIN_FILENO, &buffer, buffer.count)
            if count <= 0 {
                continuation.finish()
                source.cancel()
                return
            }
            for key in decoder.decode(Array(buffer[0..<count])) { continuation.yield(key) }
        }
        source.setCancelHandler { continuation.finish() }
        let box = SourceBox(source: source)
        state.withLockedValue { $0.source = box }
        source.resume()
        return stream
    }
}

/// Decodes bytes into keys; escape sequences that arrive in one read are recognised.
final class KeyDecoder: Sendable {
    func decode(_ bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x1B {
                if index + 2 < bytes.count,
                    bytes[index + 1] == UInt8(ascii: "[") || bytes[index + 1] == UInt8(ascii: "O")
                {
                    switch bytes[index + 2] {
                    case UInt8(ascii: "A"): keys.append(.up)
                    case UInt8(ascii: "B"): keys.append(.down)
                    case UInt8(ascii: "C"): keys.append(.right)
                    case UInt8(ascii: "D"): keys.append(.left)
                    default: break
                    }
                    index += 3
                    // Skip the rest of longer sequences such as ESC [ 1 ; 5 C.
                    while index < bytes.count, bytes[index - 1] < 0x40 || bytes[index - 1] > 0x7E, bytes[index] != 0x1B
                    {
                        index += 1
                    }
                    continue
                }
                keys.append(.escape)
                index += 1
                continue
            }
            switch byte {
            case 0x03: keys.append(.interrupt)
            case 0x0D, 0x0A: keys.append(.enter)
            case 0x7F, 0x08: keys.append(.backspace)
            case 0x09: keys.append(.tab)
            default:
                // UTF-8: take the whole scalar.
                let length = byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
                let end = min(bytes.count, index + length)
                if let character = String(decoding: bytes[index..<end], as: UTF8.self).first {
                    keys.append(.character(character))
                }
                index = end
                continue
            }
            index += 1
        }
        return keys
    }
}

/// The saved terminal settings, restorable from signal handlers and at exit (which cannot capture context).
enum TerminalRestore {
    nonisolated(unsafe) static var saved: termios?
    nonisolated(unsafe) static var usesAlternateScreen = false
    nonisolated(unsafe) static var installed = false

    static func save(alternateScreen: Bool) {
        var current = termios()
        tcgetattr(STDIN_FILENO, &current)
        saved = current
        usesAlternateScreen = alternateScreen
        guard !installed else { return }
        installed = true
        atexit { TerminalRestore.restore() }
        for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
            signal(number) { received in
                TerminalRestore.restore()
                signal(received, SIG_DFL)
                raise(received)
            }
        }
    }

    static func restore() {
        guard var settings = saved else { return }
        if usesAlternateScreen {
            let text = Array("\u{1B}[?25h\u{1B}[?1049l".utf8)
            _ = text.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        } else {
            let text = Array("\u{1B}[?25h".utf8)
            _ = text.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        }
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &settings)
        saved = nil
        usesAlternateScreen = false
    }
}
