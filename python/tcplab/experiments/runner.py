"""Running many simulations of an experiment on all local cores.

Each run is a (key, RunSpec dict, extract) triple; a worker process runs the
spec in the core and returns only what the experiment needs (``extract``
names a function of this module), so no full result crosses processes.
Results come back in the order given, whatever order the workers finish in,
so an experiment's outputs do not depend on scheduling.
"""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Optional, Sequence

import numpy as np


def _series(raw: dict, table: str, key: str, ident: int, column: str) -> tuple[np.ndarray, np.ndarray]:
    t = raw[table]
    mask = np.asarray(t[key]) == ident
    return np.asarray(t["time"])[mask], np.asarray(t[column])[mask]


def goodput_series(raw: dict, n_flows: int) -> tuple[list, list]:
    """Per-flow goodput (bit/s) in each sampling interval, from the
    delivered-bytes series: (interval end times, one list per flow)."""
    per, times = [], []
    for i in range(n_flows):
        t, d = _series(raw, "flow_ts", "flow", i, "delivered_bytes")
        per.append((np.diff(d.astype(float)) * 8.0 / np.diff(t)).tolist())
        if i == 0:
            times = t[1:].tolist()
    return times, per


def extract_summary(raw: dict, spec: dict, args: dict) -> dict:
    """Per-flow goodput over the measurement window and over extra windows
    (``args["windows"]``: list of (start, end) seconds, from the sampled
    delivered-bytes series, exact at sample times), and the bottleneck link."""
    flows = raw["flows"]
    out: dict[str, Any] = {
        "goodput_bps": [float(x) for x in flows["goodput_bps"]],
        "retransmits": [int(x) for x in flows["retransmits"]],
        "timeouts": [int(x) for x in flows["timeouts"]],
        "names": list(flows["name"]),
        "events": int(raw["meta"]["events"]),
        "wall_s": float(raw["meta"]["wall_s"]),
    }
    links = raw["links"]
    names = list(links["name"])
    b = names.index(args["bottleneck"])
    out["utilization"] = float(links["utilization"][b])
    out["drops"] = int(links["drops"][b])
    out["queue_mean_packets"] = float(links["queue_mean_packets"][b])
    out["bottleneck_packets"] = int(links["data_packets_out"][b])
    windows = args.get("windows") or []
    if windows:
        per = []
        for i in range(len(out["names"])):
            t, d = _series(raw, "flow_ts", "flow", i, "delivered_bytes")
            row = []
            for (a, e) in windows:
                da, de = np.interp([a, e], t, d.astype(float))
                row.append(float((de - da) * 8.0 / (e - a)))
            per.append(row)
        out["window_goodput_bps"] = per
    return out


def extract_traces(raw: dict, spec: dict, args: dict) -> dict:
    """extract_summary plus the cwnd of every flow and the bottleneck queue
    over time (for cwnd/queue figures)."""
    out = extract_summary(raw, spec, args)
    ft = raw["flow_ts"]
    out["trace_time"] = np.asarray(ft["time"])[np.asarray(ft["flow"]) == 0].tolist()
    out["cwnd"] = [np.asarray(ft["cwnd"])[np.asarray(ft["flow"]) == i].tolist() for i in range(len(out["names"]))]
    names = list(raw["links"]["name"])
    b = names.index(args["bottleneck"])
    qt, qp = _series(raw, "queue_ts", "link", b, "packets")
    out["queue_time"] = qt.tolist()
    out["queue"] = qp.tolist()
    return out


def extract_cc_traces(raw: dict, spec: dict, args: dict) -> dict:
    """extract_traces plus flow 0's congestion-control variables (the core's
    cc_ts series): ``cc_time`` and one list per variable under ``cc``."""
    out = extract_traces(raw, spec, args)
    cc = raw["cc_ts"]
    flow = np.asarray(cc["flow"]) == args.get("cc_flow", 0)
    var = np.asarray(cc["variable"])[flow]
    t = np.asarray(cc["time"])[flow]
    v = np.asarray(cc["value"])[flow]
    out["cc"] = {}
    for code, name in enumerate(cc["variable_names"]):
        sel = var == code
        if sel.any():
            out["cc"][name] = v[sel].tolist()
            out["cc_time"] = t[sel].tolist()
    return out


EXTRACTS: dict[str, Callable[[dict, dict, dict], dict]] = {
    "summary": extract_summary,
    "traces": extract_traces,
    "cc_traces": extract_cc_traces,
}


def _work(job: tuple[str, dict, str, dict]) -> tuple[str, dict]:
    key, spec, extract, args = job
    from tcplab import _core

    raw = _core.run(json.dumps(spec))
    return key, EXTRACTS[extract](raw, spec, args)


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def run_all(jobs: Sequence[tuple[str, dict, str, dict]], workers: Optional[int] = None, label: str = "",
            verbose: bool = True) -> dict[str, dict]:
    """Runs every job on a process pool; returns {key: extract} in job order."""
    workers = workers or default_workers()
    results: dict[str, dict] = {}
    t0 = time.perf_counter()
    n = len(jobs)
    tty = verbose and sys.stderr.isatty()
    if workers == 1 or n == 1:
        done_iter = map(_work, jobs)
        for i, (k, r) in enumerate(done_iter, 1):
            results[k] = r
            _report(label, i, n, t0, tty)
    else:
        with ProcessPoolExecutor(max_workers=workers) as ex:
            for i, (k, r) in enumerate(ex.map(_work, jobs), 1):
                results[k] = r
                _report(label, i, n, t0, tty)
    if verbose:
        print(f"  {label}: {n} runs in {time.perf_counter() - t0:.1f} s wall on {workers} worker(s)", file=sys.stderr)
    return {k: results[k] for k, *_ in jobs}


def _report(label: str, i: int, n: int, t0: float, tty: bool) -> None:
    if tty:
        el = time.perf_counter() - t0
        eta = el / i * (n - i)
        print(f"\r  {label}: {i}/{n} runs, {el:.0f} s elapsed, ETA {eta:.0f} s   ", end="" if i < n else "\n",
              file=sys.stderr)
