#!/usr/bin/env bash
# Sets everything up and runs the main job: the mv-highspeed reproduction
# (Table I, Figs. 2-8, 9-10, Table II, Figs. 11-12, Fig. 13) at full length
# on all local cores, into out/mv-highspeed/ (index.md lists every output).
# About 14 billion simulated packets: roughly half an hour on 2 cores.
# Extra arguments go to `tcplab reproduce`, e.g. `--quick` for a shortened
# check or `table1` for one item.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/tcplab reproduce mv-highspeed "$@"
