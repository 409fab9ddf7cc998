/// The version the command-line tools print for `--version`: the `VERSION` file at the repository's top and the
/// git commit of the sources, e.g. `0.1.0 (f5c5e6c)` (the bare version outside a git checkout). The VersionStamp
/// build plugin writes `stampedVersion` with Tools/version-stamp.sh when VERSION or git's HEAD changes.
public enum CastVersion {
    /// `0.1.0 (f5c5e6c)`.
    public static var description: String { stampedVersion }
}
