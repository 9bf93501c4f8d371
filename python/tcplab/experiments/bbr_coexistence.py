"""bbr-coexistence: BBR (v1 and v3) sharing a drop-tail bottleneck with CUBIC.

A study beside the papers (no paper of docs/papers/ to reproduce): one BBR
flow and one CUBIC flow on a dumbbell, swept over the buffer (0.1 to 16 BDP)
and the ratio of the BBR flow's RTT to the CUBIC flow's (1, 2, 4), for each
BBR version. docs/experiments/bbr-coexistence.md gives the parameters and
the choices made where the issue is silent.

Items (all from the same runs):

- ``table``: per (version, RTT ratio, buffer): each flow's goodput and share,
  link utilization, mean and 95th-percentile queueing delay, each flow's
  retransmission rate, Jain's index.
- ``fig-share``: the BBR flow's share against the buffer, one panel per RTT ratio.
- ``fig-delay``: mean queueing delay against the buffer.
- ``fig-retrans``: each flow's retransmission rate against the buffer.

Scenario: tcplab.Dumbbell, C = 100 Mbit/s, bottleneck round-trip delay
10 ms, per-flow access delays so that the CUBIC flow's RTT is 20 ms and the
BBR flow's 20/40/80 ms; buffer in multiples of BDP = C x 20 ms (the CUBIC
flow's, the shorter RTT: 167 packets); both flows with the Linux TCP
profile (SACK, PRR, RACK-TLP, delayed ACKs) as the kernel runs them.

Seeds: every cell runs over seeds 1..N (``SEEDS``; ``seeds=N``, ``--seeds
N``), each sender's access delay plus a jitter uniform in [0, 0.25 ms) drawn
from the seed (``common.PHASE_JITTER_S``); the table and figures give the
mean with its 95 % Student-t interval and each seed's value.

This is a study of today's Linux, so its TCP setup is ``linux`` (the only
one ``setup`` accepts).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from . import runner, settings
from .common import (
    PHASE_JITTER_S,
    ci_text,
    per_seed,
    phase_note,
    pyplot,
    save_figure,
    seed_list,
    seed_points,
    seed_summary,
    write_table,
)
from .paper import SEEDS_OPTION, Item, Option, Paper

if TYPE_CHECKING:  # pragma: no cover
    from ..results import Results


C_BPS = 100e6
PACKET = 1500
HEADER = 52  # Linux profile: MSS 1448
BOTTLENECK_RTT_MS = 10.0
CUBIC_RTT_MS = 20.0
BDP_PACKETS = C_BPS * CUBIC_RTT_MS / 1e3 / (8 * PACKET)  # 166.7
SEED = 1
#: Seeds per cell (full length; the whole sweep costs about 12 CPU s per seed).
SEEDS = 5
QUICK_SEEDS = 2
#: the BBR flow starts 0.1 s after CUBIC: flows started in the same picosecond lock
#: into a phase effect (docs/validation.md)
BBR_START = 0.1

#: Both flows run tcplab's Linux TCP profile (scenario() sets it): a study of today's Linux has no other setup.
TCP_SETUP = settings.TcpSetup("linux", "today's Linux, the study's only setup: tcplab's Linux TCP profile "
                                       "(`flow_options={\"profile\": \"linux\"}`) for both flows", (
    settings.SetupValue("profile", "linux", "Linux 6.x as tcplab models it (docs/tcp.md, \"The Linux profile\")",
                        flow=False),
    settings.SetupValue("init_cwnd", 10.0, "RFC 6928; Linux TCP_INIT_CWND", flow=False),
    settings.SetupValue("init_ssthresh", None, "Linux TCP_INFINITE_SSTHRESH", flow=False),
    settings.SetupValue("rto (initial / min / max)", "1 s / 0.2 s / 60 s, Linux mode",
                        "Linux TCP_TIMEOUT_INIT, TCP_RTO_MIN, `__tcp_set_rto`; max: RFC 6298 2.5", flow=False),
    settings.SetupValue("loss recovery", "SACK with PRR, RACK-TLP, F-RTO and undo", "the Linux profile",
                        flow=False),
    settings.SetupValue("receiver", "Linux 6.x delayed and quick ACKs, D-SACK", "the Linux profile", flow=False),
    settings.SetupValue("header and ACK size", "52 B (MSS 1448 in 1500 B)", "the Linux profile: timestamps on",
                        flow=False),
))


class Setup:
    def __init__(self, quick: bool, protocols: Sequence[str] | None = None, duration: float | None = None,
                 seeds: int | None = None):
        self.quick = quick
        #: seeds of every cell (1..N, with the access-delay jitter)
        self.seeds = seed_list(seeds if seeds is not None else QUICK_SEEDS if quick else SEEDS)
        self.protocols = list(protocols) if protocols else ["bbr", "bbr3"]
        self.buffers = [0.5, 2.0, 8.0] if quick else [0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0]
        self.ratios = [1, 4] if quick else [1, 2, 4]
        self.duration = float(duration) if duration else (10.0 if quick else 60.0)
        if self.duration <= 0:
            raise ValueError(f"duration: must be positive, got {duration!r}")
        self.measure_start = self.duration / 3
        self.sample = 0.05

    def describe(self) -> str:
        q = " (QUICK MODE: fewer points, shorter runs)" if self.quick else ""
        runs = [
            f"- C = {C_BPS / 1e6:g} Mbit/s; bottleneck round trip {BOTTLENECK_RTT_MS:g} ms; CUBIC RTT "
            f"{CUBIC_RTT_MS:g} ms; BBR RTT = ratio x {CUBIC_RTT_MS:g} ms, ratios {self.ratios}",
            f"- buffers (x BDP = C x {CUBIC_RTT_MS:g} ms = {BDP_PACKETS:.0f} packets): "
            + ", ".join(f"{b:g}" for b in self.buffers),
            f"- BBR versions: {', '.join(self.protocols)}; the other flow: cubic",
            f"- {self.duration:g} s per run, measured over [{self.measure_start:g}, {self.duration:g}] s; CUBIC "
            f"starts at 0, BBR at {BBR_START:g} s{q}",
            f"- 1500-byte packets, payload goodput, queue sampled every {self.sample:g} s",
            f"- seeds 1..{len(self.seeds)} per cell, each sender's access delay plus a jitter uniform in "
            f"[0, {PHASE_JITTER_S * 1e3:g} ms) from the seed; mean and 95 % Student-t interval over the seeds",
        ]
        protocols = [settings.Protocol(v, v, {}, "sack", "today's Linux module (the study's subject)")
                     for v in self.protocols]
        protocols.append(settings.Protocol("CUBIC", "cubic", {}, "sack", "today's Linux default"))
        other = [f"- the BBR flow starts {BBR_START:g} s after CUBIC: flows started together lock into a phase effect",
                 "- the buffer in multiples of the CUBIC flow's BDP (the shorter RTT)"]
        return settings.settings_markdown(runs, TCP_SETUP, protocols, other)


def buffer_packets(b: float) -> int:
    return max(1, int(round(b * BDP_PACKETS)))


def access_delay_ms(rtt_ms: float) -> float:
    """One-way delay of each of a flow's two access links for a path RTT of rtt_ms
    (Dumbbell: RTT = bottleneck RTT + 4 x access delay)."""
    return (rtt_ms - BOTTLENECK_RTT_MS) / 4.0


def scenario(version: str, ratio: float, buffer_bdp: float, duration: float, measure_start: float,
             sample: float = 0.05, seed: int | None = None):
    """One cell's dumbbell; ``seed`` given: that seed, with the access-delay jitter (else seed 1 without)."""
    from tcplab import Dumbbell

    delays = [f"{access_delay_ms(CUBIC_RTT_MS)}ms", f"{access_delay_ms(ratio * CUBIC_RTT_MS)}ms"]
    return Dumbbell(n_flows=2, bottleneck_rate=C_BPS, rtt=f"{BOTTLENECK_RTT_MS:g}ms",
                    buffer=buffer_packets(buffer_bdp), algorithm=["cubic", version], start=[0.0, BBR_START],
                    access_delay=delays, duration=f"{duration}s", measure_start=f"{measure_start}s",
                    sample_interval=f"{sample}s", accounting="payload", flow_options={"profile": "linux"},
                    seed=SEED if seed is None else seed, access_jitter=0.0 if seed is None else PHASE_JITTER_S,
                    name=f"coexist-{version}-{ratio}-{buffer_bdp}")


# ---------------------------------------------------------------- extract (per run)

def extract_coexistence(run: Results, args: dict) -> dict:
    """extract_summary plus each flow's data packets sent (the retransmission
    rate is over the whole run: the campaign store keeps no per-event trace to
    cut it to the window) and the bottleneck's 95th-percentile queue over the
    window (sampled)."""
    out = runner.extract_summary(run, args)
    a, e = float(args["measure_start"]), float(args["duration"])
    out["data_packets_sent"] = [int(x) for x in run.flows["data_packets_sent"]]
    qt, qp = runner.queue_series(run, args["bottleneck"])
    w = (qt >= a) & (qt <= e)
    q = qp[w].astype(float) if w.any() else np.zeros(1)
    out["queue_mean_sampled"] = float(q.mean())
    out["queue_p95"] = float(np.percentile(q, 95))
    return out


runner.EXTRACTS["bbr_coexistence"] = extract_coexistence


def _jobs(setup: Setup) -> list:
    jobs = []
    for s in setup.seeds:
        for v in setup.protocols:
            for r in setup.ratios:
                for b in setup.buffers:
                    sc = scenario(v, r, b, setup.duration, setup.measure_start, setup.sample, seed=s)
                    spec = sc.to_spec()
                    for f in spec.get("flows", []):  # as mv_buffers: older cores reject a null loss_classifier
                        if f.get("loss_classifier", 0) is None:
                            del f["loss_classifier"]
                    jobs.append((f"{v}|{r}|{b}|{s}", spec, "bbr_coexistence",
                                 {"bottleneck": sc.bottleneck_links()[0], "measure_start": setup.measure_start,
                                  "duration": setup.duration}))
    return jobs


# ---------------------------------------------------------------- outputs

def _qnote(setup: Setup) -> str:
    return " **QUICK MODE**: fewer points, shorter runs." if setup.quick else ""


#: The table's metrics, averaged over the seeds with their 95 % intervals.
METRICS = ["bbr_mbps", "cubic_mbps", "bbr_share", "cubic_share", "utilization", "jain", "queue_delay_ms_mean",
           "queue_delay_ms_p95", "bbr_retx_rate", "cubic_retx_rate", "bbr_retransmits", "cubic_retransmits",
           "bbr_packets_sent", "cubic_packets_sent", "drops", "bbr_timeouts", "cubic_timeouts"]


def _table_df(setup: Setup, res: dict):
    """(per-cell means over the seeds with 95 % intervals and ``phase_dependent``: whether the BBR share
    crosses one half across the seeds; the per-seed rows)."""
    per = _per_seed_df(setup, res)
    df = seed_summary(per, ["bbr", "rtt_ratio", "buffer_bdp"], METRICS,
                      flips={"phase_dependent": lambda g: g["bbr_share"] - 0.5})
    return df, per


def _per_seed_df(setup: Setup, res: dict):
    import pandas as pd

    from tcplab.analysis import jain_index

    pkt_s = PACKET * 8 / C_BPS
    rows = []
    for s in setup.seeds:
        for v in setup.protocols:
            for r in setup.ratios:
                for b in setup.buffers:
                    x = res[f"{v}|{r}|{b}|{s}"]
                    g_cubic, g_bbr = x["goodput_bps"]
                    tot = g_cubic + g_bbr
                    rc, rb = x["retransmits"]
                    dc, db = x["data_packets_sent"]
                    rows.append({
                        "bbr": v, "rtt_ratio": r, "bbr_rtt_ms": r * CUBIC_RTT_MS, "cubic_rtt_ms": CUBIC_RTT_MS,
                        "buffer_bdp": b, "buffer_packets": buffer_packets(b), "seed": s,
                        "bbr_mbps": g_bbr / 1e6, "cubic_mbps": g_cubic / 1e6,
                        "bbr_share": g_bbr / tot if tot else float("nan"),
                        "cubic_share": g_cubic / tot if tot else float("nan"),
                        "utilization": x["utilization"], "jain": jain_index([g_cubic, g_bbr]),
                        "queue_delay_ms_mean": 1e3 * x["queue_mean_packets"] * pkt_s,
                        "queue_delay_ms_p95": 1e3 * x["queue_p95"] * pkt_s,
                        "bbr_retx_rate": rb / db if db else float("nan"),
                        "cubic_retx_rate": rc / dc if dc else float("nan"),
                        "bbr_retransmits": rb, "cubic_retransmits": rc, "bbr_packets_sent": db,
                        "cubic_packets_sent": dc, "drops": x["drops"],
                        "bbr_timeouts": x["timeouts"][1], "cubic_timeouts": x["timeouts"][0],
                        "duration_s": setup.duration, "quick": setup.quick})
    return pd.DataFrame(rows)


def _table(setup: Setup, res: dict, out: str) -> tuple:
    df, per = _table_df(setup, res)
    n = len(setup.seeds)
    flagged = [f"{r.bbr} ratio {r.rtt_ratio:g} B = {r.buffer_bdp:g} BDP" for r in df.itertuples() if r.phase_dependent]
    phase = phase_note(flagged, len(df), n, "whether the BBR flow gets more than half")
    seeds = (f" Mean over {n} seeds (each with its own access-delay jitter in [0, {PHASE_JITTER_S * 1e3:g} ms)); "
             "the BBR share with its 95 % Student-t interval in brackets, every metric's interval in the CSV "
             "(`_ci_low`, `_ci_high`), each seed's row in `table_seeds.csv`. " + phase if n > 1 else
             " One seed (with the access-delay jitter).")
    note = ("One CUBIC flow (RTT 20 ms) and one BBR flow (RTT = ratio x 20 ms) on a 100 Mbit/s drop-tail "
            f"bottleneck; goodput (payload) and shares over [{setup.measure_start:g}, {setup.duration:g}] s; "
            "queueing delay = time-averaged bottleneck queue x packet time (mean) and the 95th percentile of the "
            f"{setup.sample:g}-s samples; retransmission rate = a flow's retransmissions / its data packets "
            "sent, over the whole run (start-up included)." + seeds + _qnote(setup))
    md = df[["bbr", "rtt_ratio", "buffer_bdp", "bbr_share", "cubic_share", "utilization", "queue_delay_ms_mean",
             "queue_delay_ms_p95", "bbr_retx_rate", "cubic_retx_rate"]].copy()
    md["bbr_share"] = [ci_text(r.bbr_share, r.bbr_share_ci_low, r.bbr_share_ci_high, ".3f") for r in df.itertuples()]
    md["phase_dependent"] = ["-" if x is None else ("yes" if x else "no") for x in df.phase_dependent]
    files = write_table(df, out, "table", "bbr-coexistence: BBR and CUBIC sharing a bottleneck", note,
                        floatfmt=".4g", md_df=md.set_index("bbr"))
    path = os.path.join(out, "table_seeds.csv")
    per.to_csv(path, index=False)
    return {"table": df}, files + [path], phase


def _panels(setup: Setup, res: dict, out: str, name: str, title: str, ylabel: str, series) -> tuple[dict, list]:
    plt = pyplot()
    df, per = _table_df(setup, res)
    fig, axes = plt.subplots(1, len(setup.ratios), figsize=(5 * len(setup.ratios), 4.2), sharey=True, squeeze=False)
    for ax, r in zip(axes[0], setup.ratios, strict=True):
        d0 = df[df.rtt_ratio == r]
        for k, v in enumerate(setup.protocols):
            d = d0[d0.bbr == v].sort_values("buffer_bdp")
            for col, label, style in series(v):
                ls = style.lstrip("os^vD")
                seed_points(ax, list(d.buffer_bdp),
                            [per_seed(per, {"bbr": v, "rtt_ratio": r, "buffer_bdp": b}, col) for b in d.buffer_bdp],
                            d[col], d[f"{col}_ci_low"], d[f"{col}_ci_high"], marker=style[0], ls=ls or "-",
                            color=f"C{k}", mfc="none", label=label)
        ax.set_xscale("log")
        ax.set_xticks(setup.buffers)
        ax.set_xticklabels([f"{b:g}" for b in setup.buffers])
        ax.minorticks_off()
        ax.set_xlabel("buffer (x BDP of the 20-ms path, log)")
        ax.set_title(f"BBR RTT {r * CUBIC_RTT_MS:g} ms, CUBIC {CUBIC_RTT_MS:g} ms")
        ax.grid(alpha=0.3, which="both")
        if name == "fig-share":
            ax.axhline(0.5, ls=":", color="k", lw=0.8)
            ax.set_ylim(0, 1.02)  # (a two-seed interval reaches far beyond the physical range)
        else:
            ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel(ylabel)
    axes[0][0].legend(fontsize=8)
    n = len(setup.seeds)
    fig.suptitle(title + (f"; mean and 95 % CI over {n} seeds (dots: each seed)" if n > 1 else "")
                 + (" [QUICK MODE]" if setup.quick else ""))
    fig.tight_layout()
    return {}, [save_figure(fig, out, f"{name}.png")]


def _fig_share(setup: Setup, res: dict, out: str):
    return _panels(setup, res, out, "fig-share", "Throughput share of the BBR flow against CUBIC", "BBR share",
                   lambda v: [("bbr_share", f"{v} share", "o-")])


def _fig_delay(setup: Setup, res: dict, out: str):
    return _panels(setup, res, out, "fig-delay", "Queueing delay at the bottleneck", "queueing delay (ms)",
                   lambda v: [("queue_delay_ms_mean", f"{v} + cubic: mean", "o-"),
                              ("queue_delay_ms_p95", f"{v} + cubic: p95", "^:")])


def _fig_retrans(setup: Setup, res: dict, out: str):
    return _panels(setup, res, out, "fig-retrans", "Retransmission rate per flow", "retransmissions / segment",
                   lambda v: [("bbr_retx_rate", f"{v} flow", "o-"), ("cubic_retx_rate", f"cubic beside {v}", "s--")])


# ---------------------------------------------------------------- driver

def _setup(quick: bool, variants: str = "paper", recovery: str | None = None,
           protocols: Sequence[str] | None = None, duration: float | None = None, seeds: int | None = None,
           setup: str = "linux") -> Setup:
    """``protocols``: the BBR versions to sweep (default bbr and bbr3; any algorithm name is accepted, so
    another one can stand in); ``duration``: seconds per run; ``seeds``: seeds per cell (default ``SEEDS``,
    quick ``QUICK_SEEDS``); ``setup``: only ``"linux"`` (a study of today's Linux)."""
    from tcplab.scenario import algorithm_catalog

    if variants != "paper":
        raise ValueError("variants: bbr-coexistence runs the Linux variants only; --variants is not used")
    if recovery not in (None, "sack"):
        raise ValueError("recovery: bbr-coexistence runs both flows with SACK (Linux profile); only 'sack' is accepted")
    if setup != "linux":
        raise ValueError(f"setup: bbr-coexistence is a study of today's Linux, so its only setup is 'linux'; got "
                         f"{setup!r}")
    made = Setup(quick, protocols, duration, seeds)
    have = {a["name"] for a in algorithm_catalog()}
    missing = [p for p in made.protocols if p not in have]
    if missing:
        raise ValueError(f"protocols: {', '.join(map(repr, missing))} not in this build's algorithms "
                         f"({', '.join(sorted(have))}); bbr and bbr3 come with the BBR branches")
    return made


PAPER = Paper(
    key="bbr-coexistence",
    summary="a study beside the papers: a BBR flow against a CUBIC flow over RTT ratios and buffers",
    title="bbr-coexistence study",
    items=(Item("table", _table, lambda s, items: _jobs(s)),
           Item("fig-share", _fig_share, lambda s, items: _jobs(s)),
           Item("fig-delay", _fig_delay, lambda s, items: _jobs(s)),
           Item("fig-retrans", _fig_retrans, lambda s, items: _jobs(s))),
    setup=_setup,
    scenario=lambda setup: ("Dumbbell: a CUBIC flow and a BBR flow share a 100 Mbit/s drop-tail bottleneck "
                            "(docs/experiments/bbr-coexistence.md). Not a paper reproduction: a study beside them. "
                            f"BBR versions: {', '.join(setup.protocols)}."),
    quick_text="QUICK MODE: fewer points and shorter runs.",
    options=(
        Option("variants", "accepted for scripts: the study runs the Linux variants only", choices=("paper",)),
        Option("recovery", "loss recovery: both flows run SACK (Linux profile), the only value", choices=("sack",)),
        Option("protocols", "comma-separated BBR versions to sweep (default bbr,bbr3; any algorithm name can stand "
                            "in)", kind="list"),
        Option("duration", "seconds per run (default 60, quick 10)", kind="float"),
        SEEDS_OPTION,
        Option("setup", "TCP setup: only linux (a study of today's Linux)", choices=("linux",)),
    ),
)

#: ``tcplab.experiments.bbr_coexistence.reproduce(items=..., quick=..., out=..., protocols=..., ...)``
reproduce = PAPER.reproduce
#: The items' names, in the paper's order.
ITEMS = PAPER.item_names
