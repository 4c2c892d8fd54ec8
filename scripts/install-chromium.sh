#!/usr/bin/env bash
# Debian's Chromium, for the test that opens a report in a real headless browser.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  echo "chromium: $(chromium --version 2>/dev/null || echo present)"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "chromium is missing and this is not root: run 'apt-get install chromium' (the browser test fails under CI=1 without it)" >&2
  exit 0
fi
echo "installing Debian's chromium (once)..."
apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
chromium --version
