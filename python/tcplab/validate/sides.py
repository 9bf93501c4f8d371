"""The path both sides of a validation run, tcplab's side, and the common per-side form.

:func:`simulate` runs the kernel path's dumbbell in tcplab (:func:`sim_scenario`,
with the Linux profile, :func:`linux_flow_options`); :func:`kernel_side` and
:func:`sim_side` put a kernel directory's flow and tcplab's flow into one form
(:class:`Side`, times in s from the kernel's t0) that every metric function of
:mod:`tcplab.validate.metrics` is computed from. Part of ``tcplab validate``
(:mod:`tcplab.validate.fidelity` has the overview and the kernel directory's schema).
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "KernelDirError",
    "Side",
    "kernel_algorithm",
    "kernel_cc_params",
    "kernel_hz",
    "kernel_side",
    "linux_flow_options",
    "n_flows_of",
    "read_meta",
    "sim_scenario",
    "sim_side",
    "sim_t0",
    "simulate",
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

#: Most flows a validation runs: each kernel flow is two real-time processes
#: on the host (kernel.MAX_FLOWS is the same bound).
MAX_FLOWS = 4


class KernelDirError(ValueError):
    """A kernel directory is missing a file or column, or holds something unreadable."""


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
    if sc is None or db is None:  # (no scenario: no dumbbell either)
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

