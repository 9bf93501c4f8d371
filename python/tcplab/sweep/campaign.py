"""The campaign directory: every finished run, stored once, found again.

Layout::

    CAMPAIGN/
      campaign.json          {"format": "tcplab-campaign", "format_version": 4, "created_by": version}
      campaign.json.sha256   its SHA-256
      index.sqlite           the index (a cache: rebuilt from segments/ when lost or corrupt)
      segments/<id>/         one chunk of runs: flows/links/files/flow_ts/queue_ts/cc_ts/qdisc_ts.parquet (every
                             run's rows, with a ``run`` key column), segment.json (the manifest: every other
                             file's size and SHA-256) and segment.sha256 (the manifest's SHA-256, written last)
      sweeps/<name>.toml     the description of each sweep run into this campaign (and <name>.toml.sha256)
      tmp/                   segments being written; never read
      quarantine/            segments found damaged, moved aside (their runs are run again)

The run key is the core's (crates/tcplab-store/src/key.rs): the SHA-256 of
``{"spec": RunSpec, "version": tcplab version}`` with the RunSpec as the core
reads and writes it back (first 32 hex digits), so the same run written in
any key order or layout has one key. A segment appears by one
``rename`` of a complete directory (see :mod:`.worker`), and its index rows
(run key -> segment) are written after it in one transaction, so the index
never points to a missing or partial segment. A segment the index does not
know (the sweep was killed between the two) is checked byte for byte and
adopted when the campaign is next opened.

Every stored byte is covered by a checksum: the tables by the manifest, the
manifest by ``segment.sha256``, ``campaign.json`` and each sweep file by a
``.sha256`` file beside it. A manifest is checked whenever it is read;
``verify`` checks everything. A campaign of an earlier format (1 to 3: runs
keyed by Python's JSON text) is refused: its runs are run again into a new
directory.

Failed runs are stored too (a record with ``status = "failed"`` and the
error). They are not run again unless asked (``retry_failed``). When a key
is stored twice (a retried failure, a run finished by an orphaned worker),
the index keeps an ``ok`` record over a failed one, then the later one.
"""

from __future__ import annotations

import errno
import json
import os
import pathlib
import re
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .grid import MAX_SEED
from .index import (
    FORMAT,
    FORMAT_VERSION,
    INDEX,
    MARKER,
    SUM,
    CampaignError,
    CampaignWarning,
    DamagedSegmentError,
    _Committer,
)
from .lock import CampaignBusy, CampaignLock
from .segments import CampaignSegments, _read_json, _write_checked
from .worker import (
    MANIFEST,
    commit_segment,
    segment_dir,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .grid import Sweep


#: Why a campaign of an earlier format (1 to 3) cannot be read, and what to do.
_EARLIER_FORMAT = ("; it was written by an earlier tcplab, which keyed runs differently, so none of its runs "
                   "would be found: run the sweep into a new directory (a reproduction: with --fresh, or another -o)")

#: Job parameters as JSON (strict: no NaN; one encoder for every job).
_PARAMS_JSON = json.JSONEncoder(allow_nan=False, separators=(",", ":"))

__all__ = ["Campaign", "CampaignError", "CampaignWarning", "DamagedSegmentError", "RunReport", "run_key"]


def run_key(spec: Mapping[str, Any] | str, version: str | None = None) -> str:
    """The key of a run: the core's hash of its RunSpec (a dict or its JSON text, written any way: the
    same key) and the tcplab version (crates/tcplab-store/src/key.rs). A spec the core cannot read
    raises its SpecError, naming the field."""
    from tcplab import _core

    if version is None:
        import tcplab

        version = tcplab.__version__
    return _core.run_key(spec if isinstance(spec, str) else _spec_text(spec), version)


def _spec_text(spec: Mapping[str, Any], where: str = "") -> str:
    """A RunSpec dict as compact JSON text for the core (which keys it); a value JSON cannot carry (NaN,
    infinity, a lone surrogate) raises the core's SpecError naming its path (``jobs[3].flows[0].init_cwnd``),
    as ``tcplab.run`` does for one run."""
    import tcplab
    from tcplab._specjson import spec_to_json

    return spec_to_json(spec, lambda field, problem: tcplab.SpecError(f"{where}.{field}: {problem}" if where
                                                                      else f"{field}: {problem}"), compact=True)


def _raise_environment(e: BaseException, where: str) -> None:
    """Raise the one-line StorageError of an environment failure (full disk, read-only...); return if
    ``e`` is something else."""
    from .envfail import storage_error

    err = storage_error(e, where)
    if err is not None:
        raise err from None


class RunReport:
    """What :meth:`Campaign.run` did. ``keys`` are the run keys in job order."""

    def __init__(self, keys: list[str], params: list[dict], ran: int, reused: int, failures: list[dict],
                 wall_s: float, workers: int, runs_wall_s: float, interrupted: bool = False) -> None:
        self.keys = keys
        self.params = params
        self.ran = ran
        self.reused = reused
        self.failures = failures
        #: The whole sweep's wall-clock seconds.
        self.wall_s = wall_s
        self.workers = workers
        #: The runs' own wall-clock seconds inside the simulator, summed over the runs run now.
        self.runs_wall_s = runs_wall_s
        self.interrupted = interrupted

    @property
    def sim_s(self) -> float:
        """The old name of :attr:`runs_wall_s` (it is wall-clock time, not simulated time)."""
        return self.runs_wall_s

    @property
    def total(self) -> int:
        return len(self.keys)

    @property
    def overhead(self) -> float | None:
        """Share of the sweep's core-seconds (wall x workers) not spent inside
        the simulator: scheduling, encoding, storing, indexing, start-up."""
        if self.ran == 0 or self.wall_s <= 0:
            return None
        return max(0.0, 1.0 - self.runs_wall_s / (self.wall_s * self.workers))

    def summary(self) -> str:
        lines = [f"{self.total} runs: {self.ran} run now, {self.reused} already stored, "
                 f"{len(self.failures)} failed; {self.wall_s:.1f} s wall on {self.workers} worker(s)"]
        if self.overhead is not None:
            lines[0] += f"; tcplab overhead {100 * self.overhead:.1f} %"
        if self.interrupted:
            lines.append("interrupted: run the sweep again to finish it (stored runs are kept)")
        for f in self.failures:
            where = ", ".join(f"{k}={v!r}" for k, v in f["params"].items())
            lines.append(f"  FAILED {f['key'][:12]} ({where}): {f['error']}")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        """The report as JSON-ready values (``tcplab sweep --json`` prints them).

        ``sim_s`` is deprecated: the old name of ``runs_wall_s`` (the same
        value), kept so that readers of the JSON written before the rename
        still find it; read ``runs_wall_s``."""
        return {"total": self.total, "ran": self.ran, "reused": self.reused, "failed": len(self.failures),
                "failures": self.failures, "wall_s": self.wall_s, "workers": self.workers,
                "runs_wall_s": self.runs_wall_s, "sim_s": self.runs_wall_s,
                "overhead": self.overhead, "interrupted": self.interrupted}

    def __repr__(self) -> str:
        return f"<RunReport {self.summary().splitlines()[0]}>"


def record_params(rec: dict) -> dict:
    """A run record's parameters (a manifest's ``params``, or a worker summary's ``params_json``)."""
    if "params" in rec:
        return rec["params"]
    return json.loads(rec.get("params_json") or "{}")


class Campaign(CampaignSegments):
    """A campaign directory (created if absent or empty).

    ``Campaign(dir).run(jobs)`` runs what is not stored yet; jobs are
    ``(label_or_params, RunSpec)`` pairs (optionally a third item: the
    bottleneck link names), or a :class:`~tcplab.sweep.Sweep`.
    ``results()`` gives the tidy DataFrame, ``load(key)`` one run's
    :class:`~tcplab.Results`, ``aggregate()`` means with confidence intervals.
    """

    def __init__(self, path: str | os.PathLike, create: bool = True) -> None:
        self.path = os.path.abspath(os.fspath(path))
        try:
            self._open(create)
        except (OSError, sqlite3.Error) as e:
            _raise_environment(e, self.path)
            raise

    def _open(self, create: bool) -> None:
        marker = os.path.join(self.path, MARKER)
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            raise CampaignError(f"{self.path}: not a directory")
        unsynced: dict[str, float] = {}
        if os.path.exists(marker):
            try:
                doc = _read_json(marker)
            except (OSError, ValueError) as e:
                raise CampaignError(f"{marker}: unreadable campaign marker ({e}); if this is a campaign, "
                                    f"restore the file as {{\"format\": \"{FORMAT}\", \"format_version\": "
                                    f"{FORMAT_VERSION}}}") from None
            if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                found = doc.get("format") if isinstance(doc, dict) else doc
                raise CampaignError(f"{marker}: not a tcplab campaign (format {found!r})")
            found = doc.get("format_version")
            if found != FORMAT_VERSION:
                raise CampaignError(f"{marker}: campaign format version {found!r}; this tcplab reads version "
                                    f"{FORMAT_VERSION}" + (_EARLIER_FORMAT if found in (1, 2, 3) else ""))
        else:
            if not create:
                raise CampaignError(f"{self.path}: not a tcplab campaign directory (no {MARKER})")
            if os.path.isdir(self.path) and os.listdir(self.path):
                raise CampaignError(f"{self.path}: exists, is not empty and is not a tcplab campaign "
                                    f"(no {MARKER}); refusing to write into it. Choose an empty or new directory.")
            import tcplab

            os.makedirs(self.path, exist_ok=True)
            # made durable as the sweep file is (see save_sweep): by the first flush, or when closed
            _write_checked(marker, json.dumps({"format": FORMAT, "format_version": FORMAT_VERSION,
                                               "created_by": tcplab.__version__, "created": time.time()}) + "\n",
                           fsync=False)
            unsynced = {marker: time.time(), marker + SUM: time.time()}
        #: Nothing can be written here (a read-only mount, no write permission): the campaign is read as it
        #: is, with an index of its own in memory when the stored one cannot be used as it is (see _reconcile).
        self.read_only = not os.access(self.path, os.W_OK)
        for d in ("segments", "tmp", "sweeps"):
            p = os.path.join(self.path, d)
            if os.path.lexists(p) and not os.path.isdir(p):
                from .envfail import StorageError

                raise StorageError(f"{p}: a file is where the campaign's {d}/ directory belongs; move that file out "
                                   f"of the campaign directory (it is not part of a campaign), then run again",
                                   errno.ENOTDIR)
            if not self.read_only:
                os.makedirs(p, exist_ok=True)
        self._manifests: dict[str, dict] = {}
        self._unsynced: dict[str, float] = unsynced  # files written without fsync that no flush has covered yet
        self._lock = CampaignLock(self.path)  # one sweep at a time (lock.py)
        self._db = self._open_index()
        self._reconcile()

    def _synced_before(self, t: float) -> None:
        """A flush of the filesystem started after time ``t``: the files written before are durable."""
        for path, written in list(self._unsynced.items()):
            if written < t:
                self._unsynced.pop(path, None)

    def close(self) -> None:
        for path in list(self._unsynced):
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        self._unsynced.clear()
        # Closing the last connection to a WAL-mode database checkpoints it (copies the log into the file,
        # flushing both): two flushes the index does not need, since it is a cache of segments/ (flushed
        # before they are indexed), and a commit a power failure takes from it is adopted again from
        # segments/ when the campaign is next opened. A read-only connection open while the writer
        # closes, and closed last, cannot checkpoint: the log stays, as after a crash, and the next
        # connection reads it. (Anything unusual, and the writer closes as SQLite does by default.)
        ro = None
        try:
            ro = sqlite3.connect(pathlib.Path(self.path, INDEX).as_uri() + "?mode=ro", uri=True)
            ro.execute("SELECT count(*) FROM segments").fetchone()  # (a reader holds the database open)
        except sqlite3.Error:
            if ro is not None:
                ro.close()
            ro = None
        self._db.close()
        if ro is not None:
            ro.close()
        while self._lock.depth:  # (the index is closed: the next sweep may start)
            self._lock.release()

    def __enter__(self) -> Campaign:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def lock(self, wait: bool = False) -> None:
        """Take the campaign's sweep lock (held until :meth:`close`; :meth:`run` takes it itself): another
        process running a sweep into it raises :class:`CampaignError` naming it, or with ``wait`` this
        waits for it to finish (see tcplab/sweep/lock.py)."""
        try:
            self._lock.acquire(wait)
        except CampaignBusy as e:
            raise CampaignError(str(e)) from None

    def _normalize(self, jobs: Any) -> list[dict]:
        return list(self._normalize_iter(jobs))

    def _normalize_iter(self, jobs: Any) -> Iterator[dict]:
        """The jobs as the executors take them (key, params, seed, the RunSpec's JSON as stored, version,
        bottleneck links and the job's line; key, seed and line from the core), one at a time: a sweep's
        first runs can start while the rest are hashed."""
        import tcplab
        from tcplab import _core

        from .grid import Sweep

        version = tcplab.__version__
        if isinstance(jobs, Sweep):
            if not jobs.validated:
                jobs.validate()  # every point before anything runs (a generator: nothing ran yet)
            self.save_sweep(jobs)
            jobs = jobs.iter_jobs()  # (one at a time: a sweep of millions of runs is never held whole)
        for i, job in enumerate(jobs):
            if not isinstance(job, (tuple, list)) or len(job) not in (2, 3):
                raise TypeError(f"jobs[{i}]: expected (label_or_params, RunSpec dict or JSON text[, bottleneck "
                                f"links]), got {job!r}")
            label, spec = job[0], job[1]
            bottleneck = [str(b) for b in job[2]] if len(job) == 3 and job[2] else []
            params = dict(label) if isinstance(label, (dict, Mapping)) else {"label": str(label)}
            params.pop("seed", None)
            if hasattr(spec, "to_spec"):
                bottleneck = bottleneck or spec.bottleneck_links()
                spec = spec.to_spec()
            if not isinstance(spec, (str, dict, Mapping)):  # (dict first: an ABC check costs microseconds per job)
                raise TypeError(f"jobs[{i}]: the run description must be a RunSpec dict, its JSON text or a Scenario")
            # JSON text (large generated scenarios travel as text) goes to the core as it is
            text = spec if isinstance(spec, str) else _spec_text(spec, f"jobs[{i}]")
            try:
                params_json = _PARAMS_JSON.encode(params)
            except (TypeError, ValueError) as e:
                raise ValueError(f"jobs[{i}]: parameters {params!r} are not JSON values ({e})") from None
            try:
                # the core reads the spec, keys it and writes the job's line (crates/tcplab-store, job.rs)
                key, spec_json, seed, line = _core.plan_job(text, version, params_json, bottleneck)
            except _core.SpecError as e:  # (the core's field path, under the job's: jobs[3].flows[0].cc)
                field = getattr(e, "field", "spec")
                raise tcplab.SpecError(f"jobs[{i}]{'' if field == 'spec' else '.' + field}: "
                                       f"{getattr(e, 'problem', e)}") from None
            if seed > MAX_SEED:
                raise CampaignError(f"jobs[{i}].seed: must be 0 to {MAX_SEED} (2^63 - 1, the campaign index's "
                                    f"largest integer), got {seed}")
            yield {"key": key, "params": params, "seed": seed, "spec_json": spec_json, "version": version,
                   "bottleneck": bottleneck, "line": line}

    def plan(self, jobs: Any, retry_failed: bool = False) -> tuple[list[dict], list[dict]]:
        """(all jobs normalized, the ones to run now)."""
        norm: list[dict] = []
        todo = list(self._plan_iter(jobs, retry_failed, norm))
        return norm, todo

    def count_plan(self, jobs: Any, retry_failed: bool = False, batch: int = 900) -> tuple[int, int]:
        """(jobs, distinct runs to run now) as :meth:`plan` counts them, holding no job: the keys go to a
        private temporary SQLite database on disk (deleted when closed), so counting a sweep of ten
        million runs takes a few hundred MB at most (``tcplab sweep --dry-run``)."""
        scratch = sqlite3.connect("", isolation_level=None)  # ("": a private temporary database on disk)
        try:
            scratch.execute("CREATE TABLE k (key TEXT PRIMARY KEY)")
            scratch.execute("BEGIN")
            total, keys = 0, []
            for j in self._normalize_iter(jobs):
                total += 1
                keys.append((j["key"],))
                if len(keys) >= batch:
                    scratch.executemany("INSERT OR IGNORE INTO k VALUES (?)", keys)
                    keys = []
            scratch.executemany("INSERT OR IGNORE INTO k VALUES (?)", keys)
            scratch.execute("COMMIT")
            todo = 0
            stored_ok = "('ok')" if retry_failed else "('ok', 'failed')"
            rows = scratch.execute("SELECT key FROM k")
            while True:
                chunk = [r[0] for r in rows.fetchmany(batch)]
                if not chunk:
                    break
                marks = ",".join("?" * len(chunk))
                done = self._db.execute(f"SELECT count(*) FROM runs WHERE status IN {stored_ok} AND key IN ({marks})",
                                        chunk).fetchone()[0]
                todo += len(chunk) - done
            return total, todo
        finally:
            scratch.close()

    def _plan_iter(self, jobs: Any, retry_failed: bool, norm: list, slim: bool = False) -> Iterator[dict]:
        """The jobs to run now, one at a time, as they are normalized (each normalized job is appended to
        ``norm``, with ``slim`` only its key, params and seed): not stored yet (or failed, with
        ``retry_failed``), each key once."""
        st = self.status()
        seen: set = set()
        for j in self._normalize_iter(jobs):
            norm.append({"key": j["key"], "params": j["params"], "seed": j["seed"]} if slim else j)
            if j["key"] in seen:
                continue
            seen.add(j["key"])
            s = st.get(j["key"])
            if s is None or (s == "failed" and retry_failed):
                yield j

    def run(self, jobs: Any, workers: int | None = None, client: Any = None, scheduler: str | None = None,
            progress: bool | None = None, retry_failed: bool = False, fsync: bool = True,
            store_on: str = "worker", label: str = "sweep", wait_for_lock: bool = False) -> RunReport:
        """Run the jobs not stored yet, store them as they finish, return a :class:`RunReport`.

        ``workers``: local processes (default: all cores). ``client`` (a
        ``distributed.Client``) or ``scheduler`` (its address) runs on Dask
        instead. ``store_on="worker"`` has Dask workers write into the campaign
        directory (they must see it: same machine or a shared filesystem);
        ``"client"`` ships results back to this process to be written (local
        workers always write into the campaign directory).
        ``progress``: a progress bar on stderr (default: when it is a terminal),
        titled ``label``.

        A failure of the environment (a full disk, a read-only directory, an unreachable Dask scheduler)
        raises :class:`~tcplab.sweep.envfail.StorageError` and is never stored as a failed run; what was
        stored before it stays. Another process running a sweep into this campaign: :class:`CampaignError`
        naming it, or with ``wait_for_lock`` this waits for it to finish first (:meth:`lock`). Ctrl-C stops
        the sweep within about a second (KeyboardInterrupt): the runs stored by then are kept and indexed,
        the interrupted ones are neither stored nor recorded as failed.
        """
        from .execute import default_workers

        if store_on not in ("worker", "client"):
            raise ValueError(f"store_on: expected 'worker' or 'client', got {store_on!r}")
        t0 = time.perf_counter()
        local = client is None and scheduler is None
        n = (workers or default_workers()) if local else 0
        if local and n < 1:
            raise ValueError(f"workers: must be at least 1, got {n}")
        self.lock(wait_for_lock)
        try:
            return self._run(jobs, n, workers, local, client, scheduler, progress, retry_failed, fsync, store_on,
                             label, t0)
        except (OSError, sqlite3.Error, CampaignError) as e:
            try:  # what killed workers were writing in tmp/ (they are reaped by now): no partial file stays
                self._clean_tmp()
            except OSError:
                pass
            _raise_environment(e, self.path)
            raise
        finally:
            self._lock.release()

    def _run(self, jobs: Any, n: int, workers: int | None, local: bool, client: Any, scheduler: str | None,
             progress: bool | None, retry_failed: bool, fsync: bool, store_on: str, label: str, t0: float) -> RunReport:
        from .execute import execute_jobs

        # Durability: when this process shares the filesystem with the writers (local workers, or results
        # shipped here), files are not fsynced one by one; the committer flushes the filesystem once
        # (syncfs) for every batch of finished segments, and only then indexes them ("group commit").
        # Remote Dask workers fsync each file themselves.
        remote_writer = not local and store_on == "worker"
        group = fsync and not remote_writer
        worker_fsync = fsync and not group
        norm: list[dict] = []
        if isinstance(jobs, (list, tuple)):
            size_hint: int | None = len(jobs)
        else:
            from .grid import Sweep

            size_hint = len(jobs) if isinstance(jobs, Sweep) else None
        # the local pool takes the jobs as they are planned: its first runs start while the rest are hashed
        todo: Any = self._plan_iter(jobs, retry_failed, norm, slim=True)
        if not (local and n > 1) or self.read_only:
            todo = list(todo)
        if self.read_only and todo:
            from .envfail import StorageError

            raise StorageError(f"{self.path}: not writable (read-only file system or no permission): "
                               f"{len(todo)} run(s) not stored yet cannot be stored; make it writable or give "
                               f"another campaign directory (-o)", errno.EROFS)
        failures: list[dict] = []
        state = {"ran": 0, "todo": 0}
        runs_wall_s = [0.0]  # the stored runs' wall times, summed (a list: on_segment adds to it)
        committer = _Committer(self, group)

        def counted() -> Iterator[dict]:
            for j in todo:
                state["todo"] += 1
                yield j

        def on_segment(m: dict, files: dict | None) -> None:
            if files is not None:
                commit_segment(self.path, m, files, worker_fsync)
            elif not os.path.exists(os.path.join(segment_dir(self.path, m["id"]), MANIFEST)):
                raise CampaignError(
                    f"a worker stored segment {m['id']} in {self.path}, but this machine does not see it there: "
                    "the workers do not share the campaign directory; use store_on='client' (--store-on client)")
            committer.add(m)
            for r in m["runs"]:
                state["ran"] += 1
                runs_wall_s[0] += r.get("sim_s") or 0.0  # a record's wall time, stored as sim_s
                if r["status"] != "ok":
                    failures.append({"key": r["key"], "params": record_params(r), "seed": r["seed"],
                                     "error": r["error"]})

        try:
            nworkers, interrupted = execute_jobs(self.path, counted() if not isinstance(todo, list) else todo,
                                                 on_segment, workers=n or workers, client=client,
                                                 scheduler=scheduler, progress=progress, fsync=worker_fsync,
                                                 store_on=store_on, label=label, size_hint=size_hint,
                                                 flush=group)
        finally:
            committer.close()
        if isinstance(todo, list):
            state["todo"] = len(todo)
        else:
            for _ in todo:  # (nothing was left to run: the plan is finished here)
                state["todo"] += 1
        # failures stored earlier (not retried) are listed too
        if not retry_failed:
            done_now = {f["key"] for f in failures}
            stored_failed = dict(self._db.execute("SELECT key, error FROM runs WHERE status = 'failed'"))
            for j in norm:
                if j["key"] not in done_now and j["key"] in stored_failed:
                    failures.append({"key": j["key"], "params": j["params"], "seed": j["seed"],
                                     "error": stored_failed[j["key"]]})
                    done_now.add(j["key"])
        return RunReport([j["key"] for j in norm], [dict(j["params"], seed=j["seed"]) for j in norm],
                         ran=state["ran"], reused=len(norm) - state["todo"], failures=failures,
                         wall_s=time.perf_counter() - t0, workers=nworkers, runs_wall_s=runs_wall_s[0],
                         interrupted=interrupted)

    def save_sweep(self, sweep: Sweep) -> str:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", sweep.name) or "sweep"
        path = os.path.join(self.path, "sweeps", f"{name}.toml")
        # written atomically; made durable by the next flush of the filesystem (the one that makes the
        # sweep's first segments durable), or when the campaign is closed if no flush came
        text = sweep.to_toml()
        # nothing to write when it is there already; a read-only campaign keeps no record of the sweep
        if self.read_only or self._same_text(path, text):
            return path
        _write_checked(path, text, fsync=False)
        self._unsynced[path] = self._unsynced[path + SUM] = time.time()
        return path

    def sweeps(self) -> dict[str, str]:
        """``{name: TOML text}`` of the sweeps run into this campaign."""
        d = os.path.join(self.path, "sweeps")
        out = {}
        for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if n.endswith(".toml"):
                with open(os.path.join(d, n), encoding="utf-8") as fh:
                    out[n[:-5]] = fh.read()
        return out

    def results(self, which: Any = None, include_failed: bool = False) -> pd.DataFrame:
        """One tidy DataFrame, one row per run: the parameters, ``seed``, the
        per-run metrics (``total_goodput_bps``, ``utilization``, ``drops``,
        ``queue_mean_packets``, ``retransmits``, ``timeouts``, ``jain_index``,
        ``events``), per-flow goodput as ``goodput_bps.<flow name>``, and
        ``key``, ``status``, ``version``, ``wall_s`` (the run's wall-clock
        seconds inside the simulator; stored under its old name ``sim_s``).

        ``which``: None (every stored run), a :class:`RunReport`, a
        :class:`~tcplab.sweep.Sweep` (its points, with its parameters), or a
        list of keys. Failed runs are left out unless ``include_failed``
        (they then carry ``error``).
        """
        import pandas as pd

        from .grid import Sweep

        labels: list[dict] | None = None
        if isinstance(which, Sweep):
            norm = self._normalize(which.jobs())
            keys: list[str] | None = [j["key"] for j in norm]
            labels = [dict(j["params"], seed=j["seed"]) for j in norm]
        elif isinstance(which, RunReport):
            keys, labels = which.keys, which.params
        elif which is None:
            keys = None
        elif isinstance(which, tuple) and len(which) == 2 and isinstance(which[0], Sweep):
            raise TypeError("Campaign.results: got load_sweep()'s (sweep, options) pair; pass the sweep: "
                            "sweep, options = load_sweep(path); campaign.results(sweep)")
        else:
            keys = list(which)
            if not all(isinstance(k, str) for k in keys):
                raise TypeError("Campaign.results: which must be None, a Sweep, a RunReport or a list of run keys "
                                f"(strings), got {type(which).__name__} holding {type(keys[0]).__name__}")
        rows = {r[0]: r for r in self._rows(keys)}
        order = list(rows) if keys is None else keys
        records = []
        for i, k in enumerate(order):
            r = rows.get(k)
            if r is None:
                continue
            key, status, params, seed, version, metrics, error, sim_s, task_s, finished = r
            if status != "ok" and not include_failed:
                continue
            rec: dict = dict(labels[i]) if labels is not None else dict(json.loads(params), seed=seed)
            for p, v in list(rec.items()):
                if isinstance(v, (list, dict)):
                    rec[p] = json.dumps(v)
            m = json.loads(metrics) if metrics else {}
            flows = m.pop("flow_goodput_bps", {}) or {}
            rec.update(m)
            for fname, g in flows.items():
                rec[f"goodput_bps.{fname}"] = g
            rec.update(key=key, status=status, version=version, wall_s=sim_s)
            if include_failed:
                rec["error"] = error
            records.append(rec)
        df = pd.DataFrame.from_records(records)
        for c in df.columns:
            if df[c].dtype == object:
                try:
                    df[c] = pd.to_numeric(df[c])
                except (ValueError, TypeError):
                    pass
        return df

    def failures(self) -> pd.DataFrame:
        """The failed runs: key, parameters, seed, error."""
        import pandas as pd

        recs = [dict(json.loads(p), seed=s, key=k, error=e) for k, p, s, e in
                self._db.execute("SELECT key, params, seed, error FROM runs WHERE status = 'failed' ORDER BY finished")]
        return pd.DataFrame.from_records(recs, columns=None if recs else ["key", "seed", "error"])

    def aggregate(self, which: Any = None, by: Sequence[str] | None = None,
                  metrics: Sequence[str] | None = None, confidence: float = 0.95) -> pd.DataFrame:
        """Means across seeds with Student-t confidence intervals; see :func:`tcplab.sweep.aggregate`."""
        from .query import aggregate

        return aggregate(self.results(which), by=by, metrics=metrics, confidence=confidence)

    def __repr__(self) -> str:
        return f"<Campaign {self.path}: {len(self)} runs>"
