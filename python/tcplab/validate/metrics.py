"""The metric functions of ``tcplab validate``, applied alike to both sides.

Every function takes plain arrays or a :class:`~tcplab.validate.sides.Side`,
so the kernel's run and tcplab's are measured the same way (docs/validation.md,
"tcplab validate", defines each metric): the steady-state window, goodput,
time-weighted statistics, loss events and the sawtooth period, the first loss,
the start-up peak, the slow-start exit, and BBR's ProbeRTT episodes.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .sides import PACKET_SIZE, SAMPLE_INTERVAL, Side, kernel_side

__all__ = [
    "BBR_METRICS",
    "INFINITE_SSTHRESH",
    "METRICS",
    "bbr_metrics",
    "first_loss",
    "goodput_bps",
    "hystart_note",
    "kernel_bbr_figures",
    "loss_event_gap",
    "loss_events",
    "match_starts",
    "max_rtt",
    "probe_rtt_cadence",
    "probe_rtt_episodes",
    "probe_rtt_stats",
    "retrans_rate",
    "sawtooth_period",
    "side_episodes",
    "side_metrics",
    "slowstart_exit",
    "startup_peak",
    "steady_window",
    "time_weighted_stats",
]

#: The steady-state window is [STEADY_START, end] when the run is at least
#: twice that long, else the last half of the run.
STEADY_START = 30.0
#: Every metric of the table, in order, with its unit.
METRICS: list[tuple[str, str]] = [
    ("goodput_bps", "bit/s"),
    ("cwnd_min", "segments"),
    ("cwnd_mean", "segments"),
    ("cwnd_max", "segments"),
    ("sawtooth_period_s", "s"),
    ("loss_events", "events"),
    ("drops", "packets"),
    ("retransmissions", "segments"),
    ("first_loss_s", "s"),
    ("startup_peak_cwnd", "segments"),
    ("slowstart_exit_cwnd", "segments"),
    ("srtt_mean_s", "s"),
]
#: The rows of a bbr validation. Left out as meaningless for BBR: the sawtooth
#: period (BBR does not answer a loss event with a window reduction, so the
#: intervals between loss events are no cycle of its) and the slow-start exit
#: (BBR leaves STARTUP on a bandwidth plateau, not by setting ssthresh).
#: cwnd, loss events, drops, retransmissions, the first loss and the start-up
#: peak are reported, not judged (the issue sets no target for them).
BBR_METRICS: list[tuple[str, str]] = [
    ("goodput_bps", "bit/s"),
    ("srtt_mean_s", "s"),
    ("cwnd_min", "segments"),
    ("cwnd_mean", "segments"),
    ("cwnd_max", "segments"),
    ("loss_events", "events"),
    ("drops", "packets"),
    ("retransmissions", "segments"),
    ("data_segments_sent", "segments"),
    ("retrans_rate", ""),
    ("first_loss_s", "s"),
    ("startup_peak_cwnd", "segments"),
    ("probe_rtt_episodes", "episodes"),
    ("probe_rtt_first_s", "s"),
    ("probe_rtt_duration_s", "s"),
    ("probe_rtt_interval_s", "s"),
]
#: cwnd at or below this many segments is ProbeRTT where the mode is not
#: recorded (tcp_bbr.c's bbr_cwnd_min_target).
PROBE_RTT_CWND = 4
#: BBR's mode numbers (tcp_bbr.c's enum bbr_mode; tcplab's cc_ts ``mode``).
BBR_PROBE_RTT = 3

#: Drops closer than this many of the path's largest round trips belong to
#: one loss event (:func:`loss_events`).
LOSS_EVENT_GAP_RTTS = 2.0


def steady_window(duration: float) -> tuple[float, float]:
    """The steady-state window: [30 s, duration] when the run is at least
    60 s long (so [30, 60] for the issue's 60 s runs), else its last half."""
    if duration >= 2 * STEADY_START:
        return STEADY_START, duration
    return duration / 2.0, duration


def goodput_bps(time: np.ndarray, cum_bytes: np.ndarray, start: float, end: float) -> float:
    """Payload bit/s delivered over [start, end]: the cumulative byte count,
    linearly interpolated at both ends, differenced, over the window's length."""
    time, cum_bytes = np.asarray(time, float), np.asarray(cum_bytes, float)
    if len(time) < 2 or not end > start:
        return math.nan
    a, b = np.interp([start, end], time, cum_bytes)
    return float((b - a) * 8.0 / (end - start))


def time_weighted_stats(time: np.ndarray, values: np.ndarray, start: float, end: float) -> tuple[float, float, float]:
    """(min, mean, max) of a sampled step signal over [start, end].

    Each sample holds until the next (the last until ``end``); the mean weights
    a sample by how long it held, so an irregular sampler (the kernel's) is not
    biased towards where it sampled densely. NaN samples are skipped.
    """
    t, v = np.asarray(time, float), np.asarray(values, float)
    keep = np.isfinite(v)
    t, v = t[keep], v[keep]
    if not len(t) or not end > start:
        return math.nan, math.nan, math.nan
    # the value holding at `start` is the last sample at or before it
    i0 = max(int(np.searchsorted(t, start, side="right")) - 1, 0)
    i1 = int(np.searchsorted(t, end, side="right"))
    t, v = t[i0:i1].copy(), v[i0:i1]
    if not len(t):
        return math.nan, math.nan, math.nan
    t[0] = max(t[0], start)
    edges = np.append(t, end)
    w = np.diff(edges)
    if w.sum() <= 0:
        return float(v.min()), float(v.mean()), float(v.max())
    return float(v.min()), float(np.sum(v * w) / w.sum()), float(v.max())


def loss_events(drop_times: np.ndarray, gap: float) -> np.ndarray:
    """Start times of the loss events in a sorted array of drop times.

    A loss event is a maximal run of drops each less than ``gap`` after the
    previous one: the drops of one overflow of the buffer, which the sender
    answers with one window reduction. They span up to about one round trip
    (a Reno sender that grew by one segment overflows the buffer again one
    round trip after the first drop, before it has learned of it), so
    :func:`compare` uses ``gap`` = :data:`LOSS_EVENT_GAP_RTTS` of the path's
    largest round trips (propagation plus a full buffer): an overflow never
    splits, while sawtooth periods (tens of round trips) never merge.
    """
    t = np.sort(np.asarray(drop_times, float))
    if not len(t):
        return t
    new = np.empty(len(t), dtype=bool)
    new[0] = True
    new[1:] = np.diff(t) >= gap
    return t[new]


def sawtooth_period(drop_times: np.ndarray, gap: float, start: float, end: float) -> tuple[float, int]:
    """(mean interval between consecutive loss events starting in [start, end],
    number of such events). NaN with fewer than two events."""
    ev = loss_events(drop_times, gap)
    ev = ev[(ev >= start) & (ev <= end)]
    if len(ev) < 2:
        return math.nan, int(len(ev))
    return float((ev[-1] - ev[0]) / (len(ev) - 1)), int(len(ev))


def first_loss(drop_times: np.ndarray) -> float:
    """Time of the first drop (NaN without drops)."""
    t = np.asarray(drop_times, float)
    return float(t.min()) if len(t) else math.nan


def startup_peak(time: np.ndarray, cwnd: np.ndarray, first_drop: float) -> float:
    """Peak cwnd of start-up: the largest cwnd before the first sample, after
    the first drop, where cwnd falls (the sender's response to that loss).
    Without drops (or without a fall after it): the run's largest cwnd."""
    t, c = np.asarray(time, float), np.asarray(cwnd, float)
    keep = np.isfinite(c)
    t, c = t[keep], c[keep]
    if not len(c):
        return math.nan
    if math.isfinite(first_drop):
        falls = np.nonzero((np.diff(c) < 0) & (t[1:] >= first_drop))[0]
        if len(falls):
            return float(c[: falls[0] + 1].max())
    return float(c.max())


#: ssthresh at or above this is "not set yet" (Linux's TCP_INFINITE_SSTHRESH).
INFINITE_SSTHRESH = 2_147_483_647


def slowstart_exit(time: np.ndarray, ssthresh: np.ndarray, first_drop: float) -> float:
    """The ssthresh slow start set before any loss (HyStart: Linux sets
    ssthresh = cwnd when it leaves slow start, ``hystart_update``), or NaN
    when the first loss ended slow start (or ssthresh is not recorded)."""
    t, ss = np.asarray(time, float), np.asarray(ssthresh, float)
    set_ = np.nonzero(np.isfinite(ss) & (ss < INFINITE_SSTHRESH))[0]
    if not len(set_):
        return math.nan
    i = set_[0]
    if math.isfinite(first_drop) and t[i] >= first_drop:
        return math.nan
    return float(ss[i])


def hystart_note(meta: Mapping[str, Any]) -> str:
    """Which HyStart criterion ended the kernel's slow start, from nstat
    (TcpExtTCPHystartTrainDetect / DelayDetect and their cwnd sums)."""
    ns = meta.get("nstat") or {}
    if str(meta.get("algorithm", "cubic")) != "cubic":
        return ""  # only CUBIC runs HyStart
    found = [f"{name} at cwnd {ns.get(f'TcpExtTCPHystart{key}Cwnd', 0):g}"
             for key, name in (("Train", "kernel: ACK train"), ("Delay", "kernel: delay increase"))
             if ns.get(f"TcpExtTCPHystart{key}Detect", 0)]
    return "; ".join(found) if found else ("kernel: no HyStart exit" if ns else "")


def side_metrics(side: Side, window: tuple[float, float], gap: float) -> dict[str, float]:
    """Every metric of :data:`METRICS` for one side, with the same functions,
    window and loss-event gap for both sides."""
    start, end = window
    ts = side.ts
    cmin, cmean, cmax = time_weighted_stats(ts["time"], ts["cwnd"], start, end)
    _, smean, _ = time_weighted_stats(ts["time"], ts["srtt"], start, end)
    period, n_events = sawtooth_period(side.drops, gap, start, end)
    fl = first_loss(side.drops)
    return {
        "goodput_bps": goodput_bps(side.rx["time"], side.rx["bytes"], start, end),
        "cwnd_min": cmin,
        "cwnd_mean": cmean,
        "cwnd_max": cmax,
        "sawtooth_period_s": period,
        "loss_events": float(n_events),
        "drops": float(len(side.drops)),
        "retransmissions": float(side.retransmissions),
        "first_loss_s": fl,
        "startup_peak_cwnd": startup_peak(ts["time"], ts["cwnd"], fl),
        "slowstart_exit_cwnd": slowstart_exit(ts["time"], ts["ssthresh"], fl) if "ssthresh" in ts else math.nan,
        "srtt_mean_s": smean,
    }


def probe_rtt_episodes(time: np.ndarray, cwnd: np.ndarray, mode: np.ndarray | None = None,
                       merge_gap: float = 2.5 * SAMPLE_INTERVAL) -> list[tuple[float, float]]:
    """BBR's ProbeRTT episodes in a sampled run: [(start, end)] of the maximal
    runs of samples in ProbeRTT, runs less than ``merge_gap`` apart merged (a
    sample missed by the sampler does not split one). A sample is in ProbeRTT
    when its mode is :data:`BBR_PROBE_RTT` and cwnd is at most
    :data:`PROBE_RTT_CWND` (tcp_bbr.c caps cwnd at bbr_cwnd_min_target in the
    same step that enters the mode; the cwnd test drops the kernel's first
    sample, taken before bbr set its gains, which reads as mode 3 with the
    initial window); where the mode is not recorded (NaN), cwnd at most
    :data:`PROBE_RTT_CWND` alone. ``end`` is the last sample in ProbeRTT."""
    t, c = np.asarray(time, float), np.asarray(cwnd, float)
    m = np.full(len(t), math.nan) if mode is None else np.asarray(mode, float)
    low = c <= PROBE_RTT_CWND
    inside = np.where(np.isfinite(m), (m == BBR_PROBE_RTT) & low, low)
    out: list[list[float]] = []
    for ti in t[inside]:
        if out and ti - out[-1][1] < merge_gap:
            out[-1][1] = ti
        else:
            out.append([ti, ti])
    return [(a, b) for a, b in out]


def probe_rtt_stats(episodes: Sequence[tuple[float, float]]) -> dict[str, float]:
    """Count, first start, mean duration (last sample in ProbeRTT minus the
    first, plus one sample interval) and mean interval between consecutive
    starts ((last - first) / (n - 1); NaN with fewer than two)."""
    starts = np.array([a for a, _ in episodes], float)
    n = len(starts)
    return {
        "probe_rtt_episodes": float(n),
        "probe_rtt_first_s": float(starts[0]) if n else math.nan,
        "probe_rtt_duration_s": float(np.mean([b - a + SAMPLE_INTERVAL for a, b in episodes])) if n else math.nan,
        "probe_rtt_interval_s": float((starts[-1] - starts[0]) / (n - 1)) if n >= 2 else math.nan,
    }


def match_starts(a: Sequence[float], b: Sequence[float], tol: float) -> tuple[list[tuple[float, float]], int]:
    """Pairs of episode starts of two runs, each of ``a`` with the nearest
    unpaired one of ``b`` within ``tol`` (in time order); and how many of
    either run stayed unpaired."""
    left = sorted(b)
    pairs = []
    for x in sorted(a):
        if not left:
            break
        j = int(np.argmin([abs(x - y) for y in left]))
        if abs(x - left[j]) <= tol:
            pairs.append((x, left.pop(j)))
    return pairs, (len(a) - len(pairs)) + len(left)


def probe_rtt_cadence(k_eps: Sequence[tuple[float, float]], s_eps: Sequence[tuple[float, float]],
                      tol: float = 1.0) -> tuple[bool | None, str]:
    """The cadence verdict: both runs must show ProbeRTT; with at least two
    episodes on each side the mean intervals must agree within ``tol``
    seconds, otherwise every start must pair with one of the other run's
    within ``tol``. Returns (ok, note naming the starts)."""
    ks, ss = [a for a, _ in k_eps], [a for a, _ in s_eps]
    shown = (f"starts kernel: {', '.join(f'{x:.2f}' for x in ks) or 'none'}; "
             f"tcplab: {', '.join(f'{x:.2f}' for x in ss) or 'none'} s")
    if not ks or not ss:
        return False, f"no ProbeRTT on the {'kernel' if not ks else 'tcplab'} side; {shown}"
    pairs, unpaired = match_starts(ks, ss, tol)
    worst = max((abs(x - y) for x, y in pairs), default=math.nan)
    matched = (f"{len(pairs)} starts paired within {tol:g} s"
               + (f" (max |diff| {worst:.2f} s)" if pairs else "") + f", {unpaired} unpaired")
    if len(ks) >= 2 and len(ss) >= 2:
        ki, si = probe_rtt_stats(k_eps)["probe_rtt_interval_s"], probe_rtt_stats(s_eps)["probe_rtt_interval_s"]
        return abs(ki - si) <= tol + 1e-12, f"mean intervals |diff| {abs(ki - si):.2f} s; {matched}; {shown}"
    return unpaired == 0, f"judged on the starts (fewer than two episodes): {matched}; {shown}"


def retrans_rate(side: Side) -> float:
    """Segments retransmitted / data segments sent (retransmissions included), whole run."""
    sent = float(side.extra.get("data_segments_sent", math.nan))
    return float(side.retransmissions) / sent if math.isfinite(sent) and sent > 0 else math.nan


def bbr_metrics(side: Side, window: tuple[float, float], gap: float) -> dict[str, float]:
    """The metrics of :data:`BBR_METRICS` for one side: those of
    :func:`side_metrics` plus the retransmission rate and the ProbeRTT
    episodes (:func:`probe_rtt_episodes` over the whole run)."""
    m = side_metrics(side, window, gap)
    eps = side_episodes(side)
    m.update(probe_rtt_stats(eps))
    m["data_segments_sent"] = float(side.extra.get("data_segments_sent", math.nan))
    m["retrans_rate"] = retrans_rate(side)
    return m


def side_episodes(side: Side) -> list[tuple[float, float]]:
    """:func:`probe_rtt_episodes` of a :class:`Side`."""
    ts = side.ts
    mode = ts["mode"].to_numpy(float) if "mode" in ts else None
    return probe_rtt_episodes(ts["time"].to_numpy(float), ts["cwnd"].to_numpy(float), mode)


def kernel_bbr_figures(kernel_dir: str | os.PathLike, flow: int = 0) -> dict[str, Any]:
    """The kernel side's bbr figures alone (what a validation compares):
    :data:`BBR_METRICS` over the steady-state window of the run, and the
    ProbeRTT episodes as (start, end) pairs."""
    k = kernel_side(kernel_dir, flow)
    meta = k.extra["meta"]
    m = bbr_metrics(k, steady_window(k.duration), loss_event_gap(meta))
    return {**m, "window": steady_window(k.duration), "probe_rtt": side_episodes(k)}


def max_rtt(meta: Mapping[str, Any]) -> float:
    """The path's largest round trip: propagation plus a full buffer's queueing
    (buffer x MTU-sized packets at the bottleneck rate)."""
    mtu = float(meta.get("mtu") or PACKET_SIZE)
    return float(meta["rtt_s"]) + float(meta["buffer_packets"]) * mtu * 8 / float(meta["rate_bps"])


def loss_event_gap(meta: Mapping[str, Any]) -> float:
    """The gap that separates loss events (:func:`loss_events`):
    :data:`LOSS_EVENT_GAP_RTTS` x :func:`max_rtt`."""
    return LOSS_EVENT_GAP_RTTS * max_rtt(meta)

