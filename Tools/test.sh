#!/usr/bin/env bash
# The whole test suite: Swift unit and integration tests, third-party interop, CLI end to end.
# Installs what it needs when run as root; otherwise prints the apt-get line and stops.
# Ends with `total: N passed, M failed` summed over every suite.
set -uo pipefail
cd "$(dirname "$0")/.."
Tools/setup.sh test || exit 1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
total_passed=0
total_failed=0
status=0

# Starts a phase: prints its heading and closes the previous one, whose time the summary at the end lists (the
# test command must stay well under CI's limit; these say where its minutes go).
phase_times=""
phase_name=""
phase_start=$SECONDS
phase() {
    end_phase
    phase_name=${1%% (*}
    phase_name=${phase_name%%:*}
    echo "== $1"
}
end_phase() {
    [ -n "$phase_name" ] && phase_times="$phase_times  $phase_name: $((SECONDS - phase_start)) s
"
    phase_start=$SECONDS
}

# Adds a finished suite's counts: Swift's "Test run with N tests … passed/failed" or a plain "N passed, M failed".
count() {
    local passed failed tests
    tests=$(grep -Eo "Test run with [0-9]+ tests? in [0-9]+ suites? (passed|failed)" "$log" | head -1 | grep -Eo "[0-9]+" | head -1)
    if [ -n "$tests" ]; then
        # A failed run names each failed test; the others passed.
        failed=$(grep -E "^✘ Test .* failed after" "$log" | grep -Evc "^✘ Test run with")
        passed=$((tests - failed))
    else
        passed=$(grep -Eo "^[0-9]+ passed, [0-9]+ failed" "$log" | tail -1 | grep -Eo "^[0-9]+")
        failed=$(grep -Eo "^[0-9]+ passed, [0-9]+ failed" "$log" | tail -1 | grep -Eo "[0-9]+ failed" | grep -Eo "[0-9]+")
    fi
    total_passed=$((total_passed + ${passed:-0}))
    total_failed=$((total_failed + ${failed:-0}))
}

# Runs one pass/fail check: its last line when it passes, its last 20 when it fails; counts it as one.
check() {
    if "$@" > "$log" 2>&1; then
        tail -1 "$log"
        total_passed=$((total_passed + 1))
    else
        tail -20 "$log"
        total_failed=$((total_failed + 1))
        status=1
    fi
}

# systemd-analyze verify on castd's unit (with a binary that exists here), which must print nothing.
verify_castd_unit() {
    local dir output verified=0
    dir=$(mktemp -d)
    sed "s#/usr/local/bin/castd#/bin/true#" Tools/castd.service > "$dir/castd.service"
    output=$(systemd-analyze verify "$dir/castd.service" 2>&1) && [ -z "$output" ] || verified=1
    rm -rf "$dir"
    [ "$verified" = 0 ] || { echo "$output"; return 1; }
    echo "castd.service: verified"
}

phase "swift format lint (.swift-format; generated protobuf code excluded)"
git ls-files -z '*.swift' | grep -zv "/Generated/" | xargs -0 swift format lint --strict --configuration .swift-format --parallel > "$log" 2>&1
lint_status=$?
if [ "$lint_status" = 0 ] && [ ! -s "$log" ]; then
    echo "lint: clean"
    total_passed=$((total_passed + 1))
else
    head -20 "$log"
    echo "lint: $(wc -l < "$log") findings (fix with: swift format format -i <files>)"
    total_failed=$((total_failed + 1))
    status=1
fi

phase "generated protobuf code is fresh (Debian protoc + swift-protobuf's plugin)"
check Tools/generate-protos.sh --check

phase "generated OpenAPI code is fresh (its stamp, else swift-openapi-generator; CAST_OPENAPI_FULL_CHECK=1 always regenerates)"
check Tools/generate-openapi.sh --check

phase "castd's systemd unit verifies (systemd-analyze verify Tools/castd.service)"
check verify_castd_unit

phase "package: Tools/package.sh's .deb and tarball, installed into a clean Debian root as root (Tools/package-test.sh; CAST_PACKAGE_CLEAN_ROOT=0 skips the root)"
# The clean root (debootstrap from the Debian mirror) costs 25-80 s, so it runs every time it can: as root.
if [ "$(id -u)" = 0 ]; then
    CAST_PACKAGE_CLEAN_ROOT=${CAST_PACKAGE_CLEAN_ROOT:-1} check Tools/package-test.sh
else
    check Tools/package-test.sh
fi

phase "swift build"
swift build --build-tests 2>&1 | grep -Ev "^\[[0-9]+/[0-9]+\]"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "build failed"; echo "total: 0 passed, 1 failed"; exit 1; }

phase "documentation: every library product's DocC catalog, warnings as errors (Tools/docs.sh)"
check Tools/docs.sh

phase "fuzz corpora replayed through every parser (Tools/Fuzz; fuzzing itself: Tools/fuzz.sh)"
replay_passed=0
replay_failed=0
for target in $(.build/debug/cast-fuzz list | cut -f1); do
    if .build/debug/cast-fuzz replay "$target" "Tools/Fuzz/corpus/$target" > "$log" 2>&1; then
        replay_passed=$((replay_passed + 1))
    else
        echo "FAIL replay $target:"; tail -5 "$log"
        replay_failed=$((replay_failed + 1))
        status=1
    fi
done
echo "$replay_passed passed, $replay_failed failed"
total_passed=$((total_passed + replay_passed))
total_failed=$((total_failed + replay_failed))

phase "swift test"
# The grep's own "no match" stays inside its braces: with pipefail, a `|| true` after the pipeline would run
# whenever swift test failed and replace PIPESTATUS, hiding the failure.
swift test --skip-build --no-parallel 2>&1 | tee "$log" | { grep -E "✘|error:|recorded an issue|Test run with" || true; }
[ "${PIPESTATUS[0]}" = 0 ] || status=1
count

phase "swift test as an unprivileged user (when run as root: user nobody; reading the checkout is all it may do)"
# Everything else runs as root, which hides what only root may do: a socket option once made every connection fail
# for everyone else. The same tests again as nobody, allowed to read (not write) what root owns, so that a checkout
# in a private directory still works; they skip what needs root (the network-namespace labs).
if [ "$(id -u)" = 0 ]; then
    tests="$(swift build --show-bin-path)/swift-castPackageTests.xctest"
    (cd /tmp && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+dac_read_search \
        --ambient-caps=+dac_read_search env HOME=/tmp TMPDIR=/tmp NO_COLOR=1 "$tests" --testing-library swift-testing) 2>&1 |
        tee "$log" | { grep -E "✘|error:|recorded an issue|Test run with" || true; }
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    count
else
    echo "skipped: this whole run is unprivileged"
fi

phase "fuzzing: every libFuzzer target for ${CAST_FUZZ_SECONDS:=5} seconds (Tools/fuzz.sh; ASan build in .build-fuzz)"
Tools/fuzz.sh --seconds "$CAST_FUZZ_SECONDS" > "$log" 2>&1 || status=1
grep -E "CRASH|^    |^fuzz:" "$log"
# Each target that ran without a crash is one passed check.
fuzz_targets=$(grep -Eo "^fuzz: [0-9]+ targets" "$log" | grep -Eo "[0-9]+")
fuzz_crashed=$(grep -c ": CRASH" "$log")
if [ -z "$fuzz_targets" ] || [ "$fuzz_targets" = 0 ]; then
    tail -5 "$log"
    total_failed=$((total_failed + 1))
    status=1
else
    total_passed=$((total_passed + fuzz_targets - fuzz_crashed))
    total_failed=$((total_failed + fuzz_crashed))
fi

# --- discovery lab ---
# CastDiscovery against real avahi-daemons in a hermetic lab (Tools/mdns-lab.sh: network namespaces with a private
# D-Bus bus each; nothing is multicast on this machine's interfaces). The run above skipped the lab suites but
# counted them, so they come out of the total here and this run's counts go in instead.
lab_skipped=$(grep -c 'Test "[^"]*" skipped: "needs the hermetic mDNS lab' "$log")
total_passed=$((total_passed - lab_skipped))
phase "discovery lab: CastDiscovery against avahi-daemon in network namespaces"
if [ "$(id -u)" != 0 ]; then
    echo "discovery lab: SKIPPED ($lab_skipped tests): network namespaces need root; run Tools/test.sh as root"
else
    lab_ns=castlab$$
    trap 'MDNS_NS=$lab_ns Tools/mdns-lab.sh stop; rm -f "$log"' EXIT
    venv=.build/discovery-venv
    if ! "$venv/bin/python" -c "import zeroconf" 2> /dev/null; then
        python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check zeroconf==0.154.0
    fi
    if lab_env=$(MDNS_NS=$lab_ns Tools/mdns-lab.sh start); then
        (eval "$lab_env" && timeout 600 swift test --skip-build --filter 'CastDiscoveryTests\.[A-Za-z]+LabTests') \
            > "$log" 2>&1 || status=1
        grep -E "✘|error:|recorded an issue|Test run with" "$log"
        count
    else
        echo "discovery lab: the lab did not start"
        status=1
    fi
    MDNS_NS=$lab_ns Tools/mdns-lab.sh stop
    trap 'rm -f "$log"' EXIT
fi
# --- end discovery lab ---

phase "fault lab: sender and receiver in network namespaces; link loss, blackhole, packet loss, kills, slow and flooding devices"
Tools/faults.sh > "$log" 2>&1 || status=1
grep -E "^FAIL|figure:|passed, |SKIPPED" "$log"
count

phase "MQTT sites: two castd in network namespaces on one mosquitto broker (states, a routed command, a last will)"
Tools/mqtt-sites.sh > "$log" 2>&1 || status=1
grep -E "^FAIL|figure:|passed, |SKIPPED" "$log"
count

phase "web remote: castd's page in headless Chromium against emulated devices (Tools/web-remote.sh)"
Tools/web-remote.sh > "$log" 2>&1 || status=1
grep -E "^FAIL|figure:|passed, |^artefacts" "$log"
count

phase "API conformance: schemathesis against castd's OpenAPI document (Tools/schemathesis.sh)"
SCHEMATHESIS_NO_BUILD=1 Tools/schemathesis.sh > "$log" 2>&1 || status=1
grep -E "^FAIL|passed, |^schemathesis.sh:" "$log"
count

phase "soak: 1,000 sessions for one minute with random commands and faults (Tools/soak.sh)"
Tools/soak.sh --minutes 1 --devices 1000 > "$log" 2>&1 || status=1
grep -E "^FAIL|^soak:|passed, " "$log"
count

phase "interop: pychromecast 14.0.10 against cast-receiver"
Tools/interop/run.sh > "$log" 2>&1 || status=1
grep -E "^FAIL|passed, " "$log"
count

phase "examples: each program of Examples/ against its own cast-receiver (Tools/examples.sh)"
timeout 600 Tools/examples.sh > "$log" 2>&1 || status=1
grep -E "^FAIL|^    |passed, " "$log"
count

phase "cli: the cast binary against cast-receiver (JSON, exit codes, tmux-driven terminal UIs)"
timeout 900 python3 Tools/cli-e2e/run.py > "$log" 2>&1 || status=1
grep -E "^FAIL|passed, " "$log"
count

end_phase
echo "time per phase (total $SECONDS s):"
printf "%s" "$phase_times"
[ "$status" = 0 ] || [ "$total_failed" -gt 0 ] || total_failed=1
[ "$total_failed" = 0 ] || status=1
echo "total: $total_passed passed, $total_failed failed"
exit $status
