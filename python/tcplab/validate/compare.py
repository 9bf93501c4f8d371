"""The comparison of ``tcplab validate``: the fidelity table of a kernel run against tcplab's.

:func:`compare` (one flow) and :func:`compare_flows` (one or several) read
both sides (:mod:`tcplab.validate.sides`), apply the same metric functions
(:mod:`tcplab.validate.metrics`) with the same window and loss-event gap, and
judge each row against :data:`TARGETS` (:data:`BBR_TARGETS` for bbr);
:func:`disturbances` names what disturbed the kernel run.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .metrics import (
    BBR_METRICS,
    METRICS,
    bbr_metrics,
    hystart_note,
    loss_event_gap,
    probe_rtt_cadence,
    side_episodes,
    side_metrics,
    steady_window,
)
from .sides import PACKET_SIZE, Side, kernel_side, n_flows_of, read_meta, sim_side

__all__ = [
    "BBR_TARGETS",
    "TARGETS",
    "aggregate_side",
    "bbr_targets",
    "compare",
    "compare_flows",
    "disturbances",
    "is_bbr",
    "jain_index",
]

#: Targets of the issue: metric -> (kind, bound). ``rel``: |rel_error| <= bound;
#: ``rtt``: |tcplab - kernel| <= bound x the path's round-trip propagation delay.
TARGETS: dict[str, tuple[str, float]] = {
    "goodput_bps": ("rel", 0.03),
    "cwnd_mean": ("rel", 0.05),
    "sawtooth_period_s": ("rel", 0.10),
    "startup_peak_cwnd": ("rel", 0.10),
    "first_loss_s": ("rtt", 1.0),
}
#: BBR's targets (the BBR issue): goodput, mean srtt, the ProbeRTT cadence
#: (``abs``: |tcplab - kernel| <= bound seconds) and, at small buffers only
#: (:data:`RETRANS_RATE_MAX_BDP`), the retransmission rate.
BBR_TARGETS: dict[str, tuple[str, float]] = {
    "goodput_bps": ("rel", 0.03),
    "srtt_mean_s": ("rel", 0.10),
    "probe_rtt_interval_s": ("abs", 1.0),
    "retrans_rate": ("rel", 0.25),
}
#: The retransmission rate is judged only where the buffer is at most this
#: many BDPs (the issue's B = 0.1 BDP); at B = BDP BBR's losses are its
#: start-up's, a handful of events, and the rate is reported.
RETRANS_RATE_MAX_BDP = 0.5

#: Disturbance thresholds of the kernel run's forwarder (s).
LATE_P99_LIMIT = 1e-3
LATE_MAX_LIMIT = 5e-3
STALL_LIMIT = 10e-3


# ---------------------------------------------------------------- disturbances of the kernel run

def disturbances(meta: Mapping[str, Any]) -> list[str]:
    """What disturbed the kernel run, from meta.json's forwarder block: the
    forwarder's lateness (p99 over 1 ms, max over 5 ms) and host stalls over
    10 ms, each as a sentence; empty when nothing did. A missing block is
    itself reported (the run cannot be vouched for)."""
    fw = meta.get("forwarder")
    if not isinstance(fw, Mapping):
        return ["meta.json has no forwarder block: the bottleneck's timing was not recorded"]
    out = []
    p99, mx = fw.get("late_p99_s"), fw.get("late_max_s")
    if p99 is not None and p99 > LATE_P99_LIMIT:
        out.append(f"forwarder late: p99 {p99 * 1e3:.3g} ms (limit {LATE_P99_LIMIT * 1e3:g} ms)")
    if mx is not None and mx > LATE_MAX_LIMIT:
        out.append(f"forwarder late: max {mx * 1e3:.3g} ms (limit {LATE_MAX_LIMIT * 1e3:g} ms)")
    stalls = [(float(t), float(length)) for t, length in (fw.get("stalls") or []) if float(length) > STALL_LIMIT]
    if stalls:
        shown = ", ".join(f"{length * 1e3:.3g} ms at {t:.3g} s" for t, length in stalls[:5])
        more = f" and {len(stalls) - 5} more" if len(stalls) > 5 else ""
        out.append(f"host stalls over {STALL_LIMIT * 1e3:g} ms: {shown}{more}")
    return out


# ---------------------------------------------------------------- comparison

def _judge(metric: str, k: float, s: float, rtt_s: float,
           targets: Mapping[str, tuple[str, float]] | None = None) -> tuple[str, bool | None, str]:
    """(target text, ok, note) of one row; ok is None where there is no target."""
    targets = TARGETS if targets is None else targets
    if metric not in targets:
        return "", None, ""
    kind, bound = targets[metric]
    text = {"rel": f"±{bound * 100:g} %", "rtt": f"±{bound:g} RTT", "abs": f"±{bound:g} s"}[kind]
    kf, sf = math.isfinite(k), math.isfinite(s)
    if not kf and not sf:
        return text, None, "not measurable on either side"
    if kf != sf:
        return text, False, f"measurable on the {'kernel' if kf else 'tcplab'} side only"
    if kind == "rel":
        if k == 0:
            return text, s == 0, ""
        return text, abs((s - k) / k) <= bound + 1e-12, ""
    if kind == "abs":
        return text, abs(s - k) <= bound + 1e-12, f"|diff| {abs(s - k):.3g} s"
    return text, abs(s - k) <= bound * rtt_s + 1e-12, f"|diff| {abs(s - k) * 1e3:.3g} ms"


def compare(kernel_dir: str | os.PathLike, result: Any, flow: int = 0):
    """The fidelity table: one row per metric with columns ``metric``, ``unit``,
    ``kernel``, ``tcplab``, ``rel_error`` ((tcplab - kernel) / kernel),
    ``target`` (text; empty = reported, not judged), ``ok`` (bool, or None
    where not judged) and ``note``. Both sides use the same window
    (:func:`steady_window` of the shorter side) and loss-event gap
    (:func:`loss_event_gap` of the kernel's path)."""
    return _compare_sides(kernel_side(kernel_dir), sim_side(result, flow))


def _rows(km: Mapping[str, float], sm: Mapping[str, float], meta: Mapping[str, Any],
          metrics: Sequence[tuple[str, str]], judged: bool = True, notes: Mapping[str, str] | None = None,
          targets: Mapping[str, tuple[str, float]] | None = None) -> list[dict]:
    """Table rows of two sides' metrics; ``judged=False`` reports without targets."""
    rows = []
    for metric, unit in metrics:
        kv, sv = km[metric], sm[metric]
        if math.isfinite(kv) and math.isfinite(sv):
            rel = (sv - kv) / kv if kv != 0 else (0.0 if sv == 0 else math.inf)
        else:
            rel = math.nan
        target, ok, note = _judge(metric, kv, sv, float(meta["rtt_s"]), targets) if judged else ("", None, "")
        if metric == "slowstart_exit_cwnd":
            note = hystart_note(meta)
        if notes and metric in notes:
            note = "; ".join(x for x in (notes[metric], note) if x)
        rows.append({"metric": metric, "unit": unit, "kernel": kv, "tcplab": sv, "rel_error": rel,
                     "target": target, "ok": ok, "note": note})
    return rows


def is_bbr(meta: Mapping[str, Any]) -> bool:
    """Whether a kernel directory is a bbr run (its rows are :data:`BBR_METRICS`)."""
    return str(meta.get("algorithm", "")).lower() == "bbr"


def bbr_targets(meta: Mapping[str, Any]) -> dict[str, tuple[str, float]]:
    """:data:`BBR_TARGETS` for a kernel run: the retransmission rate only where
    B is at most :data:`RETRANS_RATE_MAX_BDP` BDPs."""
    bdp = float(meta["rate_bps"]) * float(meta["rtt_s"]) / (8 * float(meta.get("mtu") or PACKET_SIZE))
    t = dict(BBR_TARGETS)
    if not float(meta["buffer_packets"]) <= RETRANS_RATE_MAX_BDP * bdp:
        del t["retrans_rate"]
    return t


def _bbr_rows(k: Side, s: Side, window: tuple[float, float], gap: float) -> list[dict]:
    """The rows of a bbr validation; the ProbeRTT cadence row is judged by
    :func:`probe_rtt_cadence`, the others against :func:`bbr_targets`."""
    meta = k.extra["meta"]
    targets = bbr_targets(meta)
    notes = {"probe_rtt_episodes": "kernel: tcp_bbr_info mode 3 with cwnd <= 4; tcplab: cc_ts mode 3 "
                                   "(cwnd <= 4 where no mode is traced)",
             "retrans_rate": "retransmissions / data segments sent, whole run"
             + ("" if "retrans_rate" in targets else f"; judged only at B <= {RETRANS_RATE_MAX_BDP:g} BDP"),
             "srtt_mean_s": "time-weighted over the window"}
    rows = _rows(bbr_metrics(k, window, gap), bbr_metrics(s, window, gap), meta, BBR_METRICS, notes=notes,
                 targets={m: v for m, v in targets.items() if m != "probe_rtt_interval_s"})
    ok, note = probe_rtt_cadence(side_episodes(k), side_episodes(s), BBR_TARGETS["probe_rtt_interval_s"][1])
    for r in rows:
        if r["metric"] == "probe_rtt_interval_s":
            r.update(target=f"±{BBR_TARGETS['probe_rtt_interval_s'][1]:g} s", ok=ok, note=note)
    return rows


def _compare_sides(k: Side, s: Side):
    """:func:`compare` of two sides already read."""
    import pandas as pd

    meta = k.extra["meta"]
    window = steady_window(min(k.duration, s.duration))
    gap = loss_event_gap(meta)
    if is_bbr(meta):
        df = pd.DataFrame(_bbr_rows(k, s, window, gap))
    else:
        df = pd.DataFrame(_rows(side_metrics(k, window, gap), side_metrics(s, window, gap), meta, METRICS))
    df.attrs["window"] = window
    df.attrs["gap"] = gap
    return df


# ---------------------------------------------------------------- several flows

def jain_index(values: Sequence[float]) -> float:
    """Jain's fairness index (:func:`tcplab.analysis.jain_index`), NaN where a side gives none to
    compare (no values, or one not finite: a flow the side could not measure) rather than an error."""
    from ..analysis import jain_index as jain

    x = [float(v) for v in values]
    if not x or not all(math.isfinite(v) for v in x):
        return math.nan
    return jain(x)


def _step_at(t: np.ndarray, v: np.ndarray, at: np.ndarray) -> np.ndarray:
    """A sampled step signal's value at ``at`` (the last sample at or before;
    the first before the first sample)."""
    i = np.clip(np.searchsorted(t, at, side="right") - 1, 0, max(len(t) - 1, 0))
    return v[i] if len(v) else np.full(len(at), math.nan)


def aggregate_side(sides: Sequence[Side]) -> Side:
    """The flows of one run as one :class:`Side`, so the metric functions
    apply to the aggregate unchanged: delivered bytes summed (each flow's
    cumulative count interpolated on the union of the sample times, which
    keeps the goodput exactly the sum of the flows'), cwnd summed and srtt
    averaged (each flow's value holding until its next sample), the drops
    of all flows, the shared queue, retransmissions summed; it ends where
    the earliest flow's samples end."""
    import pandas as pd

    tt = np.unique(np.concatenate([x.ts["time"].to_numpy(float) for x in sides]))
    cw = [_step_at(x.ts["time"].to_numpy(float), x.ts["cwnd"].to_numpy(float), tt) for x in sides]
    rt = [_step_at(x.ts["time"].to_numpy(float), x.ts["srtt"].to_numpy(float), tt) for x in sides]
    ts = pd.DataFrame({"time": tt, "cwnd": np.sum(cw, axis=0), "srtt": np.mean(rt, axis=0)})
    rt_ = np.unique(np.concatenate([x.rx["time"].to_numpy(float) for x in sides]))
    by = np.sum([np.interp(rt_, x.rx["time"].to_numpy(float), x.rx["bytes"].to_numpy(float), left=0.0)
                 for x in sides], axis=0)
    rx = pd.DataFrame({"time": rt_, "bytes": by})
    return Side(sides[0].label, ts, rx, np.sort(np.concatenate([x.drops for x in sides])), sides[0].queue,
                float(sum(x.retransmissions for x in sides)), min(x.duration for x in sides),
                {**sides[0].extra, "flow": "all"})


#: Rows of the aggregate of several flows: every metric but the
#: slow-start exit (an ssthresh has no sum), plus Jain's index.
_AGG_NOTES = {
    "goodput_bps": "all flows",
    "cwnd_min": "of the flows' summed cwnd", "cwnd_mean": "of the flows' summed cwnd",
    "cwnd_max": "of the flows' summed cwnd", "startup_peak_cwnd": "of the flows' summed cwnd",
    "sawtooth_period_s": "loss events of all flows' drops", "loss_events": "of all flows' drops",
    "srtt_mean_s": "mean of the flows'",
}


def compare_flows(kernel_dir: str | os.PathLike, result: Any):
    """The fidelity table of a run of one or several flows. One flow: the
    :func:`compare` table. Several: a ``flow`` column; first the aggregate
    rows (``flow`` = ``all``: the metrics of :func:`aggregate_side`, judged
    against the issue's targets, and ``jain_index`` of the flows' goodputs
    in the window, reported), then every metric per flow, flow i of the
    kernel beside flow i of tcplab, reported but not judged: the flows are
    interchangeable, so which of them got more is chance on both sides and
    pairing them by number is arbitrary."""
    meta = read_meta(kernel_dir)
    n = n_flows_of(meta)
    if n == 1:
        return compare(kernel_dir, result)
    return _compare_flow_sides([kernel_side(kernel_dir, i) for i in range(n)],
                               [sim_side(result, i) for i in range(n)])


def _compare_flow_sides(ks: Sequence[Side], ss: Sequence[Side]):
    """:func:`compare_flows` of the flows' sides already read (several flows)."""
    import pandas as pd

    if len(ks) != len(ss):
        raise ValueError(f"n_flows: the kernel ran {len(ks)} flows, tcplab {len(ss)}")
    meta = ks[0].extra["meta"]
    window = steady_window(min(x.duration for x in [*ks, *ss]))
    gap = loss_event_gap(meta)
    kms = [side_metrics(x, window, gap) for x in ks]
    sms = [side_metrics(x, window, gap) for x in ss]
    agg_metrics = [m for m in METRICS if m[0] != "slowstart_exit_cwnd"]
    rows = [{"flow": "all", **r} for r in _rows(side_metrics(aggregate_side(ks), window, gap),
                                                side_metrics(aggregate_side(ss), window, gap), meta,
                                                agg_metrics, notes=_AGG_NOTES)]
    jk, js = (jain_index([m["goodput_bps"] for m in x]) for x in (kms, sms))
    rows += [{"flow": "all", **r} for r in _rows({"jain_index": jk}, {"jain_index": js}, meta,
                                                 [("jain_index", "")], judged=False,
                                                 notes={"jain_index": "of the flows' goodputs in the window"})]
    for i, (km, sm) in enumerate(zip(kms, sms, strict=True)):
        rows += [{"flow": str(i), **r} for r in _rows(km, sm, meta, METRICS, judged=False)]
    df = pd.DataFrame(rows)
    df.attrs["window"] = window
    df.attrs["gap"] = gap
    return df
