#!/usr/bin/env bash
# Sets everything up and runs the main job: the mv-highspeed reproduction
# (Table I, Figs. 2-8, 9-10, Table II, Figs. 11-12, Fig. 13) at full length
# on all local cores, into out/mv-highspeed/ (with --quick into
# out/mv-highspeed-quick/; index.md there lists every item made into it).
# 377 runs (the multi-flow items over several seeds), about 15 billion
# bottleneck packets: about 34 minutes on 2 cores (34 min 14 s measured on the
# 2-core development machine with tcplab 0.3.0).
# Extra arguments go to `tcplab reproduce`, e.g. `--quick` for a shortened
# check or `table1` for one item. On a terminal a progress bar shows the
# runs done of the total, failures and the time left.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
quick=0 out=
for a in "$@"; do
    case "$a" in --quick) quick=1 ;; -o|--out|--out=*) out="the -o directory" ;; esac
done
if [ $quick = 1 ]; then
    echo "main: tcplab reproduce mv-highspeed $* (shortened runs: about 40 s on 2 cores) into ${out:-out/mv-highspeed-quick/}" >&2
else
    echo "main: tcplab reproduce mv-highspeed $* (full length: about 34 minutes on 2 cores) into ${out:-out/mv-highspeed/}" >&2
fi
.venv/bin/tcplab reproduce mv-highspeed "$@"
