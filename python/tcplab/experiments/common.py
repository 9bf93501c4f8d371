"""Pieces every paper reproduction shares: item checking, tables written as
CSV (tidy, for scripts) and Markdown (for reading), figures, and index.md."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, Optional, Sequence


def check_items(paper: str, items: Optional[Sequence[str]], known: Sequence[str]) -> list[str]:
    """The items to run (all when none are given); an unknown one is an
    error naming it, with close matches."""
    items = list(items) if items else list(known)
    for it in items:
        if it not in known:
            import difflib

            close = difflib.get_close_matches(it, list(known), n=2)
            raise ValueError(f"item: unknown item {it!r} of {paper}"
                             + (f"; did you mean {' or '.join(map(repr, close))}?" if close else
                                f"; items: {', '.join(known)}"))
    return items


def write_table(df: Any, out: str, name: str, title: str, note: str = "", floatfmt: str = ".3f",
                md_df: Any = None) -> list[str]:
    """``name.csv`` (tidy, every row) and ``name.md`` (``md_df`` if given,
    e.g. a pivot in the paper's layout); returns both paths."""
    csv = os.path.join(out, f"{name}.csv")
    md = os.path.join(out, f"{name}.md")
    df.to_csv(csv, index=False)
    with open(md, "w") as f:
        f.write(f"# {title}\n\n")
        if note:
            f.write(note + "\n\n")
        f.write((md_df if md_df is not None else df).to_markdown(index=md_df is not None, floatfmt=floatfmt))
        f.write("\n")
    return [csv, md]


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, out: str, name: str, dpi: int = 110) -> str:
    plt = pyplot()
    path = os.path.join(out, name)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


#: The paper's item order while :func:`finish` writes the index (index.md lists the items in it).
_ORDER: list[str] = []


def write_index(out: str, title: str, quick_text: Optional[str], runs: Optional[int], packets: Optional[int],
                wall: float, scenario: str, setup: str, items: Sequence[str], made: dict,
                order: Optional[Sequence[str]] = None) -> None:
    """Adds the ``items`` just made (``made[item]["files"]``) to the index of
    ``out`` (index.md and index.json, :mod:`tcplab.experiments.index`): items
    made there earlier stay listed, items made again are replaced. Each entry
    records the version, time, settings (``setup``, ``quick_text``) and the
    size and wall time of this command. ``order``: the paper's items, in
    the order index.md lists them (default: the one :func:`finish` sets)."""
    from .index import update_index

    update_index(out, title, scenario, {it: made[it] for it in items if it in made}, setup, quick_text, runs,
                 packets, wall, order=_ORDER if order is None else order)


def finish(paper: str, items: Sequence[str], known: Sequence[str], builders: dict[str, Callable], setup: Any,
           res: dict, out: str, t0: float, runs: int, verbose: bool, write_index_fn: Callable) -> dict:
    """Builds each requested item's tables and figures from the runs' results
    (in the paper's item order), adds them to index.md through ``write_index_fn(setup,
    out, items, made, wall, runs, packets)`` and reports; returns
    ``{item: {"tables": ..., "files": [...]}}``."""
    made: dict[str, dict] = {}
    for it in known:
        if it in items:
            tables, files = builders[it](setup, res, out)
            made[it] = {"tables": tables, "files": files}
    wall = time.perf_counter() - t0
    packets = sum(r.get("bottleneck_packets", 0) for r in res.values())
    _ORDER[:] = list(known)
    try:
        write_index_fn(setup, out, list(items), made, wall, runs, packets)
    finally:
        _ORDER.clear()
    if verbose:
        print(f"{paper}: {runs} runs, {packets / 1e9:.3f} G bottleneck packets, {wall:.1f} s wall; "
              f"outputs in {out}/ (index.md)", file=sys.stderr)
    return made
