#!/usr/bin/env bash
# System packages some tests need beyond Python and Rust, from Debian's
# package manager: ns2 (tests/test_ns2compare.py runs the same dumbbell in
# ns-2 2.35), chromium (tests/test_report.py loads the HTML reports in a
# real headless browser) and tshark (tests/test_pcap.py reads the packet
# traces with Wireshark's dissectors) and iproute2 (`ip netns`: the kernel
# comparison, tests/test_validate_kernel.py, as root). Called by scripts/setup.sh, so by both README
# commands. Idempotent: installs only what is missing, with apt-get, and only
# as root. Where it cannot, it says so in one line per package and carries
# on: those tests then skip, saying why (or fail under CI=true, where a skip
# would hide a missing check).
set -euo pipefail
missing=()
command -v ns >/dev/null 2>&1 || missing+=(ns2)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
command -v tshark >/dev/null 2>&1 || missing+=(tshark)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
[ ${#missing[@]} -eq 0 ] && exit 0
why=""
if [ "$(id -u)" != 0 ]; then
    why="this is not root"
elif ! command -v apt-get >/dev/null 2>&1; then
    why="apt-get is not available"
fi
if [ -n "$why" ]; then
    for p in "${missing[@]}"; do
        echo "setup-system: $p is missing and $why: its tests will skip; install it with: sudo apt-get install -y $p" >&2
    done
    exit 0
fi
echo "setup-system: installing ${missing[*]} with apt-get (about a minute)" >&2
export DEBIAN_FRONTEND=noninteractive
# tshark's wireshark-common would ask whether non-root users may capture: no.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
if ! { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
    echo "setup-system: apt-get could not install ${missing[*]}: their tests will skip" >&2
fi
