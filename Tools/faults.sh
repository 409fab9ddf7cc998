#!/usr/bin/env bash
# The fault laboratory (issue 10): `cast` and `cast-receiver` in two network namespaces joined by a veth pair, with
# link loss, an nftables blackhole and random loss, killed processes, a device answering a byte per second and a
# device flooding statuses. Every fault's outcome is asserted and its figure printed (Tools/faults/run.py).
# Needs root for namespaces and nftables; otherwise it says so and counts nothing. Ends with `N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
    echo "faults: SKIPPED: network namespaces and nftables need root; run Tools/faults.sh as root"
    echo "0 passed, 0 failed"
    exit 0
fi
Tools/setup.sh test || exit 1
{ swift build --product cast && swift build --product cast-receiver; } > /dev/null || { echo "faults: build failed"; exit 1; }
exec timeout 900 python3 Tools/faults/run.py
