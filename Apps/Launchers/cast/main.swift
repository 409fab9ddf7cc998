// The `cast` binary: Apps/cast's command.
import cast

await CastTool.main()
