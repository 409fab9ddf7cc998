#!/usr/bin/env bash
# Two castd sites on one MQTT broker, in three network namespaces (Tools/mqtt-sites/run.py): retained states from
# both sites, a command routed to site B, site A's last will after a SIGKILL. Needs root for namespaces; otherwise
# it says so and counts nothing. Ends with `N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
    echo "mqtt-sites: SKIPPED: network namespaces need root; run Tools/mqtt-sites.sh as root"
    echo "0 passed, 0 failed"
    exit 0
fi
Tools/setup.sh test || exit 1
{ swift build --product castd && swift build --product cast-receiver; } > /dev/null || { echo "mqtt-sites: build failed"; exit 1; }
exec timeout 300 python3 Tools/mqtt-sites/run.py
