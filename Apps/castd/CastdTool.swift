/// `castd`'s entry point, called by the `castd` binary and by the multi-call `swift-cast` (Apps/Launchers).
public enum CastdTool {
    /// Parses the command line and runs the command; exits with its code.
    public static func main() async {
        await Castd.main()
    }
}
