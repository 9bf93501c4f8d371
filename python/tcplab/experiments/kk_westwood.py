"""kk-westwood: Kaneko & Katto, *Reno Friendly TCP Westwood Based on Router
Buffer Estimation* (ICAS-ICNS 2005; docs/papers/kk-westwood.md).

Items:

- ``rce``: the Residual Capacity Estimator's capacity estimates (C / true C)
  in a single-flow run at four buffers, and with competing Reno flows.
- ``bs-tracking``: the proposal's buffer estimate BS_estimate against the real
  bottleneck queue over time, single flow, B = BDP and 2 BDP.
- ``fig1``: Westwood/legacy throughput ratio against buffer (0.25, 0.5, 1,
  2 BDP) with legacy Reno (a), NewReno (b), SACK (c); Westwood-RE and the
  proposal, with the models' predictions on the same axes.
- ``fig3``: trade-off graphs, 20 Mbit/s, 80 ms, buffer BDP/2 (67) and 2 BDP
  (266), several N.
- ``fig4``: trade-off graph, N = 2, 50 Mbit/s, 90 ms, four buffers.
- ``fig5``: Jain's index against N, RTTs from 10 + 240/N to 250 ms, at
  10 Mbit/s (B = 200) and 100 Mbit/s (B = 2000).

Protocols: "Westwood" = ``westwood-re`` (Westwood with Rate Estimation, the
paper's Westwood), "Proposal" = ``westwood-bs``; defaults of both are
documented in docs/algorithms/westwood-re.md and westwood-bs.md. The legacy
"Reno versions" are ``newreno`` window rules with ``recovery`` = reno,
newreno or sack. Choice (unspecified in the paper): a Westwood flow uses the
same loss recovery as the legacy flows it competes with, so only the
congestion control differs; "Reno" in Figs. 3-5 is Reno recovery.

Seeds: the multi-flow items whose outcome is a split (Figs. 1, 3, 4, 5) run
each point over seeds 1..N (``SEEDS``; ``seeds=N``, ``--seeds N``), each
sender's access delay plus a jitter uniform in [0, 0.25 ms) drawn from the
seed (``common.PHASE_JITTER_S``), and report the mean with its 95 %
Student-t interval; ``rce`` (the estimator's accuracy) and ``bs-tracking``
(one flow) run seed 1 without jitter.

TCP setup (``setup``): ``"paper"`` (default) gives every flow the defaults
of the ns-2 of 2005 the paper ran (initial window 2, ns-2's RTO bounds,
limited transmit; :func:`tcplab.experiments.settings.ns2`), ``"linux"``
tcplab's defaults (initial window 10). index.md lists every value with its
source.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from . import settings
from .common import (
    PHASE_JITTER_S,
    phase_note,
    save_figure,
    seed_list,
    seed_points,
    seed_summary,
    winner_flips,
    write_table,
)
from .paper import SEEDS_OPTION, SETUP_OPTION, Item, Option, Paper

#: index.md's scenario paragraph.
SCENARIO = ("Kaneko & Katto, *Reno Friendly TCP Westwood Based on Router Buffer Estimation* (ICAS-ICNS 2005): "
            "dumbbells with a drop-tail bottleneck, Westwood (`westwood-re`) and the proposal (`westwood-bs`) "
            "against legacy Reno versions; each item's topology is in its table's title and in "
            "docs/experiments/kk-westwood.md.")

PACKET = 1500
SEED = 1
#: Seeds of Figs. 1, 3, 4 and 5 (full length; the whole paper's runs cost about 30 CPU s per seed).
SEEDS = 5
QUICK_SEEDS = 2
WESTWOOD: tuple[str, dict[str, Any]] = ("westwood-re", {})
PROPOSAL: tuple[str, dict[str, Any]] = ("westwood-bs", {})
NEW = {"Westwood": WESTWOOD, "Proposal": PROPOSAL}
LEGACY = {"Reno": "reno", "NewReno": "newreno", "SACK": "sack"}

# Fig. 1 / Fig. 4 topology: access 100 Mbit/s 5 ms, bottleneck 50 Mbit/s 35 ms: RTT 90 ms, BDP 375.
F1_C = 50e6
F1_RTT = 0.09
F1_BDP = 375

#: The paper ran ns-2 without naming the release; in 2005 that was ns-2.28 or 2.29, whose defaults agree.
PAPER_SETUP = settings.ns2("ns-2 of 2005 (2.28 or 2.29)", "2005",
                           "the paper ran ns-2 without naming the release; it is of 2005")
STATED = settings.SetupValue("packet size", "1500 B, counted whole (ns-2 accounting)",
                             "the paper: BDP 375 packets of 1500 B at 50 Mbit/s and 90 ms", flow=False)


class Setup:
    def __init__(self, quick: bool, buffers: Sequence[float] | None = None, seeds: int | None = None,
                 setup: str = "paper"):
        self.quick = quick
        self.tcp = settings.choose(setup, PAPER_SETUP, "kk-westwood")
        #: seeds of the multi-flow items (1..N, with the access-delay jitter)
        self.seeds = seed_list(seeds if seeds is not None else QUICK_SEEDS if quick else SEEDS)
        self.duration = 60.0 if quick else 300.0
        self.window = 30.0 if quick else 200.0
        self.buffers = list(buffers) if buffers else [0.25, 0.5, 1.0, 2.0]
        self.f3_ns = [2, 6] if quick else [2, 4, 6, 10, 16, 20]
        self.f5_ns = [2, 6] if quick else [2, 6, 10, 16, 20]
        self.f5_rates = [10e6] if quick else [10e6, 100e6]

    def describe(self) -> str:
        runs = [
            f"- duration {self.duration:g} s, throughput over the last {self.window:g} s"
            + (" (QUICK MODE: shortened runs and grids, not the paper's)" if self.quick else ""),
            f"- Fig. 1/4 buffers (x BDP = {F1_BDP} packets): {', '.join(f'{b:g}' for b in self.buffers)}",
            f"- Fig. 3 N: {self.f3_ns}; Fig. 5 N: {self.f5_ns}, rates {[r / 1e6 for r in self.f5_rates]} Mbit/s",
            f"- packets {PACKET} B, ns-2 accounting",
            f"- seeds: rce and bs-tracking seed {SEED}, no jitter; Figs. 1, 3, 4, 5 seeds 1..{len(self.seeds)} with "
            f"each sender's access delay plus a jitter uniform in [0, {PHASE_JITTER_S * 1e3:g} ms) from the seed, "
            "mean and 95 % Student-t interval over the seeds",
        ]
        same = ("that of the legacy flows it meets: reno, newreno or sack in Fig. 1, newreno in rce and "
                "bs-tracking, reno in Figs. 3-5")
        protocols = [
            settings.Protocol("Westwood", WESTWOOD[0], WESTWOOD[1], same,
                              "the paper's Westwood: TCP Westwood with Rate Estimation"),
            settings.Protocol("Proposal", PROPOSAL[0], PROPOSAL[1], same,
                              "the paper's buffer-estimating Westwood (docs/algorithms/westwood-bs.md)"),
        ] + [settings.Protocol(name, "newreno", {}, rec, "a legacy Reno version: Reno window rules, the paper's "
                                                         "loss recovery of that name")
             for name, rec in LEGACY.items()]
        other = [
            "- a Westwood flow (or the proposal) uses the loss recovery of the legacy flows it meets, so that only "
            "the congestion control differs; \"Reno\" in Figs. 3-5 is Reno recovery",
            "- buffers 0.25, 0.5, 1 and 2 BDP (the paper does not list its four)",
            "- protocols and RTTs:",
            "  - Fig. 1 and Fig. 4: flow 1 (S1) the new protocol, flow 2 (S2) the legacy one, both RTT 90 ms "
            "(access 100 Mbit/s, 5 ms)",
            "  - Fig. 3: every path 80 ms (70 ms bottleneck, 2.5 ms access links); the new protocol takes flows 2, "
            "4, ... (`tcplab.tradeoff.replaced_indices`)",
            "  - Fig. 5: flow i (1..N) has RTT 10 + 240 i/N ms (10 ms bottleneck, 4 x 60 i/N ms of access links); "
            "odd flows Reno, even flows the new protocol, which so holds the longer RTT of each pair; \"Reno "
            "only\" is all Reno",
            "  - rce: the proposal alone at each buffer, or against 1 or 3 NewReno flows at 1 BDP; its state "
            "sampled every 10 ms, measurements after 5 s",
            "  - bs-tracking: the proposal alone at 1 and 2 BDP",
        ]
        return settings.settings_markdown(runs, self.tcp.with_values(STATED), protocols, other)


def _f1(setup: Setup, algos: Sequence[tuple[str, dict]], recovery, buffer_pkts: int, duration=None, window=None,
        sample="1s", n=None, seed=None):
    """The Fig. 1/4 dumbbell; ``seed`` given (a multi-flow point): that seed, with the access-delay jitter."""
    from tcplab import Dumbbell

    n = n or len(algos)
    return Dumbbell(n_flows=n, bottleneck_rate=F1_C, rtt="70ms", buffer=int(buffer_pkts), access_rate="100Mbps",
                    access_delay="5ms", algorithm=[a for a, _ in algos], params=[dict(p) for _, p in algos],
                    recovery=recovery, duration=f"{duration or setup.duration}s",
                    measure_window=f"{window or setup.window}s", sample_interval=sample,
                    packet_size=f"{PACKET}B", accounting="ns2", seed=SEED if seed is None else seed,
                    access_jitter=0.0 if seed is None else PHASE_JITTER_S, flow_options=setup.tcp.flow_options())


def _job(key, sc, extract="summary", **args):
    return key, sc.to_spec(), extract, {"bottleneck": sc.bottleneck_links()[0], **args}


# ---------------------------------------------------------------- rce

def _rce_cases(setup: Setup) -> list:
    """(name, competing Reno flows, buffer in BDP) of each rce run."""
    cases = []
    for b in setup.buffers:
        cases.append((f"single-{b:g}BDP", 1, b))
    for k in (1, 3):
        cases.append((f"vs{k}reno-1BDP", k, 1.0))
    return cases


def _rce_jobs(setup: Setup, items: Sequence[str] = ()) -> list:
    jobs = []
    for name, k, b in _rce_cases(setup):
        if name.startswith("single"):
            algos = [(PROPOSAL[0], dict(PROPOSAL[1]))]
        else:
            algos = [(PROPOSAL[0], dict(PROPOSAL[1]))] + [("newreno", {})] * k
        # The algorithm's state is sampled every 10 ms (the core's cc_ts):
        # far finer than one RCE measurement per RTO, so each is seen once.
        sc = _f1(setup, algos, "newreno", round(b * F1_BDP), sample="10ms")
        jobs.append(_job(name, sc, "cc_traces"))
    return jobs


def _rce(setup: Setup, res: dict, out: str) -> tuple:
    import numpy as np
    import pandas as pd

    rows, per = [], {}
    for name, k, b in _rce_cases(setup):
        cc = res[name]["cc"]
        t = np.asarray(res[name]["cc_time"])
        count = np.asarray(cc["rce_count"])
        new = np.flatnonzero(np.diff(count, prepend=0) > 0)  # samples where a measurement completed
        r = pd.DataFrame({"time": t[new], "capacity_seg_s": np.asarray(cc["rce_last_seg_s"])[new]})
        # Skip the first 5 s (slow start).
        r = r[r.time > 5.0]
        ratio = r.capacity_seg_s * PACKET * 8 / F1_C
        per[name] = (r.time.values, ratio.values)
        err = (ratio - 1).abs()
        rows.append({"run": name, "competing_flows": 0 if name.startswith("single") else k, "buffer_bdp": b,
                     "measurements": len(r), "median_C_over_true": float(ratio.median()),
                     "mean_abs_err_pct": float(100 * err.mean()), "p90_abs_err_pct": float(100 * err.quantile(0.9)),
                     "max_abs_err_pct": float(100 * err.max()), "within_5pct_frac": float((err <= 0.05).mean())})
    df = pd.DataFrame(rows)
    files = write_table(df, out, "rce", "RCE capacity estimates (C_est / C), 50 Mbit/s, RTT 90 ms",
                   "Measurements after t = 5 s; RCE interval = the RTO; lossy slots discarded.")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, (t, r) in per.items():
        ax.plot(t, r, ".", ms=3, label=name)
    ax.axhspan(0.95, 1.05, color="0.9", zorder=0, label="+/- 5 %")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("RCE estimate / true capacity (ratio)")
    ax.set_title("Residual Capacity Estimator, 50 Mbit/s bottleneck")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    files.append(save_figure(fig, out, "rce.png"))
    return {"rce": df}, files


# ---------------------------------------------------------------- bs-tracking

#: The buffers (x BDP) of bs-tracking.
BS_BUFFERS = [1.0, 2.0]


def _bs_jobs(setup: Setup, items: Sequence[str] = ()) -> list:
    dur = 60.0 if setup.quick else 200.0
    jobs = []
    for b in BS_BUFFERS:
        sc = _f1(setup, [(PROPOSAL[0], dict(PROPOSAL[1]))], "newreno",
                 round(b * F1_BDP), duration=dur, window=dur / 2, sample="10ms")
        jobs.append(_job(f"bs|{b}", sc, "cc_traces"))
    return jobs


def _bs(setup: Setup, res: dict, out: str) -> tuple:
    import numpy as np
    import pandas as pd

    bufs = BS_BUFFERS
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(bufs), figsize=(11, 6), sharex=True)
    rows = []
    for j, b in enumerate(bufs):
        r = res[f"bs|{b}"]
        qt, q = np.asarray(r["queue_time"]), np.asarray(r["queue"], float)
        cc = r["cc"]
        d = pd.DataFrame({"time": r["cc_time"], "rtt": cc["rtt"], "capacity_seg_s": cc["capacity_seg_s"],
                          "bs_estimate": cc["bs_estimate"]})
        a = d[(d.capacity_seg_s > 0) & (d.rtt > 0)]
        # The RTT sample of an ACK at t belongs to a packet that reached the
        # bottleneck queue at about t - RTT + 5 ms (sender access delay).
        t_enq = a.time.values - a.rtt.values + 0.005
        q_seen = np.interp(t_enq, qt, q)
        err = a.bs_estimate.values - q_seen
        steady = a.time.values > 10.0
        rows.append({"buffer_bdp": b, "buffer_packets": round(b * F1_BDP), "samples": int(steady.sum()),
                     "mean_err_packets": float(err[steady].mean()),
                     "mean_abs_err_packets": float(np.abs(err[steady]).mean()),
                     "p95_abs_err_packets": float(np.quantile(np.abs(err[steady]), 0.95)),
                     "mean_abs_err_pct_of_buffer": float(100 * np.abs(err[steady]).mean() / (b * F1_BDP)),
                     "mean_queue_packets": float(q_seen[steady].mean())})
        ax = axes[0, j]
        ax.plot(qt, q, lw=0.8, color="0.5", label="real queue (packets)")
        ax.plot(a.time, a.bs_estimate, lw=0.8, color="C3", label="BS_estimate (packets)")
        ax.set_ylabel("packets")
        ax.set_title(f"single flow, B = {b:g} BDP ({round(b * F1_BDP)} packets)", fontsize=10)
        ax.legend(fontsize=8)
        ax2 = axes[1, j]
        ax2.plot(a.time, err, lw=0.6, color="C0")
        ax2.axhline(0, color="k", lw=0.5)
        ax2.set_xlabel("time (s)")
        ax2.set_ylabel("BS_estimate - queue seen (packets)")
    fig.suptitle("Proposal's router-buffer estimate vs the real bottleneck queue (50 Mbit/s, RTT 90 ms)")
    fig.tight_layout()
    df = pd.DataFrame(rows)
    files = write_table(df, out, "bs_tracking", "Buffer-estimate tracking error, single flow",
                   "Error = BS_estimate - queue the sampled packet found on arrival (queue trace every 10 ms, "
                   "interpolated at t_ack - RTT + 5 ms); t > 10 s.")
    files.append(save_figure(fig, out, "bs_tracking.png"))
    return {"bs_tracking": df}, files


# ---------------------------------------------------------------- fig1

def _seeds_text(setup: Setup) -> str:
    n = len(setup.seeds)
    return (f" Mean over {n} seeds with its 95 % Student-t interval (`_ci_low`, `_ci_high` columns; each seed's "
            f"value in the `_seeds.csv` file): each seed moves every sender's access delay by its own jitter in "
            f"[0, {PHASE_JITTER_S * 1e3:g} ms)." if n > 1 else " One seed (with the access-delay jitter).")


def _write_seeds(per, out: str, name: str) -> str:
    path = os.path.join(out, f"{name}_seeds.csv")
    per.to_csv(path, index=False)
    return path


def _fig1_jobs(setup: Setup, items: Sequence[str] = ()) -> list:
    jobs = []
    for s in setup.seeds:
        for leg, rec in LEGACY.items():
            for nm, algo in NEW.items():
                for b in setup.buffers:
                    sc = _f1(setup, [algo, ("newreno", {})], rec, round(b * F1_BDP), seed=s)
                    jobs.append(_job(f"f1|{leg}|{nm}|{b}|{s}", sc))
    return jobs


def _minus_one(column: str) -> Callable[[Any], Any]:
    """A group's ``column`` less one (a ratio's side of parity, for :func:`seed_summary`'s ``flips``)."""
    return lambda g: g[column] - 1.0


def _fig1(setup: Setup, res: dict, out: str) -> tuple:
    import pandas as pd

    from tcplab.analysis import predicted_ratio_vs_buffer

    from .common import per_seed

    model = predicted_ratio_vs_buffer([round(b * F1_BDP) for b in setup.buffers], F1_C, F1_RTT, PACKET)
    rows = []
    for s in setup.seeds:
        for leg in LEGACY:
            for i, b in enumerate(setup.buffers):
                row = {"legacy": leg, "buffer_bdp": b, "buffer_packets": round(b * F1_BDP), "seed": s}
                for nm in NEW:
                    r = res[f"f1|{leg}|{nm}|{b}|{s}"]
                    g = r["goodput_bps"]
                    row[f"{nm}_ratio"] = g[0] / g[1] if g[1] > 0 else float("inf")
                    row[f"{nm}_util"] = r["utilization"]
                row["model_consistent"] = model.model_consistent[i]
                row["model_fixed_rtt"] = model.model_fixed_rtt[i]
                row["model_sync"] = model.model_sync[i]
                rows.append(row)
    per = pd.DataFrame(rows)
    df = seed_summary(per, ["legacy", "buffer_bdp"], [f"{nm}_{m}" for nm in NEW for m in ("ratio", "util")],
                      flips={f"{nm}_phase_dependent": _minus_one(f"{nm}_ratio") for nm in NEW})
    flagged = [f"{nm} vs {r['legacy']} at {r['buffer_bdp']:g} BDP" for _, r in df.iterrows() for nm in NEW
               if r[f"{nm}_phase_dependent"]]
    phase = phase_note(flagged, len(df) * len(NEW), len(setup.seeds), "whether the new flow gets more than the "
                                                                        "legacy one (ratio above or below 1)")
    files = write_table(df, out, "fig1", "Fig. 1: Westwood (or proposal) / legacy throughput ratio vs buffer",
                   "Two flows, 50 Mbit/s, RTT 90 ms, BDP 375 packets. model_consistent: the paper's sqrt "
                   "formulas with RTT = RTT_min + T_q; model_fixed_rtt: the same with RTT = 2 RTT_min (the spec's "
                   "1.4 / 0.7); model_sync: synchronized-loss window model (tcplab.analysis)." + _seeds_text(setup)
                   + " " + phase)
    files.append(_write_seeds(per, out, "fig1"))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharey=True)
    bb = np.linspace(min(setup.buffers) * 0.9, max(setup.buffers) * 1.1, 100)
    mb = predicted_ratio_vs_buffer(bb * F1_BDP, F1_C, F1_RTT, PACKET)
    for ax, (k, leg) in zip(axes, enumerate(LEGACY), strict=True):
        d = df[df.legacy == leg]
        for nm, style in (("Westwood", {"marker": "o", "color": "C0", "label": "Westwood (RE), simulated"}),
                          ("Proposal", {"marker": "s", "color": "C3", "label": "Proposal, simulated"})):
            seed_points(ax, list(d.buffer_bdp),
                        [per_seed(per, {"legacy": leg, "buffer_bdp": b}, f"{nm}_ratio") for b in d.buffer_bdp],
                        d[f"{nm}_ratio"], d[f"{nm}_ratio_ci_low"], d[f"{nm}_ratio_ci_high"], ls="-", **style)
        ax.plot(bb, mb.model_consistent, "--", color="0.3", label="model, RTT = RTT_min + T_q")
        ax.plot(bb, mb.model_fixed_rtt, ":", color="0.3", label="model, RTT = 2 RTT_min")
        ax.plot(bb, mb.model_sync, "-.", color="C2", label="sync-loss window model")
        ax.axhline(1.0, color="k", lw=0.5)
        ratios = per[per.legacy == leg][[f"{nm}_ratio" for nm in NEW]].to_numpy()
        ax.set_ylim(0, 1.15 * max(float(np.nanmax(ratios[np.isfinite(ratios)], initial=1.0)), 1.5))
        ax.set_xscale("log", base=2)
        ax.set_xticks(setup.buffers)
        ax.set_xticklabels([f"{b:g}" for b in setup.buffers])
        ax.set_xlabel("buffer (x BDP, BDP = 375 packets)")
        ax.set_title(f"({'abc'[k]}) legacy = {leg}", fontsize=10)
    axes[0].set_ylabel("throughput ratio new / legacy")
    axes[0].legend(fontsize=7)
    spread = f"; mean and 95 % CI over {len(setup.seeds)} seeds (dots: each seed)" if len(setup.seeds) > 1 else ""
    fig.suptitle("Fig. 1: throughput ratio vs bottleneck buffer (50 Mbit/s, 90 ms)" + spread)
    fig.tight_layout()
    files.append(save_figure(fig, out, "fig1.png"))
    return {"fig1": df}, files, phase


# ---------------------------------------------------------------- fig3 / fig4 (trade-off graphs)

def _with_seed(make: Callable[[Sequence[Any], int], Any], seed: int) -> Callable[[Sequence[Any]], Any]:
    """``make(protos, seed)`` as a function of the protocols alone."""
    return lambda protos: make(protos, seed)


def _tradeoff_plan(points: list, seeds: Sequence[int]) -> tuple[list, list]:
    """points: (key, make, base, new, n, extra columns dict), ``make(protos, seed)``; the jobs of every
    point and seed, and what :func:`_tradeoff_rows` needs to read them back."""
    from tcplab.tradeoff import tradeoff_jobs

    jobs, meta = [], []
    for s in seeds:
        for key, make, base, new, n, extra in points:
            j, rep = tradeoff_jobs(_with_seed(make, s), base, new, n, key=f"{key}|{s}")
            jobs += j
            meta.append((f"{key}|{s}", s, rep, extra))
    return jobs, meta


def _tradeoff_rows(meta: list, res: dict) -> list:
    """One row per point and seed (a ``seed`` column), from the runs' extracts."""
    from tcplab.tradeoff import point_from_summaries

    rows = []
    for key, s, rep, extra in meta:
        p = point_from_summaries(res[f"{key}|base"], res[f"{key}|mixed"], rep, tol=0.01).as_dict()
        p.update(extra)
        p["seed"] = s
        rows.append(p)
    return rows


_LG = ["t1", "t2", "new_mean", "u1", "u2", "L", "G"]


def _tradeoff_summary(per, by: Sequence[str], setup: Setup):
    """The points' means over the seeds (L, G, throughputs, utilizations, with 95 % intervals), the
    region of the mean point, and ``phase_dependent``: whether L crosses 1 across the seeds (the base
    flows keep more than alone in some seeds and less in others)."""
    from tcplab.tradeoff import region

    df = seed_summary(per, by, _LG, flips={"phase_dependent": lambda g: g["L"] - 1.0})
    df["region"] = [region(r.L, r.G, 0.01) for r in df.itertuples()]
    return df


def _plot_spread(ax, df, per, by_label: str, x_keys: Sequence[str]) -> None:
    """The seeds on a trade-off graph: each seed's (L, G) as a small dot and the mean's 95 % intervals in
    L and G as error bars, in each series' colour (as plot_tradeoff drew the series)."""
    import numpy as np

    for k, (lab, g) in enumerate(df.groupby(by_label, sort=False)):
        color = f"C{k}"
        for r in g.itertuples():
            sel = per[by_label] == lab
            for key in x_keys:
                sel &= per[key] == getattr(r, key)
            pts = per[sel]
            if len(pts) > 1:
                ax.plot(pts.L, pts.G, ".", color=color, alpha=0.35, ms=4, zorder=2)
                xerr = np.array([[r.L - r.L_ci_low], [r.L_ci_high - r.L]])
                yerr = np.array([[r.G - r.G_ci_low], [r.G_ci_high - r.G]])
                ax.errorbar([r.L], [r.G], xerr=xerr, yerr=yerr, fmt="none", ecolor=color, lw=0.8, capsize=2,
                            zorder=2)


def _fig3_points(setup: Setup) -> list:
    from tcplab.tradeoff import Protocol, dumbbell_maker

    base = Protocol("newreno", {}, "reno", "Reno")
    pts = []
    for panel, bufp in (("a", 67), ("b", 266)):
        def make(protos, seed, bufp=bufp):
            return dumbbell_maker("20Mbps", "70ms", bufp, access_delay="2.5ms", duration=f"{setup.duration}s",
                                  measure_window=f"{setup.window}s", sample_interval="1s", packet_size=f"{PACKET}B",
                                  seed=seed, access_jitter=PHASE_JITTER_S,
                                  flow_options=setup.tcp.flow_options())(protos)

        for nm, (alg, par) in NEW.items():
            for n in setup.f3_ns:
                pts.append((f"f3|{panel}|{nm}|{n}", make, base, Protocol(alg, par, "reno", nm), n,
                            {"panel": panel, "buffer_packets": bufp, "label": nm}))
    return pts


def _fig3_jobs(setup: Setup, items: Sequence[str] = ()) -> list:
    return _tradeoff_plan(_fig3_points(setup), setup.seeds)[0]


def _fig3(setup: Setup, res: dict, out: str) -> tuple:
    import pandas as pd

    from tcplab.tradeoff import plot_tradeoff

    per = pd.DataFrame(_tradeoff_rows(_tradeoff_plan(_fig3_points(setup), setup.seeds)[1], res))
    df = _tradeoff_summary(per, ["panel", "label", "n"], setup)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for ax, panel, bufp in ((axes[0], "a", 67), (axes[1], "b", 266)):
        d = df[df.panel == panel]
        plot_tradeoff(d, ax=ax,
                      title=f"({panel}) 20 Mbit/s, 80 ms, B = {bufp} packets ({'BDP/2' if panel == 'a' else '2 BDP'})"
                      + (f"; mean of {len(setup.seeds)} seeds, 95 % CI" if len(setup.seeds) > 1 else ""))
        _plot_spread(ax, d, per[per.panel == panel], "label", ["n"])
    fig.tight_layout()
    flagged = [f"({r.panel}) {r.label} N = {r.n}" for r in df.itertuples() if r.phase_dependent]
    phase = phase_note(flagged, len(df), len(setup.seeds), "whether L is above or below 1")
    cols = ["panel", "buffer_packets", "label", "n", *_LG, "region", "L_ci_low", "L_ci_high", "G_ci_low",
            "G_ci_high", "seeds", "phase_dependent"]
    files = write_table(df[cols], out, "fig3", "Fig. 3: efficiency/friendliness trade-off (L, G)",
                   "Throughputs in bit/s. Every path RTT 80 ms (70 ms bottleneck + 2.5 ms access links). Region "
                   "(of the mean point): 'boundary' when |L-1| or |G-1| <= 0.01." + _seeds_text(setup) + " " + phase)
    files.append(_write_seeds(per, out, "fig3"))
    files.append(save_figure(fig, out, "fig3.png"))
    return {"fig3": df[cols]}, files, phase


def _fig4_points(setup: Setup) -> list:
    from tcplab.tradeoff import Protocol

    base = Protocol("newreno", {}, "reno", "Reno")
    pts = []
    for b in setup.buffers:
        bufp = round(b * F1_BDP)

        def make(protos, seed, bufp=bufp):
            return _f1(setup, [(p.algorithm, p.params) for p in protos], [p.recovery for p in protos], bufp,
                       seed=seed)

        for nm, (alg, par) in NEW.items():
            pts.append((f"f4|{nm}|{b}", make, base, Protocol(alg, par, "reno", nm), 2,
                        {"buffer_bdp": b, "buffer": f"{b:g} BDP", "label": nm}))
    return pts


def _fig4_jobs(setup: Setup, items: Sequence[str] = ()) -> list:
    return _tradeoff_plan(_fig4_points(setup), setup.seeds)[0]


def _fig4(setup: Setup, res: dict, out: str) -> tuple:
    import pandas as pd

    from tcplab.tradeoff import plot_tradeoff

    per = pd.DataFrame(_tradeoff_rows(_tradeoff_plan(_fig4_points(setup), setup.seeds)[1], res))
    df = _tradeoff_summary(per, ["label", "buffer_bdp"], setup)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for ax, (k, nm) in zip(axes, enumerate(NEW), strict=True):
        d = df[df.label == nm]
        plot_tradeoff(d, ax=ax, annotate="buffer",
                      title=f"({'ab'[k]}) {nm} vs Reno, N = 2, 50 Mbit/s, 90 ms"
                      + (f"; mean of {len(setup.seeds)} seeds, 95 % CI" if len(setup.seeds) > 1 else ""))
        _plot_spread(ax, d, per[per.label == nm], "label", ["buffer_bdp"])
    fig.tight_layout()
    flagged = [f"{r.label} at {r.buffer_bdp:g} BDP" for r in df.itertuples() if r.phase_dependent]
    phase = phase_note(flagged, len(df), len(setup.seeds), "whether L is above or below 1")
    cols = ["label", "buffer_bdp", *_LG, "region", "L_ci_low", "L_ci_high", "G_ci_low", "G_ci_high", "seeds",
            "phase_dependent"]
    files = write_table(df[cols], out, "fig4", "Fig. 4: trade-off points, N = 2, four buffers",
                        "Region of the mean point." + _seeds_text(setup) + " " + phase)
    files.append(_write_seeds(per, out, "fig4"))
    files.append(save_figure(fig, out, "fig4.png"))
    return {"fig4": df[cols]}, files, phase


# ---------------------------------------------------------------- fig5

#: Fig. 5's mixes: the new protocol of the even flows (None: all Reno).
F5_MIXES = {"Reno only": None, "Reno + Westwood": WESTWOOD, "Reno + Proposal": PROPOSAL}


def _fig5_plan(setup: Setup) -> tuple[list, list]:
    """Fig. 5's jobs, and (key, rate, buffer, n, mix, seed) of each."""
    from tcplab import Dumbbell

    mixes = F5_MIXES
    jobs, meta = [], []
    for s in setup.seeds:
        for rate in setup.f5_rates:
            buf = 200 if rate == 10e6 else 2000
            for n in setup.f5_ns:
                # Flow i (1..N): RTT = 10 + 240 i / N ms = 10 ms bottleneck + 4 x access delay.
                acc = [f"{60.0 * i / n}ms" for i in range(1, n + 1)]
                for mix, new in mixes.items():
                    algos = [("newreno", {}) if (new is None or i % 2 == 0) else new for i in range(n)]
                    sc = Dumbbell(n_flows=n, bottleneck_rate=rate, rtt="10ms", buffer=buf, access_delay=acc,
                                  algorithm=[a for a, _ in algos], params=[dict(p) for _, p in algos],
                                  recovery="reno", duration=f"{setup.duration}s", measure_window=f"{setup.window}s",
                                  sample_interval="1s", packet_size=f"{PACKET}B", seed=s,
                                  access_jitter=PHASE_JITTER_S, flow_options=setup.tcp.flow_options())
                    key = f"f5|{rate}|{n}|{mix}|{s}"
                    jobs.append(_job(key, sc))
                    meta.append((key, rate, buf, n, mix, s))
    return jobs, meta


def _fig5_jobs(setup: Setup, items: Sequence[str] = ()) -> list:
    return _fig5_plan(setup)[0]


def _fig5(setup: Setup, res: dict, out: str) -> tuple:
    import pandas as pd

    from tcplab.analysis import jain_index

    from .common import per_seed

    mixes = F5_MIXES
    rows = []
    for key, rate, buf, n, mix, s in _fig5_plan(setup)[1]:
        g = res[key]["goodput_bps"]
        rows.append({"rate_mbps": rate / 1e6, "buffer_packets": buf, "n": n, "mix": mix, "seed": s,
                     "jain": jain_index(g), "utilization": res[key]["utilization"],
                     "reno_mean_mbps": sum(g[0::2]) / len(g[0::2]) / 1e6,
                     "other_mean_mbps": sum(g[1::2]) / len(g[1::2]) / 1e6})
    per = pd.DataFrame(rows)
    df = seed_summary(per, ["rate_mbps", "n", "mix"], ["jain", "utilization", "reno_mean_mbps", "other_mean_mbps"])
    # The same seed gives both mixes the same jitter draws: Westwood's and the proposal's indexes pair by seed.
    order = {}
    for (rate, n), g in per.groupby(["rate_mbps", "n"], sort=False):
        w = g[g["mix"] == "Reno + Westwood"].set_index("seed").jain
        p = g[g["mix"] == "Reno + Proposal"].set_index("seed").jain
        order[(rate, n)] = winner_flips((p - w.reindex(p.index)).tolist())
    df["phase_dependent"] = [order[(r.rate_mbps, r.n)] for r in df.itertuples()]
    flagged = [f"{rate:g} Mbit/s N = {n}" for (rate, n), f in order.items() if f]
    phase = phase_note(flagged, len(order), len(setup.seeds), "which of Westwood and the proposal has the higher "
                                                                "Jain's index")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(setup.f5_rates), figsize=(6 * len(setup.f5_rates), 4.2), squeeze=False)
    for ax, rate in zip(axes[0], setup.f5_rates, strict=True):
        d = df[df.rate_mbps == rate / 1e6]
        for mix, m in zip(mixes, "o^s", strict=True):
            dd = d[d["mix"] == mix]
            seed_points(ax, list(dd.n), [per_seed(per, {"rate_mbps": rate / 1e6, "n": n, "mix": mix}, "jain")
                                         for n in dd.n], dd.jain, dd.jain_ci_low, dd.jain_ci_high, marker=m,
                        label=mix)
        ax.set_xlabel("number of flows N")
        ax.set_ylabel("Jain's fairness index")
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{rate / 1e6:g} Mbit/s, B = {200 if rate == 10e6 else 2000} packets, "
                     f"RTT 10+240/N .. 250 ms" + (f"\nmean and 95 % CI over {len(setup.seeds)} seeds (dots: each "
                                                   f"seed)" if len(setup.seeds) > 1 else ""), fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    files = write_table(df, out, "fig5", "Fig. 5: Jain's index vs N (RTT fairness)",
                   "Flows 1, 3, 5, ... (shorter RTT of each pair) Reno; flows 2, 4, ... the new protocol "
                   "('Reno only': all Reno). reno_mean = mean over odd flows, other_mean = over even flows."
                   + _seeds_text(setup) + " `phase_dependent` (the same on the three rows of a rate and N): "
                   "whether Westwood's and the proposal's indexes change order across the seeds (paired by seed). "
                   + phase)
    files.append(_write_seeds(per, out, "fig5"))
    files.append(save_figure(fig, out, "fig5.png"))
    return {"fig5": df}, files, phase


def _setup(quick: bool, buffers: Sequence[float] | None = None, variants: str = "paper", seeds: int | None = None,
           setup: str = "paper") -> Setup:
    """``buffers``: Figs. 1/4's buffers (x BDP); ``variants``: only the paper's (see the module notes);
    ``seeds``: seeds of Figs. 1, 3, 4, 5 (default ``SEEDS``, quick ``QUICK_SEEDS``); ``setup``: the TCP
    setup, ``"paper"`` or ``"linux"`` (module notes)."""
    if variants not in ("paper", None):
        raise ValueError("--variants: kk-westwood has only the paper's protocol definitions")
    return Setup(quick, buffers, seeds, setup)


PAPER = Paper(
    key="kk-westwood",
    summary="Kaneko & Katto, Reno-friendly TCP Westwood by router buffer estimation (estimators, Figs. 1, 3-5)",
    title="kk-westwood reproduction",
    items=(Item("rce", _rce, _rce_jobs), Item("bs-tracking", _bs, _bs_jobs), Item("fig1", _fig1, _fig1_jobs),
           Item("fig3", _fig3, _fig3_jobs), Item("fig4", _fig4, _fig4_jobs), Item("fig5", _fig5, _fig5_jobs)),
    setup=_setup,
    scenario=SCENARIO,
    quick_text="QUICK MODE: shortened runs and grids; these are not the paper's results.",
    options=(
        Option("buffers", "Figs. 1 and 4 (and rce): comma-separated buffers in BDP (default 0.25,0.5,1,2)",
               kind="floats"),
        Option("variants", "algorithm variants: only the paper's protocol definitions", choices=("paper",)),
        SEEDS_OPTION,
        SETUP_OPTION,
    ),
    refused={"recovery": "kk-westwood sets loss recovery per figure (see docs/experiments/kk-westwood.md)"},
    # each item's runs are a batch of their own (named after the item in the campaign and on stderr)
    batches="item",
)

#: ``tcplab.experiments.kk_westwood.reproduce(items=..., quick=..., out=..., buffers=..., seeds=..., ...)``
reproduce = PAPER.reproduce
#: The items' names, in the paper's order.
ITEMS = PAPER.item_names
