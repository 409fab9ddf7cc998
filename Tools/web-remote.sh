#!/usr/bin/env bash
# castd's web remote in headless Chromium (Tools/web-remote/run.py): devices, casting a URL and a local file, the
# controllers, queue, tracks, live events, keyboard access, a phone-width layout and the token prompt, against
# emulated devices on loopback. Screenshots go to $WEB_REMOTE_ARTEFACTS (default .build/web-remote-artefacts).
# Ends with `N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/.."
Tools/setup.sh test || exit 1
for tool in /usr/bin/chromium /usr/bin/chromedriver; do
    if [ ! -x "$tool" ]; then
        echo "web-remote: $tool is missing (apt-get install chromium chromium-driver)"
        echo "0 passed, 1 failed"
        exit 1
    fi
done
# selenium, pinned, in a venv of its own under .build (made on the first run).
venv=.build/web-remote-venv
selenium_version=4.51.0
installed=$("$venv/bin/python" -c "import selenium; print(selenium.__version__)" 2>/dev/null)
if [ "$installed" != "$selenium_version" ]; then
    { python3 -m venv "$venv" && "$venv/bin/pip" install -q "selenium==$selenium_version"; } > /dev/null ||
        { echo "web-remote: could not install selenium $selenium_version"; echo "0 passed, 1 failed"; exit 1; }
fi
build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
if ! { swift build --product castd && swift build --product cast-receiver; } > "$build_log" 2>&1; then
    tail -20 "$build_log"
    echo "web-remote: build failed"
    echo "0 passed, 1 failed"
    exit 1
fi
timeout 300 "$venv/bin/python" Tools/web-remote/run.py
