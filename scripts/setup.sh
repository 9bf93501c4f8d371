#!/usr/bin/env bash
# Sets up a fresh checkout: a virtual environment in .venv with tcplab
# installed in editable mode (the Rust core built in release mode) and the
# test dependencies (with ruff and mypy for scripts/lint.sh). Safe to run
# again; it only rebuilds what changed.
# TCPLAB_PGO=1 builds the core with profile-guided optimization instead
# (scripts/pgo.sh: a few minutes more, the same results, faster runs).
#
# It says what it does, one "setup:" line per step on stderr, with how long
# the step takes the first time. On a terminal the build shows what cargo is
# compiling; piped (a CI log), pip stays quiet and the step lines are all
# there is.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
say() { echo "setup: $*" >&2; }
"$PY" -c 'import sys; assert sys.version_info >= (3, 10), "tcplab needs Python 3.10+"'
command -v cargo >/dev/null || { echo "error: cargo not found; install Rust (https://rustup.rs)" >&2; exit 1; }
say "$("$PY" --version), $(cargo --version | cut -d' ' -f1-2)"
# clippy and rustfmt for scripts/lint.sh, when rustup manages the toolchain and one is missing.
if command -v rustup >/dev/null && ! { cargo clippy --version && cargo fmt --version; } >/dev/null 2>&1; then
    say "adding clippy and rustfmt to the Rust toolchain (rustup component add, for scripts/lint.sh)"
    rustup component add clippy rustfmt >/dev/null 2>&1 \
        || say "could not add them (offline?): scripts/lint.sh skips what is missing"
fi
# ns2 and chromium for their tests, when this machine can install them (it says so when it acts).
bash scripts/setup-system.sh
if [ ! -x .venv/bin/python ]; then
    say "creating the virtual environment .venv"
    "$PY" -m venv .venv
fi
say "upgrading pip in .venv"
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
if [ "${TCPLAB_PGO:-0}" = 1 ]; then
    # Opt-in profile-guided build of the Rust core (scripts/pgo.sh).
    say "profile-guided build of the Rust core (scripts/pgo.sh; about 15 minutes on 2 cores the first time)"
    exec bash scripts/pgo.sh
fi
# pip builds the Rust core through maturin (cargo, release profile, into
# target/, which `cargo test --workspace --release` in scripts/test.sh reuses:
# the core library is shared, only the test harnesses are built anew). On a
# terminal, cargo's "Compiling ..." lines and pip's steps are shown on one
# line redrawn in place; piped, pip is quiet. Either way a failure prints the
# end of pip's output.
say "building the Rust core (release: about 4 minutes on 2 cores the first time, seconds when nothing changed) and installing tcplab with its Python dependencies into .venv"
log=$(mktemp "${TMPDIR:-/tmp}/tcplab-setup.XXXXXX")
trap 'rm -f "$log"' EXIT
verbosity=-q
[ -t 2 ] && verbosity=-v
# A plain build: no step marker of scripts/pgo.sh may leak into it.
if ! env -u TCPLAB_BUILD_PGO .venv/bin/python -m pip install "$verbosity" --disable-pip-version-check -e '.[test]' \
        2>&1 | tee "$log" | bash scripts/oneline.sh; then
    echo "setup: pip install failed; the end of its output:" >&2
    tail -n 40 "$log" >&2
    exit 1
fi
say "done: .venv/bin/tcplab $(.venv/bin/python -c 'import tcplab; print(tcplab.__version__)')"
