#!/usr/bin/env bash
# The soak (issue 10): `cast-soak` runs N sessions from one process to N emulated devices for M minutes with
# random commands and random faults (drops, lost replies, slow replies) and counts hung requests, resident memory
# and open descriptors. The test command runs one minute; a long run before a release (--minutes 60, -c release).
#   Tools/soak.sh [--minutes M] [--devices N] [--release]
# Ends with `N passed, M failed`: passed when nothing hung, nothing crashed, and no descriptor was left behind.
set -uo pipefail
cd "$(dirname "$0")/.."
minutes=1
devices=1000
configuration=debug
while [ $# -gt 0 ]; do
    case "$1" in
        --minutes) minutes=$2; shift 2 ;;
        --devices) devices=$2; shift 2 ;;
        --release) configuration=release; shift ;;
        *) echo "usage: Tools/soak.sh [--minutes M] [--devices N] [--release]" >&2; exit 2 ;;
    esac
done
swift build -c "$configuration" --product cast-soak > /dev/null || { echo "soak: build failed"; echo "0 passed, 1 failed"; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout $((minutes * 60 + 300)) ".build/$configuration/cast-soak" --minutes "$minutes" --devices "$devices" > "$out" 2>&1
code=$?
cat "$out"
passed=0
failed=0
if [ "$code" = 0 ] && grep -q " 0 hung$" "$out"; then passed=$((passed + 1)); else echo "FAIL soak: exit $code"; failed=$((failed + 1)); fi
# Every connection closed: at most a handful of descriptors beyond the process's own at the end.
end_fds=$(grep -o "at the end [0-9]* (devices stopped)" "$out" | grep -o "[0-9]*" | head -1)
if [ -n "$end_fds" ] && [ "$end_fds" -le 64 ]; then passed=$((passed + 1)); else echo "FAIL soak: descriptors left open: ${end_fds:-?}"; failed=$((failed + 1)); fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
