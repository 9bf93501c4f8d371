"""The progress bar of a sweep's execution (tcplab.sweep.execute): runs done, failed, and the ETA."""

from __future__ import annotations

import sys
from typing import Any


class Progress:
    """A progress bar (tqdm) with counts, failures and ETA; silent when
    stderr is not a terminal (or ``enabled=False``). The total may come
    later (:meth:`set_total`: the runs are counted as they are planned)."""

    def __init__(self, total: int | None, enabled: bool | None, label: str) -> None:
        self.failed = 0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.label = label
        self.bar: Any = None
        self.done = 0
        if total is not None:
            self.set_total(total)

    def set_total(self, total: int) -> None:
        if self.bar is not None:
            self.bar.total = total
            self.bar.refresh()
        elif self.enabled and total:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=self.label, unit="run", file=sys.stderr, dynamic_ncols=True,
                            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} runs "
                                       "[{elapsed}<{remaining}, {rate_fmt}{postfix}]")
            self.bar.set_postfix_str(f"{self.failed} failed", refresh=False)
            self.bar.update(self.done)

    def update(self, ok: int, failed: int = 0) -> None:
        self.failed += failed
        self.done += ok + failed
        if self.bar is not None:
            if failed:
                self.bar.set_postfix_str(f"{self.failed} failed", refresh=False)
            self.bar.update(ok + failed)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
