#!/usr/bin/env bash
# Sets everything up and runs all tests: the Rust workspace (cargo test) and
# the Python package (pytest; long paper-scale runs are marked slow and
# excluded, run them with `.venv/bin/pytest -m slow`). One "test:" line per
# step on stderr; piped, cargo test prints a dot per test instead of a line.
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests run against a core with its test hooks (cargo feature test-hooks: injected faults, a panic on
# purpose); a wheel never has them. Without them those tests skip saying so (and fail under CI=true).
export MATURIN_PEP517_ARGS="--features test-hooks${MATURIN_PEP517_ARGS:+ $MATURIN_PEP517_ARGS}"
bash scripts/setup.sh
quiet=()
[ -t 2 ] || quiet=(-q)
# (target/ is shared with setup's build: the core library is reused, the test harnesses are new)
echo "test: Rust tests, cargo test --workspace --release (building the test binaries: about 4 minutes on 2 cores the first time)" >&2
cargo test ${quiet[@]+"${quiet[@]}"} --workspace --release  # (the +-form: an empty array under set -u before bash 4.4)
echo "test: Python tests, pytest (about 5 minutes on 2 cores; slow-marked paper-scale tests left out)" >&2
pytest_rc=0
.venv/bin/python -m pytest -q "$@" || pytest_rc=$?
# The four code checks (scripts/lint.sh: rustfmt, clippy, ruff, mypy) after the tests, so a finding
# never hides a test result; either failing fails the command.
echo "test: code checks, scripts/lint.sh (clippy compiles the workspace once more: about 2 minutes the first time)" >&2
lint_rc=0
bash scripts/lint.sh || lint_rc=$?
[ "$pytest_rc" = 0 ] || exit "$pytest_rc"
exit "$lint_rc"
