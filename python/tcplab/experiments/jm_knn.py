"""jm-knn: Jena & Mishra, a k-NN packet-drop guesser for high-speed
congestion control (docs/papers/jm-knn.md).

Items:

- ``throughput``: the paper's scenario (one link X -> Y, 100 Mbit/s, 64 ms
  one way, 1448-byte segments, 220-packet buffer, 50 s, one CUBIC flow) for
  random loss p in {0.1, 0.01, 0.001} and none. For each p a figure of
  throughput against time (one sample per second) for CUBIC on the error-free
  link, CUBIC with random loss and CUBIC + k-NN with random loss, each with
  its 5-sample moving average; a summary table of the mean throughput per p
  and case (over seeds).
- ``cost``: what the guesser costs when loss IS congestion: no random loss,
  a small buffer, CUBIC with and without the guesser, each competing with a
  Reno flow (throughputs and Jain's index), at the paper's buffer too.
- ``sensitivity``: the guesser's parameters (max_size, range, ack_every,
  drop_flag, timeouts) varied one at a time around the defaults: throughput
  at p = 0.01 and the cost run's fairness.

Topology: tcplab's generic Scenario with two hosts X and Y and a duplex link
(the paper's two nodes): X-Y carries the data, its drop-tail queue of 220
packets and the random loss; Y-X carries the ACKs, loss-free and unlimited.
Random loss is in the data direction only: the paper speaks of dropped
packets, and lost ACKs would mostly be hidden by cumulative ACKs anyway.

The paper ran ns-2 with TCP/Linux. ``variants="paper"`` (default) runs the
CUBIC module TCP/Linux carries (Linux 2.6.22's v2.1: tcplab's ``2005``
engine with initial_ssthresh 0), ``"linux"`` today's (v2.3, HyStart).
``setup="paper"`` (default) gives every flow Agent/TCP/Linux's defaults
(initial window 2, RTO 3 s / 0.2 s / 120 s;
:func:`tcplab.experiments.settings.ns2_tcp_linux`), ``"linux"`` tcplab's
(initial window 10). index.md lists every value with its source.

The figures carry the paper's numbers: Figs. 1 and 4 are p = 0.001, Fig. 2
p = 0.1, Fig. 3 p = 0.01; the error-free figure is tcplab's own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import runner, settings
from .common import pyplot, save_figure, write_table
from .paper import SETUP_OPTION, Item, Option, Paper

if TYPE_CHECKING:  # pragma: no cover
    from ..results import Results


RATE = 100e6
DELAY = 0.064
BUFFER = 220
PAYLOAD = 1448
HEADER = 40
DURATION = 50.0
LOSSES = [0.1, 0.01, 0.001]
#: CUBIC as ns-2's TCP/Linux carries it (tcp/linux/src/tcp_cubic.c, "from linux-2.6.22.6": v2.1, beta
#: 819/1024, max_increment 16, initial_ssthresh 0, no HyStart), with SACK recovery as TCP/Linux.
CUBIC: tuple[str, dict[str, Any]] = ("cubic", {"variant": "2005", "initial_ssthresh": 0})
#: Today's Linux CUBIC (tcp_cubic.c v2.3, HyStart on): ``variants="linux"``.
CUBIC_LINUX: tuple[str, dict[str, Any]] = ("cubic", {})
CUBIC_WHY = ("the module ns-2's TCP/Linux carries, tcp_cubic.c v2.1 of Linux 2.6.22.6 (beta 819/1024, C = 0.4, "
             "max_increment 16, initial_ssthresh 0, no HyStart): tcplab's 2005 (v2.0) engine with initial_ssthresh "
             "0; v2.1's fixed cnt = 50 before the first loss and its packets-per-ACK ratio are not modelled "
             "(docs/algorithms/cubic.md)")
#: The paper's simulator.
PAPER_SETUP = settings.ns2_tcp_linux("the paper ran ns-2 with TCP/Linux")
STATED = (settings.SetupValue("segment", "1448 B of payload + 40 B of headers", "the paper: 1448-byte packets (the "
                                                                                  "Linux MSS with timestamps)",
                              flow=False),
          settings.SetupValue("goodput", "payload", "choice: the paper's 1448-byte packets are the payload",
                              flow=False))
#: The paper's figures: p -> their numbers (the error-free figure is tcplab's own).
FIGURES = {"0.001": (1, 4), "0.1": (2,), "0.01": (3,)}
RENO: tuple[str, dict[str, Any]] = ("newreno", {})
RECOVERY = "sack"
#: The guesser with tcplab's defaults (max_size 500, range 0.1, ack_every 1, drop_flag answer, timeouts classify).
KNN = {"kind": "knn", "params": {}}
SENSITIVITY_P = 0.01
COST_BUFFERS = [50, BUFFER]
SEED = 1

CASES = {"cubic_clean": "CUBIC, error-free link", "cubic_loss": "CUBIC, random loss",
         "knn_loss": "CUBIC + k-NN, random loss", "knn_clean": "CUBIC + k-NN, error-free link"}


class Setup:
    def __init__(self, quick: bool, variants: str = "paper", setup: str = "paper"):
        if variants not in ("paper", "linux"):
            raise ValueError(f"variants: must be 'paper' or 'linux', got {variants!r}")
        self.quick = quick
        self.variants = variants
        self.cubic = CUBIC if variants == "paper" else CUBIC_LINUX
        self.tcp = settings.choose(setup, PAPER_SETUP, "jm-knn")
        self.seeds = [1] if quick else list(range(1, 11))
        self.cost_duration = 60.0 if quick else 300.0
        self.cost_window = 40.0 if quick else 250.0
        self.sens_seeds = [1] if quick else list(range(1, 6))
        self.grid: dict[str, list[float | str]]
        if quick:
            self.grid = {"max_size": [50, 500], "range": [0.02, 0.1], "ack_every": [1, 16]}
        else:
            self.grid = {"max_size": [50, 150, 500, 1500, 5000], "range": [0.02, 0.05, 0.1, 0.2, 0.5],
                         "ack_every": [1, 4, 16, 64], "drop_flag": ["answer", "congestion"],
                         "timeouts": ["classify", "congestion"]}

    def describe(self) -> str:
        q = " (QUICK MODE: fewer seeds, shorter cost runs, smaller grid)" if self.quick else ""
        runs = [
            f"- link X -> Y {RATE / 1e6:g} Mbit/s, {DELAY * 1e3:g} ms one way (RTT {2 * DELAY * 1e3:g} ms), "
            f"drop-tail {BUFFER} packets; segments {PAYLOAD} B payload + {HEADER} B headers; ACKs 40 B, one per "
            f"segment; payload accounting{q}",
            f"- {DURATION:g} s runs, throughput sampled every second; seeds {self.seeds}",
            f"- random loss p in {LOSSES} and none, Bernoulli, data direction only",
            f"- cost: no random loss, buffers {COST_BUFFERS} packets, {self.cost_duration:g} s, throughput over the "
            f"last {self.cost_window:g} s; sensitivity at p = {SENSITIVITY_P}, seeds {self.sens_seeds}",
            f"- algorithm variants: {self.variants}",
        ]
        why = CUBIC_WHY if self.variants == "paper" else "today's Linux CUBIC, v2.3 with HyStart (--variants linux)"
        protocols = [settings.Protocol("CUBIC", *self.cubic, RECOVERY, why),
                     settings.Protocol("Reno (cost item)", *RENO, RECOVERY, "Reno window rules with the same SACK "
                                                                             "recovery, so only the congestion "
                                                                             "control differs")]
        other = ["- the k-NN guesser: the core's loss classifier `knn`, attached to CUBIC, with tcplab's defaults:",
                 "  - max_size = 500, range = 0.1 (distances in the (time, cwnd) plane, normalized by the history's "
                 "time span and its largest cwnd), ack_every = 1, drop_flag = answer, timeouts = classify",
                 "  - the `sensitivity` item varies each in turn",
                 "- the moving average: the current sample and the 4 before it",
                 "- the cost scenario: CUBIC (with or without the guesser) against Reno, both from t = 0, the same RTT"]
        return settings.settings_markdown(runs, self.tcp.with_values(*STATED), protocols, other)

    def scenario(self, p: float | None, flows: Sequence[tuple[tuple[str, dict] | None, dict | None]],
                 **kw: Any):
        """:func:`scenario` with this setup's flow options; a flow's algorithm None is this setup's CUBIC."""
        return scenario(p, [(self.cubic if a is None else a, lc) for a, lc in flows],
                        flow_options=self.tcp.flow_options(), **kw)


def scenario(p: float | None, flows: Sequence[tuple[tuple[str, dict], dict | None]], buffer: int = BUFFER,
             duration: float = DURATION, measure_window: float | None = None, seed: int = SEED,
             sample_interval: str = "1s", flow_options: dict | None = None):
    """The paper's two-node scenario: ``flows`` is a list of ((algorithm,
    params), loss_classifier or None), all from X to Y; ``p`` the Bernoulli
    loss probability on X-Y (None: no random loss); ``flow_options``: more
    :class:`~tcplab.scenario.Flow` options for every flow (the TCP setup)."""
    from tcplab.scenario import Flow, Link, Node, Route, Scenario

    links = [Link("X-Y", "X", "Y", RATE, DELAY, int(buffer), loss=p if p else None),
             Link("Y-X", "Y", "X", RATE, DELAY, None)]
    fl = [Flow("X", "Y", name=f"flow{i + 1}", algorithm=a, params=dict(pr), recovery=RECOVERY,
               packet_size=PAYLOAD + HEADER, header_size=HEADER, loss_classifier=lc, **(flow_options or {}))
          for i, ((a, pr), lc) in enumerate(flows)]
    return Scenario(nodes=[Node("X"), Node("Y")], links=links, flows=fl,
                    routes=[Route("X", "Y", "X-Y"), Route("Y", "X", "Y-X")], duration=f"{duration}s",
                    measure_window=f"{measure_window or duration}s", sample_interval=sample_interval, seed=seed,
                    bottleneck=["X-Y"], name="jm-knn")


# ---------------------------------------------------------------- extract (runs in the workers)

_FLOW_COLS = ["goodput_bps", "data_packets_sent", "data_packets_received", "data_packets_lost",
              "data_packets_dropped", "retransmits", "timeouts", "fast_recoveries"]
_KNN_COLS = ["loss_events", "loss_events_ignored"]


def extract_jm_knn(run: Results, args: dict) -> dict:
    """Per-flow counters (the classifier's ``loss_events`` /
    ``loss_events_ignored`` when the core reports them, else None), the
    bottleneck's drops and losses, and each flow's throughput per sample
    (bit/s, from the delivered-bytes series)."""
    flows = run.flows
    out: dict[str, Any] = {"names": list(flows["name"])}
    for c in _FLOW_COLS:
        out[c] = [float(x) for x in flows[c]]
    for c in _KNN_COLS:
        out[c] = [float(x) for x in flows[c]] if c in flows else None
    b = args["bottleneck"]
    out["utilization"] = float(runner.link_value(run, b, "utilization"))
    out["drops"] = int(runner.link_value(run, b, "drops"))
    out["losses"] = int(runner.link_value(run, b, "losses"))
    out["packets_in"] = int(runner.link_value(run, b, "packets_in"))
    out["bottleneck_packets"] = int(runner.link_value(run, b, "data_packets_out"))
    out["wall_s"] = float(run.meta["wall_s"])
    out["series_time"], out["series_bps"] = runner.goodput_series(run, len(out["names"]))
    return out


runner.EXTRACTS["jm_knn"] = extract_jm_knn


def _job(key: str, sc) -> tuple[str, dict, str, dict]:
    spec = sc.to_spec()
    for f in spec["flows"]:  # a null classifier is the core's default; older cores reject the key
        if f.get("loss_classifier", 0) is None:
            del f["loss_classifier"]
    return key, spec, "jm_knn", {"bottleneck": "X-Y"}


def _pkey(p: float | None) -> str:
    return "none" if not p else f"{p:g}"


def moving_average(samples: Sequence[float] | np.ndarray, n: int = 5) -> np.ndarray:
    """Trailing mean of the last ``n`` samples (the current one and the n-1
    before it); NaN for the first n-1 samples."""
    x = np.asarray(samples, dtype=float)
    out = np.full(len(x), np.nan)
    if len(x) >= n:
        c = np.cumsum(np.insert(x, 0, 0.0))
        out[n - 1:] = (c[n:] - c[:-n]) / n
    return out


# ---------------------------------------------------------------- jobs per item

def _throughput_jobs(setup: Setup) -> list:
    jobs = []
    for s in setup.seeds:
        jobs.append(_job(f"tp|none|cubic_clean|{s}", setup.scenario(None, [(None, None)], seed=s)))
        jobs.append(_job(f"tp|none|knn_clean|{s}", setup.scenario(None, [(None, KNN)], seed=s)))
        for p in LOSSES:
            jobs.append(_job(f"tp|{_pkey(p)}|cubic_loss|{s}", setup.scenario(p, [(None, None)], seed=s)))
            jobs.append(_job(f"tp|{_pkey(p)}|knn_loss|{s}", setup.scenario(p, [(None, KNN)], seed=s)))
    return jobs


def _cost_jobs(setup: Setup, knn: dict | None = None, tag: str = "") -> list:
    jobs = []
    for b in COST_BUFFERS if not tag else COST_BUFFERS[:1]:
        for name, lc in (("cubic", None), ("knn", knn or KNN)):
            if tag and name == "cubic":
                continue
            sc = setup.scenario(None, [(None, lc), (RENO, None)], buffer=b, duration=setup.cost_duration,
                          measure_window=setup.cost_window)
            jobs.append(_job(f"cost{tag}|{b}|{name}", sc))
    return jobs


def _sens_settings(setup: Setup) -> list[tuple[str, Any, dict]]:
    """(parameter, value, params) one at a time around the defaults; the
    default setting first, once."""
    out: list[tuple[str, Any, dict]] = [("default", "", {})]
    defaults = {"max_size": 500, "range": 0.1, "ack_every": 1, "drop_flag": "answer", "timeouts": "classify"}
    for k, vals in setup.grid.items():
        for v in vals:
            if v != defaults[k]:
                out.append((k, v, {k: v}))
    return out


def _sens_jobs(setup: Setup) -> list:
    jobs = []
    for k, v, params in _sens_settings(setup):
        lc = {"kind": "knn", "params": params}
        tag = f"{k}={v}"
        for s in setup.sens_seeds:
            jobs.append(_job(f"sens|{tag}|{s}", setup.scenario(SENSITIVITY_P, [(None, lc)], seed=s)))
        jobs += _cost_jobs(setup, lc, tag="s:" + tag)
    for s in setup.sens_seeds:  # the baseline without the guesser
        jobs.append(_job(f"sens|none|{s}", setup.scenario(SENSITIVITY_P, [(None, None)], seed=s)))
    return jobs


# ---------------------------------------------------------------- outputs

def _qnote(setup: Setup) -> str:
    return " **QUICK MODE**: fewer seeds and shorter runs, not the full reproduction." if setup.quick else ""


def _ratio(a: list | None, b: list | None, i: int = 0) -> float:
    if a is None or b is None or b[i] == 0:
        return float("nan")
    return a[i] / b[i]


def _throughput(setup: Setup, res: dict, out: str) -> tuple[dict, list]:
    import pandas as pd

    rows = []
    for pk in ["none"] + [_pkey(p) for p in LOSSES]:
        cases = ("cubic_clean", "knn_clean") if pk == "none" else ("cubic_clean", "cubic_loss", "knn_loss")
        for case in cases:
            for s in setup.seeds:
                r = res[f"tp|none|{case}|{s}"] if case == "cubic_clean" else res[f"tp|{pk}|{case}|{s}"]
                sent = r["data_packets_sent"][0]
                # Packets that reached the lossy wire's end: lost there or received by Y.
                tried = r["data_packets_lost"][0] + r["data_packets_received"][0]
                rows.append({
                    "p": pk, "case": case, "seed": s, "throughput_mbps": r["goodput_bps"][0] / 1e6,
                    "measured_loss_rate": r["data_packets_lost"][0] / tried if tried else float("nan"),
                    "data_packets_sent": sent, "data_packets_lost": r["data_packets_lost"][0],
                    "queue_drops": r["drops"], "retransmits": r["retransmits"][0], "timeouts": r["timeouts"][0],
                    "fast_recoveries": r["fast_recoveries"][0],
                    "loss_events": (r["loss_events"] or [float("nan")])[0],
                    "loss_events_ignored": (r["loss_events_ignored"] or [float("nan")])[0],
                    "ignored_fraction": _ratio(r["loss_events_ignored"], r["loss_events"]),
                    "quick": setup.quick})
    runs = pd.DataFrame(rows)
    g = runs.groupby(["p", "case"], sort=False)
    summary = g.agg(throughput_mbps=("throughput_mbps", "mean"), throughput_sd=("throughput_mbps", "std"),
                    measured_loss_rate=("measured_loss_rate", "mean"), queue_drops=("queue_drops", "mean"),
                    timeouts=("timeouts", "mean"), loss_events=("loss_events", "mean"),
                    ignored_fraction=("ignored_fraction", "mean"), seeds=("seed", "count")).reset_index()
    summary["case_label"] = [CASES[c] for c in summary["case"]]
    gain = []
    for _, row in summary.iterrows():
        base = summary[(summary.p == row.p) & (summary.case == ("cubic_loss" if row.p != "none" else "cubic_clean"))]
        gain.append(row.throughput_mbps / base.throughput_mbps.iloc[0] if len(base) else float("nan"))
    summary["vs_cubic_same_loss"] = gain
    files = write_table(runs, out, "throughput_runs", "jm-knn: every run of the throughput item", _qnote(setup))
    note = (f"Mean throughput (payload, Mbit/s) over the {DURATION:g} s run, mean and standard deviation over "
            f"{len(setup.seeds)} seed(s). `vs_cubic_same_loss`: ratio to plain CUBIC at the same p (k-NN gain). "
            "`ignored_fraction`: loss events the guesser judged not congestion." + _qnote(setup))
    files += write_table(summary, out, "summary", "jm-knn: mean throughput per loss rate and case", note)
    plt = pyplot()
    s0 = setup.seeds[0]
    for pk in [_pkey(p) for p in LOSSES] + ["none"]:
        fig, ax = plt.subplots(figsize=(9, 5))
        cases = ("cubic_clean", "knn_clean") if pk == "none" else ("cubic_clean", "cubic_loss", "knn_loss")
        for case in cases:
            r = res[f"tp|none|{case}|{s0}"] if case == "cubic_clean" else res[f"tp|{pk}|{case}|{s0}"]
            t = np.asarray(r["series_time"])
            x = np.asarray(r["series_bps"][0]) / 1e6
            col = {"cubic_clean": "C0", "cubic_loss": "C1"}.get(case, "C2")
            ax.plot(t, x, {"C0": "o-", "C1": "s-", "C2": "^-"}[col], color=col, ms=3, lw=0.6, alpha=0.55,
                    label=CASES[case])
            ax.plot(t, moving_average(x), "-", color=col, lw=2, label=f"{CASES[case]}, 5-sample mean")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("throughput (Mbit/s)")
        ax.set_ylim(0, RATE / 1e6 * 1.05)
        ax.grid(alpha=0.3)
        fig.legend(*ax.get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=8, frameon=False)
        numbers = FIGURES.get(pk, ())
        label = ("Figs. " + " and ".join(map(str, numbers)) if len(numbers) > 1 else f"Fig. {numbers[0]}") \
            if numbers else "Error-free link (no figure of the paper)"
        ax.set_title(f"{label}: one CUBIC flow, 100 Mbit/s, RTT 128 ms, B = {BUFFER}, "
                     + ("no random loss" if pk == "none" else f"p = {pk}") + f" (seed {s0})"
                     + (" [QUICK MODE]" if setup.quick else ""))
        fig.tight_layout(rect=(0, 0.1, 1, 1))  # the legend below the axes covers no data
        name = "_".join(f"fig{n}" for n in numbers) + f"_p{pk}.png" if numbers else f"throughput_p{pk}.png"
        path = save_figure(fig, out, name)
        files.append(path)
    return {"summary": summary, "runs": runs}, files


def _cost_row(r: dict, b: int, guesser: bool) -> dict:
    from tcplab.analysis import jain_index

    g = r["goodput_bps"]
    return {"buffer_packets": b, "cubic_has_knn": guesser, "cubic_mbps": g[0] / 1e6, "reno_mbps": g[1] / 1e6,
            "cubic_share": g[0] / sum(g) if sum(g) else float("nan"), "jain_index": jain_index(g),
            "utilization": r["utilization"], "queue_drops": r["drops"], "cubic_retransmits": r["retransmits"][0],
            "reno_retransmits": r["retransmits"][1], "cubic_timeouts": r["timeouts"][0],
            "cubic_loss_events": (r["loss_events"] or [float("nan")])[0],
            "cubic_loss_events_ignored": (r["loss_events_ignored"] or [float("nan")])[0],
            "cubic_ignored_fraction": _ratio(r["loss_events_ignored"], r["loss_events"])}


def _cost(setup: Setup, res: dict, out: str) -> tuple[dict, list]:
    import pandas as pd

    rows = []
    for b in COST_BUFFERS:
        for name in ("cubic", "knn"):
            row = _cost_row(res[f"cost|{b}|{name}"], b, name == "knn")
            row["quick"] = setup.quick
            rows.append(row)
    df = pd.DataFrame(rows)
    note = (f"No random loss: every loss is a queue overflow. CUBIC (flow 1, with or without the guesser) and Reno "
            f"(flow 2) from X to Y, both from t = 0, SACK recovery; throughput over the last {setup.cost_window:g} s "
            f"of {setup.cost_duration:g} s." + _qnote(setup))
    files = write_table(df, out, "cost", "jm-knn: the guesser's cost when losses are congestion", note)
    plt = pyplot()
    fig, axes = plt.subplots(len(COST_BUFFERS), 2, figsize=(13, 3.6 * len(COST_BUFFERS)), sharex=True, sharey=True,
                             squeeze=False)
    for i, b in enumerate(COST_BUFFERS):
        for j, name in enumerate(("cubic", "knn")):
            r = res[f"cost|{b}|{name}"]
            ax = axes[i][j]
            t = np.asarray(r["series_time"])
            for k, lab in enumerate(("CUBIC + k-NN" if name == "knn" else "CUBIC", "Reno")):
                x = np.asarray(r["series_bps"][k]) / 1e6
                ax.plot(t, x, lw=0.5, alpha=0.5, color=f"C{k}")
                ax.plot(t, moving_average(x), lw=1.6, color=f"C{k}", label=f"{lab} (5-sample mean)")
            ax.set_title(f"B = {b} packets, {'CUBIC + k-NN' if name == 'knn' else 'CUBIC'} vs Reno")
            ax.grid(alpha=0.3)
            if j == 0:
                ax.set_ylabel("throughput (Mbit/s)")
            if i == len(COST_BUFFERS) - 1:
                ax.set_xlabel("time (s)")
    fig.suptitle("jm-knn: cost of the guesser when loss is congestion (no random loss)"
                 + (" [QUICK MODE]" if setup.quick else ""))
    # One legend below the panels (the curves fill every panel's corners).
    from matplotlib.lines import Line2D

    fig.legend([Line2D([], [], color="C0", lw=1.6), Line2D([], [], color="C1", lw=1.6),
                Line2D([], [], color="0.5", lw=0.5)],
               ["flow 1: CUBIC (left), CUBIC + k-NN (right), 5-sample mean", "flow 2: Reno, 5-sample mean",
                "thin lines: each sample"], loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    path = save_figure(fig, out, "cost.png")
    return {"cost": df}, files + [path]


def _sensitivity(setup: Setup, res: dict, out: str) -> tuple[dict, list]:
    import pandas as pd

    base = float(np.mean([res[f"sens|none|{s}"]["goodput_bps"][0] for s in setup.sens_seeds])) / 1e6
    rows = []
    b = COST_BUFFERS[0]
    for k, v, params in _sens_settings(setup):
        tag = f"{k}={v}"
        rs = [res[f"sens|{tag}|{s}"] for s in setup.sens_seeds]
        tp = [r["goodput_bps"][0] / 1e6 for r in rs]
        cost = _cost_row(res[f"costs:{tag}|{b}|knn"], b, True)
        rows.append({"parameter": k, "value": str(v), "params": json.dumps(params, sort_keys=True),
                     f"throughput_mbps_p{SENSITIVITY_P:g}": float(np.mean(tp)),
                     "throughput_sd": float(np.std(tp, ddof=1)) if len(tp) > 1 else float("nan"),
                     "gain_vs_cubic": float(np.mean(tp)) / base if base else float("nan"),
                     "ignored_fraction": float(np.nanmean([_ratio(r["loss_events_ignored"], r["loss_events"])
                                                           for r in rs])),
                     f"cost_cubic_mbps_B{b}": cost["cubic_mbps"], f"cost_reno_mbps_B{b}": cost["reno_mbps"],
                     f"cost_jain_B{b}": cost["jain_index"], "cost_ignored_fraction": cost["cubic_ignored_fraction"],
                     "quick": setup.quick})
    df = pd.DataFrame(rows)
    note = (f"One parameter at a time around the defaults. Throughput of one CUBIC + k-NN flow at p = "
            f"{SENSITIVITY_P:g} (mean over {len(setup.sens_seeds)} seed(s); plain CUBIC: {base:.2f} Mbit/s), and the "
            f"cost run (no random loss, B = {b} packets, against Reno)." + _qnote(setup))
    return {"sensitivity": df}, write_table(df, out, "sensitivity", "jm-knn: sensitivity to the guesser's parameters",
                                             note)


# ---------------------------------------------------------------- driver

def _setup(quick: bool, variants: str = "paper", setup: str = "paper") -> Setup:
    """``variants``: CUBIC as TCP/Linux carried it (``"paper"``) or today's (``"linux"``); ``setup``: the TCP
    setup (module notes)."""
    return Setup(quick, variants, setup)


PAPER = Paper(
    key="jm-knn",
    summary="a KNN loss classifier on a lossy X-Y link: throughput, cost and sensitivity",
    title="jm-knn reproduction",
    items=(Item("throughput", _throughput, lambda s, items: _throughput_jobs(s)),
           Item("cost", _cost, lambda s, items: _cost_jobs(s)),
           Item("sensitivity", _sensitivity, lambda s, items: _sens_jobs(s))),
    setup=_setup,
    scenario="Two hosts X and Y joined by a duplex link (tcplab's generic Scenario, the paper's topology); "
             "random loss on X -> Y only. See docs/experiments/jm-knn.md.",
    quick_text="QUICK MODE: fewer seeds and shorter runs; not the full reproduction.",
    options=(
        Option("variants", "CUBIC as TCP/Linux carried it (paper, the default) or today's Linux CUBIC",
               choices=("paper", "linux")),
        SETUP_OPTION,
    ),
    refused={"recovery": "jm-knn uses SACK (TCP/Linux), the only setting supported"},
)

#: ``tcplab.experiments.jm_knn.reproduce(items=..., quick=..., out=..., variants=..., setup=...)``
reproduce = PAPER.reproduce
#: The items' names, in the paper's order.
ITEMS = PAPER.item_names
