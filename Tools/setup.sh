#!/usr/bin/env bash
# Installs the Debian packages swift-cast needs (when run as root), or prints the exact apt-get line and stops.
#   Tools/setup.sh          packages to build and run
#   Tools/setup.sh test     plus what the test suite uses (openssl CLI, Python venv, Avahi lab, tmux, mosquitto,
#                           headless Chromium, lintian for the package checks)
set -euo pipefail
packages=(libssl-dev libavahi-client-dev libxml2-dev libmosquitto-dev libvpx-dev libopus-dev libopenh264-dev libaom-dev pkg-config)
if [ "${1:-}" = "test" ]; then
    packages+=(openssl python3 python3-venv avahi-daemon avahi-utils dbus-daemon iproute2 nftables tmux protobuf-compiler ffmpeg systemd mosquitto mosquitto-clients chromium chromium-driver lintian xvfb x11-utils pulseaudio)
fi
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "setup: missing Debian packages. Install them with:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
