// swift-cast — Apache-2.0

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How many colors the terminal shows, which decides the escape sequences ``TerminalStyler`` writes.
public struct TerminalColorMode: Sendable, Hashable, CustomStringConvertible {
    private enum Base: String, Hashable, Sendable {
        case none, ansi16, ansi256, trueColor
    }

    private let base: Base

    private init(_ base: Base) {
        self.base = base
    }

    /// No escape sequences at all: not a terminal, `NO_COLOR`, or `TERM=dumb`.
    public static let none = TerminalColorMode(.none)
    /// The 16 standard colors (SGR 30–37, 90–97), plus attributes.
    public static let ansi16 = TerminalColorMode(.ansi16)
    /// The xterm 256-color palette (SGR 38;5;N).
    public static let ansi256 = TerminalColorMode(.ansi256)
    /// 24-bit color (SGR 38;2;R;G;B).
    public static let trueColor = TerminalColorMode(.trueColor)

    /// `none`, `ansi16`, `ansi256` or `trueColor`.
    public var description: String { base.rawValue }

    /// Decides the mode from the environment, in this order:
    ///
    /// 1. not a TTY → ``none``;
    /// 2. `NO_COLOR` set to a non-empty value (no-color.org) → ``none``;
    /// 3. `TERM=dumb` → ``none``;
    /// 4. `COLORTERM` is `truecolor` or `24bit` → ``trueColor``;
    /// 5. `TERM` contains `256color` → ``ansi256``;
    /// 6. otherwise → ``ansi16``.
    ///
    /// - Parameters:
    ///   - environment: The process environment (`ProcessInfo.processInfo.environment`).
    ///   - isTTY: Whether the output goes to a terminal (`isatty`).
    public static func detect(environment: [String: String], isTTY: Bool) -> TerminalColorMode {
        guard isTTY else { return .none }
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty {
            return .none
        }
        let term = environment["TERM"] ?? ""
        if term == "dumb" {
            return .none
        }
        if let colorTerm = environment["COLORTERM"]?.lowercased(), colorTerm == "truecolor" || colorTerm == "24bit" {
            return .trueColor
        }
        if term.contains("256color") {
            return .ansi256
        }
        return .ansi16
    }

    /// ``detect(environment:isTTY:)`` for this process's environment and whether `fileDescriptor` (standard
    /// output by default) is a terminal.
    public static func detect(environment: [String: String], fileDescriptor: Int32 = 1) -> TerminalColorMode {
        detect(environment: environment, isTTY: isatty(fileDescriptor) == 1)
    }
}
