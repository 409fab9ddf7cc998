# Sourced by Tools/bench/run.sh and Tools/bench/turnaround.sh (from the repository's root): builds the release
# cast-benchmarks and cast-receiver and the floor client (.build/bench/floor), sets $bin, and starts and stops
# emulators (each stopped when the script exits).

swift build -c release --product cast-benchmarks >.build/bench-build.log 2>&1 || { cat .build/bench-build.log; exit 1; }
swift build -c release --product cast-receiver >>.build/bench-build.log 2>&1 || { cat .build/bench-build.log; exit 1; }
bin=$(swift build -c release --show-bin-path)
mkdir -p .build/bench
cc -O2 -o .build/bench/floor Tools/bench/floor.c -lssl -lcrypto

receivers=()
trap 'for pid in "${receivers[@]}"; do kill -INT "$pid" 2>/dev/null || true; done' EXIT

# Starts an emulator: LOG, then cast-receiver's flags; waits for "ready" (bounded) and sets $pid and $port (its
# first device's).
start_receiver() {
    local log=$1
    shift
    "$bin/cast-receiver" --no-mdns --log-level error "$@" >"$log" 2>&1 &
    pid=$!
    receivers+=("$pid")
    for _ in $(seq 1 1200); do
        if grep -q "ready" "$log"; then
            port=$(grep -o 'on 127.0.0.1:[0-9]*' "$log" | head -1 | cut -d: -f2)
            return
        fi
        sleep 0.05
    done
    echo "bench: cast-receiver did not start:" >&2
    cat "$log" >&2
    exit 1
}

stop_receivers() {
    for pid in "${receivers[@]}"; do kill -INT "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    receivers=()
}
