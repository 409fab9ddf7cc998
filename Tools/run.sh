#!/usr/bin/env bash
# The main job: build swift-cast and run `cast demo`, a scripted tour against an in-process emulated device
# (no hardware needed).
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/setup.sh
swift build --product cast
exec .build/debug/cast demo "$@"
