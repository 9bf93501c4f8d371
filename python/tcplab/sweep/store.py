"""The campaign directory: every finished run, stored once, found again.

Layout::

    CAMPAIGN/
      campaign.json          {"format": "tcplab-campaign", "format_version": 3, "created_by": version}
      campaign.json.sha256   its SHA-256
      index.sqlite           the index (a cache: rebuilt from segments/ when lost or corrupt)
      segments/<id>/         one chunk of runs: flows/links/files/flow_ts/queue_ts/cc_ts/qdisc_ts.parquet (every
                             run's rows, with a ``run`` key column), segment.json (the manifest: every other
                             file's size and SHA-256) and segment.sha256 (the manifest's SHA-256, written last)
      sweeps/<name>.toml     the description of each sweep run into this campaign (and <name>.toml.sha256)
      tmp/                   segments being written; never read
      quarantine/            segments found damaged, moved aside (their runs are run again)

The run key is the SHA-256 of the canonical JSON of ``{"spec": RunSpec,
"version": tcplab version}`` (first 32 hex digits). A segment appears by one
``rename`` of a complete directory (see :mod:`.worker`), and its index rows
(run key -> segment) are written after it in one transaction, so the index
never points to a missing or partial segment. A segment the index does not
know (the sweep was killed between the two) is checked byte for byte and
adopted when the campaign is next opened.

Every stored byte is covered by a checksum (format 3): the tables by the
manifest, the manifest by ``segment.sha256``, ``campaign.json`` and each sweep
file by a ``.sha256`` file beside it. A manifest is checked whenever it is
read; ``verify`` checks everything. A campaign of format 2 (no checksum of
its manifests) is refused until :meth:`Campaign.upgrade` (``tcplab sweep
--upgrade DIR``) checksums it as it is.

Failed runs are stored too (a record with ``status = "failed"`` and the
error). They are not run again unless asked (``retry_failed``). When a key
is stored twice (a retried failure, a run finished by an orphaned worker),
the index keeps an ``ok`` record over a failed one, then the later one.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import pathlib
import re
import shutil
import socket
import sqlite3
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._files import write_bytes_atomically
from .grid import MAX_SEED, canonical_json
from .lock import LOCK_FILE, CampaignBusy, CampaignLock, release_brief, try_briefly
from .worker import (
    _NOT_COLUMNS,
    ALL_TABLES,
    MANIFEST,
    MANIFEST_SUM,
    SEGMENT_FORMAT,
    TABLES,
    _json_of,
    commit_segment,
    manifest_sum,
    read_rows,
    read_table,
    segment_dir,
    syncfs,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..results import Results
    from .grid import Sweep

__all__ = ["Campaign", "CampaignError", "CampaignWarning", "DamagedSegmentError", "RunReport", "run_key"]

FORMAT = "tcplab-campaign"
#: 3: every stored file is covered by a checksum (segment.sha256, campaign.json.sha256, sweeps/*.toml.sha256).
#: 2 differs only in lacking them: :meth:`Campaign.upgrade` adds them.
FORMAT_VERSION = 3
MARKER = "campaign.json"
#: The suffix of the file holding the SHA-256 of a campaign file (campaign.json, a sweep file).
SUM = ".sha256"
INDEX = "index.sqlite"
KEY_LEN = 32
#: Segments of format version 2 keep their runs' RunSpecs here (row i: run record i), not in the manifest.
SPECS = "specs.parquet"
_KEY_RE = re.compile(r"^[0-9a-f]{%d}$" % KEY_LEN)
_SEG_RE = re.compile(r"^[0-9a-f]{32}$")
_ROOT_ENTRIES = {MARKER, INDEX, INDEX + "-wal", INDEX + "-shm", INDEX + "-journal", "segments", "sweeps", "tmp",
                 "quarantine", "report.html", LOCK_FILE}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    params TEXT NOT NULL,
    seed INTEGER,
    version TEXT NOT NULL,
    metrics TEXT,
    error TEXT,
    sim_s REAL,  -- the run's wall-clock seconds (Campaign.results() calls it wall_s; stored campaigns keep this name)
    task_s REAL,
    finished REAL,
    segment TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_segment ON runs (segment);
CREATE TABLE IF NOT EXISTS segments (id TEXT PRIMARY KEY, runs INTEGER NOT NULL, added REAL NOT NULL);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT);
"""


class CampaignError(Exception):
    """A campaign directory cannot be used as asked (the message says why and what to do)."""


class DamagedSegmentError(CampaignError):
    """A stored segment cannot be read back as its manifest says (``segment``: its id).
    :meth:`Campaign.quarantine` moves it aside so that its runs are run again."""

    def __init__(self, msg: str, segment: str) -> None:
        super().__init__(msg)
        self.segment = segment


class CampaignWarning(UserWarning):
    """Something in a campaign directory was ignored or moved aside."""


def _warn(msg: str) -> None:
    warnings.warn(msg, CampaignWarning, stacklevel=3)


def run_key(spec: Mapping[str, Any] | str, version: str | None = None) -> str:
    """The key of a run: hash of its RunSpec (a dict or its JSON text: the same key) and the tcplab version."""
    return _key_and_spec_json(_spec_object(spec) if isinstance(spec, str) else spec, version)[0]


def _spec_object(text: str, where: str = "spec") -> dict:
    """A RunSpec given as JSON text, parsed (it is keyed by its canonical JSON, like the dict form)."""
    try:
        obj = json.loads(text)
    except ValueError as e:
        raise ValueError(f"{where}: the run description is not valid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise TypeError(f"{where}: the run description must be a JSON object, got {type(obj).__name__}")
    return obj


@functools.lru_cache(maxsize=8)
def _version_json(version: str) -> str:
    return canonical_json(version)


def _core_run_key(spec: Any, version_json: str, n: int) -> tuple[str, str] | None:
    try:
        from tcplab import _core  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - the core is not built
        return None
    return _core.run_key(spec, version_json, n)


def _key_and_spec_json(spec: Mapping[str, Any], version: str | None = None) -> tuple[str, str]:
    """(run key, canonical JSON of the spec): the key hashes ``{"spec": spec, "version": version}``
    in canonical JSON, which is that text with the spec's text inside (keys sort "spec" < "version")."""
    if version is None:
        import tcplab

        version = tcplab.__version__
    fast = _core_run_key(spec, _version_json(version), KEY_LEN)
    if fast is not None:  # (the core writes the same text; it leaves to Python what it does not)
        return fast
    spec_json = canonical_json(spec)
    text = '{"spec":' + spec_json + ',"version":' + _version_json(version) + "}"
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LEN], spec_json


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


def _params_json(rec: dict) -> str:
    """A run record's parameters as the index keeps them (JSON text; a worker's summary has it already)."""
    text = rec.get("params_json")
    return text if isinstance(text, str) else json.dumps(rec.get("params") or {})


def _metrics_json(rec: dict) -> str | None:
    if "metrics_json" in rec:
        return rec["metrics_json"]
    return json.dumps(rec["metrics"]) if rec.get("metrics") is not None else None


def record_params(rec: dict) -> dict:
    """A run record's parameters (a manifest's ``params``, or a worker summary's ``params_json``)."""
    if "params" in rec:
        return rec["params"]
    return json.loads(rec.get("params_json") or "{}")


def _spec(rec: dict) -> dict | None:
    text = rec.get("spec_json")
    return json.loads(text) if isinstance(text, str) else None


def _read_json(path: str) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _atomic_bytes(path: str, data: bytes, fsync: bool = True) -> None:
    """A campaign file written whole or not at all (tcplab/_files.py), flushed to disk by default."""
    write_bytes_atomically(path, data, fsync)


def _sha256_text(data: bytes) -> bytes:
    return (hashlib.sha256(data).hexdigest() + "\n").encode()


def _write_checked(path: str, text: str, fsync: bool = True) -> None:
    """Write a campaign file and, beside it, its SHA-256 (``path + SUM``). The checksum goes first: a
    crash between the two leaves a mismatch that ``verify`` reports, never a file nothing covers."""
    data = text.encode("utf-8")
    _atomic_bytes(path + SUM, _sha256_text(data), fsync)
    _atomic_bytes(path, data, fsync)


def _checksum_problem(path: str, data: bytes, sum_path: str) -> str | None:
    """Why ``data`` (the bytes of ``path``) does not match the checksum in ``sum_path``; None if it does."""
    try:
        with open(sum_path, "rb") as fh:
            want = fh.read()
    except FileNotFoundError:
        return f"{path}: no checksum ({os.path.basename(sum_path)} missing)"
    except OSError as e:
        return f"{sum_path}: unreadable checksum ({e.strerror or e})"
    if want != _sha256_text(data):
        return f"{path}: checksum mismatch (edited or damaged: {os.path.basename(sum_path)} does not match it)"
    return None


_CHECKPOINT: dict = {}  # (asks the committer's thread to checkpoint the index)
#: The committer checkpoints the index after this many runs have been committed since its last checkpoint.
CHECKPOINT_RUNS = 64


class _Committer:
    """Makes finished segments durable and indexes them, in a background thread.

    Segments are handed over with :meth:`add` as they arrive (already renamed
    into ``segments/``). The thread takes whatever has arrived, flushes the
    filesystem once for all of it (``syncfs``, when ``flush``) and indexes
    it in one transaction that commits only once the flush has returned: a
    group commit that runs while the workers go on. So the index never names
    a segment that is not on stable storage, and only the last batch is on a
    sweep's critical path (its rows are written while the flush runs, in a
    second thread, and committed after it). A segment a worker has flushed
    itself (its last of a round, ``"flushed": true``), or any segment when
    nothing is flushed, is indexed at once in the caller's thread: no flush
    to wait for, and no hand-over to a thread that would hold the GIL while
    the sweep's thread wants it. Once ``CHECKPOINT_RUNS`` runs have been
    committed since the last time, the thread checkpoints the index (copies
    its log into the database file, which syncs both) while the workers go
    on: the log stays short, and SQLite's own checkpoint (in a commit, once
    the log reaches 1000 pages) never falls in the sweep's thread. Closing
    the campaign does not checkpoint (see :meth:`Campaign.close`).
    :meth:`close` commits what is left and raises what went wrong.
    """

    def __init__(self, camp: Campaign, flush: bool) -> None:
        import queue
        import threading

        self.camp, self.flush = camp, flush
        self.lock = threading.Lock()  # the index is written by one thread at a time
        self.error: BaseException | None = None
        self.since_checkpoint = 0  # runs committed since the index was last checkpointed
        self.q: queue.SimpleQueue[dict | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="tcplab-index", daemon=True)
        self.thread.start()

    def add(self, m: dict) -> None:
        if self.error is not None:
            raise self.error
        if self.flush and m.get("flushed"):
            self.camp._synced_before(float(m.get("created") or 0.0))  # (its flush came after the segment was made)
        if not self.flush or m.get("flushed"):
            with self.lock:
                db = self.camp._db
                try:
                    self.camp._insert_segment(m)
                except BaseException:
                    db.rollback()
                    raise
                db.commit()
                self.since_checkpoint += len(m["runs"])
                if self.since_checkpoint >= CHECKPOINT_RUNS:
                    self.q.put(_CHECKPOINT)  # (the thread checkpoints)
            return
        self.q.put(m)

    def _loop(self) -> None:
        import queue

        while True:
            batch = [self.q.get()]
            while True:
                try:
                    batch.append(self.q.get_nowait())
                except queue.Empty:
                    break
            segs = [m for m in batch if m is not None and m is not _CHECKPOINT]
            closing = None in batch
            if self.error is None:
                try:
                    with self.lock:
                        if segs:
                            self._commit(segs)
                            self.since_checkpoint += sum(len(m["runs"]) for m in segs)
                        if self.since_checkpoint >= CHECKPOINT_RUNS and not closing:
                            # copy what was committed into the database file now, while the workers run
                            # (it syncs the log, the file and, the first time, the directory). Not after
                            # every commit: a sweep's last segments are small, and a checkpoint then would
                            # only hold the index while the sweep ends
                            self.camp._db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                            self.since_checkpoint = 0
                except BaseException as e:  # raised in the sweep's thread by add() or close()
                    self.error = e
            if closing:
                return

    def _commit(self, segs: list[dict]) -> None:
        import threading

        flushed: list = []
        flusher = None
        if self.flush and not all(m.get("flushed") for m in segs):  # (a worker flushed after its last one)
            started = threading.Event()

            def flush() -> None:
                started.set()
                try:
                    syncfs(self.camp.path)
                    flushed.append(None)
                except BaseException as e:
                    flushed.append(e)

            self.camp._synced_before(time.time())
            flusher = threading.Thread(target=flush, name="tcplab-flush", daemon=True)
            flusher.start()
            started.wait()  # let it reach syncfs before this thread takes the GIL for a while (up to 5 ms)
        db = self.camp._db
        try:
            for m in segs:  # written into the transaction, not committed
                self.camp._insert_segment(m)
            if flusher is not None:
                flusher.join()
                if flushed[0] is not None:
                    raise flushed[0]
        except BaseException:
            db.rollback()
            raise
        db.commit()

    def close(self) -> None:
        self.q.put(None)
        self.thread.join()
        if self.error is not None:
            raise self.error


class Campaign:
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
                raise CampaignError(f"{marker}: not a tcplab campaign (format {doc.get('format') if isinstance(doc, dict) else doc!r})")
            if doc.get("format_version") == 2:
                import shlex

                raise CampaignError(f"{marker}: campaign format version 2, written by an earlier tcplab: its segment "
                                    f"manifests have no checksum. Run `tcplab sweep --upgrade "
                                    f"{shlex.quote(self.path)}` to checksum its files as they are now (after "
                                    f"checking its tables), or run the sweep into a new directory")
            if doc.get("format_version") != FORMAT_VERSION:
                raise CampaignError(f"{marker}: campaign format version {doc.get('format_version')!r}; "
                                    f"this tcplab reads version {FORMAT_VERSION}"
                                    + ("; version 1 (one directory per run) was written by an earlier tcplab: run "
                                       "the sweep into a new directory" if doc.get("format_version") == 1 else ""))
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

    # -- index ---------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        # check_same_thread=False: during Campaign.run the index is written by its committer thread (and only
        # by it; the connection is never used from two threads at once)
        path = os.path.join(self.path, INDEX)
        new = not os.path.exists(path) or os.path.getsize(path) == 0
        db = sqlite3.connect(path, timeout=60, check_same_thread=False)
        # WAL with synchronous=NORMAL: a commit is not flushed by itself (the index is a cache of
        # segments/, which are flushed before they are indexed) but the database stays consistent.
        # Creating an index is not flushed at all (six fsyncs saved): until segments are indexed it
        # holds nothing, and an index damaged by a crash is moved aside and rebuilt from segments/.
        db.execute("PRAGMA synchronous=OFF" if new else "PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA journal_mode=WAL")
        if db.execute("PRAGMA user_version").fetchone()[0] != FORMAT_VERSION:
            db.executescript("BEGIN;" + _SCHEMA + f"PRAGMA user_version = {FORMAT_VERSION}; COMMIT;")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("SELECT count(*) FROM runs").fetchone()
        return db

    def _memory_index(self) -> sqlite3.Connection:
        """An empty index in memory (a read-only campaign whose stored index cannot be used as it is)."""
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.executescript(_SCHEMA)
        return db

    def _open_index(self) -> sqlite3.Connection:
        if self.read_only:  # read the stored index without writing to it; else rebuild one in memory
            try:
                db = sqlite3.connect(pathlib.Path(self.path, INDEX).as_uri() + "?mode=ro", uri=True,
                                     check_same_thread=False)
                if db.execute("PRAGMA user_version").fetchone()[0] == FORMAT_VERSION:
                    db.execute("SELECT count(*) FROM runs").fetchone()
                    return db
                db.close()
            except sqlite3.Error:
                pass
            return self._memory_index()
        try:
            return self._connect()
        except sqlite3.DatabaseError as e:
            from .envfail import is_environment_sqlite_error

            if is_environment_sqlite_error(e):  # a full disk or a read-only file is not a damaged index
                raise
            bad = os.path.join(self.path, f"{INDEX}.corrupt-{int(time.time())}")
            for suffix in ("", "-wal", "-shm"):
                p = os.path.join(self.path, INDEX + suffix)
                if os.path.exists(p):
                    os.replace(p, bad + suffix)
            _warn(f"{os.path.join(self.path, INDEX)}: unreadable index ({e}); moved to {os.path.basename(bad)} "
                  f"and rebuilt from the stored segments")
            return self._connect()

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

    def _insert_segment(self, m: dict) -> None:
        """Index one segment's runs (inside the caller's transaction). A key
        already indexed keeps its record unless the new one is better: ok
        over failed, then the later."""
        seg = m["id"]
        self._db.execute("INSERT OR REPLACE INTO segments (id, runs, added) VALUES (?,?,?)",
                         (seg, len(m["runs"]), time.time()))
        self._db.executemany(
            "INSERT INTO runs (key, status, params, seed, version, metrics, error, sim_s, task_s, finished, segment)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET status=excluded.status,"
            " params=excluded.params, seed=excluded.seed, version=excluded.version, metrics=excluded.metrics,"
            " error=excluded.error, sim_s=excluded.sim_s, task_s=excluded.task_s, finished=excluded.finished,"
            " segment=excluded.segment"
            " WHERE (excluded.status = 'ok') > (runs.status = 'ok') OR ((excluded.status = 'ok') = (runs.status = 'ok')"
            " AND excluded.finished > runs.finished)",
            [(r["key"], r["status"], _params_json(r), r.get("seed"), r["version"], _metrics_json(r), r.get("error"),
              r.get("sim_s"), r.get("task_s"), r.get("finished"), seg) for r in m["runs"]])

    def _drop_segment(self, seg: str) -> None:
        with self._db:
            self._db.execute("DELETE FROM runs WHERE segment = ?", (seg,))
            self._db.execute("DELETE FROM segments WHERE id = ?", (seg,))
        self._manifests.pop(seg, None)

    # -- consistency of directory and index ------------------------------------
    def _check_segment(self, d: str, seg: str, deep: bool = False) -> dict:
        """The manifest of segment directory ``d``; raises CampaignError if the segment is damaged."""
        mpath = os.path.join(d, MANIFEST)
        try:
            with open(mpath, "rb") as fh:
                text = fh.read()
        except FileNotFoundError:
            raise CampaignError(f"{d}: no {MANIFEST} (not a stored segment)") from None
        except OSError as e:
            raise CampaignError(f"{mpath}: unreadable manifest ({e})") from None
        # the manifest's own checksum first: an edited metric must not be indexed or shown
        problem = _checksum_problem(mpath, text, os.path.join(d, MANIFEST_SUM))
        if problem is not None:
            raise CampaignError(problem)
        try:
            m = json.loads(text)
        except ValueError as e:
            raise CampaignError(f"{mpath}: unreadable manifest ({e})") from None
        if not isinstance(m, dict) or m.get("format") != SEGMENT_FORMAT or m.get("id") != seg:
            raise CampaignError(f"{mpath}: not the manifest of segment {seg}")
        files, runs = m.get("files"), m.get("runs")
        if not isinstance(files, dict) or not isinstance(runs, list) or m.get("format_version") not in (1, 2) \
                or (m.get("format_version") == 2 and runs and SPECS not in files):
            raise CampaignError(f"{mpath}: incomplete manifest")
        for r in runs:
            if not isinstance(r, dict) or not _KEY_RE.match(str(r.get("key"))) or r.get("status") not in ("ok", "failed") \
                    or (r["status"] == "ok" and not all(isinstance((r.get("rows") or {}).get(t), list) for t in TABLES)):
                raise CampaignError(f"{mpath}: incomplete manifest (run {str(r.get('key') if isinstance(r, dict) else r)[:32]})")
        for name, info in files.items():
            p = os.path.join(d, name)
            try:
                size = os.path.getsize(p)
            except OSError:
                raise CampaignError(f"{p}: missing file of a stored segment") from None
            if size != info.get("size"):
                raise CampaignError(f"{p}: {size} bytes, the manifest says {info.get('size')} (damaged)")
            if deep:
                with open(p, "rb") as fh:
                    digest = hashlib.sha256(fh.read()).hexdigest()
                if digest != info.get("sha256"):
                    raise CampaignError(f"{p}: checksum mismatch (damaged)")
        return m

    def _scan(self) -> dict[str, str]:
        """Segment directories on disk, ``{id: dir}``; foreign entries are warned about and ignored."""
        found: dict[str, str] = {}
        for e in os.scandir(self.path):
            if e.name not in _ROOT_ENTRIES and not e.name.startswith(INDEX + ".corrupt-") \
                    and not e.name.startswith(MARKER) and not e.name.startswith("report"):
                _warn(f"{e.path}: not part of a tcplab campaign; ignored")
        segs = os.path.join(self.path, "segments")
        for e in os.scandir(segs) if os.path.isdir(segs) else ():
            if e.is_dir() and _SEG_RE.match(e.name):
                found[e.name] = e.path
            else:
                _warn(f"{e.path}: not a stored segment; ignored")
        return found

    def _quarantine(self, d: str, why: str) -> None:
        qdir = os.path.join(self.path, "quarantine")
        os.makedirs(qdir, exist_ok=True)
        dest = os.path.join(qdir, f"{os.path.basename(d)}.{int(time.time() * 1000)}")
        try:
            os.rename(d, dest)
            _warn(f"{why}; moved to {os.path.relpath(dest, self.path)} and its runs will be run again")
        except OSError as e:
            _warn(f"{why}; ignored (could not move it aside: {e})")

    def _reconcile(self) -> None:
        self._clean_tmp()
        # while another process runs a sweep, its segments are on disk before it indexes them: adopting
        # them here would index them twice, so only a campaign no sweep holds is reconciled
        fd = try_briefly(self.path) if not self._lock.depth else -1
        if fd is None:
            return
        try:
            self._adopt_and_drop()
        finally:
            release_brief(fd)

    def lock(self, wait: bool = False) -> None:
        """Take the campaign's sweep lock (held until :meth:`close`; :meth:`run` takes it itself): another
        process running a sweep into it raises :class:`CampaignError` naming it, or with ``wait`` this
        waits for it to finish (see tcplab/sweep/lock.py)."""
        try:
            self._lock.acquire(wait)
        except CampaignBusy as e:
            raise CampaignError(str(e)) from None

    def _adopt_and_drop(self) -> None:
        on_disk = self._scan()
        known = {s for (s,) in self._db.execute("SELECT id FROM segments")}
        if self.read_only and known != set(on_disk):
            # the stored index cannot be brought up to date here: index the segments in memory instead
            self._db.close()
            self._db = self._memory_index()
            known = set()
        for seg, d in sorted(on_disk.items()):
            if seg in known:
                continue
            try:
                # not indexed: it may not have been flushed before a crash, so check every byte
                m = self._check_segment(d, seg, deep=True)
            except CampaignError as e:
                self._quarantine(d, str(e))
                continue
            with self._db:  # stored but not indexed (killed between the two): adopt
                self._insert_segment(m)
        for seg in known - set(on_disk):
            n = self._db.execute("SELECT count(*) FROM runs WHERE segment = ?", (seg,)).fetchone()[0]
            if n:
                _warn(f"segment {seg}: in the index but not in segments/; its {n} run(s) dropped from the index "
                      f"(they will be run again)")
            self._drop_segment(seg)

    def _clean_tmp(self) -> None:
        tmp = os.path.join(self.path, "tmp")
        if self.read_only or not os.path.isdir(tmp):
            return
        host = socket.gethostname()
        for e in os.scandir(tmp):
            parts = e.name.split(".")
            alive = True
            if len(parts) >= 4 and parts[-3] == host and parts[-2].isdigit():
                try:
                    os.kill(int(parts[-2]), 0)
                except ProcessLookupError:
                    alive = False
                except PermissionError:
                    pass
            elif time.time() - e.stat(follow_symlinks=False).st_mtime > 86400:
                alive = False
            if not alive:
                shutil.rmtree(e.path, ignore_errors=True) if e.is_dir() else os.remove(e.path)

    def verify(self, fix: bool = True) -> list[str]:
        """Check every stored segment's files against its manifest checksums.

        Returns the problems found; with ``fix``, damaged segments are moved to
        ``quarantine/`` and their runs dropped from the index, so the next
        sweep runs them again (not in a read-only campaign: there they are only reported).
        """
        fix = fix and not self.read_only
        problems = self._verify_campaign_files()
        for seg, d in sorted(self._scan().items()):
            try:
                self._check_segment(d, seg, deep=True)
            except CampaignError as e:
                problems.append(str(e))
                if fix:
                    self._quarantine(d, str(e))
                    self._drop_segment(seg)
        return problems

    def _campaign_files(self) -> list[str]:
        """The campaign's own files covered by a ``.sha256`` beside them: the marker and the sweep files."""
        d = os.path.join(self.path, "sweeps")
        return [os.path.join(self.path, MARKER)] + [os.path.join(d, n) for n in sorted(os.listdir(d))
                                                     if n.endswith(".toml")] if os.path.isdir(d) else []

    def _verify_campaign_files(self) -> list[str]:
        """Problems with campaign.json and the sweep files (reported; a sweep file is rewritten by the next
        sweep of that name, the marker is the user's to restore)."""
        problems = []
        for p in self._campaign_files():
            try:
                with open(p, "rb") as fh:
                    data = fh.read()
            except OSError as e:
                problems.append(f"{p}: unreadable ({e.strerror or e})")
                continue
            problem = _checksum_problem(p, data, p + SUM)
            if problem is not None:
                problems.append(problem)
        return problems

    @staticmethod
    def upgrade(path: str | os.PathLike) -> int:
        """Bring a campaign of format 2 to format 3: check every segment's tables against its manifest,
        then write the checksums format 3 adds (of each manifest, campaign.json and the sweep files) for the
        files as they are now. Returns the number of segments checksummed. A damaged segment is reported
        (CampaignError) and nothing is changed: move it aside or delete it first."""
        root = os.path.abspath(os.fspath(path))
        marker = os.path.join(root, MARKER)
        try:
            doc = _read_json(marker)
        except (OSError, ValueError) as e:
            raise CampaignError(f"{marker}: not a readable tcplab campaign marker ({e})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise CampaignError(f"{marker}: not a tcplab campaign")
        if doc.get("format_version") == FORMAT_VERSION:
            return 0
        if doc.get("format_version") != 2:
            raise CampaignError(f"{marker}: campaign format version {doc.get('format_version')!r}; only version 2 "
                                f"can be upgraded")
        segs = os.path.join(root, "segments")
        dirs = sorted(e.path for e in os.scandir(segs) if e.is_dir() and _SEG_RE.match(e.name)) \
            if os.path.isdir(segs) else []
        for d in dirs:  # everything checked before anything is written
            m = _read_json(os.path.join(d, MANIFEST))
            for name, info in (m.get("files") or {}).items():
                with open(os.path.join(d, name), "rb") as fh:
                    if hashlib.sha256(fh.read()).hexdigest() != info.get("sha256"):
                        raise CampaignError(f"{os.path.join(d, name)}: checksum mismatch (damaged); nothing "
                                            f"upgraded: move {d} aside first")
        for d in dirs:
            with open(os.path.join(d, MANIFEST), "rb") as fh:
                _atomic_bytes(os.path.join(d, MANIFEST_SUM), manifest_sum(fh.read()))
        sweeps = os.path.join(root, "sweeps")
        for n in sorted(os.listdir(sweeps)) if os.path.isdir(sweeps) else []:
            if n.endswith(".toml"):
                with open(os.path.join(sweeps, n), "rb") as fh:
                    _atomic_bytes(os.path.join(sweeps, n + SUM), _sha256_text(fh.read()))
        doc["format_version"] = FORMAT_VERSION
        _write_checked(marker, json.dumps(doc) + "\n")  # last: the campaign opens only once all is checksummed
        return len(dirs)

    def reindex(self) -> None:
        """Rebuild the index from the segment directories. Takes the campaign's lock (a sweep running into
        it: :class:`CampaignError` naming it), since a running sweep's segments are indexed by that sweep."""
        self.lock()
        try:
            with self._db:
                self._db.execute("DELETE FROM runs")
                self._db.execute("DELETE FROM segments")
            self._manifests.clear()
            self._reconcile()
        finally:
            self._lock.release()

    # -- running -------------------------------------------------------------
    def status(self, keys: Iterable[str] | None = None) -> dict[str, str]:
        """``{key: "ok" | "failed"}`` for stored runs (among ``keys`` if given)."""
        rows = dict(self._db.execute("SELECT key, status FROM runs"))
        if keys is None:
            return rows
        return {k: rows[k] for k in keys if k in rows}

    def _normalize(self, jobs: Any) -> list[dict]:
        return list(self._normalize_iter(jobs))

    def _normalize_iter(self, jobs: Any) -> Iterator[dict]:
        """The jobs as the executors take them (key, params, seed, RunSpec and its canonical JSON, version,
        bottleneck links), one at a time: a sweep's first runs can start while the rest are hashed."""
        import tcplab

        from .grid import Sweep

        version = tcplab.__version__
        version_json = _version_json(version)
        try:
            from tcplab._core import plan_job  # type: ignore[attr-defined]
        except ImportError:  # pragma: no cover - the core is not built
            plan_job = None
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
            bottleneck = list(job[2]) if len(job) == 3 and job[2] else []
            params = dict(label) if isinstance(label, (dict, Mapping)) else {"label": str(label)}
            params.pop("seed", None)
            if isinstance(spec, str):
                # JSON text (large generated scenarios travel as text): keyed by its canonical JSON, like
                # the dict; only the text is kept (the caller's own string when it is canonical already)
                obj = _spec_object(spec, f"jobs[{i}]")
                key, spec_json = _key_and_spec_json(obj, version)
                yield {"key": key, "params": params, "seed": obj.get("seed"),
                       "spec_json": spec if spec_json == spec else spec_json, "version": version,
                       "bottleneck": bottleneck}
                continue
            if hasattr(spec, "to_spec"):
                bottleneck = bottleneck or spec.bottleneck_links()
                spec = spec.to_spec()
            if not isinstance(spec, (dict, Mapping)):  # (dict first: an ABC check costs microseconds per job)
                raise TypeError(f"jobs[{i}]: the run description must be a RunSpec dict, its JSON text or a Scenario")
            spec = dict(spec)
            seed = spec.get("seed")
            if isinstance(seed, int) and not 0 <= seed <= MAX_SEED:
                raise CampaignError(f"jobs[{i}].seed: must be 0 to {MAX_SEED} (2^63 - 1, the campaign index's "
                                    f"largest integer), got {seed}")
            try:
                # the core writes the spec's canonical JSON, its key and the job's line in one go
                planned = plan_job(spec, params, seed, version_json, _json_of(tuple(bottleneck)), KEY_LEN) \
                    if plan_job is not None else None
                if planned is None:
                    key, spec_json = _key_and_spec_json(spec, version)  # (Python decides; job_line writes the line)
            except ValueError:  # NaN, infinity or a lone surrogate: JSON cannot carry it; name where it is
                _refuse_unencodable(spec, f"jobs[{i}]")
                raise
            if planned is not None:
                key, spec_json, line = planned
                yield {"key": key, "params": params, "seed": seed, "spec": spec, "spec_json": spec_json,
                       "version": version, "bottleneck": bottleneck, "line": line}
                continue
            yield {"key": key, "params": params, "seed": seed, "spec": spec, "spec_json": spec_json,
                   "version": version, "bottleneck": bottleneck}

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

    def _run(self, jobs: Any, n: int, workers: int | None, local: bool, client: Any, scheduler: str | None, progress: bool | None,
             retry_failed: bool, fsync: bool, store_on: str, label: str, t0: float) -> RunReport:
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
        state = {"ran": 0, "runs_wall_s": 0.0, "todo": 0}
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
                state["runs_wall_s"] += r.get("sim_s") or 0.0  # a record's wall time, stored as sim_s
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
                         wall_s=time.perf_counter() - t0, workers=nworkers, runs_wall_s=state["runs_wall_s"],
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

    @staticmethod
    def _same_text(path: str, text: str) -> bool:
        """Whether ``path`` holds ``text`` and its checksum matches."""
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return False
        return data == text.encode("utf-8") and _checksum_problem(path, data, path + SUM) is None

    def sweeps(self) -> dict[str, str]:
        """``{name: TOML text}`` of the sweeps run into this campaign."""
        d = os.path.join(self.path, "sweeps")
        out = {}
        for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if n.endswith(".toml"):
                with open(os.path.join(d, n), encoding="utf-8") as fh:
                    out[n[:-5]] = fh.read()
        return out

    # -- queries ---------------------------------------------------------------
    def _rows(self, keys: Sequence[str] | None = None) -> list[tuple]:
        cols = "key, status, params, seed, version, metrics, error, sim_s, task_s, finished"
        if keys is None:
            return list(self._db.execute(f"SELECT {cols} FROM runs ORDER BY finished"))
        rows = {r[0]: r for r in self._db.execute(f"SELECT {cols} FROM runs")}
        return [rows[k] for k in dict.fromkeys(keys) if k in rows]

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

    def _segment_of(self, key: str) -> tuple[str, str]:
        key = self._full_key(key)
        row = self._db.execute("SELECT segment FROM runs WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(f"run {key}: not stored in {self.path}")
        return key, row[0]

    def _segment_manifest(self, seg: str) -> dict:
        m = self._manifests.get(seg)
        if m is None:
            d = segment_dir(self.path, seg)
            if not os.path.isdir(d):
                raise DamagedSegmentError(f"{d}: segment missing (the index is stale; reopen the campaign to rerun "
                                          "its runs)", seg)
            try:
                m = self._check_segment(d, seg)
            except CampaignError as e:
                raise DamagedSegmentError(str(e), seg) from None
            if len(self._manifests) > 64:
                self._manifests.clear()
            self._manifests[seg] = m
        return m

    @staticmethod
    def _best(recs: list[dict]) -> dict:
        """Of a key's records in one segment, the one the index keeps: ok over failed, then the later."""
        return max(recs, key=lambda r: (r["status"] == "ok", r.get("finished") or 0))

    def _reindex_hint(self) -> str:
        """What fixes an index that points at the wrong segment (``--verify`` checks segments, not the index)."""
        import shlex

        return (f"(the index is stale: rebuild it with `tcplab sweep --reindex {shlex.quote(self.path)}` "
                f"or Campaign.reindex())")

    def _record(self, key: str) -> tuple[str, dict, dict]:
        """(segment id, segment manifest, the run's record in it)."""
        key, seg = self._segment_of(key)
        m = self._segment_manifest(seg)
        recs = [r for r in m["runs"] if r["key"] == key]
        if not recs:
            raise CampaignError(f"{segment_dir(self.path, seg)}: the index says run {key} is here, it is not "
                                + self._reindex_hint())
        return seg, m, self._best(recs)

    def _table_bytes(self, seg: str, m: dict, table: str, verify: bool) -> bytes:
        name = f"{table}.parquet"
        info = m["files"].get(name)
        p = os.path.join(segment_dir(self.path, seg), name)
        if info is None:
            raise DamagedSegmentError(f"{p}: not in the segment's manifest", seg)
        try:
            with open(p, "rb") as fh:
                data = fh.read()
        except OSError as e:
            raise DamagedSegmentError(f"{p}: cannot read a stored table ({e})", seg) from None
        if len(data) != info.get("size"):
            raise DamagedSegmentError(f"{p}: {len(data)} bytes, the manifest says {info.get('size')} (damaged); "
                                      "run `tcplab sweep --verify` to rerun its runs", seg)
        if verify and hashlib.sha256(data).hexdigest() != info.get("sha256"):
            raise DamagedSegmentError(f"{p}: checksum mismatch (damaged); run `tcplab sweep --verify` to rerun its "
                                      "runs", seg)
        return data

    def _read_tables(self, seg: str, m: dict, tables: Sequence[str], verify: bool) -> dict:
        """``{table: Arrow table of every run's rows}`` of one segment; an optional table the segment was
        written without (an earlier tcplab) is left out."""
        out = {}
        for t in tables:
            if t not in TABLES and f"{t}.parquet" not in m["files"]:
                continue
            data = self._table_bytes(seg, m, t, verify)
            try:
                out[t] = read_table(data)
            except Exception as e:
                raise DamagedSegmentError(f"{segment_dir(self.path, seg)}/{t}.parquet: cannot read the stored table "
                                          f"({type(e).__name__}: {e})", seg) from None
        return out

    @staticmethod
    def _run_raw(rec: dict, tabs: dict) -> dict:
        """One run's rows of each table in ``tabs``, in the shape ``tcplab._core.run`` returns."""
        if rec["status"] != "ok":
            raise CampaignError(f"run {rec['key']} failed, it has no results: {rec.get('error')}")
        raw: dict = {}
        rows = rec.get("rows") or {}
        for t, table in tabs.items():
            if t not in rows:  # an optional table this run was stored without
                continue
            start, n = rows[t]
            raw[t] = read_rows(table, start, n)
            if t in _NOT_COLUMNS:
                col, field = _NOT_COLUMNS[t]
                raw[t][col] = list(rec.get(field) or [])
        raw["meta"] = dict(rec.get("meta") or {})
        return raw

    def _raw(self, key: str, tables: Sequence[str], verify: bool) -> tuple[str, dict, dict, dict]:
        seg, m, rec = self._record(key)
        if rec["status"] != "ok":  # (before reading anything)
            raise CampaignError(f"run {rec['key']} failed, it has no results: {rec.get('error')}")
        return seg, m, rec, self._run_raw(rec, self._read_tables(seg, m, tables, verify))

    def _spec(self, seg: str, m: dict, rec: dict, verify: bool) -> dict | None:
        """A stored run's RunSpec: in its record (segment format 1) or in the segment's specs table."""
        if "spec_json" in rec or SPECS not in m.get("files", {}):
            return _spec(rec)
        i = next(i for i, r in enumerate(m["runs"]) if r is rec)
        data = self._table_bytes(seg, m, SPECS[: -len(".parquet")], verify)
        try:
            text = read_table(data).column("spec_json")[i].as_py()
        except Exception as e:
            raise DamagedSegmentError(f"{segment_dir(self.path, seg)}/{SPECS}: cannot read the stored RunSpecs "
                                      f"({type(e).__name__}: {e})", seg) from None
        return json.loads(text) if isinstance(text, str) else None

    def spec(self, key: str) -> dict | None:
        """The RunSpec a stored run ran (what the core simulated)."""
        seg, m, rec = self._record(key)
        return self._spec(seg, m, rec, True)

    def load_raw(self, key: str, tables: Sequence[str] | None = None, verify: bool = True) -> dict:
        """One stored run in the shape ``tcplab._core.run`` returned it: ``{table: {column: numpy array
        or list of str}, "meta": {...}}`` (``cc_ts`` and ``qdisc_ts`` with their ``variable_names``), the same values and
        dtypes. ``tables``: which (default: all stored). Checked against the segment's checksums unless
        ``verify=False``; a damaged segment raises :class:`DamagedSegmentError`."""
        return self._raw(key, list(tables) if tables is not None else ALL_TABLES, verify)[3]

    def iter_raw(self, keys: Iterable[str], tables: Sequence[str] | None = None,
                 verify: bool = True) -> Iterator[tuple[str, dict]]:
        """``(key, raw)`` for each of ``keys`` (each once) as :meth:`load_raw` gives it, reading
        each segment's tables once: runs come grouped by segment, not in the order given."""
        tables = list(tables) if tables is not None else list(ALL_TABLES)
        where = dict(self._db.execute("SELECT key, segment FROM runs"))
        by_seg: dict[str, list[str]] = {}
        for k in dict.fromkeys(keys):
            full = k if k in where else self._full_key(k)
            if full not in where:
                raise KeyError(f"run {k}: not stored in {self.path}")
            by_seg.setdefault(where[full], []).append(full)
        for seg, seg_keys in by_seg.items():
            m = self._segment_manifest(seg)
            recs: dict[str, list[dict]] = {}
            for r in m["runs"]:
                recs.setdefault(r["key"], []).append(r)
            chosen = []
            for k in seg_keys:
                if k not in recs:
                    raise CampaignError(f"{segment_dir(self.path, seg)}: the index says run {k} is here, it is not "
                                        + self._reindex_hint())
                chosen.append(self._best(recs[k]))
                if chosen[-1]["status"] != "ok":
                    raise CampaignError(f"run {k} failed, it has no results: {chosen[-1].get('error')}")
            tabs = self._read_tables(seg, m, tables, verify)
            for rec in chosen:
                yield rec["key"], self._run_raw(rec, tabs)

    def quarantine(self, segment: str, why: str) -> None:
        """Move a damaged segment to ``quarantine/`` (with a warning) and drop its runs from the index, so
        that they are run again (what :meth:`verify` does with the segments it finds damaged)."""
        d = segment_dir(self.path, segment)
        if os.path.isdir(d):
            self._quarantine(d, why)
        else:
            _warn(f"{why}; its runs will be run again")
        self._drop_segment(segment)

    def run_path(self, key: str) -> str:
        """The directory of the segment holding a stored run (checked against its manifest)."""
        seg, _, _ = self._record(key)
        return segment_dir(self.path, seg)

    def _full_key(self, key: str) -> str:
        if _KEY_RE.match(key):
            return key
        hits = [k for (k,) in self._db.execute("SELECT key FROM runs WHERE key LIKE ?", (key + "%",))]
        if len(hits) != 1:
            raise KeyError(f"run {key!r}: " + ("not stored" if not hits else f"ambiguous ({len(hits)} runs)"))
        return hits[0]

    def manifest(self, key: str) -> dict:
        """A stored run's record: key, parameters, seed, version, status, error,
        metrics, meta, RunSpec, timings, and ``segment`` (the id of its segment)."""
        seg, _, rec = self._record(key)
        return dict(rec, segment=seg)

    def load(self, key: str, verify: bool = True) -> Results:
        """One stored run as :class:`~tcplab.Results` (time series included),
        its tables checked against the segment's checksums unless ``verify=False``."""
        from ..results import Results

        seg, m, rec, raw = self._raw(key, ALL_TABLES, verify)
        return Results(raw, spec=self._spec(seg, m, rec, verify), name=rec["key"])

    def timeseries(self, key: str, table: str = "flow_ts") -> pd.DataFrame:
        """One table of one run, read on demand (``flow_ts``, ``queue_ts``, ``cc_ts``, ``qdisc_ts``, ``flows``, ...)."""
        from ..results import Results

        if table not in ALL_TABLES:
            raise ValueError(f"table: expected one of {', '.join(ALL_TABLES)}, got {table!r}")
        # the name columns come from the flows (links) table, as in Results
        need = [table] + [t for t in ({"flow_ts": ["flows"], "files": ["flows"], "queue_ts": ["links"],
                                       "qdisc_ts": ["links"]}.get(table, []))]
        seg, m, rec, raw = self._raw(key, need, True)
        return getattr(Results(raw, spec=self._spec(seg, m, rec, True), name=rec["key"]), table)

    def aggregate(self, which: Any = None, by: Sequence[str] | None = None,
                  metrics: Sequence[str] | None = None, confidence: float = 0.95) -> pd.DataFrame:
        """Means across seeds with Student-t confidence intervals; see :func:`tcplab.sweep.aggregate`."""
        from .query import aggregate

        return aggregate(self.results(which), by=by, metrics=metrics, confidence=confidence)

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM runs").fetchone()[0])

    def __repr__(self) -> str:
        return f"<Campaign {self.path}: {len(self)} runs>"


def _refuse_unencodable(spec: Mapping, where: str) -> None:
    """Raise the core's SpecError naming the key path (``jobs[3].flows[0].init_cwnd``) of the first
    value JSON cannot carry (NaN, infinity, a lone surrogate), as ``tcplab.run`` does for one run."""
    import tcplab
    from tcplab._specjson import spec_to_json

    spec_to_json(spec, lambda field, problem: tcplab.SpecError(f"{where}.{field}: {problem}"))

