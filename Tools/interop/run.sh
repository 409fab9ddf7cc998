#!/usr/bin/env bash
# Third-party interop: pychromecast 14.0.10 from PyPI drives a whole session against cast-receiver.
# Prints the script's checks and `N passed, M failed` last; exits non-zero on any failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
venv=.build/interop-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import pychromecast" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check pychromecast==14.0.10
fi
swift build --product cast-receiver >/dev/null
out=$(mktemp)
.build/debug/cast-receiver --no-mdns --port 0 --wire-log .build/interop-wire.jsonl >"$out" 2>&1 &
receiver=$!
trap 'kill -INT $receiver 2>/dev/null || true; wait $receiver 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 1 200); do grep -q "ready" "$out" && break; sleep 0.05; done
port=$(grep -o 'on 127.0.0.1:[0-9]*' "$out" | head -1 | cut -d: -f2)
[ -n "$port" ] || { echo "interop: cast-receiver did not start:"; cat "$out"; exit 1; }
timeout 180 "$venv/bin/python" Tools/interop/pychromecast_session.py 127.0.0.1 "$port"
