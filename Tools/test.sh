#!/usr/bin/env bash
# The whole test suite: Swift unit and integration tests, then third-party interop.
# Installs what it needs when run as root; otherwise prints the apt-get line and stops.
set -uo pipefail
cd "$(dirname "$0")/.."
Tools/setup.sh test || exit 1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0

echo "== swift build"
swift build --build-tests 2>&1 | grep -Ev "^\[[0-9]+/[0-9]+\]" || true
[ "${PIPESTATUS[0]}" = 0 ] || { echo "build failed"; exit 1; }

echo "== swift test"
swift test --skip-build 2>&1 | tee "$log" | grep -Ev "^(◇|↳|Test Suite|\s*Executed)" | grep -v "passed after" || true
swift_status=${PIPESTATUS[0]}
swift_passed=$(grep -Eo "Test run with [0-9]+ tests? in [0-9]+ suites? passed" "$log" | grep -Eo "[0-9]+" | head -1)
swift_failed=$(grep -Eo "Test run with [0-9]+ tests? in [0-9]+ suites? failed" "$log" | grep -Eo "[0-9]+" | head -1)
grep -E "Test run with" "$log" | tail -1
[ "$swift_status" = 0 ] || failed=1

echo "== interop: pychromecast 14.0.10 against cast-receiver"
Tools/interop/run.sh | tee "$log"
[ "${PIPESTATUS[0]}" = 0 ] || failed=1
interop=$(tail -1 "$log")
interop_passed=$(echo "$interop" | grep -Eo "^[0-9]+ passed" | grep -Eo "[0-9]+" || echo 0)
interop_failed=$(echo "$interop" | grep -Eo "[0-9]+ failed" | grep -Eo "[0-9]+" || echo 1)

passed=$(( ${swift_passed:-0} + ${interop_passed:-0} ))
failures=$(( ${swift_failed:-0} + ${interop_failed:-0} ))
[ "$failed" = 0 ] || [ "$failures" -gt 0 ] || failures=1
echo "total: $passed passed, $failures failed"
exit $failed
