"""Figures (matplotlib, Agg backend; imported lazily)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .results import Results

__all__ = ["plot_cwnd_queue", "cwnd_queue_figure", "algorithm_label", "flow_label",
           "cwnd_figure", "queue_figure", "throughput_figure"]

FlowRef = int | str


def algorithm_label(algorithm: str, params: Mapping[str, Any] | None = None) -> str:
    """A readable name for an algorithm and its parameters, for titles and
    legends: ``cubic``, ``cubic variant=2005``, ``scalable low_window=0,
    variant=paper`` (parameters in name order)."""
    if not params:
        return str(algorithm)
    return f"{algorithm} " + ", ".join(f"{k}={_param_text(v)}" for k, v in sorted(params.items()))


def _param_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def flow_label(name: str, algorithm: str | None = None, params: Mapping[str, Any] | None = None) -> str:
    """``flow 1 (cubic)`` for the flow named ``flow1`` running cubic; other
    names are kept as they are (``bulk (reno)``)."""
    m = re.fullmatch(r"flow(\d+)", str(name))
    text = f"flow {m.group(1)}" if m else str(name)
    return f"{text} ({algorithm_label(algorithm, params)})" if algorithm else text


def _pick_links(results: Results, links: Sequence[FlowRef] | None) -> list[int]:
    lk = results.links
    if len(lk) == 0:
        return []
    names = list(lk["name"])
    if links is not None:
        return [names.index(x) if isinstance(x, str) else int(x) for x in links]
    sc = results.scenario
    if sc is not None:
        wanted = [names.index(b) for b in sc.bottleneck_links() if b in names]
        if wanted:
            return wanted
    if "queue_max_packets" in lk:
        return [int(lk["queue_max_packets"].to_numpy().argmax())]
    return [0]


def plot_cwnd_queue(
    results: Results,
    path: str | os.PathLike,
    flows: Sequence[FlowRef] | None = None,
    links: Sequence[FlowRef] | None = None,
    bdp_packets: float | None = None,
    buffer_packets: float | None = None,
    title: str | None = None,
) -> None:
    """Write a PNG: cwnd of each flow vs time (top) and queue length vs time (bottom).

    ``flows``/``links`` select by id or name (default: every flow; the
    scenario's bottleneck links, else the link with the largest queue).
    Flows are labelled by name and algorithm (``flow 1 (cubic)``).
    Dotted reference lines at ``C x RTT`` (``bdp_packets``) and
    ``B + C x RTT`` (``buffer_packets`` + ``bdp_packets``) are drawn on the
    cwnd panel when given; for a :func:`~tcplab.scenario.dumbbell` they
    default to the bottleneck's capacity and buffer with the flows' path RTT
    (bottleneck and access links: :func:`tcplab.analysis.path_rtt_s`; the
    mean when the plotted flows' RTTs differ), as in mv-highspeed Figs. 2-8.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = cwnd_queue_figure(results, flows, links, bdp_packets, buffer_packets, title)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _flow_labels(results: Results) -> list[str]:
    """``flow 1 (cubic variant=2005)`` per flow: name, algorithm and, from the scenario, its parameters."""
    fl = results.flows
    names = [str(n) for n in fl["name"]] if "name" in fl else [str(i) for i in range(len(fl))]
    algos = list(fl["algorithm"]) if "algorithm" in fl else [None] * len(names)
    params: list = [None] * len(names)
    sc = results.scenario
    try:
        built = sc.to_spec()["flows"] if sc is not None else []
        if len(built) == len(names):
            params = [f.get("cc", {}).get("params") for f in built]
    except Exception:  # a scenario that no longer validates: label without parameters
        pass
    return [flow_label(n, a, p) for n, a, p in zip(names, algos, params, strict=True)]


def _reference_lines(results: Results, ids: Sequence[int]) -> tuple[float | None, float | None, str]:
    """(C x RTT, B, RTT text) for a dumbbell: the bottleneck's capacity and buffer, the plotted flows' path RTT."""
    from .analysis import bdp_packets, path_rtts_s
    sc = results.scenario
    db = getattr(sc, "dumbbell", None)
    if db is None:
        return None, None, ""
    rtts = path_rtts_s(sc, list(ids) or [0])  # one routing for all the flows
    rtt = sum(rtts) / len(rtts)
    what = "path RTT" if max(rtts) - min(rtts) < 1e-9 else "mean path RTT"
    return (float(bdp_packets(db.capacity_bps, rtt, db.packet_bytes, exact=True)), db.buffer_packets,
            f"{what} {1e3 * rtt:.4g} ms")


def cwnd_queue_figure(
    results: Results,
    flows: Sequence[FlowRef] | None = None,
    links: Sequence[FlowRef] | None = None,
    bdp_packets: float | None = None,
    buffer_packets: float | None = None,
    title: str | None = None,
) -> Any:
    """The figure :func:`plot_cwnd_queue` writes, as a matplotlib Figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ts = results.flow_ts
    labels = _flow_labels(results)
    ids = [results._flow_id(f) for f in flows] if flows is not None else list(range(len(labels)))
    rtt_text = ""
    if bdp_packets is None:
        bdp_packets, default_buffer, rtt_text = _reference_lines(results, ids)
        if buffer_packets is None:
            buffer_packets = default_buffer
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True)
    if len(ts):
        fcol = ts["flow"].to_numpy()
        t = ts["time"].to_numpy()
        cw = ts["cwnd"].to_numpy()
        for fid in ids:
            m = fcol == fid
            ax1.plot(t[m], cw[m], lw=0.8, label=labels[fid] if fid < len(labels) else str(fid))
    else:
        ax1.text(0.5, 0.5, "no time series (sample_interval = 0)", ha="center", va="center", transform=ax1.transAxes)
    if bdp_packets is not None:
        rtt_note = f" ({rtt_text})" if rtt_text else ""
        ax1.axhline(bdp_packets, ls=":", color="k", lw=1, label=f"C×RTT = {bdp_packets:,.0f}{rtt_note}")
        if buffer_packets is not None:
            ax1.axhline(bdp_packets + buffer_packets, ls=":", color="gray", lw=1,
                        label=f"B + C×RTT = {bdp_packets + buffer_packets:,.0f}")
    ax1.set_ylabel("cwnd (packets)")
    # Legends beside the panels, where they cover no data.
    if ids or bdp_packets is not None:
        ax1.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0)
    ax1.grid(alpha=0.3)

    qs = results.queue_ts
    link_ids = _pick_links(results, links)
    lnames = list(results.links["name"]) if "name" in results.links else []
    if len(qs) and link_ids:
        lcol = qs["link"].to_numpy()
        t = qs["time"].to_numpy()
        q = qs["packets"].to_numpy()
        for lid in link_ids:
            m = lcol == lid
            ax2.plot(t[m], q[m], lw=0.8, label=f"queue of {lnames[lid]}" if lid < len(lnames) else str(lid))
        if buffer_packets is not None:
            ax2.axhline(buffer_packets, ls=":", color="gray", lw=1, label=f"B = {buffer_packets:,.0f}")
        ax2.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0)
    else:
        ax2.text(0.5, 0.5, "no queue samples", ha="center", va="center", transform=ax2.transAxes)
    ax2.set_ylabel("queue (packets)")
    ax2.set_xlabel("time (s)")
    ax2.grid(alpha=0.3)
    fig.suptitle(title or results.name)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- figures for notebooks (Results.plot_*)
#
# These return a matplotlib Figure built without pyplot: nothing is shown, nothing global is
# touched (no backend switch), and the caller owns the figure (Jupyter displays a returned Figure;
# fig.savefig writes it). One line per flow or link, labelled "name (algorithm)".

def _figure(ylabel: str, title: str):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 3.6), layout="constrained")
    ax = fig.add_subplot()
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return fig, ax


def _flow_ids(results: Results, flows: Sequence[FlowRef] | None) -> list[int]:
    return [results._flow_id(f) for f in flows] if flows is not None else list(range(len(results.flows)))


def _finish(fig, ax, n: int, empty: str):
    if n:
        ax.legend(loc="upper right", fontsize="small", ncol=2 if n > 6 else 1)
    else:
        ax.text(0.5, 0.5, empty, ha="center", va="center", transform=ax.transAxes)
    return fig


def cwnd_figure(results: Results, flows: Sequence[FlowRef] | None = None):
    """Each flow's congestion window (packets) against time; ``flows`` by id or name (default all)."""
    fig, ax = _figure("cwnd (packets)", f"{results.name}: congestion window")
    ts, ids, labels = results.flow_ts, _flow_ids(results, flows), _flow_labels(results)
    n = 0
    if len(ts):
        fcol, t, cw = ts["flow"].to_numpy(), ts["time"].to_numpy(), ts["cwnd"].to_numpy()
        for fid in ids:
            m = fcol == fid
            ax.plot(t[m], cw[m], lw=0.8, label=labels[fid])
            n += 1
    return _finish(fig, ax, n, "no time series (sample_interval = 0)")


def throughput_figure(results: Results, flows: Sequence[FlowRef] | None = None,
                      interval: float | None = None):
    """Each flow's delivery rate (Mbit/s, bytes delivered to the receiver) against time, averaged over
    ``interval`` seconds (default: the sampling interval, or coarser so that a line has at most
    about 200 points); the point at t is the rate over (t - interval, t]."""
    import numpy as np

    fig, ax = _figure("throughput (Mbit/s)", f"{results.name}: throughput")
    ts, ids, labels = results.flow_ts, _flow_ids(results, flows), _flow_labels(results)
    n = 0
    if len(ts):
        fcol, t, d = ts["flow"].to_numpy(), ts["time"].to_numpy(), ts["delivered_bytes"].to_numpy()
        for fid in ids:
            m = fcol == fid
            tf, df = t[m], d[m].astype(float)
            if len(tf) < 2:
                continue
            step = float(np.median(np.diff(tf)))
            k = max(1, round(interval / step)) if interval else max(1, len(tf) // 200)
            tk, dk = tf[::k], df[::k]
            ax.plot(tk[1:], np.diff(dk) * 8 / np.diff(tk) / 1e6, lw=0.8, label=labels[fid])
            n += 1
    return _finish(fig, ax, n, "no time series (sample_interval = 0)")


def queue_figure(results: Results, links: Sequence[FlowRef] | None = None):
    """Queue length (packets) of ``links`` against time (by id or name; default: the scenario's
    bottleneck links, else the link whose queue grew largest). A link must be sampled (the run's
    ``trace_links``, by default the bottleneck): one that is not raises ValueError naming it."""
    fig, ax = _figure("queue (packets)", f"{results.name}: queue")
    qs, ids = results.queue_ts, _pick_links(results, links)
    names = list(results.links["name"]) if "name" in results.links else []
    n = 0
    if len(qs):
        lcol, t, q = qs["link"].to_numpy(), qs["time"].to_numpy(), qs["packets"].to_numpy()
        for lid in ids:
            m = lcol == lid
            name = names[lid] if lid < len(names) else str(lid)
            if not m.any():
                raise ValueError(f"link {name!r} has no queue samples: give it in the run's trace_links")
            ax.plot(t[m], q[m], lw=0.8, label=name)
            n += 1
    return _finish(fig, ax, n, "no queue samples")
