"""Running the simulations of a paper reproduction, through a campaign.

A job is ``(key, spec, extract, args)``: ``key`` names the run within the
experiment (e.g. ``"t1|HSTCP|100|0.5"``), ``spec`` is its RunSpec (a dict,
or its JSON text for large generated scenarios), ``extract`` names a
function of :data:`EXTRACTS` that reduces the run's full results (the
core's raw dict ``{table: {column: array or list}, "meta": {...}}``) to what
the experiment's tables and figures need, with ``args``.

:func:`run_all` runs the jobs with :meth:`tcplab.sweep.Campaign.run` (local
worker processes, or a Dask cluster), which stores every finished run in the
campaign and runs only the ones it does not hold yet; then it reads each
run back (:meth:`~tcplab.sweep.Campaign.iter_raw`) and computes its extract
here. A reproduction (:func:`tcplab.experiments.reproduce`) sets the
campaign ``OUT/campaign/`` with :func:`execution`, so an interrupted
reproduction resumes; without one, run_all uses a temporary campaign.
Results come back keyed in job order, whatever order the runs finished in.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

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
    if "cc_ts" not in raw:
        raise ValueError("the run was stored without its cc_ts table (by an earlier tcplab): run the "
                         "reproduction again with --fresh (resume=False)")
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


class RunsFailed(RuntimeError):
    """Runs of a reproduction failed, so it cannot make its tables and figures.

    ``failures``: ``[{"jobs": [experiment keys], "key": run key, "error": text}]``.
    The runs that finished are stored in the campaign: once the cause is
    fixed, running the reproduction again runs only the failed and missing
    ones (failed runs are always tried again)."""

    def __init__(self, message: str, failures: list[dict]) -> None:
        super().__init__(message)
        self.failures = failures


#: Execution settings for every run_all call in a reproduction (set with
#: :func:`execution`): the campaign, the Dask scheduler, who stores on Dask.
_CONTEXT: dict[str, Any] = {"campaign": None, "scheduler": None, "store_on": None, "fresh": False, "opened": None,
                            "progress": None}


@contextmanager
def execution(campaign: Any = None, scheduler: Any = None, store_on: str | None = None,
              fresh: bool = False, progress: bool | None = None) -> Iterator[None]:
    """Within the block, run_all runs its jobs through ``campaign`` (a
    :class:`~tcplab.sweep.Campaign` or a directory, opened, or created, at
    the first run_all and closed at the end of the block; ``fresh``: a
    campaign already there is deleted first), on ``scheduler`` (a Dask
    address or ``distributed.Client``) when given, results stored by
    ``store_on`` (``"client"``, the default on Dask: workers need no shared
    filesystem; or ``"worker"``); ``progress``: each run_all's progress bar on
    stderr (None: when stderr is a terminal; run_all's ``verbose=False`` turns
    it off)."""
    saved = dict(_CONTEXT)
    _CONTEXT.update(campaign=campaign, scheduler=scheduler, store_on=store_on, fresh=fresh, opened=None,
                    progress=progress)
    try:
        yield
    finally:
        opened = _CONTEXT["opened"]
        _CONTEXT.clear()
        _CONTEXT.update(saved)
        if opened is not None and opened is not campaign:
            opened.close()


def _context_campaign() -> Any:
    """The campaign of the enclosing :func:`execution` (opened on first use), or None."""
    from ..sweep import Campaign

    camp = _CONTEXT["campaign"]
    if camp is None or isinstance(camp, Campaign):
        return camp
    if _CONTEXT["opened"] is None:
        path = os.fspath(camp)
        if _CONTEXT["fresh"] and os.path.exists(os.path.join(path, "campaign.json")):
            import shutil

            shutil.rmtree(path)
        _CONTEXT["opened"] = Campaign(path)
    return _CONTEXT["opened"]


def _bottleneck(args: dict) -> list:
    """The links whose utilization the campaign's index records for a run."""
    if args.get("bottleneck"):
        return [args["bottleneck"]]
    return list(args.get("backbone") or [])


def run_all(jobs: Sequence[tuple[str, dict | str, str, dict]], workers: int | None = None, label: str = "",
            verbose: bool = True, scheduler: Any = None, campaign: Any = None,
            store_on: str | None = None) -> dict[str, dict]:
    """Runs every job not stored yet in the campaign; returns {key: extract} in job order.

    ``campaign``: a :class:`~tcplab.sweep.Campaign` or its directory
    (default: the one set by :func:`execution`, else a temporary one, deleted
    afterwards). Each run is stored there with the parameters
    ``experiment`` (= ``label``) and ``job`` (its key); a run whose RunSpec
    is already stored (under any label) is not run again, and failed runs
    are tried again. Local worker processes by default (``workers``, default
    all cores); ``scheduler``: a Dask scheduler address or a
    ``distributed.Client`` to run on a cluster instead. Raises
    :class:`RunsFailed` naming the runs that failed, once every other run is
    stored."""
    from ..sweep import Campaign

    for i, job in enumerate(jobs):
        if job[2] not in EXTRACTS:
            raise ValueError(f"jobs[{i}] ({job[0]}): unknown extract {job[2]!r}; known: {', '.join(EXTRACTS)}")
    scheduler = scheduler if scheduler is not None else _CONTEXT["scheduler"]
    store_on = store_on or _CONTEXT["store_on"] or ("client" if scheduler is not None else "worker")
    if campaign is None:
        campaign = _context_campaign()
    if campaign is None:  # a direct library call: a campaign only for the time of the call
        import tempfile

        with tempfile.TemporaryDirectory(prefix="tcplab-runs-") as tmp:
            with Campaign(os.path.join(tmp, "campaign")) as camp:
                return _run_in(camp, jobs, workers, label, verbose, scheduler, store_on, keep=False)
    if isinstance(campaign, Campaign):
        return _run_in(campaign, jobs, workers, label, verbose, scheduler, store_on, keep=True)
    with Campaign(campaign) as camp:
        return _run_in(camp, jobs, workers, label, verbose, scheduler, store_on, keep=True)


def _run_in(camp: Any, jobs: Sequence[tuple], workers: int | None, label: str, verbose: bool, scheduler: Any,
            store_on: str, keep: bool) -> dict[str, dict]:
    from ..sweep import DamagedSegmentError

    cjobs = [({"experiment": label, "job": key}, spec, _bottleneck(args)) for key, spec, _, args in jobs]
    where: dict = {"workers": workers}
    if scheduler is not None:
        where = {"scheduler": scheduler} if isinstance(scheduler, str) else {"client": scheduler}
    for attempt in range(3):
        rep = camp.run(cjobs, progress=_CONTEXT["progress"] if verbose else False, retry_failed=True, fsync=keep,
                       store_on=store_on, label=label or "runs", **where)
        if verbose:
            print(f"  {label}: {rep.summary().splitlines()[0]}" + (f" (campaign {camp.path})" if keep else ""),
                  file=sys.stderr)
        if rep.failures:
            raise _failed(label, jobs, rep, camp.path if keep else None)
        try:
            return _extracts(camp, jobs, rep.keys)
        except DamagedSegmentError as e:  # never taken for a result: set aside, its runs run again
            if attempt == 2:
                raise
            camp.quarantine(e.segment, str(e))
    raise AssertionError("unreachable")  # pragma: no cover


def _failed(label: str, jobs: Sequence[tuple], rep: Any, path: str | None) -> RunsFailed:
    names: dict[str, list[str]] = {}
    for (key, *_), k in zip(jobs, rep.keys):
        names.setdefault(k, []).append(key)
    failures = [{"jobs": names.get(f["key"], []), "key": f["key"], "error": f["error"]} for f in rep.failures]
    n, total = len(failures), len(set(rep.keys))
    lines = [f"{label or 'runs'}: {n} of {total} run(s) failed, so the tables and figures cannot be made"
             + (f"; the {total - n} others are stored in the campaign {path}, and running the reproduction again "
                f"after the fix runs only the failed and missing ones" if path else "") + ":"]
    for f in failures:
        err = str(f["error"] or "").strip().replace("\n", "\n      ")
        lines.append(f"  {', '.join(f['jobs']) or '?'} (run {f['key'][:12]}): {err}")
    return RunsFailed("\n".join(lines), failures)


def _extracts(camp: Any, jobs: Sequence[tuple], keys: list[str]) -> dict[str, dict]:
    """Each job's extract from its stored run; every run is read once, a segment's tables once."""
    of_key: dict[str, list[int]] = {}
    for i, k in enumerate(keys):
        of_key.setdefault(k, []).append(i)
    out: list = [None] * len(jobs)
    for k, raw in camp.iter_raw(of_key):
        for i in of_key[k]:
            _, spec, extract, args = jobs[i]
            out[i] = EXTRACTS[extract](raw, spec, args)
    return {job[0]: r for job, r in zip(jobs, out)}
