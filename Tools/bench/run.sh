#!/usr/bin/env bash
# The side-by-side benchmark: swift-cast (as a library, release build), pychromecast 14.0.10 (PyPI) and floor.c (a
# minimal blocking C client, the floor) against the same cast-receiver on loopback, interleaved in one run; then
# N concurrent sessions (swift-cast, then the floor) against emulated devices in two cast-receiver processes. Prints
# one table with ratios (cast-benchmarks --table). Asserts nothing and is not part of the test command.
#
#   Tools/bench/run.sh [--repeats 5] [--rounds 200] [--echoes 100000] [--concurrent "100 1000 10000"]
#
# Each repeat runs each sender once, in turn, as a new process with two sessions: the first (warm-up: session start
# and LOAD reported apart as the first of a process, 20 untimed PAUSE/PLAY pairs), then the measured one: session
# start, LOAD until PLAYING, ROUNDS timed PAUSE/PLAY pairs.
# The echo (custom namespace, 64 in flight) runs once per sender after the repeats.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
repeats=5
rounds=200
echoes=100000
concurrent="100 1000 10000"
idle=10
while [ $# -gt 0 ]; do
    case $1 in
    --repeats) repeats=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --echoes) echoes=$2; shift 2 ;;
    --concurrent) concurrent=$2; shift 2 ;;
    --idle) idle=$2; shift 2 ;;
    *) echo "usage: $0 [--repeats N] [--rounds N] [--echoes N] [--concurrent \"N …\"] [--idle SECONDS]" >&2; exit 2 ;;
    esac
done

source Tools/bench/common.sh
venv=.build/interop-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import pychromecast" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check pychromecast==14.0.10
fi
ulimit -n "$(ulimit -Hn)"
out=$(mktemp -d .build/bench/run-XXXXXX)

# CPU ticks (user + system) and resident KiB of a process.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# 1. Latency and echo, the three senders interleaved against one emulated device.
start_receiver "$out/receiver.log" --port 0
receiver=$pid
receiver_ticks=0
for repeat in $(seq 1 "$repeats"); do
    echo "bench: repeat $repeat of $repeats" >&2
    before=$(ticks "$receiver")
    .build/bench/floor 127.0.0.1 "$port" 2 "$rounds" 0 >>"$out/floor.txt"
    receiver_ticks=$((receiver_ticks + $(ticks "$receiver") - before))
    "$bin/cast-benchmarks" --host "127.0.0.1:$port" --sessions 2 --rounds "$rounds" --echoes 0 >>"$out/swift.txt"
    "$venv/bin/python" Tools/bench/pychromecast_bench.py 127.0.0.1 "$port" 2 "$rounds" 0 >>"$out/pychromecast.txt"
    "$bin/cast-benchmarks" --host "127.0.0.1:$port" --sessions 2 --rounds "$rounds" --echoes 0 --global-executor \
        >>"$out/swift-global.txt"
done
.build/bench/floor 127.0.0.1 "$port" 0 0 "$echoes" >>"$out/floor.txt"
"$bin/cast-benchmarks" --host "127.0.0.1:$port" --sessions 0 --echoes "$echoes" >>"$out/swift.txt"
"$venv/bin/python" Tools/bench/pychromecast_bench.py 127.0.0.1 "$port" 0 0 $((echoes / 5)) >>"$out/pychromecast.txt"
stop_receivers
{
    floor_seconds=$(awk '$1 == "session" || $1 == "load" || $1 == "rtt" {sum += $2} END {print sum / 1e6}' "$out/floor.txt")
    awk -v t="$receiver_ticks" -v s="$floor_seconds" -v hz="$(getconf CLK_TCK)" 'BEGIN {
        printf "emulator: busy %.0f%% of the floor client'"'"'s timed session, load and command time (CPU ticks while" \
            " the floor ran; an upper bound: its warm-up session and start-up count too)\n", t / hz / s * 100 }'
} >>"$out/scale.txt"

# 2. Echo over 100 sessions (one device each).
start_receiver "$out/receiver-echo.log" --devices 100 --port 20000
"$bin/cast-benchmarks" --host 127.0.0.1:20000 --echo-sessions 100 --echoes "$echoes" |
    awk '$1 == "echo-many" {printf "custom-channel echo over 100 sessions (swift-cast): %d/s\n", $2}
        $1 == "echo-many-callback" {printf "the same, answered in the channel'"'"'s callback: %d/s\n", $2}' >>"$out/scale.txt"
stop_receivers

# 3. N concurrent sessions, heartbeats running, against devices in two emulator processes: swift-cast, then the
# floor (fresh emulators for each), and the ratios.
# Runs COUNT concurrent sessions of one sender: COUNT, LABEL, then its command; appends a line to scale.txt and
# leaves the sender's RSS per session and idle CPU in $out/concurrent-LABEL. A sender that fails is reported, and
# the run goes on.
concurrent_run() {
    local count=$1 label=$2 half=$(($1 / 2)) a b rss_before
    shift 2
    start_receiver "$out/receiver-a.log" --devices "$half" --port 20000 --max-connections 4
    a=$pid
    start_receiver "$out/receiver-b.log" --devices $((count - half)) --port $((20000 + half)) --max-connections 4
    b=$pid
    rss_before=$(($(rss_kib "$a") + $(rss_kib "$b")))
    "$@" | while read -r name n startup kib cpu retried; do
        [ "$name" = idle-start ] && { echo "$(ticks "$a") $(ticks "$b")" >"$out/ticks"; continue; }
        read -r ta tb <"$out/ticks"
        emulator_cpu=$(awk -v a="$(($(ticks "$a") - ta + $(ticks "$b") - tb))" -v t="$idle" -v hz="$(getconf CLK_TCK)" \
            'BEGIN {printf "%.2f", a / hz / t * 100}')
        emulator_kib=$(awk -v after="$(($(rss_kib "$a") + $(rss_kib "$b")))" -v before="$rss_before" -v n="$n" \
            'BEGIN {printf "%.1f", (after - before) / n}')
        echo "$kib $cpu" >"$out/concurrent-$label"
        echo "$n concurrent sessions ($label, one process): started in $startup s, $kib KiB RSS per session," \
            "idle CPU $cpu% of a core (heartbeats on), $retried session starts retried; emulators (2 processes):" \
            "$emulator_kib KiB per connection, idle CPU $emulator_cpu%"
    done >>"$out/scale.txt" || echo "$count concurrent sessions ($label): failed (see $out)" >>"$out/scale.txt"
    stop_receivers
}
for count in $concurrent; do
    concurrent_run "$count" swift-cast "$bin/cast-benchmarks" --host 127.0.0.1:20000 --concurrent "$count" --idle "$idle"
    concurrent_run "$count" floor .build/bench/floor --idle 127.0.0.1 20000 "$count" "$idle"
    if [ -s "$out/concurrent-swift-cast" ] && [ -s "$out/concurrent-floor" ]; then
        read -r skib scpu <"$out/concurrent-swift-cast"
        read -r fkib fcpu <"$out/concurrent-floor"
        awk -v n="$count" -v sk="$skib" -v sc="$scpu" -v fk="$fkib" -v fc="$fcpu" 'BEGIN {
            printf "%d concurrent sessions, swift-cast against the floor: %s the RSS per session, %s the idle CPU\n",
                n, (fk > 0 ? sprintf("%.2fx", sk / fk) : "n/a"), (fc > 0 ? sprintf("%.2fx", sc / fc) : "n/a") }' \
            >>"$out/scale.txt"
    fi
    rm -f "$out/concurrent-swift-cast" "$out/concurrent-floor"
done

echo "command: Tools/bench/run.sh --repeats $repeats --rounds $rounds --echoes $echoes --concurrent \"$concurrent\"" \
    "(raw samples in $out)"
"$bin/cast-benchmarks" --table "$out"
