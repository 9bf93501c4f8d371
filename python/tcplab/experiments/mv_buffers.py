"""mv-buffers: Mascolo & Vacirca, *Congestion control and sizing router
buffers in the Internet* (docs/papers/mv-buffers.md).

Items:

- ``fig4``: one flow, C = 40 Mbit/s, RTT_m in {100, 50} ms, link utilization
  against the buffer (0.05 to 1.5 BDP), NewReno and Westwood+, with the
  analytic curves on the same axes (NewReno: the saw-tooth fluid model and
  the paper's idle-time model; Westwood+: its idle-time model).
- ``fig5``: one flow, RTT_m = 100 ms, cwnd and bottleneck queue against time
  for NewReno and Westwood+, B = BDP and B = 0.1 BDP.
- ``fig8``: 200 flows, C = 200 Mbit/s, RTT in {100, 300} ms, utilization
  against the buffer, NewReno and Westwood+, with the erf lower bounds.
- ``real``: a simulated analog of the paper's real experiment: three flows
  sharing a 1 Gbit/s path with a long RTT; per-flow throughput over time.

Scenario: tcplab.Dumbbell, access links at 10 x C, drop-tail buffer B at R1
(B excludes the packet in service, as in ns-2), 1500-byte packets with ns-2
accounting, 40-byte ACKs, one ACK per packet. Choices where the paper is
silent are listed in docs/experiments/mv-buffers.md and in each index.md.

Seeds: the many-flow items (Fig. 8, real) already draw every access delay
(and Fig. 8's start times) from the seed, so each seed is another draw; they
run over seeds 1..N (``SEEDS``; ``seeds=N``, ``--seeds N``) and report the
mean with its 95 % Student-t interval. Figs. 4 and 5 (one flow) run seed 1.

TCP setup (``setup``): ``"paper"`` (default) gives the simulations' flows
the defaults of the ns-2 the paper ran (initial window 2, ns-2's RTO bounds,
limited transmit; :func:`tcplab.experiments.settings.ns2`) and the
real-experiment analog's flows those of the Linux 2.6 hosts of its time
(:func:`~tcplab.experiments.settings.linux_2_6`); ``"linux"`` gives both
tcplab's defaults (initial window 10). index.md lists every value with its
source.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from . import runner, settings
from .common import (
    per_seed,
    pyplot,
    save_figure,
    seed_list,
    seed_points,
    seed_summary,
    write_table,
)
from .paper import SEEDS_OPTION, SETUP_OPTION, Item, Option, Paper

if TYPE_CHECKING:  # pragma: no cover
    from ..results import Results


PACKET = 1500
SEED = 1
#: Seeds of the many-flow items (full length): Fig. 8's 40 runs of 200 flows cost most of the paper's CPU.
SEEDS = {"fig8": 3, "real": 3}
QUICK_SEEDS = 2

#: Display name -> (core algorithm, params, loss recovery) for the ns-2 simulations
#: (Figs. 4, 5, 8): the paper's Westwood+ (cwnd = ssthresh = BWE x RTT_min on the
#: third duplicate ACK), both on NewReno recovery as ns-2's agents.
PROTOCOLS: dict[str, tuple[str, dict, str]] = {
    "NewReno": ("newreno", {}, "newreno"),
    "Westwood+": ("westwood", {"variant": "paper"}, "newreno"),
}
#: The real experiment ran Linux end hosts: Linux defaults and SACK recovery.
REAL_PROTOCOLS: dict[str, tuple[str, dict, str]] = {
    "NewReno": ("newreno", {}, "sack"),
    "Westwood+": ("westwood", {}, "sack"),
}

#: The simulations' ns-2: the paper does not name the release; its companion mv-highspeed, by the same
#: authors and of the same period, names ns-2.28.
PAPER_SETUP = settings.ns2("ns-2.28", "2005/02", "the paper does not name the release; mv-highspeed, by the same "
                                                 "authors and of the same period, names ns-2.28")
#: The real experiment's hosts.
REAL_SETUP = settings.linux_2_6("the paper's transatlantic experiment; it gives no host settings")
STATED = settings.SetupValue("packet size", "1500 B, counted whole (ns-2 accounting)", "the paper", flow=False)

F4_C = 40e6
F4_RTTS = (100, 50)
F8_C = 200e6
F8_RTTS = (100, 300)
F8_FLOWS = 200
REAL_C = 1e9
REAL_RTT = 120
REAL_FLOWS = 3


class Setup:
    """Durations and grids; ``quick`` shortens everything and says so."""

    def __init__(self, quick: bool, seeds: int | None = None, setup: str = "paper"):
        self.quick = quick
        self.tcp = settings.choose(setup, PAPER_SETUP, "mv-buffers")
        self.real_tcp = settings.choose(setup, REAL_SETUP, "mv-buffers")
        #: seeds of the many-flow items (1..N: the access delays, and Fig. 8's start times, drawn from each)
        self.seeds = {it: seed_list(seeds if seeds is not None else QUICK_SEEDS if quick else n)
                      for it, n in SEEDS.items()}
        # Fig. 4: cycle-aligned utilization from the first congestion event
        # after f4_measure_start to the last one before the end.
        self.f4_duration = 300.0 if quick else 2000.0
        self.f4_measure_start = 150.0 if quick else 500.0
        self.f4_buffers = [0.1, 0.5, 1.0, 1.5] if quick else [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
                                                             1.1, 1.25, 1.5]
        self.f4_sample = "0.05s"
        self.f5_duration = 100.0 if quick else 400.0
        self.f8_duration = 30.0 if quick else 600.0
        self.f8_measure_start = 15.0 if quick else 100.0
        self.f8_buffers = [0.02, 0.1] if quick else [0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0]
        self.f8_start_spread = 10.0
        self.real_duration = 20.0 if quick else 900.0
        self.real_measure_start = 5.0 if quick else 100.0
        self.real_buffers = [0.02] if quick else [0.02, 0.2]

    def describe(self) -> str:
        q = " (QUICK MODE: shortened runs and grids, not the paper's)" if self.quick else ""
        lines = [
            f"- Fig. 4: C = {F4_C / 1e6:g} Mbit/s, RTT_m in {list(F4_RTTS)} ms, one flow, {self.f4_duration:g} s; "
            f"utilization over whole congestion cycles from the first congestion event after "
            f"{self.f4_measure_start:g} s to the last one{q}",
            f"- Fig. 4 buffers (x BDP): {', '.join(f'{b:g}' for b in self.f4_buffers)}",
            f"- Fig. 5: RTT_m 100 ms, B = 1 and 0.1 BDP, {self.f5_duration:g} s",
            f"- Fig. 8: {F8_FLOWS} flows, C = {F8_C / 1e6:g} Mbit/s, RTT in {list(F8_RTTS)} ms, "
            f"{self.f8_duration:g} s, "
            f"utilization over [{self.f8_measure_start:g}, {self.f8_duration:g}] s; starts uniform in "
            f"[0, {self.f8_start_spread:g}) s; buffers (x BDP): {', '.join(f'{b:g}' for b in self.f8_buffers)}",
            f"- real: {REAL_FLOWS} flows, C = {REAL_C / 1e9:g} Gbit/s, RTT {REAL_RTT} ms, {self.real_duration:g} s, "
            f"buffers (x BDP) {', '.join(f'{b:g}' for b in self.real_buffers)}",
            "- 1500-byte packets, ns-2 accounting, 40-byte ACKs, access links 10 x C",
            f"- seeds: Figs. 4, 5 (one flow) seed {SEED}; Fig. 8 seeds 1..{len(self.seeds['fig8'])}, real seeds "
            f"1..{len(self.seeds['real'])} (each seed draws the access delays, and Fig. 8's start times, anew), "
            "mean and 95 % Student-t interval over the seeds",
        ]
        tcp = [("Figs. 4, 5 and 8 (the ns-2 simulations)", self.tcp.with_values(STATED)),
               ("real (the analog of the paper's Linux experiment)", self.real_tcp)]
        why = {"NewReno": "ns-2's NewReno agent, as the paper's simulations",
               "Westwood+": "the paper's Westwood+: cwnd = ssthresh = BWE x RTT_min on the third duplicate ACK, "
                            "on ns-2's NewReno agent"}
        protocols = [settings.Protocol(f"{p} (Figs. 4, 5, 8)", a, pr, r, why[p]) for p, (a, pr, r) in PROTOCOLS.items()]
        protocols += [settings.Protocol(f"{p} (real)", a, pr, r, "the Linux module with its defaults and SACK: the "
                                                                 "paper's experiment ran Linux end hosts")
                      for p, (a, pr, r) in REAL_PROTOCOLS.items()]
        other = ["- access links 10 x C; each seed draws the many-flow items' access delays",
                 "- Fig. 4 and Fig. 5 at zero access delay, so that RTT_m is the nominal RTT",
                 "- the real-experiment analog: RTT 120 ms (about Europe to the US east coast), buffers 0.02 and "
                 "0.2 BDP, access delays uniform in (0, 10 ms)"]
        return settings.settings_markdown(lines, tcp, protocols, other)


def buffer_packets(fraction: float, bdp: int) -> int:
    """B = fraction x BDP packets, rounded to nearest, at least 1."""
    return max(1, int(math.floor(fraction * bdp + 0.5)))


# ---------------------------------------------------------------- extract (runs in the workers)

def extract_mv_buffers(run: Results, args: dict) -> dict:
    """extract_summary plus, for flow 0, congestion events (times where the
    sampled ssthresh changes) and the goodput utilization over whole cycles
    (``args["cycle_from"]``: from the first event after that time to the last
    event); optional cwnd/queue traces (``args["traces"]``) and per-flow
    throughput per sample (``args["series"]``)."""
    out = runner.extract_summary(run, args)
    t, cw = runner.flow_series(run, 0, "cwnd")
    cap = float(args["capacity_bps"])
    if "cycle_from" in args and len(t) > 1:
        ss = runner.flow_series(run, 0, "ssthresh")[1]
        d = runner.flow_series(run, 0, "delivered_bytes")[1].astype(float)
        # A congestion event = a decrease of the sampled cwnd more than
        # event_gap after the previous decrease (the inflation and deflation
        # of one fast recovery give several decreases within a round trip or
        # two). ssthresh alone does not do: a deterministic single flow loses
        # at the same window every cycle, so ssthresh keeps the same value.
        dec = np.nonzero(np.diff(cw) < 0)[0] + 1
        gap = float(args.get("event_gap", 1.0))
        keep = []
        last = -math.inf
        for i in dec:
            if t[i] - last > gap:
                keep.append(i)
            last = t[i]
        idx = np.asarray(keep, dtype=int)
        ev_t = t[idx]
        out["events_total"] = int(len(idx))
        sel = idx[ev_t >= float(args["cycle_from"])]
        out["cycles"] = int(max(0, len(sel) - 1))
        if len(sel) >= 2:
            a, b = sel[0], sel[-1]
            out["cycle_start_s"] = float(t[a])
            out["cycle_end_s"] = float(t[b])
            out["utilization_cycles"] = float((d[b] - d[a]) * 8.0 / (cap * (t[b] - t[a])))
            out["mean_cycle_s"] = float((t[b] - t[a]) / (len(sel) - 1))
            # Window left after each loss: the sampled ssthresh a second after each event.
            after = np.minimum(np.searchsorted(t, t[sel] + gap), len(t) - 1)
            out["ssthresh_after_loss_mean"] = float(np.mean(ss[after]))
            out["cwnd_mean"] = float(np.mean(cw[a:b + 1]))
        else:
            out["utilization_cycles"] = float("nan")
    if args.get("traces"):
        out["trace_time"] = t.tolist()
        out["cwnd"] = cw.tolist()
        qt, qp = runner.queue_series(run, args["bottleneck"])
        out["queue_time"] = qt.tolist()
        out["queue"] = qp.tolist()
    if args.get("series"):
        out["series_time"], out["series_bps"] = runner.goodput_series(run, len(out["names"]))
    return out


runner.EXTRACTS["mv_buffers"] = extract_mv_buffers


def _clean_spec(spec: dict) -> dict:
    """Drop a null ``loss_classifier`` (the core's default): cores built before
    loss classifiers existed reject the key."""
    for f in spec.get("flows", []):
        if f.get("loss_classifier", 0) is None:
            del f["loss_classifier"]
    return spec


def _job(key: str, sc, **args) -> tuple[str, dict, str, dict]:
    return key, _clean_spec(sc.to_spec()), "mv_buffers", {"bottleneck": sc.bottleneck_links()[0],
                                                         "capacity_bps": sc.capacity_bps, **args}


def _dumbbell(protos: dict, proto: str, n: int, rate: float, rtt_ms: float, buf: int, duration: float,
              measure_start: float, sample: str, access_delay: Any, start: Any = 0.0, seed: int = SEED,
              tcp: settings.TcpSetup | None = None):
    from tcplab import Dumbbell

    a, params, rec = protos[proto]
    return Dumbbell(n_flows=n, bottleneck_rate=rate, rtt=f"{rtt_ms}ms", buffer=int(buf), algorithm=a,
                    params=dict(params), recovery=rec, duration=f"{duration}s", measure_start=f"{measure_start}s",
                    sample_interval=sample, access_delay=access_delay, start=start, packet_size=f"{PACKET}B",
                    accounting="ns2", seed=seed, flow_options=tcp.flow_options() if tcp else None)


def _bdp(rate: float, rtt_ms: float) -> int:
    from tcplab.analysis import bdp_packets

    return int(bdp_packets(rate, rtt_ms / 1e3, PACKET))


# ---------------------------------------------------------------- jobs per item

def _fig4_jobs(setup: Setup) -> list:
    jobs = []
    for rtt in F4_RTTS:
        bdp = _bdp(F4_C, rtt)
        for p in PROTOCOLS:
            for b in setup.f4_buffers:
                sc = _dumbbell(PROTOCOLS, p, 1, F4_C, rtt, buffer_packets(b, bdp), setup.f4_duration,
                               setup.f4_measure_start, setup.f4_sample, "0ms", tcp=setup.tcp)
                jobs.append(_job(f"f4|{p}|{rtt}|{b}", sc, cycle_from=setup.f4_measure_start,
                                    event_gap=3 * rtt / 1e3))
    return jobs


def _fig5_jobs(setup: Setup) -> list:
    jobs = []
    bdp = _bdp(F4_C, 100)
    for p in PROTOCOLS:
        for b in (1.0, 0.1):
            sc = _dumbbell(PROTOCOLS, p, 1, F4_C, 100, buffer_packets(b, bdp), setup.f5_duration, 0.0, "0.05s", "0ms",
                           tcp=setup.tcp)
            jobs.append(_job(f"f5|{p}|{b}", sc, traces=True))
    return jobs


def _f8_starts(n: int, spread: float, seed: int = SEED) -> list[float]:
    rng = np.random.default_rng(seed + 1000)
    return [float(x) for x in rng.uniform(0.0, spread, size=n)]


def _fig8_jobs(setup: Setup) -> list:
    jobs = []
    for s in setup.seeds["fig8"]:
        starts = _f8_starts(F8_FLOWS, setup.f8_start_spread, s)
        for rtt in F8_RTTS:
            bdp = _bdp(F8_C, rtt)
            for p in PROTOCOLS:
                for b in setup.f8_buffers:
                    sc = _dumbbell(PROTOCOLS, p, F8_FLOWS, F8_C, rtt, buffer_packets(b, bdp), setup.f8_duration,
                                   setup.f8_measure_start, "1s", "uniform", start=starts, seed=s,
                                   tcp=setup.tcp)
                    jobs.append(_job(f"f8|{p}|{rtt}|{b}|{s}", sc))
    return jobs


def _real_jobs(setup: Setup) -> list:
    jobs = []
    bdp = _bdp(REAL_C, REAL_RTT)
    for s in setup.seeds["real"]:
        for p in REAL_PROTOCOLS:
            for b in setup.real_buffers:
                sc = _dumbbell(REAL_PROTOCOLS, p, REAL_FLOWS, REAL_C, REAL_RTT, buffer_packets(b, bdp),
                               setup.real_duration, setup.real_measure_start, "1s", "uniform", seed=s,
                               tcp=setup.real_tcp)
                jobs.append(_job(f"real|{p}|{b}|{s}", sc, series=s == 1))
    return jobs


# ---------------------------------------------------------------- outputs

def _qnote(setup: Setup) -> str:
    return " **QUICK MODE**: shortened runs and grids, not the paper's." if setup.quick else ""


def _fig4(setup: Setup, res: dict, out: str) -> tuple[dict, list]:
    import pandas as pd

    from tcplab import analysis as an

    rows = []
    for rtt in F4_RTTS:
        bdp = _bdp(F4_C, rtt)
        for p in PROTOCOLS:
            for b in setup.f4_buffers:
                r = res[f"f4|{p}|{rtt}|{b}"]
                buf = buffer_packets(b, bdp)
                saw = an.reno_sawtooth_utilization(F4_C, rtt / 1e3, buf, PACKET)
                idle_reno = an.reno_idle_utilization(F4_C, rtt / 1e3, buf, 1.0, PACKET)
                west = an.westwood_idle_utilization(F4_C, rtt / 1e3, buf, 1.0, PACKET)
                analytic = saw if p == "NewReno" else west
                uc = r.get("utilization_cycles", float("nan"))
                # Whole cycles when the window holds at least one, else the link over the window.
                u = uc if not math.isnan(uc) else r["utilization"]
                rows.append({
                    "protocol": p, "rtt_ms": rtt, "buffer_bdp": b, "buffer_packets": buf, "bdp_packets": bdp,
                    "utilization": u, "measured_over": "cycles" if not math.isnan(uc) else "window",
                    "utilization_cycles": uc, "utilization_link": r["utilization"],
                    "analytic": analytic, "rel_error": (u - analytic) / analytic,
                    "within_2pct": bool(abs(u - analytic) <= 0.02 * analytic) if not math.isnan(u) else False,
                    "sawtooth_reno": saw, "idle_model_reno": idle_reno, "idle_model_westwood": west,
                    "idle_time_reno_ms": 1e3 * an.reno_idle_time(F4_C, rtt / 1e3, buf, 1.0, PACKET),
                    "idle_time_westwood_ms": 1e3 * an.westwood_idle_time(F4_C, 1.0, PACKET),
                    "cycles": r.get("cycles", 0), "mean_cycle_s": r.get("mean_cycle_s", float("nan")),
                    "cycle_start_s": r.get("cycle_start_s", float("nan")),
                    "cycle_end_s": r.get("cycle_end_s", float("nan")),
                    "ssthresh_after_loss_over_bdp": r.get("ssthresh_after_loss_mean", float("nan")) / bdp,
                    "timeouts": r["timeouts"][0], "retransmits": r["retransmits"][0], "drops": r["drops"],
                    "duration_s": setup.f4_duration, "quick": setup.quick})
    df = pd.DataFrame(rows)
    note = ("Single flow, C = 40 Mbit/s, access links at 400 Mbit/s with zero delay (RTT_m = the nominal RTT). "
            "`utilization`: goodput (ns-2 accounting) over whole congestion cycles, from the first "
            f"congestion event after {setup.f4_measure_start:g} s to the last one, divided by C "
            "(`measured_over` = cycles), or, when that window holds no whole cycle, the bottleneck's "
            "utilization from that time to the end (`window`). `analytic`: "
            "the saw-tooth model (`reno_sawtooth_utilization`) for NewReno, the idle-time model "
            "(`westwood_idle_utilization`) for Westwood+; `within_2pct` compares them." + _qnote(setup))
    files = write_table(df, out, "fig4", "mv-buffers Fig. 4: single-flow utilization against buffer", note)
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    for ax, rtt in zip(axes, F4_RTTS, strict=True):
        bdp = _bdp(F4_C, rtt)
        xs = np.linspace(0.0, max(setup.f4_buffers) * 1.02, 300)
        bufs = [x * bdp for x in xs]
        ax.plot(xs, [an.reno_sawtooth_utilization(F4_C, rtt / 1e3, bb, PACKET) for bb in bufs], "-", color="C0",
                lw=1.2, label="Reno saw-tooth model")
        ax.plot(xs, [an.reno_idle_utilization(F4_C, rtt / 1e3, bb, 1.0, PACKET) for bb in bufs], ":", color="C0",
                lw=1.2, label="Reno idle-time model (recurring gap)")
        ax.plot(xs, [an.westwood_idle_utilization(F4_C, rtt / 1e3, bb, 1.0, PACKET) for bb in bufs], "-",
                color="C3", lw=1.2, label="Westwood+ idle-time model")
        for p, m, c in (("NewReno", "o", "C0"), ("Westwood+", "s", "C3")):
            d = df[(df.protocol == p) & (df.rtt_ms == rtt)]
            ax.plot(d.buffer_bdp, d.utilization, m, color=c, mfc="none", ms=7, label=f"{p} (simulation)")
        ax.axvline(an.reno_full_utilization_buffer(F4_C, rtt / 1e3, 1.0, PACKET) / bdp, ls="--", color="gray",
                   lw=0.8, label="B = C RTT_m + eps")
        ax.set_title(f"RTT_m = {rtt} ms (BDP = {bdp} packets)")
        ax.set_xlabel("buffer (fraction of BDP)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("link utilization")
    axes[0].set_ylim(0.7, 1.01)
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle("Fig. 4: one flow, C = 40 Mbit/s" + (" [QUICK MODE]" if setup.quick else ""))
    fig.tight_layout()
    path = save_figure(fig, out, "fig4.png")
    return {"fig4": df}, files + [path]


def _fig5(setup: Setup, res: dict, out: str) -> tuple[dict, list]:
    from tcplab.analysis import path_rtt_s

    from .common import cwnd_queue_figure

    files = []
    bdp = _bdp(F4_C, 100)
    for p, (a, _, _) in PROTOCOLS.items():
        panels = []
        for col, b in enumerate((1.0, 0.1)):
            r = res[f"f5|{p}|{b}"]
            buf = buffer_packets(b, bdp)
            # Zero access delay: the path's RTT is RTT_m; computed from the run's own scenario all the same.
            sc = _dumbbell(PROTOCOLS, p, 1, F4_C, 100, buf, setup.f5_duration, 0.0, "0.05s", "0ms")
            panels.append({"label": f"({'ab'[col]}) B = {b:g} BDP ({buf} packets)", "time": r["trace_time"],
                           "cwnd": r["cwnd"], "queue_time": r["queue_time"], "queue": r["queue"],
                           "capacity_bps": F4_C, "packet_bytes": PACKET, "buffer_packets": buf,
                           "path_rtt_s": path_rtt_s(sc)})
        fig = cwnd_queue_figure(panels, f"Fig. 5: {p}, one flow, C = 40 Mbit/s, RTT_m = 100 ms"
                                + (" [QUICK MODE]" if setup.quick else ""), clip=1.25)
        files.append(save_figure(fig, out, f"fig5_{a}.png"))
    return {}, files


def _seeds_text(n: int) -> str:
    return (f" Mean over {n} seeds (each draws the access delays anew) with its 95 % Student-t interval "
            "(`_ci_low`, `_ci_high` columns; each seed's row in the `_seeds.csv` file)." if n > 1 else
            " One seed.")


def _write_seeds(per, out: str, name: str) -> str:
    path = os.path.join(out, f"{name}_seeds.csv")
    per.to_csv(path, index=False)
    return path


def _fig8(setup: Setup, res: dict, out: str) -> tuple[dict, list]:
    import pandas as pd

    from tcplab import Dumbbell
    from tcplab import analysis as an

    seeds = setup.seeds["fig8"]
    rows = []
    for s in seeds:
        for rtt in F8_RTTS:
            bdp = _bdp(F8_C, rtt)
            # The bound's pipe C RTT_m with the mean path RTT (bottleneck + access delays) of this seed's draw.
            sc = Dumbbell(n_flows=F8_FLOWS, bottleneck_rate=F8_C, rtt=f"{rtt}ms", buffer=1, access_delay="uniform",
                          seed=s, duration="1s")
            mean_rtt = float(np.mean([sc.path_rtt(i) for i in range(F8_FLOWS)]))
            pipe = F8_C * mean_rtt / (8.0 * PACKET)
            for p in PROTOCOLS:
                for b in setup.f8_buffers:
                    r = res[f"f8|{p}|{rtt}|{b}|{s}"]
                    buf = buffer_packets(b, bdp)
                    reno_b = an.reno_desync_utilization_bound(F8_FLOWS, buf, pipe)
                    west_b = an.westwood_desync_utilization_bound(F8_FLOWS)
                    bound = reno_b if p == "NewReno" else west_b
                    rows.append({
                        "protocol": p, "rtt_ms": rtt, "buffer_bdp": b, "buffer_packets": buf, "bdp_packets": bdp,
                        "seed": s, "utilization": r["utilization"], "bound": bound,
                        "at_or_above_bound": r["utilization"] >= bound, "reno_bound": reno_b,
                        "reno_bound_nominal_rtt": an.reno_desync_utilization_bound(F8_FLOWS, buf, bdp),
                        "westwood_bound_derived": west_b,
                        "westwood_bound_printed": an.westwood_desync_utilization_bound(F8_FLOWS, "printed"),
                        "mean_path_rtt_ms": 1e3 * mean_rtt, "total_goodput_mbps": sum(r["goodput_bps"]) / 1e6,
                        "jain_index": an.jain_index(r["goodput_bps"]), "timeouts": sum(r["timeouts"]),
                        "drops": r["drops"], "queue_mean_packets": r["queue_mean_packets"],
                        "duration_s": setup.f8_duration, "quick": setup.quick})
    per = pd.DataFrame(rows)
    by = ["protocol", "rtt_ms", "buffer_bdp"]
    df = seed_summary(per, by, ["utilization", "bound", "reno_bound", "reno_bound_nominal_rtt", "mean_path_rtt_ms",
                                "total_goodput_mbps", "jain_index", "timeouts", "drops", "queue_mean_packets"])
    held = per.groupby(by, sort=False).at_or_above_bound.agg(["sum", "all"]).reset_index()
    df["at_or_above_bound"] = held["all"].values  # in every seed
    df["seeds_at_or_above_bound"] = held["sum"].astype(int).values
    note = (f"{F8_FLOWS} flows, C = 200 Mbit/s, access delays uniform in (0, 10 ms), utilization of the bottleneck "
            "over "
            f"[{setup.f8_measure_start:g}, {setup.f8_duration:g}] s. `bound`: eq. 9 for NewReno (pipe C x mean path "
            "RTT of each seed's delays), erf(sqrt(3n/2)) for Westwood+; `at_or_above_bound`: in every seed."
            + _seeds_text(len(seeds)) + _qnote(setup))
    files = write_table(df, out, "fig8", "mv-buffers Fig. 8: 200 flows, utilization against buffer", note)
    files.append(_write_seeds(per, out, "fig8"))
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    for ax, rtt in zip(axes, F8_RTTS, strict=True):
        bdp = _bdp(F8_C, rtt)
        d0 = df[df.rtt_ms == rtt]
        pipe = F8_C * d0.mean_path_rtt_ms.iloc[0] / 1e3 / (8.0 * PACKET)
        xs = np.geomspace(min(setup.f8_buffers) * 0.8, max(setup.f8_buffers) * 1.1, 200)
        ax.plot(xs, [an.reno_desync_utilization_bound(F8_FLOWS, x * bdp, pipe) for x in xs], "-", color="C0",
                label="Reno lower bound (eq. 9, sqrt(n))")
        ax.plot(xs, [an.westwood_desync_utilization_bound(F8_FLOWS)] * len(xs), "--", color="C3",
                label="Westwood+ lower bound erf(sqrt(3n/2))")
        for p, m, c in (("NewReno", "o", "C0"), ("Westwood+", "s", "C3")):
            d = d0[d0.protocol == p]
            seed_points(ax, list(d.buffer_bdp),
                        [per_seed(per, {"protocol": p, "rtt_ms": rtt, "buffer_bdp": b}, "utilization")
                         for b in d.buffer_bdp], d.utilization, d.utilization_ci_low, d.utilization_ci_high,
                        marker=m, ls="-", color=c, mfc="none", ms=7, lw=0.8, label=f"{p} (simulation)")
        ax.set_xscale("log")
        ax.set_title(f"RTT = {rtt} ms (BDP = {bdp} packets)")
        ax.set_xlabel("buffer (fraction of BDP, log scale)")
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("link utilization")
    axes[0].set_ylim(min(0.9, float(per.utilization.min()) - 0.02), 1.01)  # (the points, not a wide interval)
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"Fig. 8: {F8_FLOWS} flows, C = 200 Mbit/s"
                 + (f"; mean and 95 % CI over {len(seeds)} seeds (dots: each seed)" if len(seeds) > 1 else "")
                 + (" [QUICK MODE]" if setup.quick else ""))
    fig.tight_layout()
    path = save_figure(fig, out, "fig8.png")
    return {"fig8": df}, files + [path]


def _real(setup: Setup, res: dict, out: str) -> tuple[dict, list]:
    import pandas as pd

    from tcplab.analysis import jain_index

    bdp = _bdp(REAL_C, REAL_RTT)
    seeds = setup.seeds["real"]
    rows = []
    for s in seeds:
        for p in REAL_PROTOCOLS:
            for b in setup.real_buffers:
                r = res[f"real|{p}|{b}|{s}"]
                g = r["goodput_bps"]
                row = {"protocol": p, "buffer_bdp": b, "buffer_packets": buffer_packets(b, bdp), "seed": s,
                       "utilization": r["utilization"], "total_goodput_mbps": sum(g) / 1e6,
                       "jain_index": jain_index(g)}
                for i, x in enumerate(g):
                    row[f"flow{i + 1}_mbps"] = x / 1e6
                row.update({"timeouts": sum(r["timeouts"]), "drops": r["drops"],
                            "duration_s": setup.real_duration, "quick": setup.quick})
                rows.append(row)
    per = pd.DataFrame(rows)
    df = seed_summary(per, ["protocol", "buffer_bdp"], ["utilization", "total_goodput_mbps", "jain_index",
                                                        *[f"flow{i + 1}_mbps" for i in range(REAL_FLOWS)],
                                                        "timeouts", "drops"])
    note = (f"{REAL_FLOWS} flows, C = 1 Gbit/s, bottleneck RTT {REAL_RTT} ms plus access delays uniform in (0, 10 ms), "
            f"goodput over [{setup.real_measure_start:g}, {setup.real_duration:g}] s, Linux-default variants with SACK."
            + _seeds_text(len(seeds)) + " Flow i's path differs from seed to seed (its delays are drawn anew), so "
            "`flowI_mbps` averages different paths; Jain's index and the totals compare." + _qnote(setup))
    files = write_table(df, out, "real", "mv-buffers: simulated analog of the 1 Gbit/s real experiment", note)
    files.append(_write_seeds(per, out, "real"))
    plt = pyplot()
    nb = len(setup.real_buffers)
    fig, axes = plt.subplots(len(REAL_PROTOCOLS), nb, figsize=(6.5 * nb, 7), sharex=True, sharey=True, squeeze=False)
    for i, p in enumerate(REAL_PROTOCOLS):
        for j, b in enumerate(setup.real_buffers):
            r = res[f"real|{p}|{b}|1"]
            ax = axes[i][j]
            t = np.asarray(r["series_time"])
            tot = np.zeros(len(t))
            for k, s in enumerate(r["series_bps"]):
                ax.plot(t, np.asarray(s) / 1e6, lw=0.7, label=f"flow {k + 1}")
                tot += np.asarray(s)
            ax.plot(t, tot / 1e6, lw=0.9, color="k", label="total")
            ax.set_title(f"{p}, B = {b:g} BDP ({buffer_packets(b, bdp)} packets)")
            ax.grid(alpha=0.3)
            if j == 0:
                ax.set_ylabel("throughput (Mbit/s)")
            if i == len(REAL_PROTOCOLS) - 1:
                ax.set_xlabel("time (s)")
    # below the panels: inside, it covers the curves' start
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=REAL_FLOWS + 1, fontsize=9,
               frameon=False)
    fig.suptitle(f"Real-experiment analog: {REAL_FLOWS} flows, 1 Gbit/s, RTT {REAL_RTT} ms"
                 + (f" (seed 1 of {len(seeds)}; every seed's goodput in real.csv)" if len(seeds) > 1 else "")
                 + (" [QUICK MODE]" if setup.quick else ""))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    path = save_figure(fig, out, "real.png")
    return {"real": df}, files + [path]


# ---------------------------------------------------------------- driver

def _setup(quick: bool, variants: str = "paper", seeds: int | None = None, setup: str = "paper") -> Setup:
    """``variants``: only the paper's; ``seeds``: seeds of Fig. 8 and real (default ``SEEDS``, quick
    ``QUICK_SEEDS``); ``setup``: the TCP setup, ``"paper"`` or ``"linux"`` (module notes)."""
    if variants != "paper":
        raise ValueError("variants: mv-buffers uses the paper's Westwood+ in the simulations and the Linux "
                         "defaults in the real-experiment analog; --variants linux is not supported")
    return Setup(quick, seeds, setup)


PAPER = Paper(
    key="mv-buffers",
    summary="Mascolo & Vacirca, the buffer a TCP flow needs (Figs. 4, 5, 8 and a real-experiment analog)",
    title="mv-buffers reproduction",
    items=(Item("fig4", _fig4, lambda s, items: _fig4_jobs(s)),
           Item("fig5", _fig5, lambda s, items: _fig5_jobs(s)),
           Item("fig8", _fig8, lambda s, items: _fig8_jobs(s)),
           Item("real", _real, lambda s, items: _real_jobs(s))),
    setup=_setup,
    scenario=("Dumbbell of docs/papers/mv-buffers.md: n senders on access links of 10 x C to R1, "
              "bottleneck R1 -> R2 of capacity C and round-trip propagation delay RTT, drop-tail buffer B at R1 "
              "(excluding the packet in service), 1500-byte packets (ns-2 accounting), 40-byte ACKs, bulk flows. "
              "Single-flow items (Figs. 4, 5) use zero access delay so that RTT_m is the nominal RTT; the "
              "many-flow items draw every access link's delay uniformly in (0, 10 ms) from the seed. See "
              "docs/experiments/mv-buffers.md.\n\n"),
    quick_text="QUICK MODE: every run is shortened; these are not the paper's results.",
    options=(
        Option("variants", "algorithm variants: only the paper's (its Westwood+; the real-experiment analog runs "
                           "the Linux defaults)", choices=("paper",)),
        SEEDS_OPTION,
        SETUP_OPTION,
    ),
    refused={"recovery": "mv-buffers fixes the recovery per item (NewReno in the simulations, SACK in the "
                         "real-experiment analog)"},
)

#: ``tcplab.experiments.mv_buffers.reproduce(items=..., quick=..., out=..., seeds=..., setup=...)``
reproduce = PAPER.reproduce
#: The items' names, in the paper's order.
ITEMS = PAPER.item_names
