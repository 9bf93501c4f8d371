"""Running the simulations of a paper reproduction, through a campaign.

A job is ``(key, spec, extract, args)``: ``key`` names the run within the
experiment (e.g. ``"t1|HSTCP|100|0.5"``), ``spec`` is its RunSpec (a dict,
or its JSON text for large generated scenarios), ``extract`` names a
function of :data:`EXTRACTS` that reduces the run's
:class:`~tcplab.Results` to what the experiment's tables and figures need,
with ``args``: ``extract(run, args) -> dict``.

:func:`run_all` runs the jobs with :meth:`tcplab.sweep.Campaign.run` (local
worker processes, or a Dask cluster), which stores every finished run in the
campaign and runs only the ones it does not hold yet; then it reads each
run back (:meth:`~tcplab.sweep.Campaign.iter_raw`), makes it a Results (the
one place the core's raw dict becomes one, :func:`_extracts`) and computes
its extract here. A reproduction (:func:`tcplab.experiments.reproduce`) sets
the campaign ``OUT/campaign/`` with :func:`execution`, so an interrupted
reproduction resumes; without one, run_all uses a temporary campaign.
Results come back keyed in job order, whatever order the runs finished in.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ..results import Results


def flow_series(run: Results, flow: int, column: str) -> tuple[np.ndarray, np.ndarray]:
    """(sample times, values of ``column``) of one flow in the run's flow_ts."""
    ft = run.flow_ts
    mask = ft["flow"].to_numpy() == flow
    return ft["time"].to_numpy()[mask], ft[column].to_numpy()[mask]


def queue_series(run: Results, link: str) -> tuple[np.ndarray, np.ndarray]:
    """(sample times, packets queued) of the link named ``link``."""
    qt = run.queue_ts
    mask = qt["link"].to_numpy() == link_index(run, link)
    return qt["time"].to_numpy()[mask], qt["packets"].to_numpy()[mask]


def link_index(run: Results, link: str) -> int:
    """The row of the link named ``link`` in the run's links table."""
    return list(run.links["name"]).index(link)


def link_value(run: Results, link: str, column: str) -> Any:
    """One link's ``column`` (the link named ``link``)."""
    return run.links[column].to_numpy()[link_index(run, link)]


def goodput_series(run: Results, n_flows: int) -> tuple[list, list]:
    """Per-flow goodput (bit/s) in each sampling interval, from the
    delivered-bytes series: (interval end times, one list per flow)."""
    per, times = [], []
    for i in range(n_flows):
        t, d = flow_series(run, i, "delivered_bytes")
        per.append((np.diff(d.astype(float)) * 8.0 / np.diff(t)).tolist())
        if i == 0:
            times = t[1:].tolist()
    return times, per


def extract_summary(run: Results, args: dict) -> dict:
    """Per-flow goodput over the measurement window and over extra windows
    (``args["windows"]``: list of (start, end) seconds, from the sampled
    delivered-bytes series, exact at sample times), and the bottleneck link."""
    flows = run.flows
    out: dict[str, Any] = {
        "goodput_bps": [float(x) for x in flows["goodput_bps"]],
        "retransmits": [int(x) for x in flows["retransmits"]],
        "timeouts": [int(x) for x in flows["timeouts"]],
        "names": list(flows["name"]),
        "events": int(run.meta["events"]),
        "wall_s": float(run.meta["wall_s"]),
    }
    b = args["bottleneck"]
    out["utilization"] = float(link_value(run, b, "utilization"))
    out["drops"] = int(link_value(run, b, "drops"))
    out["queue_mean_packets"] = float(link_value(run, b, "queue_mean_packets"))
    out["bottleneck_packets"] = int(link_value(run, b, "data_packets_out"))
    windows = args.get("windows") or []
    if windows:
        per = []
        for i in range(len(out["names"])):
            t, d = flow_series(run, i, "delivered_bytes")
            row = []
            for (a, e) in windows:
                da, de = np.interp([a, e], t, d.astype(float))
                row.append(float((de - da) * 8.0 / (e - a)))
            per.append(row)
        out["window_goodput_bps"] = per
    return out


def extract_traces(run: Results, args: dict) -> dict:
    """extract_summary plus the cwnd of every flow and the bottleneck queue
    over time (for cwnd/queue figures)."""
    out = extract_summary(run, args)
    out["trace_time"] = flow_series(run, 0, "cwnd")[0].tolist()
    out["cwnd"] = [flow_series(run, i, "cwnd")[1].tolist() for i in range(len(out["names"]))]
    qt, qp = queue_series(run, args["bottleneck"])
    out["queue_time"] = qt.tolist()
    out["queue"] = qp.tolist()
    return out


def extract_cc_traces(run: Results, args: dict) -> dict:
    """extract_traces plus one flow's (``args["cc_flow"]``, default 0)
    congestion-control variables (the run's cc_ts): ``cc_time`` and one list
    per variable under ``cc``."""
    out = extract_traces(run, args)
    cc = run.cc_ts
    if cc.empty:
        raise ValueError("the run has no congestion-control variables (cc_ts): its algorithms trace none, or it was "
                         "stored without its cc_ts table by an earlier tcplab (then run the reproduction again with "
                         "--fresh, resume=False)")
    flow = cc["flow"].to_numpy() == args.get("cc_flow", 0)
    var = cc["variable"].cat.codes.to_numpy()[flow]
    t = cc["time"].to_numpy()[flow]
    v = cc["value"].to_numpy()[flow]
    out["cc"] = {}
    for code, name in enumerate(cc["variable"].cat.categories):
        sel = var == code
        if sel.any():
            out["cc"][name] = v[sel].tolist()
            out["cc_time"] = t[sel].tolist()
    return out


def extract_flows_files(run: Results, args: dict) -> dict:
    """Per-flow totals, utilization of ``args["backbone"]`` links and files
    binned by size (``args["bins"]``: edges, bytes) separately for each flow
    group (``args["groups"]``: one label per flow): per bin the number of
    finished files, the sum of their transfer times and the number not
    finished. Keeps multi-bottleneck runs with tens of thousands of files
    small to return."""
    flows, files = run.flows, run.files
    out: dict[str, Any] = {
        "algorithm": list(flows["algorithm"]),
        "bytes_delivered": [int(x) for x in flows["bytes_delivered"]],
        "retransmits": [int(x) for x in flows["retransmits"]],
        "timeouts": [int(x) for x in flows["timeouts"]],
        "backbone_utilization": [float(link_value(run, b, "utilization")) for b in args["backbone"]],
        "bottleneck_packets": int(sum(int(link_value(run, b, "data_packets_out")) for b in args["backbone"])),
        "events": int(run.meta["events"]),
        "wall_s": float(run.meta["wall_s"]),
    }
    edges = np.asarray(args["bins"], dtype=float)
    nb = len(edges) - 1
    groups = np.asarray(args["groups"])
    fflow = np.asarray(files["flow"], dtype=np.int64) if "flow" in files else np.zeros(0, dtype=np.int64)
    size = np.asarray(files["size"] if "size" in files else [], dtype=float)
    tt = np.asarray(files["transfer_time"] if "transfer_time" in files else [], dtype=float)
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


EXTRACTS: dict[str, Callable[[Results, dict], dict]] = {
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
    for (key, *_), k in zip(jobs, rep.keys, strict=True):
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
    """Each job's extract from its stored run; every run is read once, a segment's tables once, and made a
    :class:`~tcplab.Results` once (:func:`as_results`)."""
    of_key: dict[str, list[int]] = {}
    for i, k in enumerate(keys):
        of_key.setdefault(k, []).append(i)
    out: list = [None] * len(jobs)
    for k, raw in camp.iter_raw(of_key):
        run = as_results(raw, jobs[of_key[k][0]][1], k)
        for i in of_key[k]:
            _, _, extract, args = jobs[i]
            out[i] = EXTRACTS[extract](run, args)
    return {job[0]: r for job, r in zip(jobs, out, strict=True)}


def as_results(raw: dict, spec: dict | str, name: str = "run") -> Results:
    """The core's raw dict of a run (as the campaign stores it) as a :class:`~tcplab.Results`, with its
    RunSpec (a dict, or its JSON text): what every extract reads."""
    import json

    from ..results import Results

    return Results(raw, spec=json.loads(spec) if isinstance(spec, str) else spec, name=name)
