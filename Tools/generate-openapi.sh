#!/usr/bin/env bash
# Regenerates Modules/CastService/Generated/*.swift (types and server stubs) from Modules/CastService/openapi.yaml with
# swift-openapi-generator (pinned at the version below, built once from the mirrored package
# into .build-openapi). The output is committed so ordinary builds need no generator; `--check`
# (run by Tools/test.sh) regenerates into a temporary folder and fails on any difference.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
version=1.14.3
source=.build-openapi/swift-openapi-generator-$version
generator=$root/.build-openapi/build/release/swift-openapi-generator
if [ ! -x "$generator" ]; then
    [ -d "$source" ] || git clone -q --branch "$version" https://github.com/apple/swift-openapi-generator "$source" 2>/dev/null
    (cd "$source" && swift build -c release --product swift-openapi-generator \
        --scratch-path "$root/.build-openapi/build" > /dev/null)
fi
out=$(mktemp -d)
trap 'rm -rf "$out" "$out.log"' EXIT
"$generator" generate Modules/CastService/openapi.yaml \
    --config Modules/CastService/openapi-generator-config.yaml --output-directory "$out" > "$out.log" 2>&1 || { cat "$out.log"; exit 1; }
# The generator imports URL, Data and Date from classic Foundation, which would link ICU's data into the binary;
# FoundationEssentials has all three.
for file in "$out"/*.swift; do
    sed -i -e 's/\bFoundation\.\(URL\|Data\|Date\)\b/FoundationEssentials.\1/g' "$file"
done
if [ "${1:-}" = "--check" ]; then
    diff -ru Modules/CastService/Generated "$out"
    echo "generated OpenAPI code is fresh"
else
    rm -f Modules/CastService/Generated/*.swift
    cp "$out"/*.swift Modules/CastService/Generated/
    echo "wrote Modules/CastService/Generated/ ($(ls "$out" | wc -l) files)"
fi
