// The multi-call `swift-cast` binary: cast, cast-receiver and castd in one, which runs the tool named by the name it
// was started under (argv[0]: the symlinks castd and cast-receiver), else cast. Tools/package.sh installs it as
// /usr/bin/cast with the two symlinks: the statically linked Swift runtime, Foundation and its ICU data are then
// shipped once instead of three times.
import cast
import cast_receiver
import castd

switch CommandLine.arguments.first?.split(separator: "/").last {
case "castd": await CastdTool.main()
case "cast-receiver": await CastReceiverTool.main()
default: await CastTool.main()
}
