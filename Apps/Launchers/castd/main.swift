// The `castd` binary: Apps/castd's command.
import castd

await CastdTool.main()
