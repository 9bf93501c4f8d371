"""What every ``tcplab`` command shares: the exit codes, the error that ends a command with one
line on stderr, the compiled core, the phase-lock warning."""

from __future__ import annotations

import sys
from typing import Any

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
#: `tcplab validate`: the kernel side cannot run on this machine.
EXIT_UNAVAILABLE = 3
#: Ctrl-C (SIGINT): 128 + 2, as a shell reports a command that SIGINT ended.
EXIT_INTERRUPTED = 130


class _CliError(Exception):
    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


#: --set on run and sweep (tcplab.overrides).
SET_HELP = ("set a value of the file before it is read, repeatable: KEY a dotted path as in the TOML file, an array "
            "element as name[i]; VALUE a TOML value (10, 0.5, true, [1, 2], {a = 1}) or else a string (0.5BDP, 10s)")


def _err(msg: str) -> None:
    print(f"error: {msg}", file=sys.stderr)


def _core():
    try:
        from .. import _core
    except ImportError as e:
        raise _CliError(f"tcplab._core: the compiled core is not available ({e}); build it with `maturin develop`",
                        EXIT_FAILURE) from None
    return _core




def _warn_phase_lock_cli(sc: Any, spec: dict, where: str = "", seed_word: str = "--seed") -> bool:
    """One line on stderr when the outcome may be a phase effect (tcplab.phaselock); whether it was said."""
    from ..phaselock import phase_lock_reason

    reason = phase_lock_reason(sc, spec, seed_word)
    if reason is not None:
        sys.stdout.flush()  # (after the summary, where it is read)
        print(f"warning: {where}{reason}", file=sys.stderr)
    return reason is not None
