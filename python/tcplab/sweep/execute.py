"""Where runs execute: local worker processes (default) or a Dask cluster.

On the local pool (:class:`LocalPool`) the workers are processes forked from
this one by the core (``_core.fork_worker``) that run its own worker loop
(crates/tcplab-store): no Python runs in them. A sweep runs in **rounds**:
this process writes the round's jobs, one line each, to a jobs file in the
campaign's ``tmp/`` and publishes their number in shared memory as it plans
them, so the first runs start while the rest are still being hashed; the
workers take jobs one at a time by ticket (an atomic counter), so they
finish together whatever the runs cost. Each stores a segment at least every
``LOCAL_CHUNK_S`` and when it runs out of jobs, and reports it on a pipe.
A worker also says in shared memory which job it is running: if it dies,
that job is run again in the next round, and recorded as failed if it kills
a worker twice; the jobs it had run but not stored are run again.

On Dask, chunk sizes adapt: the first chunks are small and measure the time
per run; later ones aim at ``TARGET_S`` of work, shrink towards the end so
the workers finish together (guided self-scheduling), and a worker stops a
chunk that overruns ``BUDGET_S`` and hands back the runs it did not start.
A chunk whose worker died is split and its runs retried alone.
One worker runs its chunks in this process.

Every path runs and stores through the same core code
(``_core.Segment``), so a sweep stores the same results wherever it runs.
This process only plans, hands each finished segment to the campaign
(which flushes and indexes it) and draws the progress bar.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from .progress import Progress
from .worker import execute_chunk, warm_up

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

#: Local pool (and one worker in this process): a segment is stored at least this often, seconds.
LOCAL_CHUNK_S = 0.25
#: One worker in this process: most runs in one segment.
LOCAL_MAX_CHUNK = 1000
#: Local pool: jobs planned between two publications to the workers (the first is published alone).
PUBLISH_EVERY = 16
#: Local pool: a job whose worker dies while running it this many times is recorded as failed.
MAX_DEATHS = 2
#: Local pool: a job lost this many times otherwise (its worker died or failed while storing it) is
#: recorded as failed.
MAX_LOST = 3


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Chunker:
    """Cuts the job list into chunks sized from the measured time per run."""

    def __init__(self, jobs: list[dict], workers: int, target_s: float = TARGET_S, min_s: float = MIN_S,
                 first: int = FIRST_CHUNK) -> None:
        from collections import deque

        self.queue = deque(jobs)
        self.solo: deque[dict] = deque()  # runs of a chunk whose worker died: retried one by one
        self.workers = max(1, workers)
        self.target_s, self.min_s, self.first = target_s, min_s, first
        self.per_run: float | None = None

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

    def next(self) -> list[dict] | None:
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
    return {"key": job["key"], "params": job["params"], "seed": job["seed"], "version": job["version"],
            "spec_json": job["spec_json"], "status": "failed", "metrics": None, "meta": None,
            # sim_s: the run's wall time, under the name the store keeps (Campaign.results() calls it wall_s)
            "error": f"worker failed: {type(err).__name__}: {err}", "sim_s": 0.0, "task_s": 0.0,
            "finished": time.time()}


def _failure_segment(records: list[dict]) -> dict:
    import socket
    import uuid

    from .worker import SEGMENT_FORMAT, SEGMENT_FORMAT_VERSION

    return {"format": SEGMENT_FORMAT, "format_version": SEGMENT_FORMAT_VERSION, "id": uuid.uuid4().hex,
            "host": socket.gethostname(), "pid": os.getpid(), "created": time.time(), "runs": records,
            "files": {}, "task_s": 0.0}


def _drive_inprocess(jobs: list[dict], dest: str | None, fsync: bool,
                     on_segment: Callable[[dict, dict | None], None], bar: Progress) -> None:
    """One worker: run the jobs in this process (no pool to start), a segment every ``LOCAL_CHUNK_S``."""
    queue: deque = deque(jobs)
    while queue:
        chunk = [queue.popleft() for _ in range(min(len(queue), LOCAL_MAX_CHUNK))]
        result = execute_chunk(chunk, dest, fsync, LOCAL_CHUNK_S)
        interrupted = result.pop("interrupted", False)  # (Ctrl-C: the runs done before it are kept)
        m, files = (result["manifest"], result["files"]) if "manifest" in result else (result, None)
        runs = m["runs"]
        done = {r["key"] for r in runs}
        if len(done) < len(chunk):
            queue.extendleft(reversed([j for j in chunk if j["key"] not in done]))
        on_segment(m, files)
        failed = sum(1 for r in runs if r["status"] != "ok")
        bar.update(len(runs) - failed, failed)
        if interrupted:
            raise KeyboardInterrupt


# Shared words of a local pool (crates/tcplab-store/src/worker.rs): next ticket, published jobs, list
# final, cancel; then, from HEADER on, one word per worker: the job it runs (index + 1), -1 while it
# stores a segment, 0 otherwise.
_NEXT, _PUBLISHED, _FINAL, _CANCEL = 0, 1, 2, 3
_HEADER = 8


class _Proc:
    """A forked child process: ``is_alive``, ``join(timeout)``, ``kill`` and ``exitcode`` as
    multiprocessing's Process has them (negative: killed by that signal), without its bookkeeping
    (about 1.5 ms per start on top of the fork)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.exitcode: int | None = None

    def _reap(self, flags: int) -> bool:
        if self.exitcode is not None:
            return True
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:  # (reaped elsewhere)
            self.exitcode = -1
            return True
        if pid == 0:
            return False
        self.exitcode = os.waitstatus_to_exitcode(status)
        return True

    def is_alive(self) -> bool:
        return not self._reap(os.WNOHANG)

    def join(self, timeout: float | None = None) -> None:
        if timeout is None:
            self._reap(0)
            return
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while not self._reap(os.WNOHANG) and time.monotonic() < deadline:
            time.sleep(delay)
            delay = min(2 * delay, 0.02)

    def kill(self) -> None:
        if self.exitcode is None:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass


#: Processes of retired pools, not reaped yet.
_RETIRED: list = []


def reap_retired(wait: float = 0.0) -> None:
    """Reap retired pool workers that have exited; with ``wait``, give the others that long, then kill
    them (at exit: a worker that was told to go has nothing left to do)."""
    deadline = time.monotonic() + wait
    for p in list(_RETIRED):
        if not p.is_alive():
            _RETIRED.remove(p)
    if wait:
        for p in list(_RETIRED):
            p.join(max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join(1.0)
            _RETIRED.remove(p)


def _reap_at_exit() -> None:
    reap_retired(wait=2.0)


import atexit  # noqa: E402

atexit.register(_reap_at_exit)


class _Worker:
    __slots__ = ("proc", "cmd", "report", "buf", "slot", "exiting")

    def __init__(self, proc: Any, cmd: int, report: int, slot: int) -> None:
        self.proc, self.cmd, self.report, self.buf, self.slot = proc, cmd, report, b"", slot
        self.exiting = False  # done with its round and exiting


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class LocalPool:
    """Worker processes on this machine running the core's worker loop.

    Workers are forked from this process by the core (``_core.fork_worker``: the child runs only the
    core's worker loop, no Python), so they start in a
    millisecond or two with the core loaded.
    Each has a command pipe and a report pipe; the shared memory (allocated
    before forking) holds the ticket counter and what each worker is doing.
    Workers exit when told, when their command pipe closes, or when this
    process dies (the core asks the kernel to kill them then).
    """

    def __init__(self, n: int, start: bool = True) -> None:
        import ctypes
        import mmap

        warm_up()  # forked workers inherit the loaded core
        reap_retired()
        self.words = _HEADER + n
        # anonymous shared memory: forked workers see the same pages at the same address
        self._map = mmap.mmap(-1, 8 * self.words, flags=mmap.MAP_SHARED)
        self.shared = (ctypes.c_int64 * self.words).from_buffer(self._map)
        self.addr = ctypes.addressof(self.shared)
        self.workers: list[_Worker | None] = [None] * n
        if start:
            for slot in range(n):
                self.start(slot)

    def start(self, slot: int) -> None:
        """Fork worker ``slot`` (a pool made with ``start=False`` starts each when it is first needed, so
        the first can work while the next is forked)."""
        self._spawn(slot)

    @property
    def n(self) -> int:
        return len(self.workers)

    def _spawn(self, slot: int) -> None:
        self.workers[slot] = None  # (its old pipes are closed: their numbers may come back below)
        cmd_r, cmd_w = os.pipe()
        rep_r, rep_w = os.pipe()
        close = [fd for w in self.workers if w is not None for fd in (w.cmd, w.report)] + [cmd_w, rep_r]
        self.shared[_HEADER + slot] = 0
        from tcplab import _core

        try:  # the child runs only the core's worker loop: no Python, so nothing of Python's to copy
            pid = _core.fork_worker(cmd_r, rep_w, self.addr, self.words, slot, close)
        finally:
            os.close(cmd_r)
            os.close(rep_w)
        self.workers[slot] = _Worker(_Proc(pid), cmd_w, rep_r, slot)

    def worker(self, slot: int) -> _Worker:
        w = self.workers[slot]
        assert w is not None
        return w

    def send(self, slot: int, text: str) -> bool:
        """Write a command to worker ``slot``; False if it is gone."""
        try:
            _write_all(self.worker(slot).cmd, text.encode())
            return True
        except OSError:
            return False

    def _close(self, w: _Worker) -> None:
        for fd in (w.cmd, w.report):
            try:
                os.close(fd)
            except OSError:
                pass

    def respawn(self, slot: int) -> None:
        """Replace worker ``slot`` (dead, or to be killed)."""
        w = self.worker(slot)
        self._close(w)
        if w.proc.is_alive():
            w.proc.kill()
        w.proc.join(1.0)
        self.start(slot)

    def shutdown(self, interrupted: bool = False) -> None:
        """Tell every worker to exit (kill them if ``interrupted``); does not wait (see :meth:`join`)."""
        self.shared[_CANCEL] = 1
        for w in self.workers:
            if w is None:
                continue
            if interrupted:
                if w.proc.is_alive():
                    w.proc.kill()
            else:
                try:
                    _write_all(w.cmd, b"exit\n")
                except OSError:
                    pass

    def retire(self) -> None:
        """Let the workers go without waiting for them: a worker exits when its round is done or its
        command pipe closes, so closing the pipes is enough; the exited processes are reaped later
        (:func:`reap_retired`: when the next pool starts, and at exit)."""
        for w in self.workers:
            if w is not None:
                self._close(w)
                _RETIRED.append(w.proc)
        self.workers = [None] * len(self.workers)

    def join(self, timeout: float = 5.0, background: bool = False) -> None:
        """Wait for the workers to exit (after :meth:`shutdown`); kill those still there after ``timeout``.
        With ``background``, a daemon thread waits for them: an exiting process takes milliseconds to
        give back its memory, which need not hold up the caller."""
        workers = [w for w in self.workers if w is not None]
        self.workers = [None] * len(self.workers)

        def reap() -> None:
            deadline = time.monotonic() + timeout
            for w in workers:
                w.proc.join(max(0.0, deadline - time.monotonic()))
                if w.proc.is_alive():  # pragma: no cover - a worker that did not exit when told
                    w.proc.kill()
                    w.proc.join(1.0)
                self._close(w)

        if background:
            import threading

            threading.Thread(target=reap, name="tcplab-reap", daemon=True).start()
        else:
            reap()


class _Round:
    """One round on the pool: publish jobs as they are planned, collect the segments, notice deaths."""

    def __init__(self, pool: LocalPool, root: str, fsync: bool, number: int,
                 on_segment: Callable[[dict, dict | None], None], bar: Progress,
                 slots: list | None = None, flush: bool = False) -> None:
        import socket
        import uuid

        self.pool, self.on_segment, self.bar, self.root = pool, on_segment, bar, root
        self.slots = list(range(pool.n)) if slots is None else slots
        self.path = os.path.join(root, "tmp", f"jobs{uuid.uuid4().hex}.{socket.gethostname()}.{os.getpid()}."
                                              f"{uuid.uuid4().hex[:8]}")
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        # workers exit when the round is done (most sweeps are one round): their tear-down overlaps the
        # last indexing; a later round forks them again
        self.go = json.dumps({"round": number, "jobs": self.path, "root": root, "fsync": fsync,
                              "chunk_s": LOCAL_CHUNK_S, "flush": flush, "then_exit": True}) + "\n"
        sh = pool.shared
        for i in range(pool.words):
            sh[i] = 0
        self.jobs: list[dict] = []
        self.lines: list[str] = []
        self.stored: set = set()
        self.active: set = set()
        self.started: set = set()  # the slots put to work in this round: one per job at most
        self.culprits: dict[str, str] = {}  # key -> how its worker died
        self.errors: list[str] = []
        self.idle_deaths = 0
        self.polled = time.monotonic()

    def add(self, job: dict) -> None:
        self.jobs.append(job)
        self.lines.append(job["line"] + "\n")
        if len(self.lines) >= PUBLISH_EVERY or len(self.jobs) == 1:
            self.publish()

    def publish(self) -> None:
        if self.lines:
            _write_all(self.fd, "".join(self.lines).encode())
            self.lines = []
            self.pool.shared[_PUBLISHED] = len(self.jobs)
        if len(self.started) < min(len(self.slots), len(self.jobs)):  # jobs are out: workers start
            self.start_workers()
        elif self.active and time.monotonic() - self.polled > 0.05:  # (a long plan: keep reading reports)
            self.poll(0.0)

    def start_workers(self) -> None:
        """Put a worker to work for each published job that has none yet: a sweep with 3 runs to do
        forks 3 workers, however many were asked for."""
        for slot in self.slots:
            if len(self.started) >= len(self.jobs):
                break
            if slot in self.started:
                continue
            w = self.pool.workers[slot]
            if w is None:
                self.pool.start(slot)
            elif w.exiting or not w.proc.is_alive():
                self.pool.respawn(slot)
            self.started.add(slot)
            if self.pool.send(slot, self.go):
                self.active.add(slot)

    def finish(self) -> None:
        self.publish()
        self.pool.shared[_FINAL] = 1
        while self.active:
            self.poll(None)
        try:
            os.close(self.fd)
            os.remove(self.path)
        except OSError:  # pragma: no cover
            pass

    def exhausted(self) -> bool:
        sh = self.pool.shared
        return bool(sh[_FINAL]) and sh[_NEXT] >= sh[_PUBLISHED]

    def poll(self, timeout: float | None) -> None:
        """Handle what the active workers reported (waiting up to ``timeout``; None: until something comes)."""
        import select

        self.polled = time.monotonic()
        fds = {self.pool.worker(s).report: s for s in self.active}
        p = select.poll()
        for fd in fds:
            p.register(fd, select.POLLIN)
        for fd, _ in p.poll(None if timeout is None else int(timeout * 1000)):
            slot = fds[fd]
            w = self.pool.worker(slot)
            try:
                data = os.read(w.report, 1 << 20)
            except OSError:
                data = b""
            if not data:
                self.died(slot)
                continue
            w.buf += data
            *lines, w.buf = w.buf.split(b"\n")
            for line in lines:
                self.handle(slot, json.loads(line))

    def handle(self, slot: int, msg: dict) -> None:
        if "segment" in msg:
            m = msg["segment"]
            if msg.get("flushed"):
                m["flushed"] = True  # (on stable storage already: the worker flushed after storing it)
            runs = m["runs"]
            self.stored.update(r["key"] for r in runs)
            self.on_segment(m, None)
            failed = sum(1 for r in runs if r["status"] != "ok")
            self.bar.update(len(runs) - failed, failed)
        elif "done" in msg:
            self.active.discard(slot)
            self.pool.worker(slot).exiting = True
        elif "error" in msg:  # the worker could not store a segment (it exits; its runs are run again)
            from .envfail import storage_error

            err = storage_error(RuntimeError(str(msg["error"])), self.root)
            if err is not None:  # a full disk, a read-only directory: the sweep stops, no run is blamed
                raise err
            self.errors.append(str(msg["error"]))

    def died(self, slot: int) -> None:
        """Worker ``slot`` is gone: note the job it was running, replace it, put it back to work."""
        w = self.pool.worker(slot)
        at = int(self.pool.shared[_HEADER + slot])
        w.proc.join(1.0)
        how = f"worker process died (exit code {w.proc.exitcode})"
        if at > 0:
            self.culprits[self.jobs[at - 1]["key"]] = how
        elif at < 0:
            self.errors.append(how + " while storing a segment")
        else:
            self.idle_deaths += 1
            if self.idle_deaths > 3 * self.pool.n + 3:
                raise RuntimeError(f"local workers keep dying before running anything ({how})")
        self.active.discard(slot)
        self.pool.respawn(slot)
        if not self.exhausted() and self.pool.send(slot, self.go):
            self.active.add(slot)


def _drive_pool(pool: LocalPool, jobs: Iterable[dict], root: str, fsync: bool,
                on_segment: Callable[[dict, dict | None], None], bar: Progress, flush: bool = False) -> int:
    """Run ``jobs`` (consumed as they are planned) on the pool, round after round until every one is
    stored or recorded as failed.

    A job whose worker died while running it is run again alone (a round of one job on one worker, so
    that its death costs nothing else); dying alone too, it is recorded as failed. The jobs a dead worker
    had run but not stored are run again in the next round; if the worker died while storing them (or
    could not store them), that counts against them, and a job lost so ``MAX_LOST`` times is recorded as
    failed with the last error. Returns the most workers that ran at once (one per job at most)."""
    used = 0
    deaths: dict[str, int] = {}
    lost: dict[str, int] = {}
    solo: list[dict] = []
    queue: Iterable[dict] | None = jobs
    number = 0
    while queue is not None or solo:
        number += 1
        if queue is not None:
            rnd = _Round(pool, root, fsync, number, on_segment, bar, flush=flush)
            todo, queue = queue, None
        else:
            rnd = _Round(pool, root, fsync, number, on_segment, bar, slots=[0], flush=flush)
            todo = [solo.pop(0)]
        try:
            for job in todo:
                rnd.add(job)
            rnd.finish()
        except BaseException:
            pool.shared[_CANCEL] = 1
            try:  # (the round's jobs file: nothing reads it any more)
                os.close(rnd.fd)
                os.remove(rnd.path)
            except OSError:
                pass
            raise
        used = max(used, len(rnd.started))
        again = []
        for job in rnd.jobs:
            key = job["key"]
            if key in rnd.stored:
                continue
            if key in rnd.culprits:
                deaths[key] = deaths.get(key, 0) + 1
                if deaths[key] >= MAX_DEATHS:
                    on_segment(_failure_segment([_infra_failure(job, RuntimeError(rnd.culprits[key]))]), {})
                    bar.update(0, 1)
                else:
                    solo.append(job)
                continue
            if rnd.errors:  # its worker died storing it, or could not store it
                lost[key] = lost.get(key, 0) + 1
                if lost[key] >= MAX_LOST:
                    on_segment(_failure_segment([_infra_failure(job, RuntimeError(rnd.errors[-1]))]), {})
                    bar.update(0, 1)
                    continue
            again.append(job)  # (run but not stored by a worker that another job killed: no fault of its own)
        if again:
            queue = again
    return used


class _Dask:
    def __init__(self, client: Any) -> None:
        self.client = client

    def submit(self, chunk: list[dict], dest: str | None, fsync: bool) -> Any:
        import uuid

        slim = [{"key": j["key"], "line": j["line"]} for j in chunk]  # (all a worker reads of a job)
        return self.client.submit(execute_chunk, slim, dest, fsync, BUDGET_S,
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


def _drive(backend: Any, chunker: Chunker, window: int, dest: str | None, fsync: bool,
           on_segment: Callable[[dict, dict | None], None], bar: Progress) -> None:
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
                from .envfail import storage_error

                err = storage_error(e, dest or "the campaign")
                if err is not None:  # it could not store the chunk (a full disk...): not the runs' fault
                    raise err from None
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
            result.pop("interrupted", None)  # (a worker's own Ctrl-C: its runs not done are requeued below)
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


def _counted(jobs: Iterable[dict], bar: Progress) -> Iterable[dict]:
    n = 0
    for job in jobs:
        n += 1
        yield job
    bar.set_total(n)


def execute_jobs(root: str, jobs: Iterable[dict], on_segment: Callable[[dict, dict | None], None],
                 workers: int | None = None, client: Any = None, scheduler: str | None = None,
                 progress: bool | None = None, fsync: bool = True, store_on: str = "worker",
                 label: str = "sweep", pool: LocalPool | None = None,
                 size_hint: int | None = None, flush: bool = False) -> tuple[int, bool]:
    """Run ``jobs``; call ``on_segment(manifest, files_or_None)`` in this
    process as each segment is stored (``files`` is None when the worker
    stored the segment itself). Returns (number of workers, interrupted):
    the workers that ran, at most one per run to do (0 with nothing to do),
    whatever ``workers`` asked for.

    ``jobs`` is a list, or any iterable: the local pool consumes it as the
    runs go (the first runs start while the caller still plans the rest).
    ``pool``: a :class:`LocalPool` started beforehand (the caller shuts it
    down); otherwise one is started here when ``workers`` > 1, on the first
    job (at most ``size_hint`` workers), and shut down before returning.
    One worker runs in this process. ``flush``: local pool workers flush the
    filesystem after storing each segment (in a thread of theirs, while
    their runs go on) and mark it ``"flushed"``, for a caller that flushes
    before indexing."""
    dest = root if store_on == "worker" else None
    if client is not None or scheduler is not None:
        return _run_dask(list(jobs), on_segment, client, scheduler, progress, fsync, dest, label)
    n = pool.n if pool is not None else (workers or default_workers())
    if n < 1:
        raise ValueError(f"workers: must be at least 1, got {n}")
    if isinstance(jobs, (list, tuple)):
        size_hint = len(jobs)
    bar = Progress(size_hint if isinstance(jobs, (list, tuple)) else None, progress, label)
    try:
        if n == 1 and pool is None:
            jobs = list(jobs)
            bar.set_total(len(jobs))
            if jobs:
                warm_up()
                _drive_inprocess(jobs, dest, fsync, on_segment, bar)
            return min(n, len(jobs)), False
        it = iter(_counted(jobs, bar))
        first = next(it, None)
        if first is None:
            return 0, False
        own = None
        if pool is None:
            pool = own = LocalPool(min(n, size_hint or n), start=False)
        finished = False
        try:
            n = _drive_pool(pool, itertools.chain([first], it), root, fsync, on_segment, bar, flush)
            finished = True
        finally:
            if own is not None:
                if finished:  # told to exit and reaped in a thread (waking them here would cost the caller a
                    own.retire()  # context switch per worker, about 1.5 ms each, while their memory is freed)
                else:  # on an error or Ctrl-C the workers are killed, not left to finish their runs
                    own.shutdown(interrupted=True)
                    own.join()
    finally:
        bar.close()
    return n, False


def _run_dask(jobs: list[dict], on_segment: Callable, client: Any, scheduler: str | None,
              progress: bool | None, fsync: bool, dest: str | None, label: str) -> tuple[int, bool]:
    try:
        import distributed  # noqa: F401
    except ImportError as e:  # pragma: no cover
        raise ImportError("running on Dask needs the 'distributed' package: pip install 'dask[distributed]'") from e
    from distributed import Client

    own = client is None
    if own:
        try:
            client = Client(scheduler)
        except (OSError, TimeoutError) as e:  # (distributed raises OSError after its connect timeout)
            from .envfail import dask_unreachable

            raise dask_unreachable(scheduler, e) from None
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
