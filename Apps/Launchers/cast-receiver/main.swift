// The `cast-receiver` binary: Apps/cast-receiver's command.
import cast_receiver

await CastReceiverTool.main()
