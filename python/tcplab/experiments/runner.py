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
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional, Sequence

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


def extract_flows_files(raw: dict, spec: dict, args: dict) -> dict:
    """Per-flow totals, utilization of ``args["backbone"]`` links and files
    binned by size (``args["bins"]``: edges, bytes) separately for each flow
    group (``args["groups"]``: one label per flow): per bin the number of
    finished files, the sum of their transfer times and the number not
    finished. Keeps multi-bottleneck runs with tens of thousands of files
    small to return."""
    flows, links, files = raw["flows"], raw["links"], raw["files"]
    names = list(links["name"])
    idx = [names.index(b) for b in args["backbone"]]
    out: dict[str, Any] = {
        "algorithm": list(flows["algorithm"]),
        "bytes_delivered": [int(x) for x in flows["bytes_delivered"]],
        "retransmits": [int(x) for x in flows["retransmits"]],
        "timeouts": [int(x) for x in flows["timeouts"]],
        "backbone_utilization": [float(links["utilization"][i]) for i in idx],
        "bottleneck_packets": int(sum(int(links["data_packets_out"][i]) for i in idx)),
        "events": int(raw["meta"]["events"]),
        "wall_s": float(raw["meta"]["wall_s"]),
    }
    edges = np.asarray(args["bins"], dtype=float)
    nb = len(edges) - 1
    groups = np.asarray(args["groups"])
    fflow = np.asarray(files["flow"], dtype=np.int64)
    size = np.asarray(files["size"], dtype=float)
    tt = np.asarray(files["transfer_time"], dtype=float)
    b = np.clip(np.searchsorted(edges, size, side="right") - 1, 0, nb - 1)
    done = np.isfinite(tt)
    out["file_bins"] = {}
    for g in sorted(set(groups.tolist())):
        m = groups[fflow] == g if len(fflow) else np.zeros(0, dtype=bool)
        out["file_bins"][str(g)] = {
            "files": np.bincount(b[m & done], minlength=nb).tolist(),
            "sum_transfer_time": np.bincount(b[m & done], weights=tt[m & done], minlength=nb).tolist(),
            "unfinished": np.bincount(b[m & ~done], minlength=nb).tolist(),
        }
    return out


EXTRACTS: dict[str, Callable[[dict, dict, dict], dict]] = {
    "flows_files": extract_flows_files,
    "summary": extract_summary,
    "traces": extract_traces,
    "cc_traces": extract_cc_traces,
}


def _work(job: tuple[str, Any, str, dict]) -> tuple[str, dict]:
    """Runs one job. The spec is a RunSpec dict or its JSON text (large
    generated scenarios are passed as text: a few MB instead of tens of MB
    of Python objects per queued job)."""
    key, spec, extract, args = job
    from tcplab import _core

    raw = _core.run(spec if isinstance(spec, str) else json.dumps(spec))
    return key, EXTRACTS[extract](raw, spec, args)


#: Execution settings for every run_all call in a reproduction (set with
#: :func:`execution`): result cache directory and Dask scheduler.
_CONTEXT: dict[str, Any] = {"cache": None, "scheduler": None}


@contextmanager
def execution(cache: Optional[str] = None, scheduler: Any = None) -> Iterator[None]:
    """Within the block, run_all caches each run's extract in ``cache`` (so
    an interrupted reproduction resumes) and runs on ``scheduler`` (a Dask
    address or Client) when given."""
    saved = dict(_CONTEXT)
    _CONTEXT.update(cache=cache, scheduler=scheduler)
    try:
        yield
    finally:
        _CONTEXT.update(saved)


def default_workers() -> int:
    return max(1, os.cpu_count() or 1)


def _cache_key(job: tuple[str, dict, str, dict]) -> str:
    import hashlib

    import tcplab

    key, spec, extract, args = job
    if isinstance(spec, str):  # already serialized: hash the text, do not re-encode it
        spec = {"sha256": hashlib.sha256(spec.encode()).hexdigest()}
    blob = json.dumps({"key": key, "spec": spec, "extract": extract, "args": args, "version": tcplab.__version__},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def _cache_load(cache: str, h: str) -> Optional[dict]:
    path = os.path.join(cache, f"{h}.json")
    try:
        with open(path) as f:
            doc = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        # Never taken for a result: rerun it (and say so).
        print(f"warning: ignoring unreadable cached run {path}: {e}", file=sys.stderr)
        return None
    if not isinstance(doc, dict) or doc.get("hash") != h or "result" not in doc:
        print(f"warning: ignoring foreign file {path}", file=sys.stderr)
        return None
    return doc["result"]


def _cache_store(cache: str, h: str, result: dict) -> None:
    path = os.path.join(cache, f"{h}.json")
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump({"hash": h, "result": result}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def run_all(jobs: Sequence[tuple[str, dict, str, dict]], workers: Optional[int] = None, label: str = "",
            verbose: bool = True, scheduler: Any = None, cache: Optional[str] = None) -> dict[str, dict]:
    """Runs every job; returns {key: extract} in job order.

    Local process pool by default (``workers`` processes); ``scheduler``: a
    Dask scheduler address or a ``distributed.Client`` to run on a cluster
    instead. ``cache``: a directory where each finished run's extract is
    stored (atomically, keyed by a hash of the job and the tcplab version),
    so an interrupted reproduction resumes where it stopped and finished
    runs are never recomputed."""
    workers = workers or default_workers()
    cache = cache if cache is not None else _CONTEXT["cache"]
    scheduler = scheduler if scheduler is not None else _CONTEXT["scheduler"]
    results: dict[str, dict] = {}
    hashes: dict[str, str] = {}
    todo = list(jobs)
    if cache is not None:
        os.makedirs(cache, exist_ok=True)
        todo = []
        for job in jobs:
            h = _cache_key(job)
            hashes[job[0]] = h
            r = _cache_load(cache, h)
            if r is None:
                todo.append(job)
            else:
                results[job[0]] = r
        if verbose and len(todo) < len(jobs):
            print(f"  {label}: {len(jobs) - len(todo)} of {len(jobs)} runs already done ({cache})", file=sys.stderr)
    t0 = time.perf_counter()
    n = len(todo)
    tty = verbose and sys.stderr.isatty()

    def done(i: int, k: str, r: dict) -> None:
        results[k] = r
        if cache is not None:
            _cache_store(cache, hashes[k], r)
        _report(label, i, n, t0, tty)

    if scheduler is not None and n:
        from distributed import Client, as_completed

        client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
        try:
            futs = client.map(_work, todo, pure=False)
            for i, fut in enumerate(as_completed(futs), 1):
                k, r = fut.result()
                done(i, k, r)
        finally:
            if client is not scheduler:
                client.close()
        where = f"Dask scheduler {getattr(client, 'scheduler', None) and client.scheduler.address}"
    elif workers == 1 or n <= 1:
        for i, (k, r) in enumerate(map(_work, todo), 1):
            done(i, k, r)
        where = "1 worker"
    else:
        with ProcessPoolExecutor(max_workers=workers) as ex:
            for i, (k, r) in enumerate(ex.map(_work, todo), 1):
                done(i, k, r)
        where = f"{workers} worker(s)"
    if verbose:
        print(f"  {label}: {n} runs in {time.perf_counter() - t0:.1f} s wall on {where}", file=sys.stderr)
    return {k: results[k] for k, *_ in jobs}


def _report(label: str, i: int, n: int, t0: float, tty: bool) -> None:
    if tty:
        el = time.perf_counter() - t0
        eta = el / i * (n - i)
        print(f"\r  {label}: {i}/{n} runs, {el:.0f} s elapsed, ETA {eta:.0f} s   ", end="" if i < n else "\n",
              file=sys.stderr)
