#!/usr/bin/env bash
# Where a PAUSE/PLAY round trip's time goes, from the sender's system calls: its turnaround (from the read that
# returns a reply to the write of the next command: everything the sender does per command on the critical path)
# and its wait (from that write to the next reply's read: the kernel, the emulator and the wake-up). The floor
# (floor.c) and swift-cast (cast-benchmarks) in turn against one cast-receiver, as Tools/bench/run.sh runs them.
# Needs perf (Debian: linux-perf) and root or perf_event_paranoid ≤ 1; asserts nothing.
#
#   Tools/bench/turnaround.sh [--repeats 2] [--rounds 3000] [--compare BINARY]
#
# --compare measures another cast-benchmarks binary in turn as well (an earlier build, copied aside): on a machine
# whose speed drifts from day to day, only figures of one run compare.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
repeats=2
rounds=3000
compare=
while [ $# -gt 0 ]; do
    case $1 in
    --repeats) repeats=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --compare) compare=$2; shift 2 ;;
    *) echo "usage: $0 [--repeats N] [--rounds N] [--compare BINARY]" >&2; exit 2 ;;
    esac
done
command -v perf >/dev/null || { echo "turnaround: needs perf (apt-get install linux-perf)" >&2; exit 1; }

source Tools/bench/common.sh
out=$(mktemp -d .build/bench/turnaround-XXXXXX)
start_receiver "$out/receiver.log" --port 0

# Records one sender's reads and writes; prints the percentiles of its turnarounds and waits (µs).
measure() {
    local name=$1
    shift
    perf record -q -e syscalls:sys_exit_read -e syscalls:sys_enter_write -e syscalls:sys_enter_writev \
        -o "$out/perf.data" "$@" >/dev/null 2>&1
    perf script -i "$out/perf.data" -F tid,time,event,trace 2>/dev/null | python3 -c '
import collections, re, sys
events = []
for line in sys.stdin:
    fields = line.split()
    thread, time, event = fields[0], float(fields[1].rstrip(":")), fields[2].rstrip(":")
    if event.endswith("sys_exit_read"):
        returned = re.search(r"0x([0-9a-f]+)\s*$", line)
        # Only reads that returned data (not EAGAIN, whose negative value prints as a huge number).
        if not returned or not 0 < int(returned.group(1), 16) < 1 << 20:
            continue
        events.append((thread, time, "read"))
    else:
        events.append((thread, time, "write"))
# The sender thread: the one that writes most (the event loop, or the floor main thread).
sender = collections.Counter(thread for thread, _, kind in events if kind == "write").most_common(1)[0][0]
turnarounds, waits, last = [], [], None
for thread, time, kind in events:
    if thread != sender:
        continue
    if last and last[1] != kind:
        (turnarounds if kind == "write" else waits).append((time - last[0]) * 1e6)
    last = (time, kind)
def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]
print("%-12s turnaround p10 %5.1f  p50 %5.1f  p90 %5.1f | wait p10 %5.1f  p50 %5.1f  p90 %5.1f  (µs, %d commands)" % (
    sys.argv[1], *(percentile(turnarounds, q) for q in (0.1, 0.5, 0.9)),
    *(percentile(waits, q) for q in (0.1, 0.5, 0.9)), len(turnarounds)))
' "$name"
}

for _ in $(seq 1 "$repeats"); do
    measure floor .build/bench/floor 127.0.0.1 "$port" 1 "$rounds" 0
    measure swift-cast "$bin/cast-benchmarks" --host "127.0.0.1:$port" --sessions 1 --rounds "$rounds" --echoes 0
    if [ -n "$compare" ]; then
        measure compared "$compare" --host "127.0.0.1:$port" --sessions 1 --rounds "$rounds" --echoes 0
    fi
done
