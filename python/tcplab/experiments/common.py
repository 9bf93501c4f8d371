"""Pieces every paper reproduction shares: item checking, seeds and
confidence intervals, tables written as CSV (tidy, for scripts) and Markdown
(for reading), figures, and index.md (the driver is
:meth:`tcplab.experiments.paper.Paper.reproduce`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any


def check_items(paper: str, items: Sequence[str] | None, known: Sequence[str]) -> list[str]:
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


# ---------------------------------------------------------------- seeds and confidence intervals

#: The access-delay jitter (seconds) of the reproductions' multi-flow runs: each sender's access delay
#: gets an offset uniform in [0, 0.25 ms) drawn from the run's seed (tcplab.Dumbbell's
#: ``access_jitter``), so each seed shows another phase. Why this size: docs/experiments/mv-highspeed.md,
#: "Seeds and phase effects".
PHASE_JITTER_S = 0.25e-3


def seed_list(n: int, what: str = "seeds") -> list[int]:
    """Seeds 1..n; ``n`` must be a positive integer (an error naming ``what`` otherwise)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{what}: must be a positive integer, got {n!r}")
    return list(range(1, n + 1))


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float, int]:
    """(mean, low, high, n) of the two-sided Student-t interval ``mean ± t(1 - a/2, n - 1) s / sqrt(n)``
    over the seeds' ``values`` (s: the sample standard deviation); low = high = NaN for one value."""
    from tcplab.sweep import t_interval

    mean, half, _, n = t_interval(values, confidence)
    return mean, mean - half, mean + half, n


def seed_summary(df: Any, by: Sequence[str], metrics: Sequence[str], diff: tuple[str, str] | None = None,
                 flips: dict[str, Callable[[Any], Sequence[float]]] | None = None, confidence: float = 0.95) -> Any:
    """One row per group of ``by`` from the per-seed rows of ``df`` (a ``seed`` column): each metric's
    mean over the seeds under its own name, its 95 % interval as ``<metric>_ci_low`` and
    ``<metric>_ci_high`` (:func:`mean_ci`; NaN with one seed), and ``seeds``, the number of seeds.
    ``diff = (a, b)``: also ``phase_dependent``, whether ``a - b`` changes sign across the seeds
    (:func:`winner_flips`; None with one seed); ``flips``: more such columns, each named with a
    function of the group's rows that gives the per-seed differences. Other columns keep their first
    value in the group. Groups stay in their first appearance's order."""
    import pandas as pd

    flips = dict(flips or {})
    if diff is not None:
        a, b = diff
        flips["phase_dependent"] = lambda g: g[a] - g[b]

    rows = []
    for _, g in df.groupby(list(by), sort=False, dropna=False):
        row = dict(g.iloc[0])
        row.pop("seed", None)
        for m in metrics:
            mean, lo, hi, _ = mean_ci(g[m].tolist(), confidence)
            row[m], row[f"{m}_ci_low"], row[f"{m}_ci_high"] = mean, lo, hi
        row["seeds"] = len(g)
        for name, fn in flips.items():
            row[name] = winner_flips(list(fn(g)))
        rows.append(row)
    return pd.DataFrame(rows)


def per_seed(per: Any, where: dict, metric: str) -> list[float]:
    """The seeds' values of ``metric`` in the per-seed rows ``per`` that match ``where`` (column: value)."""
    mask = None
    for k, v in where.items():
        m = per[k] == v
        mask = m if mask is None else mask & m
    return per[mask][metric].tolist()


def yes_no(flag: Any) -> str:
    """A ``phase_dependent`` cell for reading: yes, no, or - (one seed)."""
    return "-" if flag is None or (isinstance(flag, float) and flag != flag) else ("yes" if flag else "no")


def winner_flips(diffs: Sequence[float]) -> bool | None:
    """Whether per-seed differences (e.g. host A's goodput minus host B's) change sign across the
    seeds: the winner then depends on the phase the seed gives, not on the protocols. None for fewer
    than two seeds (nothing to compare)."""
    d = [float(x) for x in diffs]
    if len(d) < 2:
        return None
    return any(x > 0 for x in d) and any(x < 0 for x in d)


def phase_note(flagged: Sequence[str], total: int, seeds: int, what: str) -> str:
    """The line under a table (and in index.md) on its phase-dependent cells: ``flagged`` names them,
    ``what`` says what flips (e.g. "which host gets more"). Empty for one seed."""
    if seeds < 2:
        return ("One seed per cell: no interval and no phase check (`--seeds N` runs N seeds, each with its "
                "own access-delay jitter).")
    if not flagged:
        return f"Phase check: in none of the {total} cells does {what} change across the {seeds} seeds."
    return (f"**Phase-dependent** (`phase_dependent` column): in {len(flagged)} of the {total} cells {what} "
            f"changes across the {seeds} seeds, so there the outcome is the phase the seed gives, not the "
            f"protocol: {', '.join(flagged)}.")


def ci_text(mean: float, low: float, high: float, fmt: str = ".1f") -> str:
    """A table cell "mean [low, high]"; the mean alone when there is no interval (one seed)."""
    import math

    if math.isnan(low) or math.isnan(high):
        return format(mean, fmt)
    return f"{format(mean, fmt)} [{format(low, fmt)}, {format(high, fmt)}]"


def seed_points(ax: Any, x: Sequence[float], per_seed: Sequence[Sequence[float]], mean: Sequence[float],
                low: Sequence[float], high: Sequence[float], **style: Any) -> None:
    """The spread over seeds on ``ax``: the mean with its 95 % interval as error bars (where there is
    one) and every seed's value as a small translucent dot at the same x. ``per_seed[i]``: the seeds'
    values at ``x[i]``; ``style``: the mean line's matplotlib style (marker, ls, color, label)."""
    import numpy as np

    means = np.asarray(mean, dtype=float)
    err = np.vstack([means - np.asarray(low, dtype=float), np.asarray(high, dtype=float) - means])
    line = ax.errorbar(x, means, yerr=None if np.isnan(err).all() else np.nan_to_num(err), capsize=3, **style)
    color = line[0].get_color()
    xs = [xi for xi, vals in zip(x, per_seed, strict=True) for _ in vals]
    ys = [v for vals in per_seed for v in vals]
    if any(len(v) > 1 for v in per_seed):
        ax.plot(xs, ys, ".", color=color, alpha=0.6, ms=5, zorder=1)


def write_table(df: Any, out: str, name: str, title: str, note: str = "", floatfmt: str | Sequence[str] = ".3f",
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


def write_index(out: str, title: str, quick_text: str | None, runs: int | None, packets: int | None,
                wall: float, scenario: str, setup: str, items: Sequence[str], made: dict,
                order: Sequence[str] = ()) -> None:
    """Adds the ``items`` just made (``made[item]["files"]``) to the index of
    ``out`` (index.md and index.json, :mod:`tcplab.experiments.index`): items
    made there earlier stay listed, items made again are replaced. Each entry
    records the version, time, settings (``setup``, ``quick_text``) and the
    size and wall time of this command. ``order``: the paper's items, in
    the order index.md lists them (:meth:`Paper.write_index` gives them)."""
    from .index import update_index

    update_index(out, title, scenario, {it: made[it] for it in items if it in made}, setup, quick_text, runs,
                 packets, wall, order=order)
