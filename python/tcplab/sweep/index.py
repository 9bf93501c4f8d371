"""A campaign's constants, errors and index.

The index (``index.sqlite``) maps each stored run's key to the segment holding
it, with its status, parameters, seed, metrics and timings: what
:meth:`Campaign.status`, :meth:`Campaign.results` and every lookup read. It is
a cache of ``segments/`` (:mod:`.segments`): rebuilt from them when lost or
damaged. :class:`_Committer` indexes finished segments during a sweep, after
they are on stable storage. The layout of a campaign: :mod:`.campaign`.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import sqlite3
import time
import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .lock import LOCK_FILE, CampaignLock
from .worker import syncfs

if TYPE_CHECKING:  # pragma: no cover
    from .campaign import Campaign

    pass


FORMAT = "tcplab-campaign"


#: 4: runs keyed by the core (crates/tcplab-store/src/key.rs: the RunSpec as the core reads and writes it).
#: 3 keyed the same runs by Python's JSON text, 2 also lacked the checksums of every stored file
#: (segment.sha256, campaign.json.sha256, sweeps/*.toml.sha256): both are refused.
FORMAT_VERSION = 4


MARKER = "campaign.json"


#: The suffix of the file holding the SHA-256 of a campaign file (campaign.json, a sweep file).
SUM = ".sha256"


INDEX = "index.sqlite"


KEY_LEN = 32


#: Segments of format version 2 keep their runs' RunSpecs here (row i: run record i), not in the manifest.
SPECS = "specs.parquet"


_KEY_RE = re.compile(rf"^[0-9a-f]{{{KEY_LEN}}}$")


_SEG_RE = re.compile(r"^[0-9a-f]{32}$")


_ROOT_ENTRIES = {MARKER, INDEX, INDEX + "-wal", INDEX + "-shm", INDEX + "-journal", "segments", "sweeps", "tmp",
                 "quarantine", "report.html", LOCK_FILE}


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


def _params_json(rec: dict) -> str:
    """A run record's parameters as the index keeps them (JSON text; a worker's summary has it already)."""
    text = rec.get("params_json")
    return text if isinstance(text, str) else json.dumps(rec.get("params") or {})


def _metrics_json(rec: dict) -> str | None:
    if "metrics_json" in rec:
        return rec["metrics_json"]
    return json.dumps(rec["metrics"]) if rec.get("metrics") is not None else None


_CHECKPOINT: dict = {}  # (asks the committer's thread to checkpoint the index)


#: The committer checkpoints the index after this many runs have been committed since its last checkpoint.
CHECKPOINT_RUNS = 64


class CampaignIndex:
    """The index part of :class:`~tcplab.sweep.Campaign` (its base class): ``self._db``, the open index."""

    path: str
    read_only: bool
    _db: sqlite3.Connection
    _manifests: dict[str, dict]
    _lock: CampaignLock  # the sweep lock (Campaign's)

    # Defined by the subclasses (Campaign, CampaignSegments); reindex uses them.
    def lock(self, wait: bool = False) -> None:
        raise NotImplementedError

    def _reconcile(self) -> None:
        raise NotImplementedError

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

    # -- queries ---------------------------------------------------------------
    def _rows(self, keys: Sequence[str] | None = None) -> list[tuple]:
        cols = "key, status, params, seed, version, metrics, error, sim_s, task_s, finished"
        if keys is None:
            return list(self._db.execute(f"SELECT {cols} FROM runs ORDER BY finished"))
        rows = {r[0]: r for r in self._db.execute(f"SELECT {cols} FROM runs")}
        return [rows[k] for k in dict.fromkeys(keys) if k in rows]

    def _segment_of(self, key: str) -> tuple[str, str]:
        key = self._full_key(key)
        row = self._db.execute("SELECT segment FROM runs WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(f"run {key}: not stored in {self.path}")
        return key, row[0]

    def _full_key(self, key: str) -> str:
        if _KEY_RE.match(key):
            return key
        hits = [k for (k,) in self._db.execute("SELECT key FROM runs WHERE key LIKE ?", (key + "%",))]
        if len(hits) != 1:
            raise KeyError(f"run {key!r}: " + ("not stored" if not hits else f"ambiguous ({len(hits)} runs)"))
        return hits[0]

    def _reindex_hint(self) -> str:
        """What fixes an index that points at the wrong segment (``--verify`` checks segments, not the index)."""
        import shlex

        return (f"(the index is stale: rebuild it with `tcplab sweep --reindex {shlex.quote(self.path)}` "
                f"or Campaign.reindex())")

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM runs").fetchone()[0])


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
