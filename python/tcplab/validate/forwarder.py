"""The emulated bottleneck as a child process: ``python -m tcplab.validate.forwarder CONFIG.json``.

Runs ``tcplab._core.netem_run`` (crates/tcplab-py/src/netem.rs; the GIL is
released while it forwards) on the JSON description in CONFIG.json until
SIGTERM/SIGINT, the configured stop file or duration. ``kernel.py`` starts
it and tears it down; it is a separate process so that its timing loop has
an interpreter of its own.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tcplab.validate.forwarder CONFIG.json", file=sys.stderr)
        return 2
    from tcplab import _core

    _core.netem_run(Path(argv[0]).read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
