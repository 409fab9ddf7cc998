#!/usr/bin/env bash
# The flakiness check of issue 10: `swift test` in parallel (as a contributor runs it), N runs in a row, while
# another process keeps every core busy. Prints each run's closing line and `stress: R runs, F failed` last;
# exits non-zero when any run failed. A run that has not finished after RUN_LIMIT seconds (default 600) is a hang:
# it is stopped and the tests that started but never finished are listed.
# Usage: Tools/stress-tests.sh [RUNS] (default 10).
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
limit=${RUN_LIMIT:-600}
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
    # Line-buffered, so a hang leaves a complete record of what started.
    timeout --signal=KILL "$limit" stdbuf -oL -eL swift test --skip-build > "$log" 2>&1
    code=$?
    line=$(grep -E "Test run with [0-9]+ tests" "$log" | tail -1)
    if [ "$code" = 137 ]; then line="HUNG after $limit s"; fi
    echo "run $run: exit $code: $line"
    if [ "$code" != 0 ]; then
        failed=$((failed + 1))
        grep -E "✘.*recorded an issue" "$log" | head -10
        if [ "$code" = 137 ]; then
            python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
started = re.findall(r'◇ Test (.+?) started\.', text)
finished = set(re.findall(r'[✔✘━] Test (.+?) (?:passed|failed) after', text))
for name in started:
    if name not in finished:
        print("  unfinished:", name)
PY
        fi
        cp "$log" ".build/stress-run-$run.log"
    fi
done
rm -f "$log"
echo "stress: $runs runs, $failed failed"
[ "$failed" = 0 ]
