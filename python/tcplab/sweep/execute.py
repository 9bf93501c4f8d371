"""Where runs execute: a local process pool (default) or a Dask cluster.

Both paths call the same function on the worker (:func:`.worker.execute`),
so a sweep gives the same stored results wherever it runs. The client
process only submits jobs, records each finished run in the index (after
its files are in place) and draws the progress bar.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, Optional

from .worker import execute, pool_initializer

__all__ = ["execute_jobs", "default_workers"]


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Progress:
    """A progress bar (tqdm) with counts, failures and ETA; silent when
    stderr is not a terminal (or ``enabled=False``)."""

    def __init__(self, total: int, enabled: Optional[bool], label: str) -> None:
        self.failed = 0
        if enabled is None:
            enabled = sys.stderr.isatty()
        self.bar = None
        if enabled and total:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=label, unit="run", file=sys.stderr, dynamic_ncols=True,
                            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} runs "
                                       "[{elapsed}<{remaining}, {rate_fmt}{postfix}]")
            self.bar.set_postfix_str("0 failed", refresh=False)

    def update(self, ok: bool) -> None:
        if not ok:
            self.failed += 1
        if self.bar is not None:
            if not ok:
                self.bar.set_postfix_str(f"{self.failed} failed", refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _infra_failure(job: dict, err: BaseException) -> tuple[dict, dict]:
    """The manifest and files of a run whose worker died (the error is the worker's, not the run's)."""
    import hashlib
    import json

    spec = (json.dumps(job["spec"], indent=1) + "\n").encode()
    m = {"format": "tcplab-run", "key": job["key"], "params": job["params"], "seed": job["seed"],
         "version": job["version"], "status": "failed", "metrics": None, "core_wall_s": None,
         "error": f"worker failed: {type(err).__name__}: {err}", "sim_s": 0.0, "task_s": 0.0,
         "finished": time.time(),
         "files": {"spec.json": {"size": len(spec), "sha256": hashlib.sha256(spec).hexdigest()}}}
    return m, {"spec.json": spec}


def execute_jobs(root: str, jobs: list[dict], on_done: Callable[[dict, Optional[dict]], None],
                 workers: Optional[int] = None, client: Any = None, scheduler: Optional[str] = None,
                 progress: Optional[bool] = None, fsync: bool = True, store_on: str = "worker",
                 label: str = "sweep") -> tuple[int, bool]:
    """Run ``jobs``; call ``on_done(manifest, files_or_None)`` in this process
    as each finishes. Returns (number of workers, interrupted)."""
    if client is not None or scheduler is not None:
        return _run_dask(root, jobs, on_done, client, scheduler, progress, fsync, store_on, label)
    return _run_local(root, jobs, on_done, workers, progress, fsync, store_on, label)


def _dest(root: str, store_on: str) -> Optional[str]:
    return root if store_on == "worker" else None


def _finish(result: dict, store_on: str, on_done: Callable[[dict, Optional[dict]], None], bar: Progress) -> None:
    if store_on == "worker":
        on_done(result, None)
        m = result
    else:
        on_done(result["manifest"], result["files"])
        m = result["manifest"]
    bar.update(m["status"] == "ok")


def _run_local(root: str, jobs: list[dict], on_done: Callable, workers: Optional[int], progress: Optional[bool],
               fsync: bool, store_on: str, label: str) -> tuple[int, bool]:
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    n = workers or default_workers()
    if n < 1:
        raise ValueError(f"workers: must be at least 1, got {n}")
    bar = Progress(len(jobs), progress, label)
    dest = _dest(root, store_on)
    interrupted = False
    try:
        if not jobs:
            return n, False
        if n == 1:
            for job in jobs:
                _finish(execute(job, dest, fsync), store_on, on_done, bar)
            return n, False
        # forked workers inherit what the parent has imported: import once here, not once per worker
        import pyarrow.parquet  # noqa: F401

        from .. import _core  # type: ignore[attr-defined]  # noqa: F401

        ex = ProcessPoolExecutor(max_workers=min(n, len(jobs)), initializer=pool_initializer)
        try:
            # keep a bounded window in flight so an interrupt leaves little queued work behind
            pending: dict = {}
            it = iter(jobs)
            window = 4 * n

            def fill() -> None:
                for job in it:
                    pending[ex.submit(execute, job, dest, fsync)] = job
                    if len(pending) >= window:
                        break

            fill()
            while pending:
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for fut in done:
                    job = pending.pop(fut)
                    try:
                        result = fut.result()
                    except Exception as e:  # the worker process died (crash, OOM kill)
                        m, files = _infra_failure(job, e)
                        on_done(m, files)
                        bar.update(False)
                        continue
                    _finish(result, store_on, on_done, bar)
                fill()
        except KeyboardInterrupt:
            interrupted = True
            ex.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            ex.shutdown(wait=not interrupted, cancel_futures=True)
    finally:
        bar.close()
    return n, interrupted


def _run_dask(root: str, jobs: list[dict], on_done: Callable, client: Any, scheduler: Optional[str],
              progress: Optional[bool], fsync: bool, store_on: str, label: str) -> tuple[int, bool]:
    try:
        from distributed import Client, as_completed
    except ImportError as e:  # pragma: no cover
        raise ImportError("running on Dask needs the 'distributed' package: pip install 'dask[distributed]'") from e
    own = client is None
    if own:
        client = Client(scheduler)
    bar = Progress(len(jobs), progress, label)
    dest = _dest(root, store_on)
    try:
        nworkers = max(1, sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values()))
        futs = {}
        for job in jobs:
            f = client.submit(execute, job, dest, fsync, key=f"tcplab-run-{job['key']}", pure=False)
            futs[f] = job
        for fut in as_completed(list(futs)):
            job = futs[fut]
            try:
                result = fut.result()
            except Exception as e:  # KilledWorker and friends
                m, files = _infra_failure(job, e)
                on_done(m, files)
                bar.update(False)
                continue
            finally:
                fut.release()
            _finish(result, store_on, on_done, bar)
    finally:
        bar.close()
        if own:
            client.close()
    return nworkers, False
