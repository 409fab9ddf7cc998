#!/usr/bin/env bash
# The flakiness check of issue 10: `swift test` in parallel (as a contributor runs it), N runs in a row, while
# another process keeps every core busy. Prints each run's closing line and `stress: R runs, F failed` last;
# exits non-zero when any run failed. Usage: Tools/stress-tests.sh [RUNS] (default 10).
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
swift build --build-tests 2>&1 | grep -E "error:" && exit 1
# Saturate every core with busy loops at normal priority for the whole check.
burners=()
for _ in $(seq 1 "$(nproc)"); do
    (while :; do :; done) &
    burners+=($!)
done
trap 'kill "${burners[@]}" 2>/dev/null' EXIT
failed=0
log=$(mktemp)
for run in $(seq 1 "$runs"); do
    swift test --skip-build > "$log" 2>&1
    code=$?
    line=$(grep -E "Test run with [0-9]+ tests" "$log" | tail -1)
    echo "run $run: exit $code: $line"
    if [ "$code" != 0 ]; then
        failed=$((failed + 1))
        grep -E "✘.*recorded an issue" "$log" | head -10
        cp "$log" ".build/stress-run-$run.log"
    fi
done
rm -f "$log"
echo "stress: $runs runs, $failed failed"
[ "$failed" = 0 ]
