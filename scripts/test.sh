#!/usr/bin/env bash
# Sets everything up and runs all tests: the Rust workspace (cargo test) and
# the Python package (pytest; long paper-scale runs are marked slow and
# excluded, run them with `.venv/bin/pytest -m slow`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo test --workspace --release
.venv/bin/python -m pytest -q "$@"
