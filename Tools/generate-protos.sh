#!/usr/bin/env bash
# Regenerates Modules/CastTransport/Generated/cast_channel.pb.swift from the .proto with Debian's protoc and
# swift-protobuf's protoc-gen-swift (built from the mirrored package at the version Package.swift resolves).
# The output is committed; `--check` (run by Tools/test.sh, about a minute) regenerates into a temporary folder
# and fails on any difference.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if ! command -v protoc >/dev/null; then
    if [ "$(id -u)" = 0 ]; then apt-get install -y -qq protobuf-compiler >/dev/null; else
        echo "protoc is missing: sudo apt-get install -y protobuf-compiler" >&2; exit 1; fi
fi
# protoc-gen-swift is not a product of this package: build it from the resolved swift-protobuf checkout.
swift package resolve >/dev/null
(cd .build/checkouts/swift-protobuf && swift build -c release --product protoc-gen-swift \
    --scratch-path "$root/.build-protoc" >/dev/null)
plugin="$root/.build-protoc/release/protoc-gen-swift"
out=$(mktemp -d)
protoc --plugin=protoc-gen-swift="$plugin" --swift_out="$out" --swift_opt=Visibility=Package \
    -I Modules/CastTransport/Protos Modules/CastTransport/Protos/cast_channel.proto
if [ "${1:-}" = "--check" ]; then
    diff -u Modules/CastTransport/Generated/cast_channel.pb.swift "$out/cast_channel.pb.swift"
    echo "generated protobuf code is fresh"
else
    cp "$out/cast_channel.pb.swift" Modules/CastTransport/Generated/
    echo "wrote Modules/CastTransport/Generated/cast_channel.pb.swift"
fi
rm -rf "$out"
