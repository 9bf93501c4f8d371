"""The fidelity report of ``tcplab validate``: ``fidelity.csv``, overlay figures, ``report.html``.

:func:`write_report` compares a kernel directory with tcplab's run
(:mod:`tcplab.validate.compare`) and writes the table, the overlay PNGs and
one self-contained page; :func:`table_text` is the table as the CLI prints it.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .compare import STALL_LIMIT, _compare_flow_sides, _compare_sides, aggregate_side, disturbances, is_bbr
from .metrics import first_loss
from .sides import Side, kernel_side, linux_flow_options, n_flows_of, read_meta, sim_side

__all__ = [
    "table_text",
    "targets_summary",
    "write_report",
]

_COLORS = {"kernel": "#1f77b4", "tcplab": "#d62728"}


def _figures(k: Side, s: Side, window: tuple[float, float], first_loss_t: float) -> dict[str, tuple[bytes, str]]:
    """PNG overlays (name -> (bytes, caption)): cwnd, queue, srtt, goodput per
    second, and start-up (cwnd up to 2 s after the later first loss)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..report import _fig_png

    def drops_marks(ax: Any, y: float) -> None:
        for side, yy in ((k, y), (s, y * 0.96)):
            if len(side.drops):
                ax.plot(side.drops, np.full(len(side.drops), yy), "|", color=_COLORS[side.label], ms=8,
                        label=f"{side.label} drops ({len(side.drops)})")

    def shade(ax: Any) -> None:
        ax.axvspan(window[0], window[1], color="#999", alpha=0.08, lw=0)

    figs: dict[str, tuple[bytes, str]] = {}
    end = max(k.duration, s.duration)

    fig, ax = plt.subplots(figsize=(10, 3.6))
    for side in (k, s):
        ax.step(side.ts["time"], side.ts["cwnd"], where="post", color=_COLORS[side.label], lw=0.9, label=side.label)
    top = float(np.nanmax(np.concatenate([k.ts["cwnd"], s.ts["cwnd"]]))) * 1.08 if len(k.ts) + len(s.ts) else 1
    drops_marks(ax, top)
    shade(ax)
    ax.set(xlabel="time since t0 (s)", ylabel="cwnd (segments)", xlim=(0, end))
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    figs["cwnd.png"] = (_fig_png(fig), "cwnd of both sides (steady-state window shaded); ticks: drops")

    fig, ax = plt.subplots(figsize=(10, 3.0))
    for side in (k, s):
        ax.step(side.queue["time"], side.queue["packets"], where="post", color=_COLORS[side.label], lw=0.8,
                label=side.label)
    qtop = float(np.nanmax(np.concatenate([k.queue["packets"], s.queue["packets"], [1.0]]))) * 1.1
    drops_marks(ax, qtop)
    shade(ax)
    ax.set(xlabel="time since t0 (s)", ylabel="bottleneck queue (packets)", xlim=(0, end))
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    figs["queue.png"] = (_fig_png(fig), "bottleneck queue of both sides; ticks: drops")

    fig, ax = plt.subplots(figsize=(10, 2.8))
    for side in (k, s):
        ax.plot(side.ts["time"], side.ts["srtt"] * 1e3, color=_COLORS[side.label], lw=0.8, label=side.label)
    shade(ax)
    ax.set(xlabel="time since t0 (s)", ylabel="srtt (ms)", xlim=(0, end))
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    figs["srtt.png"] = (_fig_png(fig), "smoothed RTT of both senders")

    fig, ax = plt.subplots(figsize=(10, 2.8))
    edges = np.arange(0.0, math.floor(end) + 1.0, 1.0)
    if len(edges) >= 2:
        for side in (k, s):
            cum = np.interp(edges, side.rx["time"], side.rx["bytes"])
            ax.step(edges[1:], np.diff(cum) * 8 / 1e6, where="pre", color=_COLORS[side.label], lw=0.9,
                    label=side.label)
    shade(ax)
    ax.set(xlabel="time since t0 (s)", ylabel="goodput (Mbit/s, 1 s bins)", xlim=(0, end))
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    figs["goodput.png"] = (_fig_png(fig), "goodput per second of both sides")

    zoom = (first_loss_t if math.isfinite(first_loss_t) else 2.0) + 2.0
    fig, ax = plt.subplots(figsize=(10, 3.2))
    for side in (k, s):
        m = side.ts["time"] <= zoom
        ax.step(side.ts["time"][m], side.ts["cwnd"][m], where="post", color=_COLORS[side.label], lw=1.0,
                label=side.label)
        fl = first_loss(side.drops)
        if math.isfinite(fl):
            ax.axvline(fl, color=_COLORS[side.label], ls=":", lw=1)
    ax.set(xlabel="time since t0 (s)", ylabel="cwnd (segments)", xlim=(0, zoom))
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    figs["startup.png"] = (_fig_png(fig), "start-up: cwnd until 2 s after the first loss (dotted: first drop)")
    return figs


def _fmt(metric: str, v: float) -> str:
    if v is None or not math.isfinite(v):
        return "n/a"
    if metric == "goodput_bps":
        return f"{v / 1e6:.4g} Mbit/s"
    if metric == "jain_index":
        return f"{v:.4f}"
    if metric == "retrans_rate":
        return f"{v * 100:.3g} %"
    if metric.endswith("_s"):
        return f"{v * 1e3:.4g} ms" if metric == "srtt_mean_s" else f"{v:.4g} s"
    return f"{v:.4g}"


def table_text(df: Any) -> str:
    """The fidelity table as aligned plain text (what the CLI prints)."""
    rows = []
    for _, r in df.iterrows():
        rel = r["rel_error"]
        ok = r["ok"]
        rows.append(([str(r["flow"])] if "flow" in df.columns else [])
                    + [r["metric"], _fmt(r["metric"], r["kernel"]), _fmt(r["metric"], r["tcplab"]),
                       f"{rel * 100:+.2f} %" if isinstance(rel, float) and math.isfinite(rel) else "n/a",
                       r["target"] or "-", "-" if ok is None or ok != ok else ("ok" if ok else "FAIL"), r["note"]])
    headers = (["flow"] if "flow" in df.columns else []) + ["metric", "kernel", "tcplab", "rel. error", "target",
                                                            "ok", "note"]
    widths = [max(len(h), *(len(x[i]) for x in rows)) for i, h in enumerate(headers)]
    left = {headers.index("metric"), headers.index("note")}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i in left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(x) for x in rows])


def targets_summary(df: Any) -> tuple[int, int]:
    """(targets met, targets judged)."""
    judged = [v for v in df["ok"] if v is not None and v == v]
    return sum(bool(v) for v in judged), len(judged)


def write_report(out_dir: str | os.PathLike, kernel_dir: str | os.PathLike, result: Any,
                 scenario_desc: str, flow: int = 0):
    """Write the fidelity report into ``out_dir``: ``fidelity.csv`` (the
    :func:`compare` table), the overlay PNGs, and ``report.html`` (one page,
    figures embedded, the kernel run's disturbances named in its header).
    Returns the table."""
    import html as _html

    from ..report import _e, _img, _page, _table

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    n = n_flows_of(read_meta(kernel_dir))
    if n == 1:
        k, s = kernel_side(kernel_dir), sim_side(result, flow)
        df = _compare_sides(k, s)
    else:  # the overlays show the aggregate; cwnd_flows.png every flow
        ks = [kernel_side(kernel_dir, i) for i in range(n)]
        ss = [sim_side(result, i) for i in range(n)]
        df = _compare_flow_sides(ks, ss)
        k, s = aggregate_side(ks), aggregate_side(ss)
    df.to_csv(out / "fidelity.csv", index=False)
    meta = k.extra["meta"]
    window = df.attrs["window"]
    fl = np.nanmax([first_loss(k.drops), first_loss(s.drops), -math.inf])
    figs = _figures(k, s, window, float(fl) if math.isfinite(fl) else math.nan)
    if n > 1:
        figs = {"cwnd_flows.png": _flows_figure(ks, ss, window),
                **{name: (png, cap.replace("cwnd", "summed cwnd", 1) if name in ("cwnd.png", "startup.png")
                          else cap + " (all flows)") for name, (png, cap) in figs.items()}}
    for name, (png, _) in figs.items():
        (out / name).write_bytes(png)

    dist = disturbances(meta)
    met, judged = targets_summary(df)
    if dist:
        head = ("<div class=fail><p><b>The kernel run was disturbed</b>; a difference below may be the "
                "measurement's, not the model's:</p><ul>" + "".join(f"<li>{_e(x)}</li>" for x in dist)
                + "</ul></div>")
    else:
        fw = meta.get("forwarder", {})
        head = (f"<p>Kernel run undisturbed: forwarder lateness p99 {_e(_ms(fw.get('late_p99_s')))}, "
                f"max {_e(_ms(fw.get('late_max_s')))}, no host stall over {STALL_LIMIT * 1e3:g} ms.</p>")
    shown = df.copy()
    shown["kernel"] = [_fmt(m, v) for m, v in zip(df["metric"], df["kernel"], strict=True)]
    shown["tcplab"] = [_fmt(m, v) for m, v in zip(df["metric"], df["tcplab"], strict=True)]
    shown["rel_error"] = [f"{v * 100:+.2f} %" if math.isfinite(v) else "n/a" for v in df["rel_error"]]
    shown["ok"] = ["" if v is None or v != v else ("ok" if v else "FAIL") for v in df["ok"]]
    table = _table(shown.drop(columns=["unit"]))
    table = table.replace("<td class=l>FAIL</td>", "<td class='l fail'><b>FAIL</b></td>")
    fw = meta.get("forwarder") or {}
    info = {
        "kernel": meta.get("kernel"), "algorithm (kernel)": meta.get("algorithm"),
        "tcplab algorithm": _tcplab_algorithm_text(result, flow),
        "tcplab flow options": json.dumps(linux_flow_options()),
        "steady-state window": f"[{window[0]:g}, {window[1]:g}] s",
        "loss-event gap (2 largest RTTs)": f"{df.attrs['gap'] * 1e3:.4g} ms",
        "forwarder packets forwarded / dropped": f"{fw.get('packets_fwd')} / {fw.get('packets_dropped')}",
        "tcplab t0 offset": f"{s.extra.get('t0', 0.0) * 1e6:.3g} us",
        "flows": str(n) + ("" if n == 1 else " (aggregate rows judged; per-flow rows reported)"),
    }
    if is_bbr(meta):
        pacing = meta.get("pacing") or {}
        info["kernel pacing"] = f"{pacing.get('paced_by', 'unknown')}; qdisc: {pacing.get('qdisc', 'unknown')}"
        info["bbr rows"] = ("sawtooth period and slow-start exit left out (BBR answers no loss event with a "
                            "window reduction and leaves STARTUP without ssthresh); ProbeRTT: kernel mode 3 from "
                            "TCP_CC_INFO's gains with cwnd <= 4, tcplab cc_ts mode 3 (docs/validation.md, BBR)")
    info_html = "<table>" + "".join(f"<tr><th class=l>{_e(a)}</th><td class=l>{_e(b)}</td></tr>"
                                   for a, b in info.items()) + "</table>"
    sysctls = meta.get("sysctls") or {}
    nstat = meta.get("nstat") or {}
    extra = ""
    if sysctls:
        extra += "<h2>Kernel settings</h2><pre>" + _html.escape(
            "\n".join(f"{a} = {b}" for a, b in sorted(sysctls.items()))) + "</pre>"
    if nstat:
        extra += "<h2>Kernel counters (nstat deltas, non-zero)</h2><pre>" + _html.escape(
            "\n".join(f"{a} {b}" for a, b in sorted(nstat.items()) if b)) + "</pre>"
    body = (f"<p><b>{_e(scenario_desc)}</b></p>{head}"
            f"<p>{met} of {judged} targets met. Relative error = (tcplab − kernel) / kernel; "
            f"rows without a target are reported, not judged.</p>{table}"
            f"<h2>Setup</h2>{info_html}<h2>Overlays</h2>"
            + "".join(_img(png, cap) for png, cap in figs.values()) + extra)
    (out / "report.html").write_text(_page(f"tcplab validate: {scenario_desc}", body), encoding="utf-8")
    return df


def _flows_figure(ks: Sequence[Side], ss: Sequence[Side], window: tuple[float, float]) -> tuple[bytes, str]:
    """Every flow's cwnd, one colour per flow: kernel solid, tcplab dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..report import _fig_png

    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"]
    fig, ax = plt.subplots(figsize=(10, 3.8))
    for i, (k, s) in enumerate(zip(ks, ss, strict=True)):
        c = colors[i % len(colors)]
        ax.step(k.ts["time"], k.ts["cwnd"], where="post", color=c, lw=0.9, label=f"flow {i} kernel")
        ax.step(s.ts["time"], s.ts["cwnd"], where="post", color=c, lw=0.9, ls="--", label=f"flow {i} tcplab")
    ax.axvspan(window[0], window[1], color="#999", alpha=0.08, lw=0)
    ax.set(xlabel="time since t0 (s)", ylabel="cwnd (segments)",
           xlim=(0, max(x.duration for x in [*ks, *ss])))
    ax.legend(loc="upper right", fontsize=7, ncol=len(ks))
    fig.tight_layout()
    return _fig_png(fig), "cwnd of every flow: kernel solid, tcplab dashed (steady-state window shaded)"


def _tcplab_algorithm_text(result: Any, flow: int) -> str:
    """What tcplab ran: algorithm, parameters and recovery of the flow."""
    sc = getattr(result, "scenario", None)
    if sc is None:
        return str(result.flows["algorithm"].iloc[flow])
    f = sc.flows[flow] if sc.dumbbell is None else sc.dumbbell.flow(flow)
    return f"{f.algorithm} {json.dumps(f.params)}, recovery {f.recovery}"


def _ms(v: Any) -> str:
    return "unknown" if v is None else f"{float(v) * 1e3:.3g} ms"
