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


def cwnd_queue_figure(panels: Sequence[dict], title: str, clip: float = 2.5) -> Any:
    """The cwnd/queue figure of mv-highspeed Figs. 2-8 and mv-buffers Fig. 5:
    one column per panel, cwnd against time on top, the bottleneck queue
    below, with dotted lines at ``C x RTT`` and ``B + C x RTT`` (cwnd) and
    ``B`` (queue). Returns the matplotlib Figure.

    Each panel is a dict: ``label`` (the column's title, e.g. "(a) B = 1 BDP
    (1667 packets)"), ``time``/``cwnd`` and ``queue_time``/``queue`` (the
    series), ``capacity_bps``, ``packet_bytes``, ``buffer_packets`` and
    ``path_rtt_s``: the flow's round-trip propagation delay, access links
    included (:func:`tcplab.analysis.path_rtt_s`), so a single flow's
    sawtooth peaks at about ``B + C x RTT``.

    The cwnd axis stops at ``clip x (B + C x RTT)`` so that the sawtooth
    stays readable beside a slow-start overshoot; a peak above that is
    written on the panel (value and time), not cut silently. The legend sits
    below the panels, where it covers no data."""
    import numpy as np

    from tcplab.analysis import bdp_packets

    plt = pyplot()
    fig, axes = plt.subplots(2, len(panels), figsize=(6 * len(panels), 7.4), sharex=True, squeeze=False)
    for col, p in enumerate(panels):
        pipe = int(bdp_packets(p["capacity_bps"], p["path_rtt_s"], p["packet_bytes"]))
        buf = p["buffer_packets"]
        ref = pipe + buf
        ax = axes[0][col]
        t = np.asarray(p["time"], dtype=float)
        cw = np.asarray(p["cwnd"], dtype=float)
        ax.plot(t, cw, lw=0.7, color="C0", label="cwnd")
        ax.axhline(pipe, ls=":", color="k", lw=1, label="C x RTT (RTT: the path's round trip)")
        ax.axhline(ref, ls=":", color="C3", lw=1, label="B + C x RTT (cwnd), B (queue)")
        ax.set_ylabel("cwnd (packets)")
        ax.set_title(f"{p['label']}\nC x RTT = {pipe:,}, B + C x RTT = {ref:,} packets "
                     f"(path RTT {1e3 * p['path_rtt_s']:.4g} ms)", fontsize=10)
        ax.grid(alpha=0.3)
        peak = float(cw.max()) if len(cw) else 1.0
        cap = clip * ref
        if peak > cap:
            ax.set_ylim(0, cap)
            i = int(cw.argmax())
            left = t[i] < 0.5 * (t[0] + t[-1])
            ax.annotate(f"peak {peak:,.0f} packets at {t[i]:.3g} s (off scale)", xy=(t[i], cap), xycoords="data",
                        xytext=(14 if left else -14, -16), textcoords="offset points", fontsize=8,
                        ha="left" if left else "right", va="top",
                        arrowprops={"arrowstyle": "->", "lw": 0.8, "color": "0.3"})
        else:
            ax.set_ylim(0, max(peak * 1.05, ref) * 1.1)
        qa = axes[1][col]
        qa.plot(p["queue_time"], p["queue"], lw=0.7, color="C1", label="bottleneck queue")
        qa.axhline(buf, ls=":", color="C3", lw=1)
        qa.set_ylim(0, buf * 1.15)
        qa.set_ylabel("queue (packets)")
        qa.set_xlabel("time (s)")
        qa.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    qh, ql = axes[1][0].get_legend_handles_labels()
    fig.legend(handles + qh, labels + ql, loc="lower center", ncol=4, fontsize=9, frameon=False)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.045, 1, 1))
    return fig


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
