#!/usr/bin/env bash
# Discovery figures for the README (not test assertions), in a hermetic mDNS lab of its own (needs root):
#   - advertisement -> device listed by DiscoveryManager, against avahi-browse -r -p watching the same
#     advertisements (the floor: avahi's own browse latency, mostly mDNS probing);
#   - 100 devices published at once -> all listed, and 100 already advertised -> all listed by a new browser,
#     against avahi-browse -r -p -t.
# Usage: Tools/bench-discovery.sh   (SCRATCH=.build-x to use another build directory)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench-discovery: needs root (network namespaces)"; exit 2; }
scratch=(--scratch-path "${SCRATCH:-.build}")
if ! swift build --build-tests "${scratch[@]}" > /tmp/bench-discovery-build.$$ 2>&1; then
    grep -E "error" /tmp/bench-discovery-build.$$; rm -f /tmp/bench-discovery-build.$$
    echo "bench-discovery: the build failed"; exit 1
fi
rm -f /tmp/bench-discovery-build.$$
ns=castbench$$
trap 'MDNS_NS=$ns Tools/mdns-lab.sh stop' EXIT
started=$(date +%s%N)
lab_env=$(MDNS_NS=$ns Tools/mdns-lab.sh start)
echo "bench: lab ready in $(( ($(date +%s%N) - started) / 1000000 )) ms (three namespaces, three buses, three avahi-daemons)"
eval "$lab_env"
CAST_DISCOVERY_BENCH=1 swift test --skip-build "${scratch[@]}" --filter 'CastDiscoveryTests\.DiscoveryBenchmark' 2>&1 \
    | grep -E "^bench:|✘|recorded an issue" || true
