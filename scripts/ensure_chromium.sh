#!/bin/sh
# The browser the replay viewer's test drives (tests/replay/test_html_browser.py): Debian's
# chromium, run headless. Installed with apt-get only when missing, so `make test` on a fresh
# machine (and .ci/run) gets it; a machine that has it, or names one in $CHROMIUM, is left alone.
set -eu

if [ -n "${CHROMIUM:-}" ] && command -v "$CHROMIUM" >/dev/null 2>&1; then
    exit 0
fi
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "chromium is missing and this is not a Debian-like system (no apt-get):" >&2
    echo "install a chromium or Chrome and set CHROMIUM=/path/to/it, then run make again." >&2
    exit 1
fi
if [ "$(id -u)" = 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root="sudo"
else
    echo "chromium is missing, and installing it needs root. Run, as root:" >&2
    echo "    apt-get update && apt-get install -y chromium" >&2
    echo "(or set CHROMIUM=/path/to/a/chromium), then run make again." >&2
    exit 1
fi
echo "installing Debian's chromium for the replay viewer's browser test" >&2
$as_root apt-get update -qq
DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends chromium
