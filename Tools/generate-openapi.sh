#!/usr/bin/env bash
# Regenerates Modules/CastService/Generated/*.swift (types and server stubs) from Modules/CastService/openapi.yaml with
# swift-openapi-generator (pinned at the version below, built once from the mirrored package
# into .build-openapi). The output is committed so ordinary builds need no generator; `--check`
# (run by Tools/test.sh) regenerates into a temporary folder and fails on any difference.
#
# Building the generator takes about ten minutes on a fresh clone, so each generation also writes a stamp
# (Tools/openapi-generated.sha256: the hashes of this script, the document and the generator's configuration,
# and of the generated files). `--check` trusts a stamp that matches both and regenerates otherwise;
# CAST_OPENAPI_FULL_CHECK=1 always regenerates.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
version=1.14.3
stamp=Tools/openapi-generated.sha256
digest() {
    local inputs outputs
    inputs=$(cat Tools/generate-openapi.sh Modules/CastService/openapi.yaml \
        Modules/CastService/openapi-generator-config.yaml | sha256sum | cut -d" " -f1)
    outputs=$(cat Modules/CastService/Generated/*.swift | sha256sum | cut -d" " -f1)
    echo "inputs $inputs generated $outputs"
}
if [ "${1:-}" = "--check" ] && [ "${CAST_OPENAPI_FULL_CHECK:-0}" = 0 ] && [ -f "$stamp" ] \
    && [ "$(cat "$stamp")" = "$(digest)" ]; then
    echo "generated OpenAPI code is fresh (its stamp matches the inputs and the generated files)"
    exit 0
fi
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
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(digest)" ] \
        || echo "note: $stamp is out of date; Tools/generate-openapi.sh rewrites it"
    echo "generated OpenAPI code is fresh (regenerated and compared)"
else
    rm -f Modules/CastService/Generated/*.swift
    cp "$out"/*.swift Modules/CastService/Generated/
    digest > "$stamp"
    echo "wrote Modules/CastService/Generated/ ($(ls "$out" | wc -l) files) and $stamp"
fi
