#!/usr/bin/env bash
# System packages the test suite needs beyond Python and Rust: Chromium (the
# HTML report is tested in a real headless browser). Idempotent: installs
# only what is missing, with apt-get, and only as root; otherwise it says
# what to install and carries on (the report test then fails and says so).
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "setup-ci-system: chromium is missing and this is not root; skipping the install." >&2
    echo "setup-ci-system: install it with: sudo apt-get install -y chromium" >&2
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup-ci-system: chromium is missing and apt-get is not available; install Chromium by hand." >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium
