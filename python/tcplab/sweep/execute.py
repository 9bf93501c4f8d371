"""Where runs execute: local worker processes (default) or a Dask cluster.

Runs travel in **chunks**: one task runs several runs and stores them as one
segment (:func:`.worker.execute_chunk`), so a run of a millisecond does not
pay a task's and a store's fixed costs alone.

On the local pool (:class:`LocalPool`: forked processes, one pipe each) a
sweep is split evenly between the workers; a worker stores what it has run
as a segment at least every ``LOCAL_CHUNK_S`` and goes on with its chunk.
When a worker runs out of work while another still has runs it has not
started, that worker is told to stop after its current run and the runs it
hands back are shared out again; so a sweep of tiny runs is a handful of
segments, and the workers still finish together. A worker tells the parent
(through shared memory) which run it is in: if it dies, that run is retried
alone and the chunk's runs not stored are queued again; a run that kills
its worker twice alone is recorded as failed.

On Dask, chunk sizes adapt: the first chunks are small and measure the time
per run; later ones aim at ``TARGET_S`` of work, shrink towards the end so
the workers finish together (guided self-scheduling), and a worker stops a
chunk that overruns ``BUDGET_S`` and hands back the runs it did not start.
A chunk whose worker died is split and its runs retried alone.

Both paths call the same function on the worker, so a sweep stores the same
results wherever it runs. The client process only submits chunks, hands
each finished segment to the campaign (which flushes and indexes it) and
draws the progress bar.
"""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from typing import Any, Callable, Optional

from .worker import execute_chunk, pool_worker, warm_up

__all__ = ["execute_jobs", "default_workers", "Chunker", "LocalPool"]

#: Dask: work per chunk the scheduler aims at, seconds.
TARGET_S = 0.15
#: Dask: smallest chunk worth a task once runs are known to be short, seconds.
MIN_S = 0.03
#: Dask: a worker starts no new run of a chunk after this long (it hands the rest back), seconds.
BUDGET_S = 1.0
#: Dask: runs per chunk before anything is measured.
FIRST_CHUNK = 2
MAX_CHUNK = 2000

#: Local pool: a worker stores a segment of its chunk at least this often, seconds.
LOCAL_CHUNK_S = 0.25
#: Local pool: most runs sent to a worker at once.
LOCAL_MAX_CHUNK = 1000
#: Local pool: an idle worker takes over another's unstarted runs only if they are worth this much, seconds.
STEAL_MIN_S = 0.01


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


def _drive_inprocess(jobs: list[dict], dest: Optional[str], fsync: bool,
                     on_segment: Callable[[dict, Optional[dict]], None], bar: "Progress") -> None:
    """One worker: run the jobs in this process (no pool to start), a segment every ``LOCAL_CHUNK_S``."""
    queue: deque = deque(jobs)
    while queue:
        chunk = [queue.popleft() for _ in range(min(len(queue), LOCAL_MAX_CHUNK))]
        result = execute_chunk(chunk, dest, fsync, LOCAL_CHUNK_S)
        m, files = (result["manifest"], result["files"]) if "manifest" in result else (result, None)
        runs = m["runs"]
        done = {r["key"] for r in runs}
        if len(done) < len(chunk):
            queue.extendleft(reversed([j for j in chunk if j["key"] not in done]))
        on_segment(m, files)
        failed = sum(1 for r in runs if r["status"] != "ok")
        bar.update(len(runs) - failed, failed)


def _slim(job: dict) -> dict:
    """A job as a worker needs it: the RunSpec travels as its JSON text only."""
    return {k: v for k, v in job.items() if k != "spec"} if "spec_json" in job else job


class LocalPool:
    """Worker processes on this machine, each fed one chunk at a time through its own pipe.

    Workers are forked from this process (on Linux; elsewhere the default
    start method), so they start in a few milliseconds with everything
    imported. Shared memory holds per worker a stop flag (set: hand back the
    runs not started) and its progress (which run it is in). Workers exit
    when told, when their pipe closes, or when this process dies.
    """

    def __init__(self, n: int, root: Optional[str], fsync: bool) -> None:
        import gc
        import multiprocessing as mp

        self.ctx = mp.get_context("fork") if sys.platform.startswith("linux") else mp.get_context()
        self.root, self.fsync = root, fsync
        self.stop = self.ctx.RawArray("b", n)
        self.started = self.ctx.RawArray("q", n)
        self.procs: list = []
        self.conns: list = []
        gc.freeze()  # the workers' garbage collector leaves alone (and so does not copy) what they inherit
        try:
            for slot in range(n):
                p, c = self._spawn(slot)
                self.procs.append(p)
                self.conns.append(c)
        finally:
            gc.unfreeze()

    @property
    def n(self) -> int:
        return len(self.procs)

    def _spawn(self, slot: int) -> tuple:
        parent, child = self.ctx.Pipe()
        self.stop[slot] = 0
        self.started[slot] = 0
        p = self.ctx.Process(target=pool_worker, args=(child, self.stop, self.started, slot, self.root, self.fsync),
                             name=f"tcplab-worker-{slot}", daemon=True)
        p.start()
        child.close()
        return p, parent

    def respawn(self, slot: int) -> None:
        """Replace worker ``slot`` (dead, or to be killed)."""
        try:
            self.conns[slot].close()
        except OSError:  # pragma: no cover
            pass
        p = self.procs[slot]
        if p.is_alive():
            p.kill()
        p.join(1.0)
        self.procs[slot], self.conns[slot] = self._spawn(slot)

    def send(self, slot: int, chunk: list[dict], budget_s: float) -> None:
        msg = ([_slim(j) for j in chunk], budget_s)
        self.stop[slot] = 0
        self.started[slot] = 0
        try:
            self.conns[slot].send(msg)
        except OSError:  # it died while idle
            self.respawn(slot)
            self.conns[slot].send(msg)

    def shutdown(self, interrupted: bool = False) -> None:
        """Tell every worker to exit (kill them if ``interrupted``); does not wait (see :meth:`join`)."""
        for p, c in zip(self.procs, self.conns):
            if interrupted:
                if p.is_alive():
                    p.kill()
            else:
                try:
                    c.send(None)
                except OSError:
                    pass

    def join(self, timeout: float = 5.0, background: bool = False) -> None:
        """Wait for the workers to exit (after :meth:`shutdown`); kill those still there after ``timeout``.
        With ``background``, a daemon thread waits for them: an exiting process takes milliseconds to
        give back its memory, which need not hold up the caller."""
        procs, conns = list(self.procs), list(self.conns)
        self.procs, self.conns = [], []

        def reap() -> None:
            deadline = time.monotonic() + timeout
            for p, c in zip(procs, conns):
                p.join(max(0.0, deadline - time.monotonic()))
                if p.is_alive():  # pragma: no cover - a worker that did not exit when told
                    p.kill()
                    p.join(1.0)
                c.close()

        if background:
            import threading

            threading.Thread(target=reap, name="tcplab-reap", daemon=True).start()
        else:
            reap()


def _drive_local(pool: LocalPool, jobs: list[dict], on_segment: Callable[[dict, Optional[dict]], None],
                 bar: "Progress") -> None:
    """Run ``jobs`` on the local pool; hand each finished segment to ``on_segment``.

    Each worker gets an equal share of what is queued (at most
    ``LOCAL_MAX_CHUNK`` runs) and stores a segment of it every
    ``LOCAL_CHUNK_S``. When a worker is done and nothing is queued, busy
    workers with enough runs not started are told to stop; they store what
    they have done, and what they hand back is shared out again."""
    from multiprocessing.connection import wait

    queue: deque = deque(jobs)
    solo: deque = deque()  # runs that were running when their worker died: retried alone
    solo_tries: dict[str, int] = {}
    busy: dict[int, list[dict]] = {}  # slot -> the chunk it runs
    done: dict[int, set] = {}  # slot -> keys of its chunk stored so far
    per_run: Optional[float] = None
    idle_deaths = 0

    def assign() -> None:
        idle = [s for s in range(pool.n) if s not in busy]
        if not idle:
            return
        share = max(1, min(-(-len(queue) // pool.n), LOCAL_MAX_CHUNK))  # an equal share of what is queued
        for s in idle:
            if solo:
                chunk = [solo.popleft()]
            elif queue:
                chunk = [queue.popleft() for _ in range(min(share, len(queue)))]
            else:
                break
            pool.send(s, chunk, LOCAL_CHUNK_S)
            busy[s], done[s] = chunk, set()
        if queue or solo or per_run is None or len(busy) == pool.n:
            return
        # a worker is idle and nothing is queued: the busy ones hand back the runs they have not started
        for s, chunk in busy.items():
            left = len(chunk) - abs(pool.started[s])
            if not pool.stop[s] and left >= 2 and left * per_run >= STEAL_MIN_S:
                pool.stop[s] = 1

    def lost(s: int, at: int, why: str) -> None:
        """Worker ``s`` died (or failed to store) at progress ``at``: queue again what its chunk had not
        stored, the run it was in alone; a run that failed so alone twice is recorded as failed."""
        nonlocal idle_deaths
        chunk, stored = busy.pop(s), done.pop(s)
        if at > 0:  # in run at - 1
            suspects = [chunk[at - 1]]
        elif at < 0:  # storing the runs before -at: which one is to blame is unknown, so each alone
            suspects = chunk[:-at]
        else:  # before its first run
            idle_deaths += 1
            if idle_deaths > 3 * pool.n + 3:
                raise RuntimeError(f"local workers keep dying before running anything ({why})")
            suspects = []
        suspects = [j for j in suspects if j["key"] not in stored]
        blamed = {j["key"] for j in suspects}
        queue.extendleft(reversed([j for j in chunk if j["key"] not in stored and j["key"] not in blamed]))
        for job in suspects:
            key = job["key"]
            if len(chunk) == 1:
                solo_tries[key] = solo_tries.get(key, 0) + 1
                if solo_tries[key] >= 2:
                    on_segment(_failure_segment([_infra_failure(job, RuntimeError(why))]), {})
                    bar.update(0, 1)
                    continue
            solo.append(job)

    assign()
    while busy:
        waitables: dict = {}
        for s in busy:
            waitables[pool.conns[s]] = s
            waitables[pool.procs[s].sentinel] = s
        for s in sorted({waitables[o] for o in wait(list(waitables))}):
            conn = pool.conns[s]
            msg = None
            try:
                if conn.poll():  # a segment sent just before the worker died is still read
                    msg = conn.recv()
            except (EOFError, OSError):
                pass
            if msg is None:  # the worker died
                at = pool.started[s]
                proc = pool.procs[s]
                proc.join(1.0)
                pool.respawn(s)
                lost(s, at, f"worker process died (exit code {proc.exitcode})")
                continue
            last, result = msg
            if "error" in result:  # execute_chunk raised (e.g. the store failed): like dying while storing
                lost(s, -abs(pool.started[s]) or -len(busy[s]), result["error"])
                continue
            m, files = (result["manifest"], result["files"]) if "manifest" in result else (result, None)
            runs = m["runs"]
            done[s].update(r["key"] for r in runs)
            if last:  # the rest of a stopped chunk goes back in the queue
                chunk, stored = busy.pop(s), done.pop(s)
                queue.extendleft(reversed([j for j in chunk if j["key"] not in stored]))
            if runs:
                rate = float(m.get("task_s") or 0.0) / len(runs)
                per_run = rate if per_run is None else 0.5 * per_run + 0.5 * rate
            on_segment(m, files)
            failed = sum(1 for r in runs if r["status"] != "ok")
            bar.update(len(runs) - failed, failed)
        assign()


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
                 label: str = "sweep", pool: Optional[LocalPool] = None) -> tuple[int, bool]:
    """Run ``jobs`` in chunks; call ``on_segment(manifest, files_or_None)`` in
    this process as each chunk finishes (``files`` is None when the worker
    stored the segment itself). Returns (number of workers, interrupted).

    ``pool``: a :class:`LocalPool` started beforehand (the caller shuts it
    down); otherwise one is started here when ``workers`` > 1 and shut down
    before returning. One worker runs chunks in this process."""
    dest = root if store_on == "worker" else None
    if client is not None or scheduler is not None:
        return _run_dask(jobs, on_segment, client, scheduler, progress, fsync, dest, label)
    n = pool.n if pool is not None else (workers or default_workers())
    if n < 1:
        raise ValueError(f"workers: must be at least 1, got {n}")
    bar = Progress(len(jobs), progress, label)
    own = None
    try:
        if not jobs:
            return n, False
        if n == 1 and pool is None:
            warm_up()
            _drive_inprocess(jobs, dest, fsync, on_segment, bar)
            return n, False
        if pool is None:
            warm_up()  # forked workers inherit it
            pool = own = LocalPool(min(n, len(jobs)), dest, fsync)
        finished = False
        try:
            _drive_local(pool, jobs, on_segment, bar)
            finished = True
        finally:
            if own is not None:  # on an error or Ctrl-C the workers are killed, not left to finish their chunk
                own.shutdown(interrupted=not finished)
                own.join()
    finally:
        bar.close()
    return n, False


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
