"""ssm-interactions: Shimonishi, Sanadidi & Murase, *Assessing interactions
among legacy and high-speed TCPs* (docs/papers/ssm-interactions.md).

The comparative method: for each configuration (a seed) and each number of
long-lived flows L, one parking-lot scenario is generated and frozen
(:func:`tcplab.generate.parking_lot_scenario`), then replayed with protocol
mixes that change nothing but the congestion control of each flow group:

- ``all-reno`` ("year 2005"): every flow Reno;
- ``reno+X`` ("year 2007"): group A Reno, group B the high-speed protocol X;
- ``all-X`` ("year 2010"): every flow X.

Every flow and file is then compared with itself across the runs.

Items:

- ``fig3``: mean utilization of the 8 backbone links against L (all-X);
- ``fig4``: relative throughput T_i(all-X) / T_i(all-Reno) against base RTT (L = 40);
- ``fig5``: the same against the number of backbone hops;
- ``fig6``: per-flow throughput against base RTT (all-X, L = 40);
- ``fig7``: CDF of per-flow throughput (all-X, L = 40), fractions below
  20 Mbit/s and above 200 Mbit/s (thresholds scale with the link rate in
  quick mode);
- ``fig8``: Reno degradation T_Reno_i(reno+X) / T_Reno_i(all-Reno) against RTT, one curve per X;
- ``fig9``: mean transfer time against file size, files of high-speed flows (all-X);
- ``fig10``: the same for the files of Reno flows (group A) in reno+X, one curve per X;
- ``rtt-ratio``: throughput ratio of a 30 ms to a 300 ms RTT flow per protocol.

Throughput figures (4-8, rtt-ratio) use the long-lived flows (the short
ones are limited by their offered load, and are covered by Figs. 9-10).
Choices where the paper is silent are in docs/experiments/ssm-interactions.md
and in each index.md.

The paper ran ns-2 with the TCP/Linux patch of 2007: ``variants="paper"``
(default) runs the Linux 2.6.x modules of that time where tcplab has them
(``PAPER_PARAMS``), ``"linux"`` today's; AReno is the paper's modified AReno
in both. ``setup="paper"`` (default) gives every flow Agent/TCP/Linux's
defaults (initial window 2, RTO 3 s / 0.2 s / 120 s;
:func:`tcplab.experiments.settings.ns2_tcp_linux`), ``"linux"`` tcplab's
(initial window 10). index.md lists every value with its source.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from . import settings
from .common import pyplot, save_figure, write_table
from .paper import SETUP_OPTION, Item, Option, Paper

#: Display name -> core algorithm (Linux defaults: the paper ran ns-2 with the
#: TCP/Linux patch, so every protocol follows its Linux implementation; SACK
#: recovery for all).
PROTOCOLS: dict[str, str] = {
    "Reno": "reno",
    "HSTCP": "highspeed",
    "STCP": "scalable",
    "BIC": "bic",
    "CUBIC": "cubic",
    "H-TCP": "htcp",
    "CTCP": "compound",
    "Vegas": "vegas",
    "AReno": "areno",
}
QUICK_PROTOCOLS = ["Reno", "CUBIC", "H-TCP", "CTCP", "Vegas", "AReno"]

#: Parameters of a protocol in both variants: AReno is the paper's own modified AReno (its section II),
#: not the 2005/2006 algorithm of its reference [9].
PROTOCOL_PARAMS: dict[str, dict] = {
    "AReno": {"variant": "paper"},
}

#: ``variants="paper"`` (default): where tcplab has the module ns-2's TCP/Linux
#: patch carried in 2007 (the Linux 2.6.x modules of that time; ns-2.35 ships
#: them "from linux-2.6.22.6"), use it; ``PAPER_WHY`` says what each is.
#: ``variants="linux"``: current Linux defaults for all.
PAPER_PARAMS: dict[str, dict] = {
    "STCP": {"variant": "linux-pre-2020"},
    "CUBIC": {"variant": "2005", "initial_ssthresh": 0},
    "Vegas": {"variant": "linux-2.6", "restart_on_idle": False},
    "CTCP": {"variant": "linux-port", "restart_on_idle": False},
}
#: Why each protocol runs as it does with ``variants="paper"``.
PAPER_WHY: dict[str, str] = {
    "Reno": "Linux's Reno, TCP/Linux's default module",
    "HSTCP": "tcp_highspeed.c: the 72-row table of Linux 2.6.22 is today's too; tcplab has this one Linux form",
    "STCP": "tcp_scalable.c of Linux 2.6.22 (TCP_SCALABLE_AI_CNT = 50, one credit per ACK): tcplab's "
            "linux-pre-2020; the 2.6 form's one extra ACK per increment is not modelled",
    "BIC": "tcp_bic.c: Linux 2.6.22's constants (max_increment 16, low_window 14, beta 819/1024, "
           "initial_ssthresh 0) are today's, and its per-ACK count equals today's per-segment one with an ACK per "
           "segment; tcplab has this one Linux form",
    "CUBIC": "tcp_cubic.c v2.1 of Linux 2.6.22 (beta 819/1024, C = 0.4, max_increment 16, initial_ssthresh 0, no "
             "HyStart): tcplab's 2005 (v2.0) engine with initial_ssthresh 0; v2.1's fixed cnt = 50 before the first "
             "loss and its packets-per-ACK ratio are not modelled",
    "H-TCP": "tcp_htcp.c: Linux 2.6.22's rules and constants (beta in [0.5, 0.8], RTT scaling, bandwidth switch) "
             "are today's, except that 2.6.22 tracks minRTT and maxRTT on srtt where tcplab, as today's Linux, "
             "uses each RTT sample; tcplab has this one Linux form",
    "CTCP": "the 2006 out-of-tree tcp_compound.c that TCP/Linux ships, without idle restart (ns-2 raises no "
            "TX_START)",
    "Vegas": "tcp_vegas.c of Linux 2.6.16-2.6.22 as TCP/Linux ships it, without idle restart (ns-2 raises no "
             "TX_START)",
    "AReno": "the paper's modified AReno (section II), the AReno of all its figures",
}
#: The paper's simulator.
PAPER_SETUP = settings.ns2_tcp_linux("the paper ran ns-2 with the TCP/Linux patch of 2007; its Agent/TCP/Linux "
                                     "defaults are read in ns-2.35, into which the patch was merged (2.33)")
STATED = settings.SetupValue("packet size", "1500 B (1460 B of payload + 40 B of headers)",
                             "choice: the paper gives no size; ns-2's 1500-byte convention", flow=False)


class Setup:
    """Scale of the study; ``quick`` shrinks it (rates /10, 10 short flows,
    L in {1, 4}, 30 s, 2 configurations) and every output says so."""

    def __init__(self, quick: bool, configs: int | None = None, duration: float | None = None,
                 protocols: Sequence[str] | None = None, variants: str = "paper", setup: str = "paper"):
        self.quick = quick
        if variants not in ("paper", "linux"):
            raise ValueError(f"variants: must be 'paper' or 'linux', got {variants!r}")
        self.variants = variants
        self.tcp = settings.choose(setup, PAPER_SETUP, "ssm-interactions")
        self.rate = 100e6 if quick else 1e9
        self.buffer = 200_000 if quick else 2_000_000
        self.n_short = 10 if quick else 100
        self.longs = (1, 4) if quick else (1, 10, 40)
        self.duration = float(duration) if duration is not None else (30.0 if quick else 600.0)
        self.configs = int(configs) if configs is not None else (2 if quick else 12)
        names = list(protocols) if protocols else (QUICK_PROTOCOLS if quick else list(PROTOCOLS))
        for p in names:
            if p not in PROTOCOLS:
                raise ValueError(f"protocols: unknown protocol {p!r}; known: {', '.join(PROTOCOLS)}")
        if "Reno" not in names:
            names = ["Reno"] + names
        self.protocols = names
        if self.configs < 1:
            raise ValueError(f"configs: must be at least 1, got {self.configs}")
        if self.duration <= 0:
            raise ValueError(f"duration: must be > 0, got {self.duration}")
        self.L = max(self.longs)
        self.low_thr = 20e6 * self.rate / 1e9
        self.high_thr = 200e6 * self.rate / 1e9
        from ..interactions import size_bins

        self.bins = size_bins(1e3, 1e10, 2)
        self._frozen: dict = {}
        self._jobs: list | None = None  # (every mix of every configuration: _all_mixes)

    def params(self, p: str) -> dict:
        """The parameters protocol ``p`` runs with (:data:`PROTOCOL_PARAMS`, then :data:`PAPER_PARAMS` for
        the paper's variants)."""
        return {**PROTOCOL_PARAMS.get(p, {}), **(PAPER_PARAMS.get(p, {}) if self.variants == "paper" else {})}

    def cc(self, p: str):
        """The mix entry of protocol ``p``: an algorithm name or a table."""
        params = self.params(p)
        return {"algorithm": PROTOCOLS[p], "params": params} if params else PROTOCOLS[p]

    @property
    def hs(self) -> list[str]:
        return [p for p in self.protocols if p != "Reno"]

    def frozen(self, n_long: int, config: int):
        from ..generate import parking_lot_scenario

        key = (n_long, config)
        if key not in self._frozen:
            self._frozen[key] = parking_lot_scenario(
                n_long, seed=config, duration=self.duration, rate=self.rate, buffer=f"{self.buffer}B",
                n_short=self.n_short, flow_options=self.tcp.flow_options())
        return self._frozen[key]

    def describe(self) -> str:
        runs = [
            f"- parking lot: 5 routers, 8 unidirectional backbone links of {self.rate / 1e6:g} Mbit/s, access links "
            f"{self.rate / 1e6:g} Mbit/s, buffers {self.buffer / 1e6:g} MB on every link",
            "- every link's one-way propagation delay ~ Exponential(mean 15 ms), drawn per configuration",
            f"- {self.n_short} short-lived flows (Pareto sizes, mean 1 MB, shape 1.5; Poisson arrivals, mean 1 s); "
            f"long-lived flows L in {list(self.longs)} (4.7 GB files, Poisson arrivals mean 120 s, first file at "
            "the flow's start, starts uniform in [0, 10 s])",
            f"- {self.configs} configurations (seeds 1..{self.configs}), {self.duration:g} s each",
            "- mixes: all-Reno, reno+X (group A Reno, group B X; groups split each traffic class in half), all-X",
            f"- algorithm variants: {self.variants}",
        ]
        protocols = [settings.Protocol(p, PROTOCOLS[p], self.params(p), "sack",
                                       PAPER_WHY[p] if self.variants == "paper" or p in PROTOCOL_PARAMS
                                       else "today's Linux defaults (--variants linux)")
                     for p in self.protocols]
        note = ("The paper ran ns-2 with the TCP/Linux patch, so every protocol is a Linux module of 2007 where "
                "tcplab has that form (`--variants paper`), with SACK recovery.")
        other = ["- throughput = bytes delivered x 8 / (run end - flow start); transfer time = first packet sent "
                 "to the ACK of the last",
                 "- link delays read as one-way (docs/experiments/ssm-interactions.md), access links from the same "
                 "law; Pareto shape 1.5; long-lived flows start uniform in [0, 10 s]"]
        return settings.settings_markdown(runs, self.tcp.with_values(STATED), protocols, other, protocols_note=note)


def _mix_jobs(setup: Setup) -> list:
    from ..generate import Mix

    jobs = []
    for c in range(1, setup.configs + 1):
        for L in setup.longs:
            fz = setup.frozen(L, c)
            groups = [f["group"] for f in fz.flows]
            args = {"backbone": fz.backbone, "bins": setup.bins.tolist(), "groups": groups}
            mixes = [Mix.all(setup.cc(p)) for p in setup.protocols]
            if L == setup.L:
                mixes += [Mix.half(setup.cc(p)) for p in setup.hs]
            for m in mixes:  # JSON text: what the campaign keys and stores, with no copy
                jobs.append((f"L{L}/c{c}/{m.name}", json.dumps(fz.spec(m), separators=(",", ":")), "flows_files",
                             args))
    return jobs


def _flows(setup: Setup, res: dict, L: int) -> pd.DataFrame:
    """Long table over configurations: one row per (config, mix, flow)."""
    from ..generate import throughput_bps

    frames = []
    for c in range(1, setup.configs + 1):
        fz = setup.frozen(L, c)
        facts = fz.flow_frame()
        for key, r in res.items():
            if not key.startswith(f"L{L}/c{c}/"):
                continue
            df = facts.copy()
            df["config"] = c
            df["run"] = key.split("/", 2)[2]
            df["algorithm"] = r["algorithm"]
            df["bytes_delivered"] = np.asarray(r["bytes_delivered"], dtype=float)
            df["throughput_bps"] = throughput_bps(df["bytes_delivered"].to_numpy(), df["start"].to_numpy(),
                                                  setup.duration)
            frames.append(df)
    return pd.concat(frames, ignore_index=True)


def _rel(flows: pd.DataFrame, run: str, base: str = "all-reno", cls: str = "long") -> pd.DataFrame:
    from ..interactions import relative_throughput

    parts = []
    for c, g in flows.groupby("config"):
        r = relative_throughput(g, run, base, cls)
        r["config"] = c
        parts.append(r)
    return pd.concat(parts, ignore_index=True)


def _grid(n: int):
    plt = pyplot()
    cols = min(3, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False, sharey=True)
    for ax in axes.flat[n:]:
        ax.axis("off")
    return fig, list(axes.flat[:n])


def _title(fig: Any, text: str, setup: Setup) -> None:
    import textwrap

    text += " [QUICK MODE]" if setup.quick else ""
    # wrapped to the figure's width (about 9 characters per inch): a long title is not cut at the edges
    fig.suptitle("\n".join(textwrap.wrap(text, width=int(9 * fig.get_figwidth()))))
    fig.tight_layout()


# ---------------------------------------------------------------- items

def _fig3(setup: Setup, res: dict, out: str):
    rows = []
    for p in setup.protocols:
        name = f"all-{PROTOCOLS[p]}"
        for L in setup.longs:
            u = [float(np.mean(res[f"L{L}/c{c}/{name}"]["backbone_utilization"])) for c in range(1, setup.configs + 1)]
            rows.append({"protocol": p, "long_flows": L, "utilization": float(np.mean(u)),
                         "std": float(np.std(u, ddof=1)) if len(u) > 1 else 0.0, "configs": len(u)})
    df = pd.DataFrame(rows)
    files = write_table(df, out, "fig3", "Fig. 3: mean utilization of the 8 backbone links (all flows one protocol)",
                        md_df=df.pivot(index="protocol", columns="long_flows",
                                       values="utilization").loc[setup.protocols])
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for p in setup.protocols:
        d = df[df.protocol == p]
        ax.errorbar(d.long_flows, d.utilization, yerr=d["std"], marker="o", capsize=3, label=p)
    ax.set_xscale("log")
    ax.set_xticks(list(setup.longs), [str(x) for x in setup.longs])
    ax.set_xticks([], minor=True)  # the log scale's minor labels (2 x 10^0, ...) run together
    ax.set_xlabel("number of long-lived flows")
    ax.set_ylabel("mean backbone utilization")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    _title(fig, "Fig. 3: backbone utilization (mean ± std over configurations)", setup)
    return {"fig3": df}, files + [save_figure(fig, out, "fig3.png")]


def _fig4_5(setup: Setup, res: dict, out: str, item: str):
    flows = _flows(setup, res, setup.L)
    parts = []
    for p in setup.hs:
        r = _rel(flows, f"all-{PROTOCOLS[p]}")
        r.insert(0, "protocol", p)
        parts.append(r)
    df = pd.concat(parts, ignore_index=True)
    x = "base_rtt" if item == "fig4" else "hops"
    fig, axes = _grid(len(setup.hs))
    for ax, p in zip(axes, setup.hs, strict=True):
        d = df[df.protocol == p]
        if item == "fig4":
            ax.scatter(d.base_rtt * 1e3, d.relative, s=8, alpha=0.6)
            ax.set_xlabel("base RTT (ms)")
        else:
            hops = sorted(d.hops.unique())
            ax.boxplot([d[d.hops == h].relative.dropna() for h in hops], positions=hops, widths=0.5)
            ax.set_xlabel("backbone hops")
        ax.axhline(1.0, color="k", lw=0.8, ls=":")
        ax.set_yscale("log")
        ax.set_title(p)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("T_i(all-X) / T_i(all-Reno)")
    _title(fig, f"Fig. {item[3:]}: relative throughput of long-lived flows vs {'RTT' if item == 'fig4' else 'hops'} "
                f"(L = {setup.L})", setup)
    summary = df.groupby(["protocol", x] if item == "fig5" else ["protocol"]).relative.agg(
        ["mean", "median", "count"]).reset_index()
    files = write_table(df, out, item, f"Fig. {item[3:]}: relative throughput (per flow)",
                        md_df=summary.set_index(summary.columns[0]))
    return {item: df}, files + [save_figure(fig, out, f"{item}.png")]


def _fig4(setup, res, out):
    return _fig4_5(setup, res, out, "fig4")


def _fig5(setup, res, out):
    return _fig4_5(setup, res, out, "fig5")


def _all_x_long(setup: Setup, res: dict) -> pd.DataFrame:
    flows = _flows(setup, res, setup.L)
    parts = []
    for p in setup.protocols:
        d = flows[(flows.run == f"all-{PROTOCOLS[p]}") & (flows.cls == "long")].copy()
        d.insert(0, "protocol", p)
        parts.append(d)
    return pd.concat(parts, ignore_index=True)


def _fig6(setup: Setup, res: dict, out: str):
    df = _all_x_long(setup, res)
    fig, axes = _grid(len(setup.protocols))
    for ax, p in zip(axes, setup.protocols, strict=True):
        d = df[df.protocol == p]
        ax.scatter(d.base_rtt * 1e3, d.throughput_bps / 1e6, s=8, alpha=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(p)
        ax.set_xlabel("base RTT (ms)")
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("throughput (Mbit/s)")
    _title(fig, f"Fig. 6: per-flow throughput of long-lived flows vs RTT (all-X, L = {setup.L})", setup)
    cols = ["protocol", "config", "name", "base_rtt", "hops", "throughput_bps"]
    summary = df.groupby("protocol").throughput_bps.describe().loc[setup.protocols]
    stats = [c for c in summary.columns if c != "count"]
    summary[stats] = summary[stats] / 1e6  # the flow count stays a count
    summary["count"] = summary["count"].astype(int)
    summary = summary.rename(columns={"count": "flows", **{c: f"{c} (Mbit/s)" for c in stats}})
    files = write_table(df[cols], out, "fig6", "Fig. 6: per-flow throughput (long-lived flows)", md_df=summary,
                        note="Throughput of the long-lived flows in Mbit/s (flows: how many); fig6.csv has every "
                             "flow.", floatfmt=["", ".0f"] + [".3f"] * len(stats))
    return {"fig6": df[cols]}, files + [save_figure(fig, out, "fig6.png")]


def _fig7(setup: Setup, res: dict, out: str):
    from ..interactions import cdf, fraction_above, fraction_below

    df = _all_x_long(setup, res)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    rows = []
    for p in setup.protocols:
        v = df[df.protocol == p].throughput_bps.to_numpy()
        x, y = cdf(v)
        ax.step(x / 1e6, y, where="post", label=p)
        rows.append({"protocol": p, "flows": len(v),
                     f"below_{setup.low_thr / 1e6:g}Mbps": fraction_below(v, setup.low_thr),
                     f"above_{setup.high_thr / 1e6:g}Mbps": fraction_above(v, setup.high_thr),
                     "median_mbps": float(np.median(v) / 1e6) if len(v) else np.nan})
    for thr in (setup.low_thr, setup.high_thr):
        ax.axvline(thr / 1e6, color="k", lw=0.8, ls=":")
    ax.set_xscale("log")
    # 1-2-5 ticks as plain numbers: the log scale's own minor labels (2 x 10^0, 3 x 10^0, ...) run together
    lo, hi = ax.get_xlim()
    ax.set_xticks([v for v in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if lo <= v <= hi])
    ax.set_xticks([], minor=True)
    ax.xaxis.set_major_formatter("{x:g}")
    ax.set_xlabel("per-flow throughput (Mbit/s)")
    ax.set_ylabel("CDF")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2, loc="upper left")  # the CDFs rise on the right
    _title(fig, f"Fig. 7: throughput CDF of long-lived flows (all-X, L = {setup.L})", setup)
    t = pd.DataFrame(rows)
    files = write_table(t, out, "fig7", "Fig. 7: fractions of long-lived flows below / above the thresholds")
    return {"fig7": t}, files + [save_figure(fig, out, "fig7.png")]


#: Base-RTT bins (s) of the Fig. 8 curves.
RTT_BINS = np.array([0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 10.0])


def _fig8(setup: Setup, res: dict, out: str):
    from ..interactions import reno_degradation

    flows = _flows(setup, res, setup.L)
    parts = []
    for p in setup.hs:
        for c, g in flows.groupby("config"):
            r = reno_degradation(g, f"reno+{PROTOCOLS[p]}", "all-reno", cls="long")
            r.insert(0, "coexisting", p)
            r["config"] = c
            parts.append(r)
    df = pd.concat(parts, ignore_index=True)
    df["rtt_bin"] = pd.cut(df.base_rtt, RTT_BINS, right=False)
    curve = df.groupby(["coexisting", "rtt_bin"], observed=True).relative.mean().reset_index()
    curve["rtt_mid_ms"] = [1e3 * (iv.left + min(iv.right, 0.6)) / 2 for iv in curve.rtt_bin]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for p in setup.hs:
        d = curve[curve.coexisting == p]
        ax.plot(d.rtt_mid_ms, d.relative, marker="o", label=f"with {p}")
    ax.axhline(1.0, color="k", lw=0.8, ls=":")
    ax.set_xlabel("base RTT of the Reno flow (ms, binned)")
    ax.set_ylabel("T_Reno(reno+X) / T_Reno(all-Reno)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    _title(fig, f"Fig. 8: throughput degradation of Reno long-lived flows (L = {setup.L})", setup)
    summary = df.groupby("coexisting").relative.agg(["mean", "median", "count"]).loc[setup.hs]
    out_df = df.drop(columns=["rtt_bin"])
    files = write_table(out_df, out, "fig8", "Fig. 8: Reno throughput degradation", md_df=summary)
    return {"fig8": out_df}, files + [save_figure(fig, out, "fig8.png")]


def _binned(setup: Setup, res: dict, run: str, groups: Sequence[str], L: int) -> pd.DataFrame:
    """Mean transfer time per size bin over configurations, files of the
    given groups in the given run."""
    nb = len(setup.bins) - 1
    n = np.zeros(nb)
    s = np.zeros(nb)
    u = np.zeros(nb)
    for c in range(1, setup.configs + 1):
        fb = res[f"L{L}/c{c}/{run}"]["file_bins"]
        for g in groups:
            if g in fb:
                n += fb[g]["files"]
                s += fb[g]["sum_transfer_time"]
                u += fb[g]["unfinished"]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, s / np.maximum(n, 1), np.nan)
    return pd.DataFrame({"size_lo": setup.bins[:-1], "size_hi": setup.bins[1:],
                         "size_mid": np.sqrt(setup.bins[:-1] * setup.bins[1:]), "files": n.astype(int),
                         "unfinished": u.astype(int), "mean_transfer_time": mean})


def _fct_figure(setup: Setup, df: pd.DataFrame, key: str, out: str, name: str, title: str):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for label, d in df.groupby(key, sort=False):
        d = d[d.files > 0]
        ax.plot(d.size_mid, d.mean_transfer_time, marker="o", ms=3, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("file size (bytes)")
    ax.set_ylabel("mean transfer time (s)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)
    _title(fig, title, setup)
    return save_figure(fig, out, name)


def _fig9(setup: Setup, res: dict, out: str):
    parts = []
    for p in setup.protocols:
        d = _binned(setup, res, f"all-{PROTOCOLS[p]}", ["A", "B"], setup.L)
        d.insert(0, "protocol", p)
        parts.append(d)
    df = pd.concat(parts, ignore_index=True)
    fig = _fct_figure(setup, df, "protocol", out, "fig9.png",
                      f"Fig. 9: transfer time vs size, all flows one protocol (L = {setup.L})")
    md = df[df.files > 0].pivot(index="size_mid", columns="protocol", values="mean_transfer_time")[setup.protocols]
    files = write_table(df, out, "fig9", "Fig. 9: mean transfer time (s) by file size (bin centre, bytes)", md_df=md)
    return {"fig9": df}, files + [fig]


def _fig10(setup: Setup, res: dict, out: str):
    parts = [_binned(setup, res, "all-reno", ["A"], setup.L).assign(coexisting="Reno (all-Reno)")]
    for p in setup.hs:
        parts.append(_binned(setup, res, f"reno+{PROTOCOLS[p]}", ["A"], setup.L).assign(coexisting=p))
    df = pd.concat(parts, ignore_index=True)
    df = df[["coexisting"] + [c for c in df.columns if c != "coexisting"]]
    fig = _fct_figure(setup, df, "coexisting", out, "fig10.png",
                      f"Fig. 10: transfer time of Reno flows' files by coexisting protocol (L = {setup.L})")
    order = ["Reno (all-Reno)"] + setup.hs
    md = df[df.files > 0].pivot(index="size_mid", columns="coexisting", values="mean_transfer_time")[order]
    files = write_table(df, out, "fig10", "Fig. 10: mean transfer time (s) of group-A (Reno) files", md_df=md)
    return {"fig10": df}, files + [fig]


def _rtt_ratio(setup: Setup, res: dict, out: str):
    from ..interactions import rtt_ratio

    df = _all_x_long(setup, res)
    rows = []
    for p in setup.protocols:
        r = rtt_ratio(df[df.protocol == p])
        rows.append({"protocol": p, "rtt_exponent_k": r["k"], "ratio_30ms_over_300ms": r["ratio"], "flows": r["flows"]})
    t = pd.DataFrame(rows)
    files = write_table(t, out, "rtt_ratio", "RTT fairness: throughput of a 30 ms-RTT flow over a 300 ms-RTT flow",
                        note="From the least-squares fit log T = a - k log RTT over the long-lived flows of all "
                             f"configurations (all-X, L = {setup.L}); ratio = 10^k.")
    return {"rtt-ratio": t}, files


# ---------------------------------------------------------------- driver

def _setup(quick: bool, variants: str = "paper", recovery: str | None = None, configs: int | None = None,
           duration: float | None = None, protocols: Sequence[str] | None = None, setup: str = "paper") -> Setup:
    if recovery not in (None, "sack"):
        raise ValueError("recovery: ssm-interactions runs every flow with SACK (Linux); only 'sack' is accepted")
    return Setup(quick, configs, duration, protocols, variants, setup)


def _freeze(setup: Setup, out: str) -> None:
    """Writes every generated scenario, frozen, into ``out`` (scenario-L*-c*.json): what each item replays."""
    for c in range(1, setup.configs + 1):
        for L in setup.longs:
            setup.frozen(L, c).save(os.path.join(out, f"scenario-L{L}-c{c}.json"))


def _all_mixes(setup: Setup, items: Sequence[str]) -> list:
    """Every item reads the same runs: every mix of every configuration (made once per setup)."""
    if setup._jobs is None:
        setup._jobs = _mix_jobs(setup)
    return setup._jobs


PAPER = Paper(
    key="ssm-interactions",
    summary="Shimonishi, Sanadidi & Murase, legacy and high-speed TCPs on a generated parking lot (Figs. 3-10)",
    title="ssm-interactions reproduction",
    # every item reads the same runs (Paper runs a job the items share once)
    items=(Item("fig3", _fig3, _all_mixes), Item("fig4", _fig4, _all_mixes), Item("fig5", _fig5, _all_mixes),
           Item("fig6", _fig6, _all_mixes), Item("fig7", _fig7, _all_mixes), Item("fig8", _fig8, _all_mixes),
           Item("fig9", _fig9, _all_mixes), Item("fig10", _fig10, _all_mixes),
           Item("rtt-ratio", _rtt_ratio, _all_mixes)),
    setup=_setup,
    scenario="Parking lot of docs/papers/ssm-interactions.md, generated per configuration and frozen "
             "(scenario-L*-c*.json), replayed with each protocol mix. 'bottleneck data packets' counts data "
             "packets over all 8 backbone links.",
    quick_text="QUICK MODE: a scaled-down study (rates /10, fewer flows, configurations and protocols, 30 s runs); "
               "these are not the paper's results.",
    options=(
        Option("variants", "algorithm variants: the Linux modules of 2007 the paper's simulator carried, where "
                           "tcplab has them (paper, the default), or today's Linux defaults",
               choices=("paper", "linux")),
        Option("recovery", "loss recovery: every flow runs SACK (Linux), the only value", choices=("sack",)),
        Option("configs", "number of generated configurations, each its own seed (default 12, quick 2)", kind="int"),
        Option("duration", "seconds simulated per run (default 600, quick 30)", kind="float"),
        Option("protocols", f"comma-separated protocols, Reno always added (default: all nine, quick "
                            f"{','.join(QUICK_PROTOCOLS)}; known: {','.join(PROTOCOLS)})", kind="list"),
        SETUP_OPTION,
    ),
    refused={"seeds": "its generated configurations are its seeds (--configs N, configs=N)"},
    prepare=_freeze,
)

#: ``tcplab.experiments.ssm_interactions.reproduce(items=..., quick=..., out=..., configs=..., ...)``
reproduce = PAPER.reproduce
#: The items' names, in the paper's order.
ITEMS = PAPER.item_names
