#!/bin/sh
# The browser tests (tests/web) drive Debian's chromium with Playwright, never a downloaded browser.
# Install it when it is missing and we may (root, with apt-get); otherwise say so and leave it:
# tests/web skips without a browser, or fails under CI=true.
set -eu

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
    exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update
    apt-get install -y chromium
    exit 0
fi
echo "ensure_chromium: $CHROMIUM is missing; install Debian's chromium (apt-get install chromium) to run tests/web" >&2
