#!/usr/bin/env bash
# The four code checks, each configured in the repository: Rust formatting
# (rustfmt.toml), clippy with warnings as errors, ruff and mypy (both in
# pyproject.toml). One "lint:" line per check on stderr, then the tool's own
# findings. Every check runs even when an earlier one fails; the script fails
# if any check found something. A tool that is not installed is skipped with
# the reason on its "lint:" line (scripts/setup.sh installs ruff and mypy into
# .venv and adds clippy and rustfmt through rustup where it can); under
# CI=true a skipped check fails the script instead.
set -uo pipefail
cd "$(dirname "$0")/.."
say() { echo "lint: $*" >&2; }
failed=()
skipped=()

# check NAME COMMAND...: runs it, remembers a failure.
check() {
    local name=$1
    shift
    if ! "$@"; then
        failed+=("$name")
        say "$name: FAILED"
    fi
}

# A Python tool: .venv's (the version pyproject.toml's test extra pins), else one on PATH.
python_tool() {
    if [ -x ".venv/bin/$1" ]; then
        echo ".venv/bin/$1"
    elif command -v "$1" >/dev/null; then
        command -v "$1"
    fi
}

if ! command -v cargo >/dev/null; then
    skipped+=("rustfmt" "clippy")
    say "rustfmt, clippy: skipped, cargo is not installed (https://rustup.rs)"
else
    if cargo fmt --version >/dev/null 2>&1; then
        say "rustfmt: cargo fmt --all --check (prints what it would change)"
        check rustfmt cargo fmt --all --check
    else
        skipped+=("rustfmt")
        say "rustfmt: skipped, not in this Rust toolchain (rustup component add rustfmt)"
    fi
    if cargo clippy --version >/dev/null 2>&1; then
        say "clippy: cargo clippy --workspace --all-targets --release -- -D warnings (the first time it compiles the workspace)"
        check clippy cargo clippy --quiet --workspace --all-targets --release -- -D warnings
    else
        skipped+=("clippy")
        say "clippy: skipped, not in this Rust toolchain (rustup component add clippy)"
    fi
fi

ruff=$(python_tool ruff)
if [ -n "$ruff" ]; then
    say "ruff: $ruff check python scripts tests examples"
    check ruff "$ruff" check --quiet --output-format concise python scripts tests examples
else
    skipped+=("ruff")
    say "ruff: skipped, not installed (scripts/setup.sh installs it into .venv)"
fi

# mypy needs the packages tcplab imports (numpy, matplotlib) for their types: .venv's mypy has them.
mypy=$(python_tool mypy)
if [ -n "$mypy" ]; then
    say "mypy: $mypy (python/tcplab, settings in pyproject.toml)"
    check mypy "$mypy"
else
    skipped+=("mypy")
    say "mypy: skipped, not installed (scripts/setup.sh installs it into .venv)"
fi

if [ ${#skipped[@]} -gt 0 ] && [ "${CI:-}" = true ]; then
    failed+=("${skipped[@]}")  # under CI=true a missing tool fails, as a test's missing system package does
    say "CI=true: the skipped checks count as failed"
fi
if [ ${#failed[@]} -gt 0 ]; then
    say "failed: ${failed[*]}"
    exit 1
fi
if [ ${#skipped[@]} -gt 0 ]; then
    say "no findings in the checks that ran; skipped: ${skipped[*]}"
else
    say "all four clean"
fi
