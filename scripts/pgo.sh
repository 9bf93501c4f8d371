#!/usr/bin/env bash
# Builds .venv's tcplab core with profile-guided optimization (PGO): an
# instrumented build runs a training workload (the benchmark suite's
# scenarios, every scaling curve and every congestion control), LLVM merges
# the profiles it wrote, and the core is built again using them.
#
# Opt-in: `TCPLAB_PGO=1 ./scripts/main.sh` (or `TCPLAB_PGO=1 bash
# scripts/setup.sh`) runs this instead of the plain build. Results are bit
# for bit those of the plain build; only speed changes (docs/performance.md,
# "Profile-guided optimization"). `tcplab bench` reports the build it timed.
# A later setup without TCPLAB_PGO=1 (scripts/test.sh, scripts/main.sh)
# builds the core plain again.
#
# Needs llvm-profdata matching rustc's LLVM (`rustup component add
# llvm-tools`; tried here if missing). The profile is kept in target/pgo/
# and reused while nothing in its stamp (below) changes; TCPLAB_PGO_RETRAIN=1
# forces a new one.
set -euo pipefail
cd "$(dirname "$0")/.."
PIP=(.venv/bin/python -m pip install -q --disable-pip-version-check)
fail() { echo "error: scripts/pgo.sh: $*" >&2; exit 1; }
[ -x .venv/bin/python ] || fail "no .venv; run scripts/setup.sh (with TCPLAB_PGO=1)"
# Cargo splits RUSTFLAGS at whitespace, so the profile's path must have none.
case "$PWD" in *[[:space:]]*) fail "the checkout's path has whitespace, which RUSTFLAGS cannot carry: $PWD" ;; esac
# With CARGO_ENCODED_RUSTFLAGS set cargo ignores RUSTFLAGS, and the build
# would say "pgo optimized" without being it.
[ -z "${CARGO_ENCODED_RUSTFLAGS:-}" ] || fail "CARGO_ENCODED_RUSTFLAGS is set; unset it (or give its flags as RUSTFLAGS)"

sysroot=$(rustc --print sysroot)
find_profdata() { find "$sysroot/lib/rustlib" -name llvm-profdata -type f -print -quit 2>/dev/null || true; }
profdata=$(find_profdata)
if [ -z "$profdata" ] && command -v rustup >/dev/null; then
    echo "pgo: installing llvm-tools for llvm-profdata (rustup component add llvm-tools)" >&2
    # (llvm-tools-preview: its name before Rust 1.77.)
    rustup component add llvm-tools >&2 || rustup component add llvm-tools-preview >&2 || true
    profdata=$(find_profdata)
fi
if [ -z "$profdata" ]; then
    echo "error: TCPLAB_PGO=1 needs llvm-profdata of rustc's own LLVM ($(rustc -V)): run" \
         "'rustup component add llvm-tools', or set up without TCPLAB_PGO" >&2
    exit 1
fi

dir="$PWD/target/pgo"
# RUSTFLAGS of the caller are kept, the PGO flag added to them. (Like any
# RUSTFLAGS, they make cargo ignore `rustflags` of cargo config files, for
# the plain build as well if given to it.)
base_flags=${RUSTFLAGS:-}
# What the profile depends on: the compiler, the flags, the Rust sources
# and manifests, and the training (this script, the benchmark's scenarios).
stamp=$( (rustc -vV; echo "$base_flags"
          { find crates \( -name '*.rs' -o -name Cargo.toml \) -print0
            printf '%s\0' Cargo.toml Cargo.lock pyproject.toml scripts/pgo.sh \
                python/tcplab/devtools/bench.py python/tcplab/devtools/measure.py; } \
              | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16)
if [ "${TCPLAB_PGO_RETRAIN:-0}" != 1 ] && [ -f "$dir/tcplab.profdata" ] && [ "$(cat "$dir/stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "pgo: reusing target/pgo/tcplab.profdata (sources unchanged since it was trained)" >&2
else
    rm -rf "$dir"
    mkdir -p "$dir/raw"
    echo "pgo: 1/3 instrumented build" >&2
    RUSTFLAGS="$base_flags -Cprofile-generate=$dir/raw" TCPLAB_BUILD_PGO=instrumented "${PIP[@]}" -e '.[test]'
    echo "pgo: 2/3 training runs (about a minute)" >&2
    # A failed training leaves the instrumented core in .venv: say so.
    trap 'echo "error: scripts/pgo.sh: a training run failed (target/pgo/train.log); .venv holds the instrumented core until scripts/setup.sh runs again" >&2' ERR
    # Breadth: every standard scenario, scaling point, algorithm and memory
    # run, shortened. Depth: the steady state of S1, S3 and S4 (the event
    # tree's loop, under 1024 links) and of 1000 and 10,000 flows (the radix
    # heap's loop, which the shortened curve never reaches: code a profile
    # never saw is compiled as cold; without these runs 10,000 flows gained
    # nothing, 46.6 ns per packet-hop against 46.3 plain and 41.5 with them).
    .venv/bin/tcplab bench --quick --all --json "$dir/train-quick.json" > "$dir/train.log" 2>&1
    .venv/bin/tcplab bench --only S1,S3,S4 --seconds 100 --json "$dir/train-long.json" >> "$dir/train.log" 2>&1
    .venv/bin/python - <<'EOF' >> "$dir/train.log" 2>&1
from tcplab import _core
from tcplab.devtools.measure import with_duration
for sc in _core.bench_scaling("flows", False):
    if sc["name"] in ("flows=1000", "flows=10000"):
        r = _core.run(with_duration(sc, 6.0)["spec_json"])
        print(sc["name"], "6 s:", int(r["meta"]["events"]), "events")
EOF
    "$profdata" merge -o "$dir/tcplab.profdata" "$dir/raw"
    trap - ERR
    echo "$stamp" > "$dir/stamp"
fi
echo "pgo: 3/3 optimized build" >&2
RUSTFLAGS="$base_flags -Cprofile-use=$dir/tcplab.profdata" TCPLAB_BUILD_PGO=optimized "${PIP[@]}" -e '.[test]'
.venv/bin/python -c 'from tcplab import _core; b = _core.build(); print("pgo: built:", b); assert "pgo optimized" in b, b'
