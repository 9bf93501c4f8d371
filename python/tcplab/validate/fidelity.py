"""Fidelity of tcplab against the Linux kernel: the same dumbbell on both, compared metric by metric.

The kernel side (:mod:`tcplab.validate.kernel`) leaves a *kernel directory*;
:func:`simulate` runs the same path in tcplab; :func:`compare` puts both into
one common per-side form (:class:`Side`) and applies *the same* metric
functions to each, so a difference in the table is a difference in the runs,
not in how they were measured. :func:`write_report` writes ``fidelity.csv``,
the overlay figures (PNG) and a self-contained ``report.html``.

Kernel directory (times in s relative to t0 = the first data packet with
payload reaching the bottleneck)::

    meta.json      kernel, algorithm, rate_bps, rtt_s, buffer_packets, duration_s, mss, mtu,
                   sysctls, nstat, forwarder {late_mean_s, late_p99_s, late_max_s, late_over_1ms,
                   stalls [[t, length_s], ...], packets_fwd, packets_dropped, bytes_fwd}, t0_monotonic
    tcp_info.csv   time, cwnd, ssthresh, srtt_s, ..., retransmits (total), ...   (every 10 ms)
    rx.csv         time, bytes (cumulative payload bytes read by the receiver)
    drops.csv      time, seq, payload_bytes, queue_packets
    queue.csv      time, packets, bytes                                         (every 10 ms)

tcplab's times are shifted to the same origin: t0 = the flow's start plus
the first packet's trip over the sender's access link (:func:`sim_t0`).

Metrics (docs/validation.md, "tcplab validate", defines them exactly):
steady-state goodput, cwnd min/mean/max and srtt mean over the steady-state
window (:func:`steady_window`), sawtooth period (mean interval between loss
events, :func:`loss_events`), drops, retransmissions, first-loss time, peak
cwnd in start-up. A bbr run has its own rows (:data:`BBR_METRICS`: no
sawtooth period or slow-start exit; mean srtt, the retransmission rate and
the ProbeRTT episodes, :func:`probe_rtt_episodes`, judged against
:data:`BBR_TARGETS` and :func:`probe_rtt_cadence`).
"""

from __future__ import annotations

import functools
import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "Case",
    "KernelDirError",
    "METRICS",
    "Side",
    "TARGETS",
    "case_from_dict",
    "case_from_file",
    "case_from_flags",
    "aggregate_side",
    "compare",
    "compare_flows",
    "jain_index",
    "n_flows_of",
    "disturbances",
    "first_loss",
    "goodput_bps",
    "kernel_algorithm",
    "kernel_cc_params",
    "kernel_hz",
    "kernel_side",
    "linux_flow_options",
    "loss_event_gap",
    "loss_events",
    "max_rtt",
    "read_meta",
    "sawtooth_period",
    "side_metrics",
    "sim_side",
    "sim_t0",
    "simulate",
    "startup_peak",
    "steady_window",
    "table_text",
    "targets_summary",
    "time_weighted_stats",
    "write_report",
]

#: Kernel algorithm -> (tcplab algorithm, parameters giving Linux 6.x semantics).
#: Kernel ``reno`` is tcp_cong.c's Reno (integer cwnd with snd_cwnd_cnt credit)
#: with the stack's SACK recovery: tcplab ``newreno`` in ``linux`` mode with
#: ``recovery="sack"``. Kernel ``cubic`` is tcp_cubic.c v2.3 with HyStart on.
KERNEL_ALGORITHMS: dict[str, tuple[str, dict]] = {
    "reno": ("newreno", {"mode": "linux"}),
    "cubic": ("cubic", {"variant": "linux", "hystart": True}),
    # tcp_bbr.c (BBR v1) with its pacing; tcplab's bbr follows it, the Linux profile does the rest.
    "bbr": ("bbr", {}),
}
#: Names a scenario may use for them (tcplab's names and aliases).
ALGORITHM_SPELLINGS = {"reno": "reno", "newreno": "reno", "cubic": "cubic", "cubictcp": "cubic", "bbr": "bbr"}

#: The kernel path's packets: 1500-byte MTU, 52 bytes of IP + TCP headers
#: with timestamps, so an MSS of 1448 payload bytes; pure ACKs are 52 bytes.
PACKET_SIZE = 1500
HEADER_SIZE = 52
ACK_SIZE = 52
DEFAULT_MSS = PACKET_SIZE - HEADER_SIZE
#: Access links of tcplab's dumbbell, as a multiple of the bottleneck rate.
#: The kernel's hosts reach the forwarder over veth pairs (memory speed);
#: at 100 x C the access hop costs 1 % of a bottleneck packet time.
ACCESS_RATE_FACTOR = 100.0
#: Time-series sampling of both sides (s): tcp_info and queue.csv are 10 ms.
SAMPLE_INTERVAL = 0.01
#: The steady-state window is [STEADY_START, end] when the run is at least
#: twice that long, else the last half of the run.
STEADY_START = 30.0

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

#: Most flows a validation runs: each kernel flow is two real-time processes
#: on the host (kernel.MAX_FLOWS is the same bound).
MAX_FLOWS = 4

#: Disturbance thresholds of the kernel run's forwarder (s).
LATE_P99_LIMIT = 1e-3
LATE_MAX_LIMIT = 5e-3
STALL_LIMIT = 10e-3


class KernelDirError(ValueError):
    """A kernel directory is missing a file or column, or holds something unreadable."""


# ---------------------------------------------------------------- what is validated

@dataclass(frozen=True)
class Case:
    """One validation: ``n_flows`` bulk flows (1 to :data:`MAX_FLOWS`) of
    ``algorithm`` (kernel name), all starting together, over a bottleneck of
    ``rate_bps`` with round-trip propagation delay ``rtt_s`` and a drop-tail
    buffer of ``buffer_packets``, for ``duration_s``."""

    algorithm: str
    rate_bps: float
    rtt_s: float
    buffer_packets: int
    duration_s: float
    seed: int = 0
    name: str = "validate"
    n_flows: int = 1

    @property
    def bdp_packets(self) -> float:
        return self.rate_bps * self.rtt_s / (8 * PACKET_SIZE)

    def describe(self) -> str:
        flows = f"{self.n_flows} flows of " if self.n_flows > 1 else ""
        return (f"{flows}{self.algorithm}, {self.rate_bps / 1e6:g} Mbit/s, RTT {self.rtt_s * 1e3:g} ms, "
                f"B = {self.buffer_packets} packets ({self.buffer_packets / self.bdp_packets:.2g} BDP), "
                f"{self.duration_s:g} s")


def kernel_algorithm(name: Any, field_path: str = "algorithm") -> str:
    """The kernel's name (``reno`` or ``cubic``) for an algorithm name of a
    scenario; a :class:`~tcplab.errors.ScenarioError` for anything else."""
    from ..errors import ScenarioError

    if isinstance(name, str) and name.lower() in ALGORITHM_SPELLINGS:
        return ALGORITHM_SPELLINGS[name.lower()]
    raise ScenarioError(field_path, f"the kernel side runs only reno, cubic and bbr, got {name!r}")


# ---------------------------------------------------------------- tcplab's side

@functools.lru_cache(maxsize=1)
def _flow_accepts_profile() -> bool:
    import tcplab

    return "profile" in getattr(tcplab.Flow, "__dataclass_fields__", {})


def linux_flow_options() -> dict:
    """Flow options that make a tcplab flow behave like a Linux sender/receiver.

    ``{"profile": "linux"}`` when the installed front end's :class:`tcplab.Flow`
    has a ``profile`` field; otherwise the closest settings that exist: initial
    window 10, delayed ACKs, a 200 ms minimum RTO and Linux's RTO formula.
    """
    if _flow_accepts_profile():
        return {"profile": "linux"}
    return {"init_cwnd": 10, "delayed_ack": True, "min_rto": 0.2, "rto_mode": "linux"}


def kernel_hz() -> int | None:
    """This machine's kernel CONFIG_HZ (jiffies per second), from
    /proc/config.gz or /boot/config-<release>; None where neither says.
    tcp_cubic.c counts its epoch and throttles its updates in jiffies, so
    tcplab's cubic must use the same ``hz`` as the kernel it is compared with."""
    import gzip
    import re

    release = os.uname().release
    for path, opener in (("/proc/config.gz", gzip.open), (f"/boot/config-{release}", open)):
        try:
            with opener(path, "rt") as fh:
                for line in fh:
                    m = re.match(r"CONFIG_HZ=(\d+)\s*$", line)
                    if m:
                        return int(m.group(1))
        except OSError:
            continue
    return None


def kernel_cc_params(algorithm: str) -> dict:
    """Parameters that make tcplab's algorithm match *this machine's* kernel:
    cubic's ``hz`` = CONFIG_HZ where it can be read (:func:`kernel_hz`)."""
    if kernel_algorithm(algorithm) == "cubic":
        hz = kernel_hz()
        if hz:
            return {"hz": hz}
    return {}


def simulate(algorithm: str, rate_bps: float, rtt_s: float, buffer_packets: int, duration_s: float,
             seed: int = 0, flow_options: Mapping[str, Any] | None = None, *, mss: int = DEFAULT_MSS,
             cc_params: Mapping[str, Any] | None = None, n_flows: int = 1):
    """Run tcplab's side of a validation: one bulk flow on a dumbbell whose
    bottleneck is the kernel path's (``rate_bps``, round trip ``rtt_s``,
    ``buffer_packets``), with no access delay and access links of
    ``ACCESS_RATE_FACTOR`` x the rate (the kernel's hosts have none), 1500-byte
    packets carrying ``mss`` payload bytes, payload accounting, SACK
    recovery, 10 ms sampling and the loss trace on. ``algorithm`` is the
    kernel's name (``reno``, ``cubic``); ``flow_options`` default to
    :func:`linux_flow_options`; ``cc_params`` are added to the algorithm's
    parameters (e.g. :func:`kernel_cc_params`). ``n_flows`` flows of the
    algorithm share the bottleneck, all starting at 0 (the kernel's flows
    connect together). Returns the :class:`tcplab.Results`."""
    import warnings

    import tcplab

    with warnings.catch_warnings():  # (the same path as the kernel's, on purpose: no phase-lock advice here)
        warnings.simplefilter("ignore", tcplab.PhaseLockWarning)
        return tcplab.run(sim_scenario(algorithm, rate_bps, rtt_s, buffer_packets, duration_s, seed, flow_options,
                                       mss=mss, cc_params=cc_params, n_flows=n_flows))


def sim_scenario(algorithm: str, rate_bps: float, rtt_s: float, buffer_packets: int, duration_s: float,
                 seed: int = 0, flow_options: Mapping[str, Any] | None = None, *, mss: int = DEFAULT_MSS,
                 cc_params: Mapping[str, Any] | None = None, n_flows: int = 1):
    """The :func:`tcplab.Dumbbell` :func:`simulate` runs (building it checks
    that this tcplab has the algorithm, so the command can refuse before the
    kernel side runs)."""
    import tcplab

    kalg = kernel_algorithm(algorithm)
    alg, params = KERNEL_ALGORITHMS[kalg]
    params = {**params, **dict(cc_params or {})}
    return tcplab.Dumbbell(
        n_flows=int(n_flows), bottleneck_rate=float(rate_bps), rtt=float(rtt_s), buffer=int(buffer_packets),
        algorithm=alg, params=dict(params), recovery="sack", duration=float(duration_s),
        access_rate=ACCESS_RATE_FACTOR * float(rate_bps), access_delay=0.0,
        packet_size=PACKET_SIZE, header_size=PACKET_SIZE - int(mss), ack_size=ACK_SIZE, accounting="payload",
        sample_interval=SAMPLE_INTERVAL, loss_trace=True, seed=int(seed),
        flow_options=dict(flow_options) if flow_options is not None else linux_flow_options(),
        name=f"validate-{kalg}",
    )


def sim_t0(result: Any, flow: int = 0) -> float:
    """tcplab's time of the kernel's t0: when the flow's first data packet
    reaches the bottleneck router (its start, plus one packet time on the
    sender's access link, plus that link's delay). 0 without a Dumbbell."""
    sc = getattr(result, "scenario", None)
    db = getattr(sc, "dumbbell", None)
    if db is None:
        return 0.0
    f = db.flow(flow)
    from ..units import parse_time

    start = parse_time(f.start, "start")
    return start + db.packet_bytes * 8 / db.access_rate_bps + sc.access_delays[flow][0]


# ---------------------------------------------------------------- common per-side form

@dataclass
class Side:
    """One run in the form every metric is computed from (times in s from t0).

    ``ts``: time, cwnd (segments), srtt (s), sampled; ``rx``: time, bytes
    (cumulative payload delivered to the receiver); ``drops``: times of the
    flow's data packets dropped at the bottleneck; ``queue``: time, packets;
    ``retransmissions``: total segments retransmitted; ``duration``: end of
    the run on this time axis.
    """

    label: str
    ts: Any
    rx: Any
    drops: np.ndarray
    queue: Any
    retransmissions: float
    duration: float
    extra: dict = field(default_factory=dict)


def _read_csv(path: Path, columns: Sequence[str]):
    import pandas as pd

    if not path.is_file():
        raise KernelDirError(f"{path}: missing")
    try:
        df = pd.read_csv(path)
    except (ValueError, OSError) as e:
        raise KernelDirError(f"{path}: unreadable: {e}") from None
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise KernelDirError(f"{path}: missing column(s) {', '.join(missing)}")
    return df


def read_meta(kernel_dir: str | os.PathLike) -> dict:
    """meta.json of a kernel directory."""
    p = Path(kernel_dir) / "meta.json"
    if not p.is_file():
        raise KernelDirError(f"{p}: missing")
    try:
        meta = json.loads(p.read_text())
    except (ValueError, OSError) as e:
        raise KernelDirError(f"{p}: unreadable: {e}") from None
    for k in ("rate_bps", "rtt_s", "buffer_packets", "duration_s"):
        if k not in meta:
            raise KernelDirError(f"{p}: missing key {k!r}")
    return meta


def _flow_rows(df: Any, flow: int, *, unlabelled_is_0: bool = True):
    """The rows of flow ``flow`` of a kernel table. A table without a ``flow``
    column (a directory from before multi-flow runs) is all flow 0; rows with
    an empty flow (a dropped packet of no flow) count as flow 0 only when
    ``unlabelled_is_0`` (one-flow runs, where every drop is the flow's)."""
    if "flow" not in df.columns:
        return df if flow == 0 else df.iloc[0:0]
    f = df["flow"]
    sel = f == flow
    if flow == 0 and unlabelled_is_0:
        sel = sel | f.isna()
    return df[sel]


def n_flows_of(meta: Mapping[str, Any]) -> int:
    """Number of flows of a kernel directory (1 for one from before multi-flow runs)."""
    return int(meta.get("n_flows", 1))


def kernel_side(kernel_dir: str | os.PathLike, flow: int = 0) -> Side:
    """Flow ``flow`` of the kernel run of ``kernel_dir`` as a :class:`Side`
    (its tcp_info, received bytes and drops; the queue is the shared one)."""
    import pandas as pd

    d = Path(kernel_dir)
    meta = read_meta(d)
    if not 0 <= flow < n_flows_of(meta):
        raise KernelDirError(f"{d / 'meta.json'}: no flow {flow} (n_flows = {n_flows_of(meta)})")
    one = n_flows_of(meta) == 1
    ti = _flow_rows(_read_csv(d / "tcp_info.csv", ["time", "cwnd", "srtt_s", "retransmits"]), flow)
    rx = _flow_rows(_read_csv(d / "rx.csv", ["time", "bytes"]), flow)
    drops = _flow_rows(_read_csv(d / "drops.csv", ["time"]), flow, unlabelled_is_0=one)
    if not len(ti) or not len(rx):
        raise KernelDirError(f"{d}: no tcp_info or rx rows for flow {flow}")
    queue = _read_csv(d / "queue.csv", ["time", "packets"])
    ts = pd.DataFrame({"time": ti["time"].astype(float), "cwnd": ti["cwnd"].astype(float),
                       "srtt": ti["srtt_s"].astype(float),
                       "ssthresh": ti["ssthresh"].astype(float) if "ssthresh" in ti.columns else math.nan,
                       # bbr runs: tcp_bbr.c's mode, read off TCP_CC_INFO's gains (kernel.BBR_COLUMNS)
                       "mode": pd.to_numeric(ti["bbr_mode"], errors="coerce").astype(float)
                       if "bbr_mode" in ti.columns else math.nan,
                       }).sort_values("time", kind="stable")
    retrans = float(ti["retransmits"].max()) if len(ti) else 0.0
    # tcpi_data_segs_out counts every segment with payload, retransmissions included.
    data_segs = float(ti["data_segs_out"].max()) if "data_segs_out" in ti.columns and len(ti) else math.nan
    if "payload_bytes" in drops.columns:  # only data segments count as drops, as on tcplab's side
        drops = drops[drops["payload_bytes"] > 0]
    rx = rx[["time", "bytes"]].astype(float).sort_values("time", kind="stable").reset_index(drop=True)
    return Side("kernel", ts.reset_index(drop=True), rx, np.sort(drops["time"].to_numpy(dtype=float)),
                queue[["time", "packets"]].astype(float).reset_index(drop=True),
                retrans, _observed_end(float(meta["duration_s"]), ts, rx),
                {"meta": meta, "flow": flow, "data_segments_sent": data_segs})


def _observed_end(duration: float, ts: Any, rx: Any) -> float:
    """The end of a side's run as far as its samples reach: the nominal
    duration, or the last cwnd or delivery sample if either stops earlier
    (the kernel's clock starts at t0, after the handshake), so the window
    never extends past what was measured."""
    ends = [duration] + [float(x["time"].max()) for x in (ts, rx) if len(x)]
    return min(ends)


def sim_side(result: Any, flow: int = 0) -> Side:
    """Flow ``flow`` of tcplab's run as a :class:`Side`, on the kernel's time
    axis: t minus the earliest :func:`sim_t0` of all flows (the kernel's t0
    is the first data packet of any flow)."""
    import pandas as pd

    n = len(result.flows) if getattr(result, "flows", None) is not None else 1
    t0 = min(sim_t0(result, f) for f in range(max(n, flow + 1)))
    fts = result.flow_ts[result.flow_ts["flow"] == flow]
    ts = pd.DataFrame({"time": fts["time"].to_numpy(float) - t0, "cwnd": fts["cwnd"].to_numpy(float),
                       "srtt": fts["srtt"].to_numpy(float), "ssthresh": fts["ssthresh"].to_numpy(float),
                       "mode": _cc_var_at(result, flow, "mode", fts["time"].to_numpy(float))})
    rx = pd.DataFrame({"time": fts["time"].to_numpy(float) - t0, "bytes": fts["delivered_bytes"].to_numpy(float)})
    bott = result.scenario.bottleneck_links()[0] if getattr(result, "scenario", None) is not None else "r1-r2"
    dt = result.drop_trace
    if len(dt) == 0 and not _has_loss_trace(result):
        raise ValueError("the tcplab run has no loss trace (run it with loss_trace=True)")
    sel = (dt["flow"] == flow) & (dt["packet"] == "data") & (dt["link_name"] == bott) if len(dt) else []
    drops = np.sort(dt.loc[sel, "time"].to_numpy(float) - t0) if len(dt) else np.zeros(0)
    q = result.queue_ts[result.queue_ts["link_name"] == bott]
    queue = pd.DataFrame({"time": q["time"].to_numpy(float) - t0, "packets": q["packets"].to_numpy(float)})
    row = result.flows[result.flows["flow"] == flow].iloc[0]
    duration = float(result.duration) - t0 if result.duration is not None else math.inf
    sent = float(row["data_packets_sent"]) if "data_packets_sent" in row.index else math.nan
    return Side("tcplab", ts, rx, drops, queue, float(row["retransmits"]), _observed_end(duration, ts, rx),
                {"t0": t0, "flow": flow, "data_segments_sent": sent})


def _cc_var_at(result: Any, flow: int, name: str, times: np.ndarray) -> np.ndarray:
    """The algorithm's traced variable ``name`` (cc_ts) of ``flow`` at ``times``
    (the last value at or before each); NaN where the algorithm traces no such variable."""
    cc = getattr(result, "cc_ts", None)
    if cc is None or not len(cc):
        return np.full(len(times), math.nan)
    d = cc[(cc["flow"] == flow) & (cc["variable"].astype(str) == name)].sort_values("time", kind="stable")
    if not len(d):
        return np.full(len(times), math.nan)
    t, v = d["time"].to_numpy(float), d["value"].to_numpy(float)
    i = np.searchsorted(t, times, side="right") - 1
    return np.where(i >= 0, v[np.clip(i, 0, len(v) - 1)], math.nan)


def _has_loss_trace(result: Any) -> bool:
    spec = getattr(result, "spec", None) or {}
    return bool(spec.get("loss_trace", False)) or bool(getattr(getattr(result, "scenario", None), "loss_trace", False))


# ---------------------------------------------------------------- metric functions (both sides alike)

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
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all are equal,
    1/n when one flow has everything; NaN when undefined (no values, all 0,
    or a NaN among them)."""
    x = np.asarray(values, float)
    if not len(x) or not np.all(np.isfinite(x)) or not np.any(x != 0):
        return math.nan
    return float(x.sum() ** 2 / (len(x) * np.sum(x * x)))


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


# ---------------------------------------------------------------- report

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


# ---------------------------------------------------------------- what the command line asks for

#: Default length of a validation (s) when the scenario or flags give none.
DEFAULT_DURATION = 60.0

#: Keys a validation scenario may set; everything else of a scenario file is
#: refused with the reason the kernel path cannot do it.
_ALLOWED = {"": {"name", "description", "dumbbell", "run"},
            "dumbbell": {"n_flows", "bottleneck_rate", "rtt", "buffer", "algorithm", "recovery", "packet_size"},
            "run": {"duration", "seed"}}
_NO_ACCESS = "the kernel path has no access links: rtt is the whole path's round-trip propagation delay"
_SET_HERE = "set by tcplab validate to the kernel's (52-byte headers with timestamps, payload accounting)"
_REFUSED = {
    "dumbbell.params": "the kernel runs reno, cubic and bbr with their default parameters",
    "dumbbell.loss": "the kernel path has no random loss, only the bottleneck's drop-tail queue",
    "dumbbell.reverse_loss": "the kernel path has no random loss, only the bottleneck's drop-tail queue",
    "dumbbell.start": "the kernel side starts its flow at t0",
    "dumbbell.access_rate": _NO_ACCESS,
    "dumbbell.access_delay": _NO_ACCESS,
    "dumbbell.header_size": _SET_HERE,
    "dumbbell.ack_size": _SET_HERE,
    "dumbbell.accounting": _SET_HERE,
    "dumbbell.flow_options": "tcplab's side uses the Linux profile (linux_flow_options), not per-scenario options",
    "run.measure_window": "validate measures over its own steady-state window ([30 s, end], or the last half)",
    "run.measure_start": "validate measures over its own steady-state window ([30 s, end], or the last half)",
    "run.sample_interval": "set by tcplab validate (10 ms, as the kernel side samples)",
    "run.trace_links": "set by tcplab validate (the bottleneck's queue)",
    "run.loss_trace": "set by tcplab validate (always on)",
}


def _case_checks(rate: float, rtt: float, buffer_packets: float | None, duration: float,
                 fields: Mapping[str, str]) -> int:
    """Check what both forms share; the buffer in whole packets."""
    from ..errors import ScenarioError

    if buffer_packets is None:
        raise ScenarioError(fields["buffer"], "the kernel's bottleneck needs a finite buffer")
    b = int(round(buffer_packets))
    if b < 1:
        raise ScenarioError(fields["buffer"], f"must be at least 1 packet, got {buffer_packets:g}")
    if not (math.isfinite(duration) and duration >= 2 * rtt and duration > 0):
        raise ScenarioError(fields["duration"], f"must be positive and at least two round trips, got {duration:g} s")
    return b


def case_from_dict(doc: Mapping[str, Any], name: str = "validate") -> Case:
    """A :class:`Case` from a parsed scenario file: a ``[dumbbell]`` with one
    flow of reno or cubic (SACK recovery, 1500-byte packets) and ``[run]``
    ``duration`` (default 60 s) and ``seed``. The file is first checked as
    any scenario (unknown keys, units); then every key the kernel path cannot
    honour is refused with a :class:`~tcplab.errors.ScenarioError` naming it
    and saying why."""
    from ..errors import ScenarioError
    from ..scenario import scenario_from_dict

    sc = scenario_from_dict(doc, name=name)
    if sc.dumbbell is None:
        raise ScenarioError("", "tcplab validate needs a [dumbbell] scenario (one flow over one bottleneck)")
    for table, allowed in _ALLOWED.items():
        keys = doc if table == "" else doc.get(table, {})
        for k in keys:
            path = f"{table}.{k}" if table else k
            if k not in allowed:
                raise ScenarioError(path, "not supported by tcplab validate: "
                                          + _REFUSED.get(path, "the kernel path cannot do it"))
    db = doc["dumbbell"]
    n_flows = _check_flows(db.get("n_flows", 1), "dumbbell.n_flows")
    if isinstance(db.get("algorithm"), (list, tuple)):
        raise ScenarioError("dumbbell.algorithm", "expected one algorithm name")
    alg = kernel_algorithm(db.get("algorithm", "reno"), "dumbbell.algorithm")
    _check_bbr_flows(alg, n_flows, "dumbbell.n_flows")
    rec = db.get("recovery", "sack")
    if not isinstance(rec, str) or rec.lower() != "sack":
        raise ScenarioError("dumbbell.recovery",
                            f"the kernel recovers with SACK; set \"sack\" or leave it out, got {rec!r}")
    if sc.packet_bytes != PACKET_SIZE:
        raise ScenarioError("dumbbell.packet_size",
                            f"the kernel path's MTU is {PACKET_SIZE} B, got {sc.packet_bytes} B")
    run = doc.get("run", {})
    duration = float(sc._run_settings()["duration"]) if "duration" in run else DEFAULT_DURATION
    fields = {"buffer": "dumbbell.buffer", "duration": "run.duration"}
    b = _case_checks(sc.capacity_bps, sc.rtt_s, sc.buffer_packets, duration, fields)
    return Case(alg, sc.capacity_bps, sc.rtt_s, b, duration, seed=int(run.get("seed", 0)), name=name,
                n_flows=n_flows)


def _check_flows(n: Any, field_path: str) -> int:
    """The number of flows, an integer from 1 to :data:`MAX_FLOWS`; a
    :class:`~tcplab.errors.ScenarioError` naming ``field_path`` otherwise."""
    from ..errors import ScenarioError

    if isinstance(n, str) and n.strip().isdigit():
        n = int(n)
    if isinstance(n, bool) or not isinstance(n, int):
        raise ScenarioError(field_path, f"must be an integer from 1 to {MAX_FLOWS}, got {n!r}")
    if not 1 <= n <= MAX_FLOWS:
        raise ScenarioError(field_path, f"tcplab validate runs 1 to {MAX_FLOWS} flows (each kernel flow is two "
                                        f"real-time processes on this host), got {n}")
    return n


def _check_bbr_flows(alg: str, n: int, field_path: str) -> None:
    """bbr is validated one flow at a time: its comparison (ProbeRTT episodes,
    retransmission rate) is defined per flow, not for an aggregate."""
    from ..errors import ScenarioError

    if alg == "bbr" and n != 1:
        raise ScenarioError(field_path, f"bbr is validated with one flow (its ProbeRTT cadence and retransmission "
                                        f"rate are per flow), got {n}")


def case_from_file(path: str | os.PathLike) -> Case:
    """:func:`case_from_dict` of a TOML file (named after its stem)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    with open(path, "rb") as fh:
        doc = tomllib.load(fh)
    return case_from_dict(doc, name=os.path.splitext(os.path.basename(os.fspath(path)))[0])


def case_from_flags(algorithm: Any, rate: Any, rtt: Any, buffer: Any = "1BDP", duration: Any = DEFAULT_DURATION,
                    seed: int = 0, flows: Any = 1) -> Case:
    """A :class:`Case` from the command line's flags (units as in scenario
    files: ``20Mbps``, ``50ms``, ``1BDP``/``83``, ``20s``); errors name the flag."""
    from ..errors import ScenarioError
    from ..units import parse_buffer, parse_rate, parse_time

    if algorithm is None:
        raise ScenarioError("--algorithm", "missing: reno, cubic or bbr (or give a scenario file)")
    alg = kernel_algorithm(algorithm, "--algorithm")
    for flag, v in (("--rate", rate), ("--rtt", rtt)):
        if v is None:
            raise ScenarioError(flag, "missing (or give a scenario file)")
    r = parse_rate(rate, "--rate")
    if not (math.isfinite(r) and r > 0):
        raise ScenarioError("--rate", f"must be a positive rate, got {rate!r}")
    t = parse_time(rtt, "--rtt")
    if not (math.isfinite(t) and t > 0):
        raise ScenarioError("--rtt", f"must be a positive time, got {rtt!r}")
    d = parse_time(duration, "--duration")
    bp = parse_buffer(buffer, "--buffer").packets_for(r, t, PACKET_SIZE)
    b = _case_checks(r, t, bp, d, {"buffer": "--buffer", "duration": "--duration"})
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ScenarioError("--seed", f"must be a non-negative integer, got {seed!r}")
    n = _check_flows(flows, "--flows")
    _check_bbr_flows(alg, n, "--flows")
    name = f"{alg}-{r / 1e6:g}Mbps-{t * 1e3:g}ms-{b}p-{d:g}s" + (f"-{n}flows" if n > 1 else "")
    return Case(alg, r, t, b, d, seed=seed, name=name, n_flows=n)
