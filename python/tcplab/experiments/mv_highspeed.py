"""mv-highspeed: Mascolo & Vacirca, *Issues in Performance Evaluation of New
TCP Stacks in High Speed Networks* (docs/papers/mv-highspeed.md).

Items:

- ``table1``: one flow, C = 200 Mbit/s, RTT in {100, 300} ms, B in {0.1, 1}
  BDP. Goodput over the last 1000 s for seven protocols (28 runs).
- ``figs2-8``: cwnd and bottleneck queue against time for each protocol,
  one flow, RTT 100 ms, panel (a) B = BDP and (b) B = 0.1 BDP. Dotted
  reference lines at C x RTT and B + C x RTT. Reuses Table I's runs.
- ``figs9-10``: two flows of one protocol (host A with the shorter access
  delay, host B the longer), RTT 100 ms, B from 0.1 to 1 BDP. Goodput of
  each host (Fig. 9) and Jain's index (Fig. 10).
- ``table2``: mixed pairs at B = BDP, each new protocol on host A against
  NewReno on host B, then the reverse.
- ``figs11-12``: ten flows of one protocol, RTT 100 ms (Fig. 11) and 300 ms
  (Fig. 12). Total goodput against buffer size.
- ``fig13``: C = 1 Gbit/s, RTT 100 ms, B = 0.1 BDP, 5, 10 and 50 flows.
  Total goodput over [10, 100] s, [100, 1000] s and the last 1000 s.

The scenario is the paper's dumbbell (tcplab.Dumbbell): access links at
10 x C, with one-way delays spread from 2.5/N to 2.5 ms. Packets are 1500
bytes, counted with ns-2 accounting, and ACKs are 40 bytes. Runs last
2000 s. All flows start at 0.

Seeds: the dumbbell is deterministic, so a multi-flow run shows one phase of
the flows' packets at the drop-tail queue (tcplab.phaselock). The multi-flow
items (Figs. 9-13, Table II) therefore run each cell over seeds 1..N, each
sender's access delay plus a jitter uniform in [0, 0.25 ms) drawn from the
seed (``common.PHASE_JITTER_S``), and report the mean with a 95 % Student-t
interval and each seed's value; ``SEEDS`` gives N per item, ``seeds=N``
(``--seeds N``) sets it for all of them. Table I and Figs. 2-8 (one flow:
nothing to vary) run seed 1 without jitter.

TCP setup (``setup``): ``"paper"`` (default) gives every flow ns-2.28's
defaults, the simulator the paper ran (initial window 2, ns-2's RTO bounds,
limited transmit; :func:`tcplab.experiments.settings.ns2`), ``"linux"``
tcplab's defaults (initial window 10). index.md lists every value with its
source.

Algorithm variants: the paper's. See ``PROTOCOLS``; ``--variants linux``
selects the Linux defaults instead.

Loss recovery (the paper does not state it): NewReno (RFC 6582) for
NewReno, as the paper names it; SACK (RFC 6675) for the high-speed
protocols. One-hole-per-RTT NewReno recovery cannot repair the thousands of
losses a high-speed slow start leaves at these windows: STCP and HSTCP fall
to 30-170 Mbit/s in those runs, because they spend the run in recovery and
timeouts, not in congestion control. Most ns-2 high-speed evaluations ran over
Sack1 agents for that reason. ``recovery="newreno"`` (or ``"sack"``) forces
one recovery for every protocol.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence

from . import settings
from .common import (
    PHASE_JITTER_S,
    ci_text,
    phase_note,
    save_figure,
    seed_list,
    seed_points,
    seed_summary,
    write_table,
)
from .paper import SEEDS_OPTION, SETUP_OPTION, Item, Option, Paper

#: Display name -> (core algorithm, the paper's variant parameters, Linux-default parameters, loss recovery).
PROTOCOLS: dict[str, tuple[str, dict, dict, str]] = {
    "NewReno": ("newreno", {}, {}, "newreno"),
    "STCP": ("scalable", {"variant": "paper", "low_window": 0}, {}, "sack"),
    "HSTCP": ("highspeed", {"variant": "rfc3649"}, {}, "sack"),
    "H-TCP": ("htcp", {"variant": "paper"}, {}, "sack"),
    "Westwood+": ("westwood", {"variant": "paper"}, {}, "sack"),
    "BIC": ("bic", {"variant": "paper"}, {}, "sack"),
    "CUBIC": ("cubic", {"variant": "2005"}, {}, "sack"),
}
#: Where each protocol's paper variant comes from (docs/papers/mv-highspeed.md).
WHY = {
    "NewReno": "the paper's NewReno (a = 1/cwnd, b = 0.5) and its NewReno recovery",
    "STCP": "the paper's STCP: a = 0.01 per ACK, b = 0.125, no low window",
    "HSTCP": "the paper's HSTCP: RFC 3649's a(w), b(w) on a fractional window, ns-2's Low_P",
    "H-TCP": "the paper's H-TCP: alpha(Delta), beta = RTTmin/RTTmax unbounded",
    "Westwood+": "the paper's Westwood+: cwnd = ssthresh = BWE x RTTmin on the third duplicate ACK",
    "BIC": "the paper's BIC: b = 0.2 (beta 0.8), binary search and max probing",
    "CUBIC": "the paper's CUBIC of 2005 (Linux v2.0): b = 0.2 (beta 0.8), C = 0.4, no HyStart",
}
#: The paper's simulator (it names ns-2.28) and what the paper states itself.
PAPER_SETUP = settings.ns2("ns-2.28", "2005/02", "the paper names ns-2.28")
STATED = settings.SetupValue("packet size", "1500 B, counted whole as goodput (ns-2 accounting)",
                             "the paper: 1500-byte packets", flow=False)

#: Figure numbers of Figs. 2-8, in the paper's order of protocols.
FIG_OF = {"NewReno": 2, "STCP": 3, "HSTCP": 4, "H-TCP": 5, "Westwood+": 6, "BIC": 7, "CUBIC": 8}

C_BPS = 200e6
#: Table I's columns in the paper's order: (buffer in BDP, RTT in ms).
TABLE1_COLUMNS = [(0.1, 100), (0.1, 300), (1.0, 100), (1.0, 300)]
PACKET = 1500
SEED = 1
#: Seeds per multi-flow item (full length). Two flows splitting a link, where the phase decides the
#: split, get the most the 40-minute budget of scripts/main.sh allows (Table II's 12 runs per seed cost
#: 94 CPU s, Figs. 9-10's 70 runs 619 s); the totals over 10 and more flows (Figs. 11-13: 1,303 and 985
#: CPU s per seed) one. docs/experiments/mv-highspeed.md, "Seeds and phase effects".
SEEDS = {"figs9-10": 2, "table2": 4, "figs11-12": 1, "fig13": 1}
#: Seeds per multi-flow item in quick mode.
QUICK_SEEDS = 2


class Setup:
    """Durations and grids; ``quick`` shortens everything and says so."""

    def __init__(self, quick: bool, variants: str = "paper", recovery: str | None = None,
                 seeds: int | None = None, setup: str = "paper"):
        self.quick = quick
        #: seeds of each multi-flow item (1..N, with the access-delay jitter)
        self.seeds = {it: seed_list(seeds if seeds is not None else QUICK_SEEDS if quick else n)
                      for it, n in SEEDS.items()}
        self.variants = variants
        self.recovery = recovery
        self.tcp = settings.choose(setup, PAPER_SETUP, "mv-highspeed")
        self.duration = 60.0 if quick else 2000.0
        self.window = 30.0 if quick else 1000.0
        self.buffers = [0.1, 0.5, 1.0] if quick else [round(0.1 * k, 1) for k in range(1, 11)]
        self.fig13_duration = 20.0 if quick else 2000.0
        self.fig13_windows = [(1.0, 5.0), (5.0, 10.0), (10.0, 20.0)] if quick else [(10.0, 100.0), (100.0, 1000.0),
                                                                                 (1000.0, 2000.0)]
        self.fig13_flows = [5, 10, 50]

    def algo(self, proto: str) -> tuple[str, dict]:
        name, paper, linux, _ = PROTOCOLS[proto]
        return name, dict(paper if self.variants == "paper" else linux)

    def recovery_of(self, proto: str) -> str:
        return self.recovery or PROTOCOLS[proto][3]

    def describe(self) -> str:
        lines = [f"- duration {self.duration:g} s, goodput over the last {self.window:g} s"
                 + (" (QUICK MODE: shortened runs, not the paper's)" if self.quick else ""),
                 f"- buffers (fractions of BDP) for the buffer sweeps: {', '.join(f'{b:g}' for b in self.buffers)}",
                 f"- Fig. 13: {self.fig13_duration:g} s, windows "
                 + ", ".join(f"[{a:g}, {b:g}] s" for a, b in self.fig13_windows),
                 f"- loss recovery: {self.recovery or 'per protocol (below)'}; algorithm variants: {self.variants}",
                 f"- seeds: Table I and Figs. 2-8 (one flow) seed {SEED}, no jitter; the multi-flow items seeds 1..N "
                 f"with each sender's access delay plus a jitter uniform in [0, {PHASE_JITTER_S * 1e3:g} ms) from "
                 "the seed, mean and 95 % Student-t interval over the seeds: "
                 + ", ".join(f"{it} N = {len(s)}" for it, s in self.seeds.items())]
        protocols = [settings.Protocol(p, *self.algo(p), self.recovery_of(p),
                                       WHY[p] if self.variants == "paper" else "Linux defaults (--variants linux)")
                     for p in PROTOCOLS]
        other = ["- access links: 10 x C (the paper: faster than C)",
                 "- loss recovery (the paper does not state it): NewReno (RFC 6582) for NewReno, SACK (RFC 6675) "
                 "for the high-speed protocols, whose slow-start overshoot leaves thousands of losses that "
                 "one-hole-per-RTT recovery cannot repair" + (f"; forced to {self.recovery} for every flow"
                                                              if self.recovery else "")]
        return settings.settings_markdown(lines, self.tcp.with_values(STATED), protocols, other)


def _dumbbell(setup: Setup, protos: Sequence[str], rate: float, rtt_ms: float, buffer_bdp: float, duration: float,
              window: float, sample_interval: str, seed: int | None = None):
    """The paper's dumbbell; ``seed`` given (a multi-flow run): that seed, with the access-delay jitter."""
    from tcplab import Dumbbell

    algos = [setup.algo(p) for p in protos]
    return Dumbbell(n_flows=len(protos), bottleneck_rate=rate, rtt=f"{rtt_ms}ms", buffer=f"{buffer_bdp}BDP",
                    algorithm=[a for a, _ in algos], params=[p for _, p in algos],
                    recovery=[setup.recovery_of(p) for p in protos],
                    duration=f"{duration}s", measure_window=f"{window}s", sample_interval=sample_interval,
                    packet_size=f"{PACKET}B", accounting="ns2", seed=SEED if seed is None else seed,
                    access_jitter=0.0 if seed is None else PHASE_JITTER_S, flow_options=setup.tcp.flow_options())


def _job(key: str, sc, extract: str, **args) -> tuple[str, dict, str, dict]:
    return key, sc.to_spec(), extract, {"bottleneck": sc.bottleneck_links()[0], **args}


# ---------------------------------------------------------------- jobs per item

def _table1_jobs(setup: Setup, traces: bool) -> list:
    jobs = []
    for p in PROTOCOLS:
        for rtt in (100, 300):
            for b in (1.0, 0.1):
                want_trace = traces and rtt == 100
                sc = _dumbbell(setup, [p], C_BPS, rtt, b, setup.duration, setup.window,
                               "100ms" if want_trace else "1s")
                jobs.append(_job(f"t1|{p}|{rtt}|{b}", sc, "traces" if want_trace else "summary"))
    return jobs


def _pairs_jobs(setup: Setup) -> list:
    jobs = []
    for s in setup.seeds["figs9-10"]:
        for p in PROTOCOLS:
            for b in setup.buffers:
                sc = _dumbbell(setup, [p, p], C_BPS, 100, b, setup.duration, setup.window, "1s", seed=s)
                jobs.append(_job(f"f9|{p}|{b}|{s}", sc, "summary"))
    return jobs


def _table2_jobs(setup: Setup) -> list:
    jobs = []
    for s in setup.seeds["table2"]:
        for p in PROTOCOLS:
            if p == "NewReno":
                continue
            for order in ((p, "NewReno"), ("NewReno", p)):
                sc = _dumbbell(setup, list(order), C_BPS, 100, 1.0, setup.duration, setup.window, "1s", seed=s)
                jobs.append(_job(f"t2|{order[0]}|{order[1]}|{s}", sc, "summary"))
    return jobs


def _ten_jobs(setup: Setup) -> list:
    jobs = []
    for s in setup.seeds["figs11-12"]:
        for rtt in (100, 300):
            for p in PROTOCOLS:
                for b in setup.buffers:
                    sc = _dumbbell(setup, [p] * 10, C_BPS, rtt, b, setup.duration, setup.window, "1s", seed=s)
                    jobs.append(_job(f"f11|{p}|{rtt}|{b}|{s}", sc, "summary"))
    return jobs


def _fig13_jobs(setup: Setup) -> list:
    jobs = []
    for s in setup.seeds["fig13"]:
        for n in setup.fig13_flows:
            for p in PROTOCOLS:
                sc = _dumbbell(setup, [p] * n, 1e9, 100, 0.1, setup.fig13_duration,
                               setup.fig13_windows[-1][1] - setup.fig13_windows[-1][0], "1s", seed=s)
                jobs.append(_job(f"f13|{p}|{n}|{s}", sc, "summary", windows=setup.fig13_windows))
    return jobs


# ---------------------------------------------------------------- outputs

def _quick_note(setup: Setup) -> str:
    return ("**QUICK MODE**: shortened runs for checking, not the paper's durations or grids." if setup.quick else "")


def _table1(setup: Setup, res: dict, out: str) -> tuple[dict, list]:
    import pandas as pd

    from tcplab.analysis import bdp_packets, reno_sawtooth_goodput

    rows = []
    for p in PROTOCOLS:
        a, params = setup.algo(p)
        for rtt in (100, 300):
            for b in (1.0, 0.1):
                r = res[f"t1|{p}|{rtt}|{b}"]
                bdp = bdp_packets(C_BPS, rtt / 1e3, PACKET)
                buf = max(1, int(math.floor(b * bdp + 0.5)))
                row = {"protocol": p, "algorithm": a, "params": json.dumps(params, sort_keys=True), "rtt_ms": rtt,
                       "buffer_bdp": b, "buffer_packets": buf, "goodput_kbps": r["goodput_bps"][0] / 1e3,
                       "utilization": r["utilization"], "retransmits": r["retransmits"][0],
                       "timeouts": r["timeouts"][0], "drops": r["drops"],
                       "queue_mean_packets": r["queue_mean_packets"], "wall_s": r["wall_s"],
                       "duration_s": setup.duration, "quick": setup.quick}
                if a == "newreno":
                    # Path RTT = bottleneck RTT + 4 x 2.5 ms access delay (one flow).
                    row["analytic_goodput_kbps"] = reno_sawtooth_goodput(C_BPS, rtt / 1e3 + 0.010, buf, PACKET) / 1e3
                rows.append(row)
    df = pd.DataFrame(rows)
    # The paper's layout: B = 0.1 BDP first, then B = BDP, each at RTT 100 and 300 ms.
    piv = df.pivot_table(index="protocol", columns=["buffer_bdp", "rtt_ms"], values="goodput_kbps", sort=False)
    piv = piv.reindex(index=list(PROTOCOLS), columns=TABLE1_COLUMNS)
    piv.columns = [f"B = {b:g} BDP, RTT {r} ms" for b, r in piv.columns]
    note = (f"Goodput (kbit/s) over the last {setup.window:g} s of {setup.duration:g} s; C = 200 Mbit/s; one flow. "
            "NewReno's analytic sawtooth values are in the CSV column `analytic_goodput_kbps`. "
            "Goodput counts in-order delivery to the application: when a loss recovery straddles the window's "
            "start, data held behind the hole is counted inside the window, so a cell can read slightly above C "
            "(the `utilization` column, the bottleneck's own departures, stays at most 1). " + _quick_note(setup))
    return {"table1": df}, write_table(df, out, "table1", "mv-highspeed Table I", note=note, floatfmt=".0f", md_df=piv)


def _figs2_8(setup: Setup, res: dict, out: str) -> tuple[dict, list]:
    from tcplab.analysis import bdp_packets, path_rtt_s
    from tcplab.plot import algorithm_label

    from .common import cwnd_queue_figure

    files = []
    bdp = bdp_packets(C_BPS, 0.1, PACKET)
    # The reference lines use the flow's path RTT (bottleneck 100 ms + 4 x 2.5 ms access delay = 110 ms),
    # the RTT its sawtooth actually cycles with; B stays a fraction of the bottleneck's BDP, as in the paper.
    rtt_path = path_rtt_s(_dumbbell(setup, ["NewReno"], C_BPS, 100, 1.0, setup.duration, setup.window, "1s"))
    for p in PROTOCOLS:
        panels = []
        for col, b in enumerate((1.0, 0.1)):
            r = res[f"t1|{p}|100|{b}"]
            buf = max(1, int(math.floor(b * bdp + 0.5)))
            panels.append({"label": f"({'ab'[col]}) B = {b:g} BDP ({buf} packets)", "time": r["trace_time"],
                           "cwnd": r["cwnd"][0], "queue_time": r["queue_time"], "queue": r["queue"],
                           "capacity_bps": C_BPS, "packet_bytes": PACKET, "buffer_packets": buf,
                           "path_rtt_s": rtt_path})
        a, params = setup.algo(p)
        fig = cwnd_queue_figure(panels, f"Fig. {FIG_OF[p]}: {p} ({algorithm_label(a, params)}), C = 200 Mbit/s, "
                                        f"bottleneck RTT = 100 ms" + (" [QUICK MODE]" if setup.quick else ""),
                                clip=2.5)
        files.append(save_figure(fig, out, f"fig{FIG_OF[p]}_{a}.png"))
    return {}, files


def _seeds_text(n: int) -> str:
    return (f"Mean over {n} seeds with its 95 % Student-t interval in brackets (the access-delay jitter of each "
            f"seed moves the phase; each seed's value is in the `_seeds.csv` file)." if n > 1 else
            "One seed (with the access-delay jitter).")


def _write_seeds(per, out: str, name: str) -> str:
    """The per-seed rows beside the table (tidy CSV)."""
    path = os.path.join(out, f"{name}_seeds.csv")
    per.to_csv(path, index=False)
    return path


def _figs9_10(setup: Setup, res: dict, out: str) -> tuple:
    import pandas as pd

    from tcplab.analysis import jain_index

    from .common import per_seed, pyplot, yes_no

    plt = pyplot()
    seeds = setup.seeds["figs9-10"]
    rows = []
    for s in seeds:
        for p in PROTOCOLS:
            for b in setup.buffers:
                r = res[f"f9|{p}|{b}|{s}"]
                g = r["goodput_bps"]
                rows.append({"protocol": p, "algorithm": setup.algo(p)[0], "buffer_bdp": b, "seed": s,
                             "goodput_a_mbps": g[0] / 1e6, "goodput_b_mbps": g[1] / 1e6,
                             "total_mbps": sum(g) / 1e6, "jain_index": jain_index(g), "utilization": r["utilization"],
                             "quick": setup.quick})
    per = pd.DataFrame(rows)
    metrics = ["goodput_a_mbps", "goodput_b_mbps", "total_mbps", "jain_index", "utilization"]
    df = seed_summary(per, ["protocol", "buffer_bdp"], metrics, diff=("goodput_a_mbps", "goodput_b_mbps"))
    flagged = [f"{r.protocol} B = {r.buffer_bdp:g} BDP" for r in df.itertuples() if r.phase_dependent]
    phase = phase_note(flagged, len(df), len(seeds), "which host gets more")
    md = pd.DataFrame({
        "protocol": df.protocol, "B (BDP)": df.buffer_bdp,
        "host A (Mbit/s)": [ci_text(r.goodput_a_mbps, r.goodput_a_mbps_ci_low, r.goodput_a_mbps_ci_high)
                            for r in df.itertuples()],
        "host B (Mbit/s)": [ci_text(r.goodput_b_mbps, r.goodput_b_mbps_ci_low, r.goodput_b_mbps_ci_high)
                            for r in df.itertuples()],
        "Jain's index": [ci_text(r.jain_index, r.jain_index_ci_low, r.jain_index_ci_high, ".3f")
                         for r in df.itertuples()],
        "phase-dependent": [yes_no(x) for x in df.phase_dependent]}).set_index("protocol")
    files = write_table(df, out, "figs9_10", "mv-highspeed Figs. 9-10: two flows against buffer size", md_df=md,
                        note="Host A has the shorter access delay (1.25 ms), host B the longer (2.5 ms). "
                        + _seeds_text(len(seeds)) + " " + phase + " " + _quick_note(setup))
    files.append(_write_seeds(per, out, "figs9_10"))
    spread = f", mean and 95 % CI over {len(seeds)} seeds (dots: each seed)" if len(seeds) > 1 else ""
    fig, axes = plt.subplots(2, 4, figsize=(15, 7), sharey=True)
    for ax, p in zip(axes.flat, PROTOCOLS, strict=False):
        d = df[df.protocol == p]
        for col, style in (("goodput_a", {"marker": "o", "ls": "-", "label": "host A (shorter RTT)"}),
                           ("goodput_b", {"marker": "s", "ls": "--", "label": "host B (longer RTT)"})):
            seed_points(ax, list(d.buffer_bdp),
                        [per_seed(per, {"protocol": p, "buffer_bdp": b}, f"{col}_mbps") for b in d.buffer_bdp],
                        d[f"{col}_mbps"], d[f"{col}_mbps_ci_low"], d[f"{col}_mbps_ci_high"], **style)
        ax.set_title(p)
        ax.set_xlabel("buffer (fraction of BDP)")
        ax.set_ylim(0, 1.05 * C_BPS / 1e6)  # (a two-seed interval reaches far beyond the physical range)
        ax.grid(alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("goodput (Mbit/s)")
    axes.flat[0].legend(fontsize=8)
    axes.flat[-1].axis("off")
    fig.suptitle("Fig. 9: goodput of two flows of the same protocol, C = 200 Mbit/s, RTT = 100 ms" + spread
                 + (" [QUICK MODE]" if setup.quick else ""))
    fig.tight_layout()
    p9 = save_figure(fig, out, "fig9.png")
    fig, ax = plt.subplots(figsize=(8, 5))
    for i, p in enumerate(PROTOCOLS):
        d = df[df.protocol == p]
        seed_points(ax, list(d.buffer_bdp),
                    [per_seed(per, {"protocol": p, "buffer_bdp": b}, "jain_index") for b in d.buffer_bdp],
                    d.jain_index, d.jain_index_ci_low, d.jain_index_ci_high, marker="os^vD<>"[i], label=p)
    ax.set_xlabel("buffer (fraction of BDP)")
    ax.set_ylabel("Jain's fairness index")
    ax.set_ylim(0.45, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Fig. 10: Jain's index of two flows" + spread + (" [QUICK MODE]" if setup.quick else ""),
                 fontsize=10)
    fig.tight_layout()
    p10 = save_figure(fig, out, "fig10.png")
    return {"figs9-10": df}, files + [p9, p10], phase


def _table2(setup: Setup, res: dict, out: str) -> tuple:
    import pandas as pd

    from .common import yes_no

    seeds = setup.seeds["table2"]
    rows = []
    for s in seeds:
        for p in PROTOCOLS:
            if p == "NewReno":
                continue
            for a_host, b_host in ((p, "NewReno"), ("NewReno", p)):
                r = res[f"t2|{a_host}|{b_host}|{s}"]
                g = r["goodput_bps"]
                rows.append({"protocol": p, "host_a": a_host, "host_b": b_host, "seed": s,
                             "goodput_a_kbps": g[0] / 1e3, "goodput_b_kbps": g[1] / 1e3,
                             "new_protocol_kbps": (g[0] if a_host == p else g[1]) / 1e3,
                             "newreno_kbps": (g[1] if a_host == p else g[0]) / 1e3, "utilization": r["utilization"],
                             "quick": setup.quick})
    per = pd.DataFrame(rows)
    metrics = ["goodput_a_kbps", "goodput_b_kbps", "new_protocol_kbps", "newreno_kbps", "utilization"]
    df = seed_summary(per, ["protocol", "host_a", "host_b"], metrics, diff=("new_protocol_kbps", "newreno_kbps"))
    flagged = [f"{r.host_a} (A) vs {r.host_b} (B)" for r in df.itertuples() if r.phase_dependent]
    phase = phase_note(flagged, len(df), len(seeds), "which protocol gets more")
    md = pd.DataFrame({
        "host A": df.host_a, "host B": df.host_b,
        "host A (kbit/s)": [ci_text(r.goodput_a_kbps, r.goodput_a_kbps_ci_low, r.goodput_a_kbps_ci_high, ".0f")
                            for r in df.itertuples()],
        "host B (kbit/s)": [ci_text(r.goodput_b_kbps, r.goodput_b_kbps_ci_low, r.goodput_b_kbps_ci_high, ".0f")
                            for r in df.itertuples()],
        "phase-dependent": [yes_no(x) for x in df.phase_dependent]}).set_index("host A")
    files = write_table(df, out, "table2", "mv-highspeed Table II: each protocol against NewReno, B = BDP", md_df=md,
                        note="Goodput (kbit/s, as the paper) of host A (shorter access delay) and host B. "
                        + _seeds_text(len(seeds)) + " " + phase + " " + _quick_note(setup))
    files.append(_write_seeds(per, out, "table2"))
    return {"table2": df}, files, phase


def _figs11_12(setup: Setup, res: dict, out: str) -> tuple[dict, list]:
    import pandas as pd

    from tcplab.analysis import jain_index

    from .common import per_seed, pyplot

    plt = pyplot()
    seeds = setup.seeds["figs11-12"]
    rows = []
    for s in seeds:
        for rtt in (100, 300):
            for p in PROTOCOLS:
                for b in setup.buffers:
                    r = res[f"f11|{p}|{rtt}|{b}|{s}"]
                    rows.append({"protocol": p, "algorithm": setup.algo(p)[0], "rtt_ms": rtt, "buffer_bdp": b,
                                 "seed": s, "total_goodput_mbps": sum(r["goodput_bps"]) / 1e6,
                                 "utilization": r["utilization"], "jain_index": jain_index(r["goodput_bps"]),
                                 "quick": setup.quick})
    per = pd.DataFrame(rows)
    df = seed_summary(per, ["protocol", "rtt_ms", "buffer_bdp"], ["total_goodput_mbps", "utilization", "jain_index"])
    files = write_table(df, out, "figs11_12", "mv-highspeed Figs. 11-12: ten flows against buffer size",
                        note=_seeds_text(len(seeds)).replace(" in brackets", " (`_ci_low`, `_ci_high` columns)")
                        + " " + _quick_note(setup))
    files.append(_write_seeds(per, out, "figs11_12"))
    spread = f", mean and 95 % CI over {len(seeds)} seeds" if len(seeds) > 1 else ""
    for fig_no, rtt in ((11, 100), (12, 300)):
        fig, ax = plt.subplots(figsize=(8, 5))
        for i, p in enumerate(PROTOCOLS):
            d = df[(df.protocol == p) & (df.rtt_ms == rtt)]
            seed_points(ax, list(d.buffer_bdp),
                        [per_seed(per, {"protocol": p, "rtt_ms": rtt, "buffer_bdp": b}, "total_goodput_mbps")
                         for b in d.buffer_bdp],
                        d.total_goodput_mbps, d.total_goodput_mbps_ci_low, d.total_goodput_mbps_ci_high,
                        marker="os^vD<>"[i], label=p)
        ax.axhline(200, ls=":", color="k", lw=1, label="C = 200 Mbit/s")
        ax.set_ylim(0, 1.05 * C_BPS / 1e6)
        ax.set_xlabel("buffer (fraction of BDP)")
        ax.set_ylabel("total goodput (Mbit/s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title(f"Fig. {fig_no}: ten flows, RTT = {rtt} ms" + spread + (" [QUICK MODE]" if setup.quick else ""))
        fig.tight_layout()
        path = save_figure(fig, out, f"fig{fig_no}.png")
        files.append(path)
    return {"figs11-12": df}, files


def _fig13(setup: Setup, res: dict, out: str) -> tuple[dict, list]:
    import numpy as np
    import pandas as pd

    from .common import pyplot

    plt = pyplot()
    seeds = setup.seeds["fig13"]
    rows = []
    for s in seeds:
        for n in setup.fig13_flows:
            for p in PROTOCOLS:
                r = res[f"f13|{p}|{n}|{s}"]
                w = np.asarray(r["window_goodput_bps"])  # flows x windows
                for k, (a, e) in enumerate(setup.fig13_windows):
                    rows.append({"protocol": p, "flows": n, "window": f"[{a:g}, {e:g}] s", "window_start_s": a,
                                 "window_end_s": e, "seed": s, "total_goodput_mbps": float(w[:, k].sum()) / 1e6,
                                 "quick": setup.quick})
    per = pd.DataFrame(rows)
    df = seed_summary(per, ["protocol", "flows", "window"], ["total_goodput_mbps"])
    piv = df.pivot_table(index="protocol", columns=["flows", "window"], values="total_goodput_mbps", sort=False)
    piv.columns = [f"{n} flows, {w}" for n, w in piv.columns]
    files = write_table(df, out, "fig13", "mv-highspeed Fig. 13: convergence at 1 Gbit/s, B = 0.1 BDP",
                        md_df=piv.reindex(list(PROTOCOLS)),
                        note="Total goodput (Mbit/s) of all flows in each window. "
                        + _seeds_text(len(seeds)).replace(" with its 95 % Student-t interval in brackets",
                                                          " (its 95 % Student-t interval: the CSV's `_ci_low`, "
                                                          "`_ci_high` columns)")
                        + " " + _quick_note(setup), floatfmt=".1f")
    files.append(_write_seeds(per, out, "fig13"))
    fig, axes = plt.subplots(1, len(setup.fig13_flows), figsize=(15, 4.8), sharey=True)
    x = np.arange(len(PROTOCOLS))
    wdt = 0.8 / len(setup.fig13_windows)
    for ax, n in zip(axes, setup.fig13_flows, strict=True):
        for k, (a, e) in enumerate(setup.fig13_windows):
            d = df[(df.flows == n) & (df.window_start_s == a)].set_index("protocol").reindex(list(PROTOCOLS))
            err = np.vstack([d.total_goodput_mbps - d.total_goodput_mbps_ci_low,
                             d.total_goodput_mbps_ci_high - d.total_goodput_mbps])
            ax.bar(x + (k - 1) * wdt, d.total_goodput_mbps, wdt, label=f"[{a:g}, {e:g}] s",
                   yerr=None if np.isnan(err).all() else np.nan_to_num(err), capsize=2)
        ax.axhline(1000, ls=":", color="k", lw=1)
        ax.set_ylim(0, 1050)
        ax.set_xticks(x, list(PROTOCOLS), rotation=35, ha="right")
        ax.set_title(f"{n} flows")
        ax.grid(alpha=0.3, axis="y")
    axes[0].set_ylabel("total goodput (Mbit/s)")
    # below the panels: inside, it covers the tallest bars
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=len(setup.fig13_windows), fontsize=9,
               title="goodput over the window" + (f" (bars: mean over {len(seeds)} seeds, 95 % CI)"
                                                  if len(seeds) > 1 else ""), title_fontsize=9, frameon=False)
    fig.suptitle("Fig. 13: total goodput at 1 Gbit/s, RTT = 100 ms, B = 0.1 BDP"
                 + (" [QUICK MODE]" if setup.quick else ""))
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    path = save_figure(fig, out, "fig13.png")
    return {"fig13": df}, files + [path]


# ---------------------------------------------------------------- driver

def _setup(quick: bool, variants: str = "paper", recovery: str | None = None, seeds: int | None = None,
           setup: str = "paper") -> Setup:
    """``seeds``: seeds per multi-flow item (default ``SEEDS``, quick ``QUICK_SEEDS``); ``setup``: the TCP
    setup, ``"paper"`` or ``"linux"`` (module notes)."""
    if recovery not in (None, "reno", "newreno", "sack"):
        raise ValueError(f"recovery: must be reno, newreno or sack, got {recovery!r}")
    if variants not in ("paper", "linux"):
        raise ValueError(f"variants: must be 'paper' or 'linux', got {variants!r}")
    return Setup(quick, variants, recovery, seeds, setup)


PAPER = Paper(
    key="mv-highspeed",
    summary="Mascolo & Vacirca, high-speed TCPs on a 200 Mbit/s dumbbell (Tables I-II, Figs. 2-13)",
    title="mv-highspeed reproduction",
    items=(
        # Table I and Figs. 2-8 share their runs: with Figs. 2-8 asked for, Table I's runs keep their traces
        Item("table1", _table1, lambda s, items: [] if "figs2-8" in items else _table1_jobs(s, traces=False)),
        Item("figs2-8", _figs2_8, lambda s, items: _table1_jobs(s, traces=True)),
        Item("figs9-10", _figs9_10, lambda s, items: _pairs_jobs(s)),
        Item("table2", _table2, lambda s, items: _table2_jobs(s)),
        Item("figs11-12", _figs11_12, lambda s, items: _ten_jobs(s)),
        Item("fig13", _fig13, lambda s, items: _fig13_jobs(s)),
    ),
    setup=_setup,
    scenario="Dumbbell of docs/papers/mv-highspeed.md: N senders on access links of 10 x C to R1, bottleneck "
             "R1 -> R2 (drop-tail buffer B at R1), access one-way delays 2.5 i/N ms, 1500-byte packets (ns-2 "
             "accounting), 40-byte ACKs, bulk flows starting at 0.",
    quick_text="QUICK MODE: every run is shortened; these are not the paper's results.",
    options=(
        Option("variants", "algorithm variants: the paper's (default) or the Linux defaults",
               choices=("paper", "linux")),
        Option("recovery", "force one loss recovery for every flow (default: NewReno for NewReno, SACK for the "
                           "high-speed protocols)", choices=("reno", "newreno", "sack")),
        SEEDS_OPTION,
        SETUP_OPTION,
    ),
)

#: ``tcplab.experiments.mv_highspeed.reproduce(items=..., quick=..., out=..., seeds=..., ...)``
reproduce = PAPER.reproduce
#: The items' names, in the paper's order.
ITEMS = PAPER.item_names
