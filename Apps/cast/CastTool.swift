/// `cast`'s entry point, called by the `cast` binary and by the multi-call `swift-cast` (Apps/Launchers).
public enum CastTool {
    /// Parses the command line and runs the command; exits with its code.
    public static func main() async {
        await CastCommand.main()
    }
}
