#!/usr/bin/env bash
# Headless Chromium and its WebDriver for the studio's browser tests (test/studio/), from Debian's packages,
# installed only when missing. Needs root or sudo; says what to run when it has neither.
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "[browser] the studio's browser tests need Debian's chromium and chromium-driver: run" \
         "'sudo apt-get install -y chromium chromium-driver' once" >&2
    exit 1
  fi
fi
echo "[browser] installing Debian's chromium and chromium-driver"
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y -q chromium chromium-driver >/tmp/robokin-apt.log 2>&1; then
  $SUDO apt-get update -q >>/tmp/robokin-apt.log 2>&1
  $SUDO apt-get install -y -q chromium chromium-driver >>/tmp/robokin-apt.log 2>&1 || {
    tail -20 /tmp/robokin-apt.log >&2; echo "[browser] installing chromium failed (log: /tmp/robokin-apt.log)" >&2; exit 1; }
fi
echo "[browser] $(/usr/bin/chromium --version 2>/dev/null || echo chromium installed)"
