#!/usr/bin/env bash
# Sets up a fresh checkout: a virtual environment in .venv with tcplab
# installed in editable mode (maturin builds the Rust core in release mode)
# and the test dependencies. Safe to run again; it only rebuilds what changed.
# TCPLAB_PGO=1 builds the core with profile-guided optimization instead
# (scripts/pgo.sh: a few minutes more, the same results, faster runs).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
"$PY" -c 'import sys; assert sys.version_info >= (3, 10), "tcplab needs Python 3.10+"'
command -v cargo >/dev/null || { echo "error: cargo not found; install Rust (https://rustup.rs)" >&2; exit 1; }
# ns2 and chromium for their tests, when this machine can install them.
bash scripts/setup-system.sh
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
if [ "${TCPLAB_PGO:-0}" = 1 ]; then
    # Opt-in profile-guided build of the Rust core (scripts/pgo.sh).
    exec bash scripts/pgo.sh
fi
# A plain build: no step marker of scripts/pgo.sh may leak into it.
env -u TCPLAB_BUILD_PGO .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
