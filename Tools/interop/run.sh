#!/usr/bin/env bash
# Third-party interop against cast-receiver, with pychromecast 14.0.10 from PyPI:
#  1. pychromecast drives a whole session (pychromecast_session.py);
#  2. pychromecast starts a session and the `cast` binary observes and controls it (pychromecast_join.py);
#  3. the session again against an emulator with --device-auth (its own chain and a 2-day TLS certificate):
#     senders that never challenge keep working.
# Each runs against its own emulator. Prints every check and `N passed, M failed` (both summed) last; exits
# non-zero on any failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
venv=.build/interop-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import pychromecast" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check pychromecast==14.0.10
fi
swift build --product cast-receiver >/dev/null && swift build --product cast >/dev/null || exit 1
auth=$(mktemp -d)
receiver=
# An emulator still running when the script ends (a failed start, a timeout) is stopped too.
trap 'stop_receiver; rm -rf "$auth"' EXIT
passed=0
failed=0
status=0

# Starts an emulator (NAME, then extra flags; its wire log and the next script's pychromecast log go to
# .build/interop-NAME*); sets $port.
start_receiver() {
    local name=$1
    shift
    export INTEROP_PYCHROMECAST_LOG=".build/interop-$name-pychromecast.log"
    out=".build/interop-$name-receiver.log"
    # Replies 5 ms late, as a real device's come (in milliseconds, not microseconds): pychromecast writes from the
    # caller's thread while its worker thread reads the same SSLSocket, and a reply that arrives while the caller's
    # write is still inside OpenSSL fails that write ("EOF occurred in violation of protocol") and forces a
    # reconnection that fails the steps after it (about 1 run in 10 under load with an emulator that answers in
    # 0.1 ms; none in 20 with the delay).
    .build/debug/cast-receiver --no-mdns --port 0 --reply-delay 0.005 --wire-log ".build/interop-$name.jsonl" "$@" \
        >"$out" 2>&1 &
    receiver=$!
    # Up to a minute: with --device-auth it first makes an RSA chain, 1-2 s on an idle machine, far longer on a
    # busy one. A receiver that exits is not waited for.
    for _ in $(seq 1 1200); do
        grep -q "ready" "$out" && break
        kill -0 "$receiver" 2>/dev/null || break
        sleep 0.05
    done
    port=$(grep -o 'on 127.0.0.1:[0-9]*' "$out" | head -1 | cut -d: -f2)
    if ! grep -q "ready" "$out" || [ -z "$port" ]; then
        echo "FAIL interop: cast-receiver ($name) did not start within 60 s ($out):"
        cat "$out"
        echo "$passed passed, $((failed + 1)) failed"
        exit 1
    fi
}

stop_receiver() {
    [ -n "$receiver" ] || return 0
    kill -INT "$receiver" 2>/dev/null || true
    wait "$receiver" 2>/dev/null || true
    receiver=
}

# Runs one script, echoing its output and adding its closing counts.
run() {
    local log
    log=$(mktemp)
    # Unbuffered: a script the timeout kills still shows how far it got.
    timeout 180 "$venv/bin/python" -u "$@" | tee "$log" || status=1
    local line
    line=$(grep -E "^[0-9]+ passed, [0-9]+ failed" "$log" | tail -1)
    rm -f "$log"
    [ -n "$line" ] || { echo "FAIL $1 ended without its counts"; failed=$((failed + 1)); status=1; return; }
    passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
    failed=$((failed + $(echo "$line" | cut -d' ' -f3)))
}

start_receiver session
run Tools/interop/pychromecast_session.py 127.0.0.1 "$port"
stop_receiver
start_receiver join
run Tools/interop/pychromecast_join.py .build/debug/cast 127.0.0.1 "$port"
stop_receiver
start_receiver device-auth --device-auth --device-auth-dir "$auth"
run Tools/interop/pychromecast_session.py 127.0.0.1 "$port"
stop_receiver
echo "$passed passed, $failed failed"
[ "$status" = 0 ] && [ "$failed" = 0 ]
