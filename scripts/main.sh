#!/usr/bin/env bash
# Sets everything up and runs the main job: the single-flow NewReno dumbbell
# of mv-highspeed Table I (200 Mbit/s, RTT 100 ms, 2000 s, goodput over the
# last 1000 s) with B = BDP and B = 0.1 BDP, printing each summary and the
# analytic sawtooth prediction beside it. Results land in out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
for b in bdp 0.1bdp; do
    .venv/bin/tcplab run "examples/dumbbell-newreno-$b.toml" -o "out/dumbbell-newreno-$b" --compare-analytic
done
