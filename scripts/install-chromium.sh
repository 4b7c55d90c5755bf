#!/usr/bin/env bash
# Installs Debian's chromium for the browser tests and `vivace render` when it is missing.
# Only as root on a Debian-like system (apt-get); elsewhere it says what to do and exits 0, and the browser tests
# skip with a message. Set VIVACE_CHROMIUM to use another Chromium or Chrome binary.
set -euo pipefail
if [ -n "${VIVACE_CHROMIUM:-}" ] && [ -x "${VIVACE_CHROMIUM}" ]; then exit 0; fi
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: /usr/bin/chromium is missing and this is not root with apt-get; install Chromium (e.g. 'sudo apt-get install chromium') or set VIVACE_CHROMIUM" >&2
  exit 0
fi
echo "install-chromium: installing Debian's chromium (apt-get install -y chromium)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || true
apt-get install -y -qq --no-install-recommends chromium >/dev/null
/usr/bin/chromium --version >&2
