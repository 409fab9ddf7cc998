/// `cast-receiver`'s entry point, called by the `cast-receiver` binary and by the multi-call `swift-cast`
/// (Apps/Launchers).
public enum CastReceiverTool {
    /// Parses the command line and runs the command; exits with its code.
    public static func main() async {
        await CastReceiverCommand.main()
    }
}
