"""Where runs execute: a local process pool (default) or a Dask cluster.

Runs travel in **chunks**: one task runs several runs and stores them as one
segment (:func:`.worker.execute_chunk`), so a run of a millisecond does not
pay a task's and a store's fixed costs alone. Chunk sizes adapt: the first
chunks are small and measure the time per run; later ones aim at
``TARGET_S`` of work, shrink towards the end so the workers finish together
(guided self-scheduling), and a worker stops a chunk that overruns its
budget and hands back the runs it did not start.

Both paths call the same function on the worker, so a sweep stores the same
results wherever it runs. The client process only submits chunks, records
each finished segment in the index (after its files are in place) and draws
the progress bar. A chunk whose worker died is split and its runs retried
alone; a run that kills its worker twice alone is recorded as failed.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, Optional

from .worker import execute_chunk, pool_initializer, warm_up

__all__ = ["execute_jobs", "default_workers", "Chunker"]

#: Work per chunk the scheduler aims at, seconds.
TARGET_S = 0.15
#: Smallest chunk worth a task once runs are known to be short, seconds.
MIN_S = 0.03
#: A worker starts no new run of a chunk after this long (it hands the rest back), seconds.
BUDGET_S = 1.0
#: Runs per chunk before anything is measured.
FIRST_CHUNK = 2
MAX_CHUNK = 2000


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

    def update(self, ok: int, failed: int = 0) -> None:
        self.failed += failed
        if self.bar is not None:
            if failed:
                self.bar.set_postfix_str(f"{self.failed} failed", refresh=False)
            self.bar.update(ok + failed)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class Chunker:
    """Cuts the job list into chunks sized from the measured time per run."""

    def __init__(self, jobs: list[dict], workers: int, target_s: float = TARGET_S, min_s: float = MIN_S,
                 first: int = FIRST_CHUNK) -> None:
        from collections import deque

        self.queue = deque(jobs)
        self.solo: "deque[dict]" = deque()  # runs of a chunk whose worker died: retried one by one
        self.workers = max(1, workers)
        self.target_s, self.min_s, self.first = target_s, min_s, first
        self.per_run: Optional[float] = None

    def __bool__(self) -> bool:
        return bool(self.queue or self.solo)

    def size(self) -> int:
        rem = len(self.queue)
        if self.per_run is None:
            return min(rem, self.first)
        p = max(self.per_run, 1e-6)
        guided = -(-rem // (2 * self.workers))  # ceil: about half of an equal share of what is left
        n = min(self.target_s / p, guided)
        n = max(n, self.min_s / p)
        return int(max(1, min(n, MAX_CHUNK, rem)))

    def next(self) -> Optional[list[dict]]:
        if self.solo:
            return [self.solo.popleft()]
        if not self.queue:
            return None
        return [self.queue.popleft() for _ in range(self.size())]

    def measured(self, runs: int, task_s: float) -> None:
        if runs <= 0:
            return
        rate = task_s / runs
        self.per_run = rate if self.per_run is None else 0.5 * self.per_run + 0.5 * rate

    def requeue(self, jobs: list[dict]) -> None:
        self.queue.extendleft(reversed(jobs))

    def isolate(self, jobs: list[dict]) -> None:
        self.solo.extend(jobs)


def _infra_failure(job: dict, err: BaseException) -> dict:
    """The record of a run whose worker died (the error is the worker's, not the run's)."""
    import json

    return {"key": job["key"], "params": job["params"], "seed": job["seed"], "version": job["version"],
            "spec_json": job.get("spec_json") or json.dumps(job["spec"]), "status": "failed", "metrics": None, "meta": None,
            "error": f"worker failed: {type(err).__name__}: {err}", "sim_s": 0.0, "task_s": 0.0,
            "finished": time.time()}


def _failure_segment(records: list[dict]) -> dict:
    import socket
    import uuid

    from .worker import SEGMENT_FORMAT, SEGMENT_FORMAT_VERSION

    return {"format": SEGMENT_FORMAT, "format_version": SEGMENT_FORMAT_VERSION, "id": uuid.uuid4().hex,
            "host": socket.gethostname(), "pid": os.getpid(), "created": time.time(), "runs": records,
            "files": {}, "task_s": 0.0}


class _InProcess:
    """Runs each chunk at once in this process (one worker: no pool to start)."""

    def submit(self, chunk: list[dict], dest: Optional[str], fsync: bool) -> Any:
        from concurrent.futures import Future

        f: Future = Future()
        try:
            f.set_result(execute_chunk(chunk, dest, fsync, BUDGET_S))
        except Exception as e:  # pragma: no cover - execute_chunk records run failures itself
            f.set_exception(e)
        return f

    def wait(self, futs: list) -> list:
        return futs

    def result(self, f: Any) -> Any:
        return f.result()

    def broken(self, err: BaseException) -> None:
        pass

    def close(self, interrupted: bool) -> None:
        pass


class _Pool:
    def __init__(self, n: int) -> None:
        self.n = n
        self.ex = self._new()

    def _new(self) -> Any:
        from concurrent.futures import ProcessPoolExecutor

        return ProcessPoolExecutor(max_workers=self.n, initializer=pool_initializer)

    def submit(self, chunk: list[dict], dest: Optional[str], fsync: bool) -> Any:
        return self.ex.submit(execute_chunk, chunk, dest, fsync, BUDGET_S)

    def wait(self, futs: list) -> list:
        from concurrent.futures import FIRST_COMPLETED, wait

        return list(wait(futs, return_when=FIRST_COMPLETED)[0])

    def result(self, f: Any) -> Any:
        return f.result()

    def broken(self, err: BaseException) -> None:
        from concurrent.futures.process import BrokenProcessPool

        if isinstance(err, BrokenProcessPool):  # a worker died: every queued task failed with it; start afresh
            self.ex.shutdown(wait=False, cancel_futures=True)
            self.ex = self._new()

    def close(self, interrupted: bool) -> None:
        self.ex.shutdown(wait=not interrupted, cancel_futures=True)


class _Dask:
    def __init__(self, client: Any) -> None:
        self.client = client

    def submit(self, chunk: list[dict], dest: Optional[str], fsync: bool) -> Any:
        import uuid

        return self.client.submit(execute_chunk, chunk, dest, fsync, BUDGET_S,
                                  key=f"tcplab-chunk-{chunk[0]['key'][:12]}-{uuid.uuid4().hex[:8]}", pure=False)

    def wait(self, futs: list) -> list:
        from distributed import wait

        return list(wait(futs, return_when="FIRST_COMPLETED").done)

    def result(self, f: Any) -> Any:
        try:
            return f.result()
        finally:
            f.release()

    def broken(self, err: BaseException) -> None:
        pass

    def close(self, interrupted: bool) -> None:
        pass


def _drive(backend: Any, chunker: Chunker, window: int, dest: Optional[str], fsync: bool,
           on_segment: Callable[[dict, Optional[dict]], None], bar: Progress) -> None:
    """Keep ``window`` chunks in flight; hand each finished segment to ``on_segment``."""
    pending: dict = {}
    solo_tries: dict[str, int] = {}

    def fill() -> None:
        while len(pending) < window and chunker:
            chunk = chunker.next()
            if not chunk:
                break
            pending[backend.submit(chunk, dest, fsync)] = chunk

    fill()
    while pending:
        for fut in backend.wait(list(pending)):
            chunk = pending.pop(fut)
            try:
                result = backend.result(fut)
            except Exception as e:  # the worker process died (crash, OOM kill, KilledWorker)
                backend.broken(e)
                if len(chunk) > 1:
                    chunker.isolate(chunk)  # find the culprit: each run of the chunk alone
                    continue
                key = chunk[0]["key"]
                solo_tries[key] = solo_tries.get(key, 0) + 1
                if solo_tries[key] < 2:
                    chunker.isolate(chunk)
                    continue
                m = _failure_segment([_infra_failure(chunk[0], e)])
                on_segment(m, {})
                bar.update(0, 1)
                continue
            m, files = (result["manifest"], result["files"]) if "manifest" in result else (result, None)
            runs = m["runs"]
            done = {r["key"] for r in runs}
            if len(done) < len(chunk):  # the worker stopped at its budget: the rest goes back in the queue
                chunker.requeue([j for j in chunk if j["key"] not in done])
            chunker.measured(len(runs), float(m.get("task_s") or 0.0))
            on_segment(m, files)
            failed = sum(1 for r in runs if r["status"] != "ok")
            bar.update(len(runs) - failed, failed)
        fill()


def execute_jobs(root: str, jobs: list[dict], on_segment: Callable[[dict, Optional[dict]], None],
                 workers: Optional[int] = None, client: Any = None, scheduler: Optional[str] = None,
                 progress: Optional[bool] = None, fsync: bool = True, store_on: str = "worker",
                 label: str = "sweep") -> tuple[int, bool]:
    """Run ``jobs`` in chunks; call ``on_segment(manifest, files_or_None)`` in
    this process as each chunk finishes (``files`` is None when the worker
    stored the segment itself). Returns (number of workers, interrupted)."""
    dest = root if store_on == "worker" else None
    if client is not None or scheduler is not None:
        return _run_dask(jobs, on_segment, client, scheduler, progress, fsync, dest, label)
    n = workers or default_workers()
    if n < 1:
        raise ValueError(f"workers: must be at least 1, got {n}")
    bar = Progress(len(jobs), progress, label)
    interrupted = False
    try:
        if not jobs:
            return n, False
        warm_up()  # forked workers inherit it; in-process runs need it anyway
        backend: Any = _InProcess() if n == 1 else _Pool(min(n, len(jobs)))
        try:
            _drive(backend, Chunker(jobs, n), 2 * n, dest, fsync, on_segment, bar)
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            backend.close(interrupted)
    finally:
        bar.close()
    return n, interrupted


def _run_dask(jobs: list[dict], on_segment: Callable, client: Any, scheduler: Optional[str],
              progress: Optional[bool], fsync: bool, dest: Optional[str], label: str) -> tuple[int, bool]:
    try:
        import distributed  # noqa: F401
    except ImportError as e:  # pragma: no cover
        raise ImportError("running on Dask needs the 'distributed' package: pip install 'dask[distributed]'") from e
    from distributed import Client

    own = client is None
    if own:
        client = Client(scheduler)
    bar = Progress(len(jobs), progress, label)
    try:
        nworkers = max(1, sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values()))
        if jobs:
            _drive(_Dask(client), Chunker(jobs, nworkers), 2 * nworkers, dest, fsync, on_segment, bar)
    finally:
        bar.close()
        if own:
            client.close()
    return nworkers, False
