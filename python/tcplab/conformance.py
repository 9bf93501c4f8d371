"""``tcplab conformance bbr``: BBR conformance cases run in the simulator.

Where the cases come from (docs/conformance.md has the full account):

- BBRv3 (``bbr3``): draft-ietf-ccwg-bbr-06 (6 July 2026, the latest draft
  found), Appendix A "BBR Example Test Cases" (A.1-A.22). The appendix allows
  "network emulation, network simulation, or a controlled network path" as
  the harness. Each case here names the appendix case it runs and, where the
  appendix has no case for the behaviour (utilization, the loss bound,
  fairness), the normative section it is derived from.
- BBRv1 (``bbr``): the arithmetic of Linux's net/ipv4/tcp_bbr.c
  (bbr_check_full_bw_reached: bbr_full_bw_thresh = 1.25,
  bbr_full_bw_cnt = 3; bbr_update_min_rtt: bbr_min_rtt_win_sec = 10,
  bbr_probe_rtt_mode_ms = 200, bbr_cwnd_min_target = 4;
  bbr_update_cycle_phase: CYCLE_LEN = 8 phases of min_rtt,
  bbr_pacing_gain[] = 5/4, 3/4, 1 x 6; bbr_drain_gain = 1/bbr_high_gain).

Each case is a small dumbbell (C = 50 Mbit/s, RTT 40 ms, Linux profile:
SACK, PRR, RACK-TLP, delayed ACKs; sampled every 5 ms) and one or more
criteria computed from the run's flows table, time series and ``cc_ts``
(the algorithm's traced variables: ``mode``, ``bw_bps``, ``min_rtt``,
``pacing_gain``, ``cwnd_gain``, ``round_count``, ``full_bw_reached``,
``cycle_idx`` (v1), ``phase`` (v3), ...). Every criterion is a plain
function of arrays (``crit_*``), so it can be fed a failing series in
tests. A result row is (case, algorithm, check, measured, criterion,
pass/fail/skip, source).

From Python::

    from tcplab import conformance
    rows = conformance.run_suite(["bbr", "bbr3"], quick=True)
    conformance.write_report(rows, "out/conformance-bbr")
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

DRAFT = "draft-ietf-ccwg-bbr-06"
DRAFT_TITLE = "draft-ietf-ccwg-bbr-06 (BBR Congestion Control, 6 July 2026), Appendix A 'BBR Example Test Cases'"
LINUX_V1 = "Linux net/ipv4/tcp_bbr.c (BBRv1)"

#: The BBR versions the suite knows, and what "--algorithm both" means.
VERSIONS = ("bbr", "bbr3")

C_BPS = 50e6
RTT_S = 0.040
PACKET = 1500
HEADER = 52  # Linux profile: MSS 1448 in 1500-byte packets
SAMPLE = 0.005
BDP_PACKETS = C_BPS * RTT_S / (8 * PACKET)  # 166.7

MODE_STARTUP, MODE_DRAIN, MODE_PROBE_BW, MODE_PROBE_RTT = 0, 1, 2, 3
PHASE_DOWN, PHASE_CRUISE, PHASE_REFILL, PHASE_UP = 0, 1, 2, 3

#: Per version: the constants the criteria check against (with where they come from); a float each, but
#: ``probe_wait``, a (low, high) pair of seconds.
EXPECT: dict[str, dict[str, Any]] = {
    "bbr": {"probe_rtt_interval": 10.0, "probe_rtt_ms": 0.200, "probe_rtt_cwnd": 4.0,
            "drain_gain_max": 1 / 2.885 + 0.01},
    "bbr3": {"probe_rtt_interval": 5.0, "probe_rtt_ms": 0.200, "probe_rtt_cwnd_gain": 0.5, "drain_gain_max": 0.5 + 0.01,
             "loss_thresh": 0.02, "probe_wait": (2.0, 3.0)},
}


# ---------------------------------------------------------------- result rows

@dataclass
class Check:
    """One criterion's outcome. ``passed`` None = skipped (``measured`` says why)."""

    check: str
    measured: str
    criterion: str
    passed: bool | None
    value: float = float("nan")


@dataclass
class Case:
    """A conformance case: a scenario per algorithm, criteria over its run."""

    id: str
    title: str
    algorithms: tuple
    #: algorithm -> source section(s) the case comes from
    source: dict
    #: (algorithm to run, version, quick) -> Scenario; None: the case is skipped (``skip``)
    scenario: Callable[[str, str, bool], Any] | None
    #: (Results, version, quick) -> [Check]
    check: Callable[[Any, str, bool], list] | None
    skip: str | None = None
    #: runs keyed by this name are shared by the cases that name the same one
    run_key: str | None = None
    notes: str = ""


@dataclass
class Row:
    case: str
    algorithm: str
    check: str
    measured: str
    criterion: str
    result: str  # pass | fail | skip
    source: str
    title: str = ""
    value: float = float("nan")

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class MissingTrace(Exception):
    """The run lacks a traced variable a criterion needs."""


# ---------------------------------------------------------------- series helpers

def runs_of(t: np.ndarray, v: np.ndarray) -> list[tuple[float, float, float, bool, bool]]:
    """Maximal runs of equal values: (value, start time, end time, starts_at_first_sample,
    ends_at_last_sample). The end is the time of the first sample after the run
    (or the last sample)."""
    t = np.asarray(t, dtype=float)
    v = np.asarray(v, dtype=float)
    out: list[tuple[float, float, float, bool, bool]] = []
    if not len(v):
        return out
    cut = np.nonzero(np.diff(v) != 0)[0] + 1
    starts = np.concatenate([[0], cut])
    ends = np.concatenate([cut, [len(v) - 1]])
    for k, (a, b) in enumerate(zip(starts, ends, strict=True)):
        out.append((float(v[a]), float(t[a]), float(t[b]), a == 0, k == len(starts) - 1))
    return out


def _fmt(x: float, unit: str = "", nd: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.{nd}g}{unit}"


def cc_frame(res: Any, flow: int = 0, need: Sequence[str] = ("mode",)) -> Any:
    """One flow's cc variables as columns indexed by time; MissingTrace naming what is absent."""
    df = res.cc_vars(flow)
    missing = [n for n in need if n not in getattr(df, "columns", [])]
    if missing:
        raise MissingTrace(f"cc_ts of flow {flow} lacks {', '.join(missing)} (the algorithm traces "
                           f"{', '.join(map(str, getattr(df, 'columns', []))) or 'nothing'})")
    return df


def _flow_series(res: Any, flow: int, col: str) -> tuple[np.ndarray, np.ndarray]:
    ft = res.flow_ts
    d = ft[ft["flow"] == flow]
    return d["time"].to_numpy(float), d[col].to_numpy(float)


# ---------------------------------------------------------------- criteria (pure functions)

def crit_startup(t, mode, bw, rounds, full_bw_reached, capacity_bps: float, payload_fraction: float,
                 plateau_rounds: int = 3, growth: float = 1.25, bw_tol: float = 0.02) -> list[Check]:
    """A.1 / bbr_check_full_bw_reached: STARTUP ends (-> DRAIN) with full_bw_reached
    after ``plateau_rounds`` rounds in which the bandwidth estimate grew by less
    than ``growth``; the estimate at exit within ``bw_tol`` of the bottleneck
    (on the wire, or its payload share, whichever the estimate counts)."""
    t, mode, bw, rounds = (np.asarray(x, dtype=float) for x in (t, mode, bw, rounds))
    out = []
    left = np.nonzero(mode != MODE_STARTUP)[0]
    if not len(left):
        return [Check("exit", "never left STARTUP", "STARTUP -> DRAIN", False)]
    i = int(left[0])
    out.append(Check("exit", f"STARTUP -> mode {int(mode[i])} at {t[i]:.3f} s",
                     "STARTUP exits to DRAIN (mode 1)", bool(mode[i] == MODE_DRAIN), t[i]))
    fbr = np.asarray(full_bw_reached, dtype=float)
    out.append(Check("full_bw_reached", f"{_fmt(fbr[i])} at exit", "full_bw_reached = 1 at exit",
                     bool(fbr[i] >= 1), float(fbr[i])))
    est = float(bw[i])
    refs = [capacity_bps, capacity_bps * payload_fraction]
    err = min(abs(est - r) / r for r in refs)
    out.append(Check("max_bw", f"{est / 1e6:.3f} Mbit/s (error {100 * err:.2f} %)",
                     f"within {100 * bw_tol:g} % of C = {capacity_bps / 1e6:g} Mbit/s (wire) or its payload "
                     f"share {capacity_bps * payload_fraction / 1e6:.2f}", bool(err <= bw_tol), err))
    # Replay the plateau detector on the bandwidth at the end of every round before the exit.
    r_exit = rounds[i]
    per_round = {}
    for k in range(i):
        per_round[rounds[k]] = bw[k]
    full_bw, count = 0.0, 0
    for r in sorted(per_round):
        if r >= r_exit:
            break
        if per_round[r] >= growth * full_bw:
            full_bw, count = per_round[r], 0
        else:
            count += 1
    out.append(Check("plateau_rounds", f"{count} round(s) with < {100 * (growth - 1):g} % growth before exit",
                     f"{plateau_rounds} (+-1 for 5 ms sampling)", bool(abs(count - plateau_rounds) <= 1), count))
    return out


def crit_drain(t, mode, rounds, pacing_gain, fl_t, in_flight, bdp_packets: float, gain_max: float,
               max_rounds: float = 5, inflight_tol: float = 0.05) -> list[Check]:
    """A.3 / bbr_check_drain: DRAIN paces below 1 (v1 1/2.89, draft 0.5), then hands over to
    PROBE_BW within ``max_rounds`` rounds with in-flight <= BDP (+ tolerance)."""
    t, mode, rounds, pg = (np.asarray(x, dtype=float) for x in (t, mode, rounds, pacing_gain))
    d = np.nonzero(mode == MODE_DRAIN)[0]
    if not len(d):
        return [Check("entered", "no DRAIN sample", "DRAIN follows STARTUP", False)]
    out = []
    g = float(np.median(pg[d]))
    out.append(Check("pacing_gain", f"median {g:.3f} in DRAIN", f"<= {gain_max:.3f}", bool(g <= gain_max), g))
    after = np.nonzero((mode != MODE_DRAIN) & (np.arange(len(mode)) > d[0]))[0]
    if not len(after):
        out.append(Check("exit", "never left DRAIN", "DRAIN -> PROBE_BW", False))
        return out
    j = int(after[0])
    nr = rounds[j] - rounds[d[0]]
    out.append(Check("exit", f"DRAIN -> mode {int(mode[j])} after {nr:g} round(s), {t[j] - t[d[0]]:.3f} s",
                     f"-> PROBE_BW (2) within {max_rounds:g} rounds",
                     bool(mode[j] == MODE_PROBE_BW and nr <= max_rounds), nr))
    fl = float(np.interp(t[j], np.asarray(fl_t, float), np.asarray(in_flight, float)))
    lim = bdp_packets * (1 + inflight_tol)
    out.append(Check("inflight_at_exit", f"{fl:.0f} packets (BDP {bdp_packets:.0f})",
                     f"<= BDP (+{100 * inflight_tol:g} %: {lim:.0f})", bool(fl <= lim), fl / bdp_packets))
    return out


def crit_gain_cycle_v1(t, mode, cycle_idx, pacing_gain, min_rtt_s: float, tol: float = 0.25) -> list[Check]:
    """tcp_bbr.c bbr_update_cycle_phase: in PROBE_BW, 8 phases (gains 5/4, 3/4, 1 x 6), the
    gain-1 phases each last min_rtt; all 8 indices are visited."""
    t, mode, ci, pg = (np.asarray(x, dtype=float) for x in (t, mode, cycle_idx, pacing_gain))
    m = mode == MODE_PROBE_BW
    if m.sum() < 2:
        return [Check("in_probe_bw", "no PROBE_BW samples", "PROBE_BW reached", False)]
    visited = sorted({int(x) for x in ci[m]})
    out = [Check("phases", f"cycle_idx visited {visited}", "all of 0..7", visited == list(range(8)), len(visited))]
    gains = sorted({round(float(x), 2) for x in pg[m]})
    out.append(Check("gains", f"pacing gains {gains}", "{0.75, 1.0, 1.25}", gains == [0.75, 1.0, 1.25], len(gains)))
    # Durations of whole phases inside PROBE_BW (a phase cut by a mode change or the run's ends is left out).
    dur = []
    key = np.where(m, ci, -1.0)
    for v, a, b, first, last in runs_of(t, key):
        if v >= 2 and not first and not last:  # gain-1 phases (indices 2..7)
            dur.append(b - a)
    if not dur:
        out.append(Check("phase_duration", "no whole gain-1 phase", f"median = min_rtt ({1e3 * min_rtt_s:.0f} ms)",
                         False))
        return out
    med = float(np.median(dur))
    out.append(Check("phase_duration", f"median {1e3 * med:.1f} ms over {len(dur)} gain-1 phases",
                     f"min_rtt {1e3 * min_rtt_s:.1f} ms +-{100 * tol:g} %",
                     bool(abs(med - min_rtt_s) <= tol * min_rtt_s), med / min_rtt_s))
    return out


def crit_probe_cycle_v3(t, mode, phase, wait: tuple = (2.0, 3.0), slack: float = 0.25) -> list[Check]:
    """draft 5.3.3 (ProbeBW), A.5/A.8/A.9: the phases follow DOWN -> (CRUISE) -> REFILL -> UP -> DOWN
    and a new probe (REFILL) starts every bw_probe_wait = 2-3 s (+ ``slack`` for the round that ends
    UP/DOWN and the sampling)."""
    t, mode, ph = (np.asarray(x, dtype=float) for x in (t, mode, phase))
    m = mode == MODE_PROBE_BW
    if m.sum() < 2:
        return [Check("in_probe_bw", "no PROBE_BW samples", "PROBE_BW reached", False)]
    allowed = {(PHASE_DOWN, PHASE_CRUISE), (PHASE_DOWN, PHASE_REFILL), (PHASE_CRUISE, PHASE_REFILL),
               (PHASE_REFILL, PHASE_UP), (PHASE_UP, PHASE_DOWN)}
    rs = runs_of(t, np.where(m, ph, -1.0))
    trans = [(int(a[0]), int(b[0])) for a, b in pairwise(rs) if a[0] >= 0 and b[0] >= 0]
    bad = [x for x in trans if x not in allowed]
    out = [Check("transitions", f"{len(trans)} phase transitions, {len(bad)} not in the cycle"
                 + (f" (e.g. {bad[0][0]}->{bad[0][1]})" if bad else ""),
                 "DOWN->CRUISE|REFILL, CRUISE->REFILL, REFILL->UP, UP->DOWN", bool(trans) and not bad, len(bad))]
    refill = [a for v, a, _, first, _ in rs if v == PHASE_REFILL and not first]
    # intervals between probes, left out when a PROBE_RTT (mode 3) fell between them
    iv = []
    for a, b in pairwise(refill):
        if not np.any((t > a) & (t < b) & (mode == MODE_PROBE_RTT)):
            iv.append(b - a)
    if not iv:
        out.append(Check("probe_interval", f"{len(refill)} probe(s), no interval between two",
                         f"{wait[0]:g}-{wait[1]:g} s", False))
        return out
    lo, hi = min(iv), max(iv)
    ok = lo >= wait[0] - SAMPLE * 2 and hi <= wait[1] + slack
    out.append(Check("probe_interval", f"{len(iv)} intervals, {lo:.2f}-{hi:.2f} s",
                     f"{wait[0]:g} to {wait[1]:g} s (+{slack:g} s)", bool(ok), float(np.median(iv))))
    return out


def crit_probe_rtt_v1_timing(t, mode, min_rtt, window: float = 10.0, slack: float = 0.25) -> Check:
    """tcp_bbr.c's own rule (bbr_update_min_rtt, bbr_check_probe_rtt_done): PROBE_RTT starts when the
    min-RTT filter has not been refreshed for ``window`` s. A refresh is a lower min_rtt sample or the
    end of a PROBE_RTT (which stamps the filter). So every entry must come ``window`` s after the last
    refresh, at the first ACK after expiry (``slack``: a round trip plus the sampling). Two flows'
    entries need not be 10 s apart: a PROBE_RTT of one drains the queue, the other sees a lower
    RTT and restarts its clock, which is how BBR flows come to probe together."""
    t, mode, mr = np.asarray(t, float), np.asarray(mode, float), np.asarray(min_rtt, float)
    entries = [a for v, a, _, first, _ in runs_of(t, (mode == MODE_PROBE_RTT).astype(float)) if v == 1.0 and not first]
    exits = [b for v, _, b, _, last in runs_of(t, (mode == MODE_PROBE_RTT).astype(float)) if v == 1.0 and not last]
    lowered = [t[i] for i in range(1, len(mr))
               if np.isfinite(mr[i]) and (not np.isfinite(mr[i - 1]) or mr[i] < mr[i - 1])
               and mode[i] != MODE_PROBE_RTT and mode[i - 1] != MODE_PROBE_RTT]
    if not entries:
        return Check("timing", "no PROBE_RTT", f"entry {window:g} s after the last min-RTT refresh", False)
    gaps = []
    for e in entries:
        refresh = [x for x in lowered + exits if x < e]
        if refresh:
            gaps.append(e - max(refresh))
    if not gaps:
        return Check("timing", "no refresh before the entries", f"{window:g} s after a refresh", False)
    ok = all(window - 2 * SAMPLE <= g <= window + slack for g in gaps)
    return Check("timing", f"{len(gaps)} entries, {min(gaps):.3f}-{max(gaps):.3f} s after the last refresh",
                 f"{window:g} s <= gap <= {window + slack:g} s (bbr_min_rtt_win_sec)", bool(ok), float(np.median(gaps)))


def crit_probe_rtt(t, mode, cwnd_t, cwnd, version: str, bdp_packets: float, cwnd_gain=None,
                   interval: float | None = None, min_dur: float = 0.2) -> list[Check]:
    """v1 (bbr_update_min_rtt): PROBE_RTT every 10 s (min_rtt window), lasting >= 200 ms, cwnd 4.
    v3 (A.10, draft 5.3.4): every 5 s (ProbeRTTInterval), >= 200 ms, cwnd 0.5 x BDP (ProbeRTTCwndGain)."""
    t, mode = np.asarray(t, float), np.asarray(mode, float)
    interval = interval if interval is not None else EXPECT[version]["probe_rtt_interval"]
    rs = [r for r in runs_of(t, (mode == MODE_PROBE_RTT).astype(float)) if r[0] == 1.0]
    if not rs:
        return [Check("entered", "no PROBE_RTT in the run", f"PROBE_RTT every {interval:g} s", False)]
    out = []
    starts = [a for _, a, _, _, _ in rs]
    iv = np.diff(starts)
    if version == "bbr":
        pass  # v1's timing is checked against its own rule (crit_probe_rtt_v1_timing)
    elif len(iv):
        ok = bool(np.all(iv >= interval - 2 * SAMPLE) and np.all(iv <= 1.5 * interval))
        out.append(Check("interval", f"{len(rs)} entries, intervals {', '.join(f'{x:.2f}' for x in iv)} s",
                         f"{interval:g} s <= interval <= {1.5 * interval:g} s", ok, float(np.median(iv))))
    else:
        out.append(Check("interval", f"one entry at {starts[0]:.2f} s, no interval",
                         f"at least two entries {interval:g} s apart", False))
    whole = [(a, b) for _, a, b, _, last in rs if not last]
    if whole:
        d = min(b - a for a, b in whole)
        out.append(Check("duration", f"shortest {1e3 * d:.0f} ms", f">= {1e3 * min_dur:.0f} ms",
                         bool(d >= min_dur - SAMPLE), d))
    ct, cw = np.asarray(cwnd_t, float), np.asarray(cwnd, float)
    inside = np.zeros(len(ct), dtype=bool)
    for _, a, b, _, _ in rs:
        inside |= (ct >= a + 2 * SAMPLE) & (ct < b)  # settled: after the entry's own ACK
    if not inside.any():
        out.append(Check("cwnd", "no cwnd sample inside PROBE_RTT", "", False))
        return out
    low = float(np.min(cw[inside]))
    if version == "bbr":
        exp = EXPECT["bbr"]["probe_rtt_cwnd"]
        out.append(Check("cwnd", f"min cwnd {low:g} packets in PROBE_RTT", f"= {exp:g} (bbr_cwnd_min_target)",
                         bool(abs(low - exp) < 0.5), low))
    else:
        # The draft (A.10) sets cwnd_gain = ProbeRTTCwndGain 0.5; Linux v3 keeps cwnd_gain 1 in PROBE_RTT and
        # applies the 0.5 in bbr_probe_rtt_cwnd(). Either way the cwnd is half the BDP: that is what is checked,
        # against the flow's own BDP (its bandwidth estimate x min RTT) when ``bdp_packets`` gives one per sample.
        if np.ndim(bdp_packets):
            bdp_packets = float(np.median(np.asarray(bdp_packets, float)[inside]))
        eff = low / bdp_packets
        traced = ""
        if cwnd_gain is not None:
            g = np.asarray(cwnd_gain, float)[np.asarray(mode) == MODE_PROBE_RTT]
            traced = f"; traced cwnd_gain {float(np.median(g)):.2f}" if len(g) else ""
        out.append(Check("cwnd", f"min cwnd {low:g} packets in PROBE_RTT = {eff:.2f} BDP{traced}",
                         "cwnd <= ProbeRTTCwndGain 0.5 x BDP (+0.1), >= 4: a cap, min(cwnd, 0.5 BDP), as the draft's "
                         "BBRBoundCwndForProbeRTT and v3's bbr_set_cwnd", bool(eff <= 0.6 and low >= 4),
                         eff))
    return out


def crit_utilization(goodput_bps: float, capacity_bps: float, floor: float = 0.9) -> Check:
    u = goodput_bps / capacity_bps
    return Check("utilization", f"goodput {goodput_bps / 1e6:.2f} Mbit/s = {100 * u:.1f} % of C",
                 f">= {100 * floor:g} % of C", bool(u >= floor), u)


def crit_queue_delay(mean_queue_packets: float, bdp_packets: float, limit_bdp: float = 1.0) -> Check:
    q = mean_queue_packets / bdp_packets
    return Check("queue_delay", f"mean queue {mean_queue_packets:.1f} packets = {q:.2f} x min_rtt of delay",
                 f"<= {limit_bdp:g} BDP (queueing delay <= {limit_bdp:g} x RTT) in an 8-BDP buffer",
                 bool(q <= limit_bdp), q)


def crit_loss_rate(lost: float, delivered: float, thresh: float = 0.02, factor: float = 1.5) -> Check:
    rate = lost / max(lost + delivered, 1.0)
    return Check("loss_rate", f"{100 * rate:.2f} % ({int(lost)} lost, {int(delivered)} delivered)",
                 f"<= {100 * factor * thresh:g} % (LossThresh {100 * thresh:g} % x {factor:g})",
                 bool(rate <= factor * thresh), rate)


def crit_app_limited(t, bw, t_from: float, t_to: float, ref_bps: float, app_bps: float,
                     up: float = 1.05, down: float = 0.8) -> list[Check]:
    """draft 5.5.4 / A.7 / A.22: application-limited samples neither inflate the estimate above the
    bottleneck's nor pull it down toward the application's rate."""
    t, bw = np.asarray(t, float), np.asarray(bw, float)
    w = (t >= t_from) & (t <= t_to)
    if not w.any():
        return [Check("bw_estimate", "no sample in the app-limited phase", "", False)]
    hi, lo = float(np.max(bw[w])), float(np.min(bw[w]))
    return [
        Check("not_inflated", f"max bw_bps {hi / 1e6:.2f} Mbit/s while app-limited",
              f"<= {up:g} x the bulk-phase estimate ({ref_bps / 1e6:.2f})", bool(hi <= up * ref_bps), hi / ref_bps),
        Check("not_deflated", f"min bw_bps {lo / 1e6:.2f} Mbit/s (app sends {app_bps / 1e6:.1f})",
              f">= {down:g} x the bulk-phase estimate", bool(lo >= down * ref_bps), lo / ref_bps),
    ]


def crit_jain(goodputs: Sequence[float], floor: float = 0.9) -> Check:
    from .analysis import jain_index

    j = float(jain_index(list(goodputs)))
    return Check("jain", f"Jain {j:.3f} ({', '.join(f'{g / 1e6:.1f}' for g in goodputs)} Mbit/s)",
                 f">= {floor:g} over the last half", bool(j >= floor), j)


# ---------------------------------------------------------------- scenarios

def _durations(quick: bool) -> dict:
    return {"solo": 30.0, "pair_bbr": 32.0 if quick else 60.0,
            "pair_bbr3": 40.0, "app": 8.0 if quick else 20.0, "shallow": 10.0 if quick else 40.0}


def _dumbbell(algo: str, n: int, buffer_bdp: float, duration: float, start: Any = 0.0, loss_trace: bool = False,
              files: list | None = None, name: str = "conformance"):
    from .scenario import Dumbbell

    opts: dict = {"profile": "linux"}
    if files is not None:
        opts["files"] = files
    return Dumbbell(n_flows=n, bottleneck_rate=C_BPS, rtt=f"{RTT_S * 1e3:g}ms",
                    buffer=max(1, int(round(buffer_bdp * BDP_PACKETS))), algorithm=algo, duration=f"{duration}s",
                    measure_start=f"{duration / 2}s", access_delay="0ms", start=start, flow_options=opts,
                    sample_interval=f"{SAMPLE}s", loss_trace=loss_trace, name=name)


def _solo(algo: str, version: str, quick: bool):
    return _dumbbell(algo, 1, 8.0, _durations(quick)["solo"], name="solo")


def _pair(algo: str, version: str, quick: bool):
    return _dumbbell(algo, 2, 1.0, _durations(quick)[f"pair_{version}"], start=[0.0, 1.0], name="pair")


def _shallow(algo: str, version: str, quick: bool):
    return _dumbbell(algo, 2, 0.1, _durations(quick)["shallow"], start=[0.0, 0.5], loss_trace=True, name="shallow")


APP_BULK_S = 2.0  # seconds of line-rate data in the first file
APP_FRACTION = 0.2  # then the application offers 20 % of C
APP_PERIOD = 0.05


def _app_files(quick: bool) -> list:
    d = _durations(quick)["app"]
    files = [(int(C_BPS * APP_BULK_S / 8), 0.0)]
    t = APP_BULK_S + 1.0
    while t < d:
        files.append((int(APP_FRACTION * C_BPS * APP_PERIOD / 8), round(t, 6)))
        t += APP_PERIOD
    return files


def _app(algo: str, version: str, quick: bool):
    return _dumbbell(algo, 1, 2.0, _durations(quick)["app"], files=_app_files(quick), name="app")


# ---------------------------------------------------------------- checks over a run

def _payload_fraction() -> float:
    return (PACKET - HEADER) / PACKET


def _check_startup(res, version, quick):
    cc = cc_frame(res, 0, ("mode", "bw_bps", "round_count", "full_bw_reached"))
    return crit_startup(cc.index.to_numpy(), cc["mode"], cc["bw_bps"], cc["round_count"], cc["full_bw_reached"],
                        C_BPS, _payload_fraction())


def _check_drain(res, version, quick):
    cc = cc_frame(res, 0, ("mode", "round_count", "pacing_gain"))
    ft, fl = _flow_series(res, 0, "in_flight")
    return crit_drain(cc.index.to_numpy(), cc["mode"], cc["round_count"], cc["pacing_gain"], ft, fl, BDP_PACKETS,
                      EXPECT[version]["drain_gain_max"])


def _check_cycle(res, version, quick):
    if version == "bbr":
        cc = cc_frame(res, 0, ("mode", "cycle_idx", "pacing_gain", "min_rtt"))
        mr = float(np.nanmin(cc["min_rtt"].to_numpy(float)))
        return crit_gain_cycle_v1(cc.index.to_numpy(), cc["mode"], cc["cycle_idx"], cc["pacing_gain"], mr)
    cc = cc_frame(res, 0, ("mode", "phase"))
    return crit_probe_cycle_v3(cc.index.to_numpy(), cc["mode"], cc["phase"], EXPECT["bbr3"]["probe_wait"])


def _check_probe_rtt(res, version, quick):
    out = []
    for f in (0, 1):
        cc = cc_frame(res, f, ("mode",))
        ct, cw = _flow_series(res, f, "cwnd")
        bdp = BDP_PACKETS
        if version == "bbr3" and "bw_bps" in cc and "min_rtt" in cc:
            # Each of the two flows halves its own BDP estimate (bw x min_rtt), not the path's.
            spec = res.spec["flows"][f]
            mss = spec["packet_size"] - spec["header_size"]
            own = (cc["bw_bps"] * cc["min_rtt"] / (8 * mss)).reindex(ct, method="ffill").to_numpy(float)
            bdp = own
        checks = crit_probe_rtt(cc.index.to_numpy(), cc["mode"], ct, cw, version, bdp,
                                cc["cwnd_gain"] if "cwnd_gain" in cc else None)
        if version == "bbr" and "min_rtt" in cc:
            checks.insert(0, crit_probe_rtt_v1_timing(cc.index.to_numpy(), cc["mode"], cc["min_rtt"],
                                                      EXPECT["bbr"]["probe_rtt_interval"]))
        for c in checks:
            c.check = f"flow{f + 1}.{c.check}"
            out.append(c)
    return out


def _check_utilization(res, version, quick):
    return [crit_utilization(float(res.flows["goodput_bps"].iloc[0]), C_BPS)]


def _check_queue(res, version, quick):
    q = res.queue_ts
    d = q[(q["link_name"] == "r1-r2") & (q["time"] >= res.duration / 2)] if len(q) else q
    return [crit_queue_delay(float(d["packets"].mean()), BDP_PACKETS)]


def _check_loss(res, version, quick):
    half = res.duration / 2
    out = []
    dt = res.drop_trace
    for f in range(len(res.flows)):
        lost = int(((dt["flow"] == f) & (dt["time"] >= half) & (dt["packet"] == "data")).sum()) if len(dt) else 0
        t, dl = _flow_series(res, f, "delivered_bytes")
        a, b = np.interp([half, res.duration], t, dl)
        # the dumbbell's ns-2 accounting counts a delivered packet as PACKET bytes
        c = crit_loss_rate(lost, (b - a) / PACKET, EXPECT["bbr3"]["loss_thresh"])
        c.check = f"flow{f + 1}.{c.check}"
        out.append(c)
    return out


def _check_app(res, version, quick):
    cc = cc_frame(res, 0, ("bw_bps",))
    t = cc.index.to_numpy()
    bw = cc["bw_bps"].to_numpy(float)
    # the bulk file's last byte is acknowledged, then a second of small files lets the state settle
    fin = res.files["acked"].iloc[0] if len(res.files) else APP_BULK_S
    ref = float(np.interp(fin, t, bw))
    return crit_app_limited(t, bw, fin + 0.5, res.duration, ref, APP_FRACTION * C_BPS)


def _check_fair(res, version, quick):
    return [crit_jain([float(x) for x in res.flows["goodput_bps"]])]


def _s(v1: str, v3: str) -> dict:
    return {"bbr": v1, "bbr3": v3}


#: The suite. Sources: v1 from tcp_bbr.c, v3 from draft-ietf-ccwg-bbr-06 (section / Appendix A case).
CASES: list[Case] = [
    Case("startup_plateau", "STARTUP reaches the bottleneck bandwidth and exits after the plateau", VERSIONS,
         _s(f"{LINUX_V1}: bbr_check_full_bw_reached (thresh 5/4, cnt 3)", f"{DRAFT} A.1; 5.3.1 Startup"),
         _solo, _check_startup, run_key="solo"),
    Case("drain", "DRAIN brings in-flight down to the BDP, then PROBE_BW", VERSIONS,
         _s(f"{LINUX_V1}: bbr_check_drain, bbr_drain_gain", f"{DRAFT} A.3 (A.4: 3-round bound); 5.3.2 Drain"),
         _solo, _check_drain, run_key="solo"),
    Case("probe_bw_cycle", "PROBE_BW gain cycling", VERSIONS,
         _s(f"{LINUX_V1}: bbr_update_cycle_phase, bbr_pacing_gain[] (CYCLE_LEN 8)",
            f"{DRAFT} 5.3.3 ProbeBW (bw_probe_wait 2-3 s); A.5, A.8, A.9"),
         _solo, _check_cycle, run_key="solo"),
    Case("utilization", "steady-state goodput on a clean path", VERSIONS,
         _s(f"{LINUX_V1} (design goal: full utilization)", f"{DRAFT} 3.1 High-Level Design Goals"),
         _solo, _check_utilization, run_key="solo"),
    Case("queue_delay", "queueing delay bounded in a deep (8 BDP) buffer", VERSIONS,
         _s(f"{LINUX_V1}: cwnd_gain 2 caps in-flight at 2 BDP", f"{DRAFT} 3.1; 5.6.4 Congestion Window"),
         _solo, _check_queue, run_key="solo"),
    Case("probe_rtt", "PROBE_RTT cadence, duration and cwnd", VERSIONS,
         _s(f"{LINUX_V1}: bbr_update_min_rtt (10 s, 200 ms, cwnd 4)", f"{DRAFT} A.10; 5.3.4 ProbeRTT"),
         _pair, _check_probe_rtt, run_key="pair"),
    Case("fairness", "two same-RTT flows share fairly", VERSIONS,
         _s(f"{LINUX_V1} (design goal)", f"{DRAFT} 3.1 High-Level Design Goals"),
         _pair, _check_fair, run_key="pair"),
    Case("loss_bound", "shallow buffer (0.1 BDP): loss rate bounded near LossThresh", ("bbr3",),
         {"bbr3": f"{DRAFT} 5.5.10 Updating the Model Upon Packet Loss (LossThresh 2 %); A.21"},
         _shallow, _check_loss, run_key="shallow"),
    Case("app_limited", "application-limited flow: bw estimate neither inflated nor dragged down", VERSIONS,
         _s(f"{LINUX_V1}: bbr_update_bw (app-limited samples below max_bw ignored)",
            f"{DRAFT} 5.5.4 BBR.max_bw and Application-limited Delivery Rate Samples; A.7, A.22"),
         _app, _check_app, run_key="app"),
    Case("bw_drop", "response to the bottleneck rate halved mid-run", VERSIONS,
         _s(f"{LINUX_V1}: max_bw filter 10 rounds", f"{DRAFT} A.16 Decreasing Bandwidth"),
         None, None,
         skip="not run: a link has one fixed rate for the whole run (LinkSpec.rate_bps); tcplab has no "
              "time-varying link rate to halve mid-run"),
]


# ---------------------------------------------------------------- running

def available_algorithms() -> list[str]:
    from .scenario import algorithm_catalog

    return [a["name"] for a in algorithm_catalog()]


def check_algorithms(algorithm: str, impl: str | None = None) -> list[str]:
    """``--algorithm`` (bbr | bbr3 | both) -> versions; errors name the field."""
    if algorithm == "both":
        versions = list(VERSIONS)
    elif algorithm in VERSIONS:
        versions = [algorithm]
    else:
        raise ValueError(f"--algorithm: expected one of bbr, bbr3, both; got {algorithm!r}")
    have = available_algorithms()
    if impl is not None:
        if impl not in have:
            raise ValueError(f"--impl: {impl!r} is not an algorithm of this build (known: {', '.join(have)})")
    else:
        missing = [v for v in versions if v not in have]
        if missing:
            raise ValueError(f"--algorithm: {', '.join(repr(m) for m in missing)} not in this build's algorithms "
                             f"({', '.join(have)}); the BBR branches are not merged yet")
    return versions


def run_suite(versions: Sequence[str] = VERSIONS, quick: bool = False, impl: str | None = None,
              cases: Sequence[str] | None = None, verbose: bool = False,
              runner: Callable[[Any], Any] | None = None) -> list[Row]:
    """Run the cases for each BBR version; ``impl`` runs another core
    algorithm under the version's expectations (e.g. ``"cubic"``, to see the
    criteria fail); ``runner`` replaces :func:`tcplab.run` (tests)."""
    import sys

    from . import run as tcplab_run

    runner = runner or tcplab_run
    todo = [c for c in CASES if cases is None or c.id in cases]
    if cases is not None:
        unknown = sorted(set(cases) - {c.id for c in CASES})
        if unknown:
            raise ValueError(f"cases: unknown case(s) {', '.join(unknown)}; known: {', '.join(c.id for c in CASES)}")
    rows: list[Row] = []
    for v in versions:
        algo = impl or v
        cache: dict = {}
        for c in todo:
            if v not in c.algorithms:
                continue
            src = c.source.get(v, "")
            label = v if impl is None else f"{v} (run as {impl})"
            if c.skip or c.scenario is None or c.check is None:
                rows.append(Row(c.id, label, "-", c.skip or "skipped", "-", "skip", src, c.title))
                continue
            key = c.run_key or c.id
            if key not in cache:
                if verbose:
                    print(f"conformance: {v}: running '{key}'", file=sys.stderr)
                cache[key] = runner(c.scenario(algo, v, quick))
            try:
                checks = c.check(cache[key], v, quick)
            except MissingTrace as e:
                checks = [Check("trace", str(e), "the variables the case reads are traced", False)]
            for k in checks:
                res = "skip" if k.passed is None else ("pass" if k.passed else "fail")
                rows.append(Row(c.id, label, k.check, k.measured, k.criterion, res, src, c.title, k.value))
    return rows


def frame(rows: Sequence[Row]):
    import pandas as pd

    return pd.DataFrame([r.as_dict() for r in rows],
                        columns=["case", "algorithm", "check", "measured", "criterion", "result", "source", "title",
                                 "value"])


def write_report(rows: Sequence[Row], out: str, quick: bool = False) -> list[str]:
    """``conformance.csv`` (every row) and ``report.md``; returns the paths."""
    os.makedirs(out, exist_ok=True)
    df = frame(rows)
    csv = os.path.join(out, "conformance.csv")
    df.to_csv(csv, index=False)
    md = os.path.join(out, "report.md")
    n = {k: int((df.result == k).sum()) for k in ("pass", "fail", "skip")}
    with open(md, "w") as f:
        f.write("# BBR conformance (`tcplab conformance bbr`)\n\n")
        if quick:
            f.write("**QUICK MODE: shortened runs.**\n\n")
        f.write(f"Sources: {DRAFT_TITLE} for bbr3; {LINUX_V1} for bbr. The draft allows simulation as the "
                "harness (Appendix A, introduction).\n\n")
        f.write(f"Scenario: dumbbell, C = {C_BPS / 1e6:g} Mbit/s, RTT {RTT_S * 1e3:g} ms (BDP {BDP_PACKETS:.0f} "
                f"packets of {PACKET} B), Linux TCP profile, variables sampled every {SAMPLE * 1e3:g} ms. "
                "Runs: solo (1 flow, 8 BDP buffer), pair (2 flows, 1 BDP, second starts 1 s later), "
                "shallow (bbr3: 2 flows, 0.1 BDP), app (1 flow: 2 s of bulk data, then 20 % of C in 50-ms files).\n\n")
        f.write(f"**{n['pass']} pass, {n['fail']} fail, {n['skip']} skipped.**\n\n")
        show = df[["case", "algorithm", "check", "measured", "criterion", "result", "source"]]
        f.write(show.to_markdown(index=False))
        f.write("\n")
    return [csv, md]


def main_cli(args: Any) -> int:
    """``tcplab conformance bbr``: returns 0 when every case passes (skips allowed), 1 otherwise."""
    import sys

    if args.suite != "bbr":
        raise ValueError(f"suite: unknown conformance suite {args.suite!r}; known: bbr")
    versions = check_algorithms(args.algorithm, args.impl)
    if args.cases:
        cases = [c.strip() for c in args.cases.split(",") if c.strip()]
        known = {c.id for c in CASES}
        bad = [c for c in cases if c not in known]
        if bad:
            raise ValueError(f"--cases: unknown case(s) {', '.join(bad)}; known: {', '.join(sorted(known))}")
    else:
        cases = None
    out = args.out or os.path.join("out", "conformance-bbr" + ("-quick" if args.quick else ""))
    rows = run_suite(versions, quick=args.quick, impl=args.impl, cases=cases, verbose=True)
    paths = write_report(rows, out, args.quick)
    df = frame(rows)
    width = max(len(r.case) for r in rows)
    aw = max(len(r.algorithm) for r in rows)
    for r in rows:
        print(f"{r.result.upper():4}  {r.algorithm:<{aw}} {r.case:<{width}} {r.check:<22} {r.measured}")
    n_fail = int((df.result == "fail").sum())
    print(f"{int((df.result == 'pass').sum())} pass, {n_fail} fail, {int((df.result == 'skip').sum())} skipped; "
          f"report: {paths[1]}", file=sys.stderr)
    return 1 if n_fail else 0
