#!/usr/bin/env bash
# API conformance run: schemathesis (pinned, from PyPI, in .build/schemathesis-venv) generates valid and invalid
# requests (`--mode all`) from Modules/CastService/openapi.yaml and sends them to a castd that serves two emulated
# Chromecasts (cast-receiver) and a media folder holding a 2 s H.264 clip. Gated checks: no 5xx
# (not_a_server_error), every status, content type, header and body as the spec declares them.
#
# Real device ids: schemathesis draws `deviceId` (and `itemId`, the app ids, `file`, `url`, the custom namespace
# and `Last-Event-ID`) from dictionaries written below with the real values, most of the time, else random
# strings (which castd answers 404). Before the fuzzer starts, a file load and a queue load put media on the
# devices, so the media, track and queue operations meet a receiver that plays something.
#
# GET /v1/events (Server-Sent Events) never ends. It is fuzzed all the same, time-boxed: schemathesis reads an
# event stream until `max-stream-events` events or the operation's `request-timeout` (here 1 event or 0.5 s), then
# closes it and checks the status, the content type and each event it read against the spec. Last-Event-ID "0"
# makes castd replay the events it keeps, so there are events to check.
#
# schemathesis always sends `Accept: */*`; three narrower Accept headers are tried by hand (never a 5xx).
#
# castd's per-client rate limit (50/s, burst 100) would answer the fuzzer 429s; no flag changes it, so castd runs
# with a profile whose <daemon requestsPerSecond="none"/> turns it off (and short timeouts bound slow answers).
#
# Prints `PASS what` / `FAIL what: detail` lines and `N passed, M failed`; exits 1 when anything failed. The
# schemathesis log and its NDJSON and JUnit reports stay in .build/schemathesis-report/ for a closer look
# (`st replay` needs the same servers, so reproduce with the curl lines there instead).
#
# Environment: SCHEMATHESIS_SEED (fixed by default, for repeatable runs), SCHEMATHESIS_MAX_EXAMPLES (40),
# SCHEMATHESIS_CHECKS (the gated checks, comma-separated; e.g. add negative_data_rejection to see which invalid
# inputs castd accepts), SCHEMATHESIS_NO_BUILD=1 to use the binaries in .build/debug as they are.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

version=4.32.5
venv=$root/.build/schemathesis-venv
report=$root/.build/schemathesis-report
seed=${SCHEMATHESIS_SEED:-1724}
examples=${SCHEMATHESIS_MAX_EXAMPLES:-40}
gated=not_a_server_error,status_code_conformance,content_type_conformance
gated+=,response_headers_conformance,response_schema_conformance,unsupported_method
checks=${SCHEMATHESIS_CHECKS:-$gated}
echo_app=E1C40A99
echo_namespace=urn:x-cast:com.example.echo
started=$SECONDS

results=$(mktemp)
tmp=$(mktemp -d)
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null; done
    for pid in "${pids[@]}"; do wait "$pid" 2> /dev/null; done
    rm -rf "$tmp" "$results"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pass() { echo "PASS $*" | tee -a "$results"; }
fail() { echo "FAIL $*" | tee -a "$results"; }
finish() {
    local passed failed
    passed=$(grep -c '^PASS' "$results")
    failed=$(grep -c '^FAIL' "$results")
    echo "schemathesis.sh: $((SECONDS - started)) s (seed $seed, $examples examples per operation)"
    echo "$passed passed, $failed failed"
    [ "$failed" = 0 ]
    exit $?
}
# Waits up to $2 seconds for the file $1 to contain a line matching $3.
wait_for_line() {
    local deadline=$((SECONDS + $2))
    until grep -qE "$3" "$1" 2> /dev/null; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}

# --- schemathesis, pinned, in its own venv
if ! "$venv/bin/schemathesis" --version 2> /dev/null | grep -qx "schemathesis, version $version"; then
    echo "== installing schemathesis $version into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv" > "$tmp/pip.log" 2>&1 \
        && "$venv/bin/pip" install -q --disable-pip-version-check "schemathesis==$version" >> "$tmp/pip.log" 2>&1
    if [ $? != 0 ]; then
        tail -20 "$tmp/pip.log"
        fail "setup: schemathesis $version did not install (python3 -m venv, pip install schemathesis==$version)"
        finish
    fi
fi

# --- the two binaries (SwiftPM builds only the last of several --product options: one build each)
if [ "${SCHEMATHESIS_NO_BUILD:-0}" != 1 ]; then
    echo "== swift build --product castd, --product cast-receiver"
    for product in castd cast-receiver; do
        if ! swift build --product "$product" > "$tmp/build.log" 2>&1; then
            grep -E "error:" "$tmp/build.log" | head -20
            fail "setup: swift build --product $product failed"
            finish
        fi
    done
fi
for binary in castd cast-receiver; do
    [ -x ".build/debug/$binary" ] || { fail "setup: .build/debug/$binary is missing"; finish; }
done

# --- a media folder with a 2 s clip, castd's state directory and profile
mkdir -p "$tmp/media" "$tmp/state" "$tmp/work"
if ! ffmpeg -nostdin -loglevel error -f lavfi -i testsrc=duration=2:size=320x240:rate=25 -c:v libx264 \
    -pix_fmt yuv420p -movflags +faststart "$tmp/media/clip.mp4"; then
    fail "setup: ffmpeg could not make the test clip"
    finish
fi
cat > "$tmp/profile.xml" << 'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<castProfile xmlns="urn:swift-cast:profile:1">
  <timeouts connect="2s" request="3s" launch="5s"/>
  <session resumeSavedSessions="false"/>
  <daemon requestsPerSecond="none"/>
</castProfile>
EOF

# --- two emulated devices, then castd serving them
echo "== starting cast-receiver (2 devices) and castd"
.build/debug/cast-receiver --no-mdns --port 0 --devices 2 --echo-app "$echo_app=$echo_namespace" \
    > "$tmp/receiver.log" 2>&1 &
pids+=($!)
if ! wait_for_line "$tmp/receiver.log" 30 "^cast-receiver: ready"; then
    cat "$tmp/receiver.log"
    fail "setup: cast-receiver did not print 'ready' within 30 s"
    finish
fi
mapfile -t device_ports < <(sed -nE 's/^cast-receiver: ".*" id=.* on 127\.0\.0\.1:([0-9]+)$/\1/p' "$tmp/receiver.log")
if [ "${#device_ports[@]}" != 2 ]; then
    cat "$tmp/receiver.log"
    fail "setup: cast-receiver did not list 2 devices"
    finish
fi

# Only the profile above: no CAST_* variable of the caller's environment may change castd's settings.
castd_env=(env)
while read -r name; do castd_env+=(-u "$name"); done < <(compgen -e | grep '^CAST_')
"${castd_env[@]}" .build/debug/castd serve --profile "$tmp/profile.xml" --no-mdns \
    --host "127.0.0.1:${device_ports[0]}" --host "127.0.0.1:${device_ports[1]}" --listen 127.0.0.1:0 \
    --state-directory "$tmp/state" --media-folder "$tmp/media" > "$tmp/castd.log" 2>&1 &
pids+=($!)
if ! wait_for_line "$tmp/castd.log" 30 "^castd: listening on http://"; then
    cat "$tmp/castd.log"
    fail "setup: castd did not print 'listening' within 30 s"
    finish
fi
base=$(sed -nE 's#^castd: listening on (http://[0-9.]+:[0-9]+) .*#\1#p' "$tmp/castd.log" | head -1)
device_ids=("static:127.0.0.1:${device_ports[0]}" "static:127.0.0.1:${device_ports[1]}")
encoded=("${device_ids[@]//:/%3A}")
echo "castd at $base; devices ${device_ids[*]}"

# --- media on both devices before the fuzzer: a file load, and a queue of a file and two URLs
listed=$(curl -s --max-time 10 "$base/v1/devices")
if grep -q "\"${device_ids[0]}\"" <<< "$listed" && grep -q "\"${device_ids[1]}\"" <<< "$listed"; then
    pass "GET /v1/devices lists both emulated devices"
else
    fail "GET /v1/devices lists both emulated devices: $listed"
fi
answer=$(curl -s --max-time 15 -w ' %{http_code}' -X POST -H 'Content-Type: application/json' \
    -d '{"file":"clip.mp4"}' "$base/v1/devices/${encoded[0]}/media")
if [[ "$answer" == *" 200" && "$answer" == *'"playerState":"PLAYING"'* ]]; then
    pass "POST /v1/devices/${encoded[0]}/media {\"file\":\"clip.mp4\"} plays the clip from the media folder"
else
    fail "POST /v1/devices/${encoded[0]}/media {\"file\":\"clip.mp4\"} plays the clip: $(tr -s ' \n' ' ' <<< "$answer")"
fi
answer=$(curl -s --max-time 15 -w ' %{http_code}' -X POST -H 'Content-Type: application/json' \
    -d '{"items":[{"file":"clip.mp4"},{"url":"http://127.0.0.1:9/b.mp4"},{"url":"http://127.0.0.1:9/c.mp4"}]}' \
    "$base/v1/devices/${encoded[1]}/queue")
if [[ "$answer" == *" 200" ]]; then
    pass "POST /v1/devices/${encoded[1]}/queue loads a queue of the clip and two URLs"
else
    fail "POST /v1/devices/${encoded[1]}/queue loads a queue: $(tr -s ' \n' ' ' <<< "$answer")"
fi

# --- Accept: schemathesis always sends `*/*`; clients send narrower ones. Whatever they ask, castd answers JSON
# (problems as application/problem+json), and a client's Accept header never turns an answer into a 5xx.
for accept in application/json application/problem+json text/html; do
    found=$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' -H "Accept: $accept" "$base/v1/devices")
    missing=$(curl -s -o "$tmp/missing.json" --max-time 10 -w '%{http_code}' -H "Accept: $accept" \
        "$base/v1/devices/no-such-device")
    invalid=$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' -H "Accept: $accept" -X PUT \
        -H 'Content-Type: application/json' -d '{"level":2}' "$base/v1/devices/${encoded[0]}/volume")
    if [ "$found/$missing/$invalid" = 200/404/400 ]; then
        pass "Accept: $accept — GET /v1/devices 200, GET /v1/devices/no-such-device 404, PUT volume {\"level\":2} 400"
    else
        fail "Accept: $accept — GET /v1/devices $found (want 200)," \
            "GET /v1/devices/no-such-device $missing (want 404), PUT volume {\"level\":2} $invalid (want 400):" \
            "$(head -c 300 "$tmp/missing.json" | tr -s ' \n' ' ')"
    fi
done

# --- schemathesis' configuration: the real values it mixes into the generated ones
cat > "$tmp/schemathesis.toml" << EOF
seed = $seed
request-timeout = 10

[cache]
enabled = false

[dictionaries.devices]
values = ["${device_ids[0]}", "${device_ids[1]}"]
[dictionaries.items]
values = [1, 2, 3, 4, 5, 6]
[dictionaries.files]
values = ["clip.mp4", "$tmp/media/clip.mp4"]
[dictionaries.urls]
values = ["http://127.0.0.1:9/video.mp4"]
[dictionaries.apps]
values = ["CC1AD845", "$echo_app"]
[dictionaries.namespaces]
values = ["$echo_namespace", "urn:x-cast:com.google.cast.media"]
[dictionaries.events]
values = ["0", "1"]

[parameters]
"path.deviceId" = { dictionary = "devices", probability = 0.7 }
"path.itemId" = { dictionary = "items", probability = 0.5 }
"path.namespace" = { dictionary = "namespaces", probability = 0.5 }
"header.Last-Event-ID" = { dictionary = "events", probability = 0.5 }
"body.appId" = { dictionary = "apps", probability = 0.5 }
"body.file" = { dictionary = "files", probability = 0.5 }
"body.url" = { dictionary = "urls", probability = 0.5 }
"body.items[*].file" = { dictionary = "files", probability = 0.5 }
"body.items[*].url" = { dictionary = "urls", probability = 0.5 }

# The event stream never ends: read one event or for 0.5 s, then check what came.
[[operations]]
include-operation-id = "streamEvents"
request-timeout = 0.5
max-stream-events = 1
EOF

# --- the run (in a scratch directory: schemathesis and Hypothesis keep nothing between runs)
echo "== schemathesis $version: $checks; --mode all, $examples examples per operation, seed $seed"
rm -rf "$report"
mkdir -p "$report"
# In the background with `wait`, so that a SIGTERM to this script ends it (and the trap) at once.
(cd "$tmp/work" && exec timeout 300 "$venv/bin/schemathesis" --config-file "$tmp/schemathesis.toml" run \
    "$root/Modules/CastService/openapi.yaml" --url "$base" --checks "$checks" --mode all \
    --max-examples "$examples" --continue-on-failure --generation-database none --no-color \
    --report ndjson,junit --report-dir "$report" > "$report/schemathesis.log" 2>&1) &
pids+=($!)
wait "${pids[2]}"
status=$?
sed -n '/^Test cases:/,/^$/p' "$report/schemathesis.log" | sed -n 2p | sed 's/^ */schemathesis: /'
if [ "$status" = 124 ]; then
    fail "schemathesis finished within 300 s (see $report/schemathesis.log)"
fi
ndjson=$(ls "$report"/ndjson-*.ndjson 2> /dev/null | head -1)
if [ -z "$ndjson" ]; then
    tail -30 "$report/schemathesis.log"
    fail "schemathesis wrote no report (exit $status)"
    finish
fi
"$venv/bin/python" Tools/schemathesis/summarize.py "$ndjson" Modules/CastService/openapi.yaml --checks "$checks" \
    --device-id "${device_ids[0]}" --device-id "${device_ids[1]}" | grep -E '^(PASS|FAIL) ' | tee -a "$results"
if [ "$status" != 0 ] && ! grep -q '^FAIL' "$results"; then
    tail -30 "$report/schemathesis.log"
    fail "schemathesis exited $status without a failing check (see $report/schemathesis.log)"
fi
if ! kill -0 "${pids[1]}" 2> /dev/null; then
    tail -20 "$tmp/castd.log"
    fail "castd still runs after the fuzzer"
else
    pass "castd still runs after the fuzzer"
fi
finish
