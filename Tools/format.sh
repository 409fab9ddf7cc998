#!/usr/bin/env bash
# Formats every tracked Swift file with the toolchain's swift format and .swift-format, leaving the generated
# code (Modules/*/Generated, checked by generate-protos.sh/generate-openapi.sh --check) as its generator wrote it.
# Tools/test.sh lints the same selection.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -z '*.swift' | grep -zv "/Generated/" | xargs -0 swift format format -i --configuration .swift-format --parallel
