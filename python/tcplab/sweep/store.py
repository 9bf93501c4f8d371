"""The campaign directory: every finished run, stored once, found again.

Layout::

    CAMPAIGN/
      campaign.json          {"format": "tcplab-campaign", "format_version": 1, "created_by": version}
      index.sqlite           the index (a cache: rebuilt from runs/ when lost or corrupt)
      runs/<k2>/<key>/       one run: flows/links/files/flow_ts/queue_ts.parquet, summary.json,
                             spec.json (Results.load reads it), run.json (the manifest, written last)
      sweeps/<name>.toml     the description of each sweep run into this campaign
      tmp/                   runs being written; never read
      quarantine/            runs found damaged, moved aside (then run again)

The run key is the SHA-256 of the canonical JSON of ``{"spec": RunSpec,
"version": tcplab version}`` (first 32 hex digits). A run directory appears
by one ``rename`` of a complete directory (see :mod:`.worker`), and the
index row is written after it, so the index never points to a missing or
partial run. A run directory the index does not know (the sweep was
killed between the two) is adopted when the campaign is next opened.

Failed runs are stored too (``run.json`` with ``status = "failed"`` and the
error). They are not run again unless asked (``retry_failed``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import sqlite3
import sys
import time
import warnings
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Sequence, Union

from .grid import canonical_json
from .worker import MANIFEST, TABLES, commit, run_dir, syncfs

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..results import Results
    from .grid import Sweep

__all__ = ["Campaign", "CampaignError", "CampaignWarning", "RunReport", "run_key"]

FORMAT = "tcplab-campaign"
FORMAT_VERSION = 1
MARKER = "campaign.json"
INDEX = "index.sqlite"
KEY_LEN = 32
_KEY_RE = re.compile(r"^[0-9a-f]{%d}$" % KEY_LEN)
_ROOT_ENTRIES = {MARKER, INDEX, INDEX + "-wal", INDEX + "-shm", INDEX + "-journal", "runs", "sweeps", "tmp",
                 "quarantine", "report.html"}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    params TEXT NOT NULL,
    seed INTEGER,
    version TEXT NOT NULL,
    metrics TEXT,
    error TEXT,
    sim_s REAL,
    task_s REAL,
    finished REAL
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT);
"""


class CampaignError(Exception):
    """A campaign directory cannot be used as asked (the message says why and what to do)."""


class CampaignWarning(UserWarning):
    """Something in a campaign directory was ignored or moved aside."""


def _warn(msg: str) -> None:
    warnings.warn(msg, CampaignWarning, stacklevel=3)


def run_key(spec: Mapping[str, Any], version: Optional[str] = None) -> str:
    """The key of a run: hash of its RunSpec and the tcplab version."""
    if version is None:
        import tcplab

        version = tcplab.__version__
    text = canonical_json({"spec": spec, "version": version})
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LEN]


class RunReport:
    """What :meth:`Campaign.run` did. ``keys`` are the run keys in job order."""

    def __init__(self, keys: list[str], params: list[dict], ran: int, reused: int, failures: list[dict],
                 wall_s: float, workers: int, sim_s: float, interrupted: bool = False) -> None:
        self.keys = keys
        self.params = params
        self.ran = ran
        self.reused = reused
        self.failures = failures
        self.wall_s = wall_s
        self.workers = workers
        self.sim_s = sim_s
        self.interrupted = interrupted

    @property
    def total(self) -> int:
        return len(self.keys)

    @property
    def overhead(self) -> Optional[float]:
        """Share of the sweep's core-seconds (wall x workers) not spent inside
        the simulator: scheduling, encoding, storing, indexing, start-up."""
        if self.ran == 0 or self.wall_s <= 0:
            return None
        return max(0.0, 1.0 - self.sim_s / (self.wall_s * self.workers))

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
        return {"total": self.total, "ran": self.ran, "reused": self.reused, "failed": len(self.failures),
                "failures": self.failures, "wall_s": self.wall_s, "workers": self.workers, "sim_s": self.sim_s,
                "overhead": self.overhead, "interrupted": self.interrupted}

    def __repr__(self) -> str:
        return f"<RunReport {self.summary().splitlines()[0]}>"


def _read_json(path: str) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _atomic_text(path: str, text: str) -> None:
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class Campaign:
    """A campaign directory (created if absent or empty).

    ``Campaign(dir).run(jobs)`` runs what is not stored yet; jobs are
    ``(label_or_params, RunSpec)`` pairs (optionally a third item: the
    bottleneck link names), or a :class:`~tcplab.sweep.Sweep`.
    ``results()`` gives the tidy DataFrame, ``load(key)`` one run's
    :class:`~tcplab.Results`, ``aggregate()`` means with confidence intervals.
    """

    def __init__(self, path: Union[str, os.PathLike], create: bool = True) -> None:
        self.path = os.path.abspath(os.fspath(path))
        marker = os.path.join(self.path, MARKER)
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            raise CampaignError(f"{self.path}: not a directory")
        if os.path.exists(marker):
            try:
                doc = _read_json(marker)
            except (OSError, ValueError) as e:
                raise CampaignError(f"{marker}: unreadable campaign marker ({e}); if this is a campaign, "
                                    f"restore the file as {{\"format\": \"{FORMAT}\", \"format_version\": "
                                    f"{FORMAT_VERSION}}}") from None
            if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                raise CampaignError(f"{marker}: not a tcplab campaign (format {doc.get('format') if isinstance(doc, dict) else doc!r})")
            if doc.get("format_version") != FORMAT_VERSION:
                raise CampaignError(f"{marker}: campaign format version {doc.get('format_version')!r}; "
                                    f"this tcplab reads version {FORMAT_VERSION}")
        else:
            if not create:
                raise CampaignError(f"{self.path}: not a tcplab campaign directory (no {MARKER})")
            if os.path.isdir(self.path) and os.listdir(self.path):
                raise CampaignError(f"{self.path}: exists, is not empty and is not a tcplab campaign "
                                    f"(no {MARKER}); refusing to write into it. Choose an empty or new directory.")
            import tcplab

            os.makedirs(self.path, exist_ok=True)
            _atomic_text(marker, json.dumps({"format": FORMAT, "format_version": FORMAT_VERSION,
                                             "created_by": tcplab.__version__, "created": time.time()}) + "\n")
        for d in ("runs", "tmp", "sweeps"):
            os.makedirs(os.path.join(self.path, d), exist_ok=True)
        self._db = self._open_index()
        self._reconcile()

    # -- index ---------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(os.path.join(self.path, INDEX), timeout=60)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(_SCHEMA)
        db.execute("SELECT count(*) FROM runs").fetchone()
        return db

    def _open_index(self) -> sqlite3.Connection:
        try:
            return self._connect()
        except sqlite3.DatabaseError as e:
            bad = os.path.join(self.path, f"{INDEX}.corrupt-{int(time.time())}")
            for suffix in ("", "-wal", "-shm"):
                p = os.path.join(self.path, INDEX + suffix)
                if os.path.exists(p):
                    os.replace(p, bad + suffix)
            _warn(f"{os.path.join(self.path, INDEX)}: unreadable index ({e}); moved to {os.path.basename(bad)} "
                  f"and rebuilt from the stored runs")
            return self._connect()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "Campaign":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _insert(self, m: dict) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO runs (key, status, params, seed, version, metrics, error, sim_s, task_s, finished)"
            " VALUES (?,?,?,?,?,?,?,?,?,?)",
            (m["key"], m["status"], json.dumps(m.get("params") or {}, sort_keys=False), m.get("seed"), m["version"],
             json.dumps(m.get("metrics")) if m.get("metrics") is not None else None, m.get("error"),
             m.get("sim_s"), m.get("task_s"), m.get("finished")))

    # -- consistency of directory and index ------------------------------------
    def _check_manifest(self, d: str, key: str, deep: bool = False) -> dict:
        """The manifest of run directory ``d``; raises CampaignError if the run is damaged."""
        mpath = os.path.join(d, MANIFEST)
        try:
            m = _read_json(mpath)
        except FileNotFoundError:
            raise CampaignError(f"{d}: no {MANIFEST} (not a stored run)") from None
        except (OSError, ValueError) as e:
            raise CampaignError(f"{mpath}: unreadable manifest ({e})") from None
        if not isinstance(m, dict) or m.get("format") != "tcplab-run" or m.get("key") != key:
            raise CampaignError(f"{mpath}: not the manifest of run {key}")
        files = m.get("files")
        if not isinstance(files, dict) or m.get("status") not in ("ok", "failed"):
            raise CampaignError(f"{mpath}: incomplete manifest")
        for name, info in files.items():
            p = os.path.join(d, name)
            try:
                size = os.path.getsize(p)
            except OSError:
                raise CampaignError(f"{p}: missing file of a stored run") from None
            if size != info.get("size"):
                raise CampaignError(f"{p}: {size} bytes, the manifest says {info.get('size')} (damaged)")
            if deep:
                with open(p, "rb") as fh:
                    digest = hashlib.sha256(fh.read()).hexdigest()
                if digest != info.get("sha256"):
                    raise CampaignError(f"{p}: checksum mismatch (damaged)")
        return m

    def _scan(self) -> dict[str, str]:
        """Run directories on disk, ``{key: dir}``; foreign entries are warned about and ignored."""
        found: dict[str, str] = {}
        runs = os.path.join(self.path, "runs")
        for e in os.scandir(self.path):
            if e.name not in _ROOT_ENTRIES and not e.name.startswith(INDEX + ".corrupt-") \
                    and not e.name.startswith(MARKER) and not e.name.startswith("report"):
                _warn(f"{e.path}: not part of a tcplab campaign; ignored")
        for shard in os.scandir(runs):
            if not (shard.is_dir() and re.fullmatch(r"[0-9a-f]{2}", shard.name)):
                _warn(f"{shard.path}: not part of a tcplab campaign; ignored")
                continue
            for e in os.scandir(shard.path):
                if e.is_dir() and _KEY_RE.match(e.name) and e.name[:2] == shard.name:
                    found[e.name] = e.path
                else:
                    _warn(f"{e.path}: not a stored run; ignored")
        return found

    def _quarantine(self, d: str, why: str) -> None:
        qdir = os.path.join(self.path, "quarantine")
        os.makedirs(qdir, exist_ok=True)
        dest = os.path.join(qdir, f"{os.path.basename(d)}.{int(time.time() * 1000)}")
        try:
            os.rename(d, dest)
            _warn(f"{why}; moved to {os.path.relpath(dest, self.path)} and will be run again")
        except OSError as e:
            _warn(f"{why}; ignored (could not move it aside: {e})")

    def _reconcile(self) -> None:
        self._clean_tmp()
        on_disk = self._scan()
        indexed = {k: s for k, s in self._db.execute("SELECT key, status FROM runs")}
        with self._db:
            for key, d in on_disk.items():
                if key in indexed:
                    continue
                try:
                    # not indexed: it may not have been flushed before a crash, so check every byte
                    m = self._check_manifest(d, key, deep=True)
                except CampaignError as e:
                    self._quarantine(d, str(e))
                    continue
                self._insert(m)  # stored but not indexed (killed between the two): adopt
            for key in indexed:
                if key not in on_disk:
                    _warn(f"run {key}: in the index but not in runs/; dropped from the index (it will be run again)")
                    self._db.execute("DELETE FROM runs WHERE key = ?", (key,))

    def _clean_tmp(self) -> None:
        tmp = os.path.join(self.path, "tmp")
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
        """Check every stored run's files against its manifest checksums.

        Returns the problems found; with ``fix``, damaged runs are moved to
        ``quarantine/`` and dropped from the index, so the next sweep runs them again.
        """
        problems = []
        for key, d in sorted(self._scan().items()):
            try:
                self._check_manifest(d, key, deep=True)
            except CampaignError as e:
                problems.append(str(e))
                if fix:
                    self._quarantine(d, str(e))
                    with self._db:
                        self._db.execute("DELETE FROM runs WHERE key = ?", (key,))
        return problems

    def reindex(self) -> None:
        """Rebuild the index from the run directories."""
        with self._db:
            self._db.execute("DELETE FROM runs")
        self._reconcile()

    # -- running -------------------------------------------------------------
    def status(self, keys: Optional[Iterable[str]] = None) -> dict[str, str]:
        """``{key: "ok" | "failed"}`` for stored runs (among ``keys`` if given)."""
        rows = dict(self._db.execute("SELECT key, status FROM runs"))
        if keys is None:
            return rows
        return {k: rows[k] for k in keys if k in rows}

    def _normalize(self, jobs: Any) -> list[dict]:
        import tcplab

        from .grid import Sweep

        version = tcplab.__version__
        if isinstance(jobs, Sweep):
            self.save_sweep(jobs)
            jobs = jobs.jobs()
        out = []
        for i, job in enumerate(jobs):
            if not isinstance(job, (tuple, list)) or len(job) not in (2, 3):
                raise TypeError(f"jobs[{i}]: expected (label_or_params, RunSpec dict[, bottleneck links]), got {job!r}")
            label, spec = job[0], job[1]
            bottleneck = list(job[2]) if len(job) == 3 and job[2] else []
            if hasattr(spec, "to_spec"):
                bottleneck = bottleneck or spec.bottleneck_links()
                spec = spec.to_spec()
            if not isinstance(spec, Mapping):
                raise TypeError(f"jobs[{i}]: the run description must be a RunSpec dict or a Scenario")
            spec = dict(spec)
            params = dict(label) if isinstance(label, Mapping) else {"label": str(label)}
            params.pop("seed", None)
            seed = spec.get("seed")
            out.append({"key": run_key(spec, version), "params": params, "seed": seed, "spec": spec,
                        "version": version, "bottleneck": bottleneck})
        return out

    def plan(self, jobs: Any, retry_failed: bool = False) -> tuple[list[dict], list[dict]]:
        """(all jobs normalized, the ones to run now)."""
        norm = self._normalize(jobs)
        st = self.status()
        todo, seen = [], set()
        for j in norm:
            if j["key"] in seen:
                continue
            seen.add(j["key"])
            s = st.get(j["key"])
            if s is None or (s == "failed" and retry_failed):
                todo.append(j)
        return norm, todo

    def run(self, jobs: Any, workers: Optional[int] = None, client: Any = None, scheduler: Optional[str] = None,
            progress: Optional[bool] = None, retry_failed: bool = False, fsync: bool = True,
            store_on: str = "worker") -> RunReport:
        """Run the jobs not stored yet, store each as it finishes, return a :class:`RunReport`.

        ``workers``: local processes (default: all cores). ``client`` (a
        ``distributed.Client``) or ``scheduler`` (its address) runs on Dask
        instead. ``store_on="worker"`` has workers write into the campaign
        directory (they must see it: same machine or a shared filesystem);
        ``"client"`` ships results back to this process to be written.
        ``progress``: a progress bar on stderr (default: when it is a terminal).
        """
        from .execute import execute_jobs

        if store_on not in ("worker", "client"):
            raise ValueError(f"store_on: expected 'worker' or 'client', got {store_on!r}")
        t0 = time.perf_counter()
        norm, todo = self.plan(jobs, retry_failed)
        for j in todo:  # a failed run to retry: move its record aside first
            d = run_dir(self.path, j["key"])
            if os.path.exists(d):
                gone = os.path.join(self.path, "tmp", f"{j['key']}.retry.{os.getpid()}.{time.time_ns()}")
                os.rename(d, gone)
                shutil.rmtree(gone, ignore_errors=True)
                with self._db:
                    self._db.execute("DELETE FROM runs WHERE key = ?", (j["key"],))
        failures: list[dict] = []
        state = {"ran": 0, "sim_s": 0.0}
        # Durability: when this process shares the filesystem with the writers
        # (local pool, or results shipped here), files are not fsynced one by
        # one; instead finished runs are batched, the filesystem is flushed once
        # (syncfs), and only then do they enter the index ("group commit").
        # Remote Dask workers fsync each file themselves.
        remote_writer = (client is not None or scheduler is not None) and store_on == "worker"
        group = fsync and not remote_writer
        batch: list[dict] = []
        last = [time.monotonic()]

        def flush() -> None:
            if not batch:
                return
            if group:
                syncfs(self.path)
            with self._db:
                for m in batch:
                    self._insert(m)
            batch.clear()
            last[0] = time.monotonic()

        def on_done(m: dict, files: Optional[dict]) -> None:
            if files is not None:
                commit(self.path, m, files, fsync and not group)
            elif not os.path.exists(os.path.join(run_dir(self.path, m["key"]), MANIFEST)):
                raise CampaignError(
                    f"a worker stored run {m['key']} in {self.path}, but this machine does not see it there: "
                    "the workers do not share the campaign directory; use store_on='client' (--store-on client)")
            batch.append(m)
            if len(batch) >= 64 or time.monotonic() - last[0] > 0.5:
                flush()
            state["ran"] += 1
            state["sim_s"] += m.get("sim_s") or 0.0
            if m["status"] != "ok":
                failures.append({"key": m["key"], "params": m["params"], "seed": m["seed"], "error": m["error"]})

        try:
            nworkers, interrupted = execute_jobs(self.path, todo, on_done, workers=workers, client=client,
                                                 scheduler=scheduler, progress=progress,
                                                 fsync=fsync and not group, store_on=store_on)
        finally:
            flush()
        # failures stored earlier (not retried) are listed too
        if not retry_failed:
            done_now = {f["key"] for f in failures}
            for j in norm:
                if j["key"] not in done_now:
                    row = self._db.execute("SELECT status, error FROM runs WHERE key = ?", (j["key"],)).fetchone()
                    if row and row[0] == "failed":
                        failures.append({"key": j["key"], "params": j["params"], "seed": j["seed"], "error": row[1]})
                        done_now.add(j["key"])
        return RunReport([j["key"] for j in norm], [dict(j["params"], seed=j["seed"]) for j in norm],
                         ran=state["ran"], reused=len(norm) - len(todo), failures=failures,
                         wall_s=time.perf_counter() - t0, workers=nworkers, sim_s=state["sim_s"],
                         interrupted=interrupted)

    def save_sweep(self, sweep: "Sweep") -> str:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", sweep.name) or "sweep"
        path = os.path.join(self.path, "sweeps", f"{name}.toml")
        _atomic_text(path, sweep.to_toml())
        return path

    def sweeps(self) -> dict[str, str]:
        """``{name: TOML text}`` of the sweeps run into this campaign."""
        d = os.path.join(self.path, "sweeps")
        out = {}
        for n in sorted(os.listdir(d)):
            if n.endswith(".toml"):
                with open(os.path.join(d, n), encoding="utf-8") as fh:
                    out[n[:-5]] = fh.read()
        return out

    # -- queries ---------------------------------------------------------------
    def _rows(self, keys: Optional[Sequence[str]] = None) -> list[tuple]:
        cols = "key, status, params, seed, version, metrics, error, sim_s, task_s, finished"
        if keys is None:
            return list(self._db.execute(f"SELECT {cols} FROM runs ORDER BY finished"))
        rows = {r[0]: r for r in self._db.execute(f"SELECT {cols} FROM runs")}
        return [rows[k] for k in dict.fromkeys(keys) if k in rows]

    def results(self, which: Any = None, include_failed: bool = False) -> "pd.DataFrame":
        """One tidy DataFrame, one row per run: the parameters, ``seed``, the
        per-run metrics (``total_goodput_bps``, ``utilization``, ``drops``,
        ``queue_mean_packets``, ``retransmits``, ``timeouts``, ``jain_index``,
        ``events``), per-flow goodput as ``goodput_bps.<flow name>``, and
        ``key``, ``status``, ``version``, ``sim_s``.

        ``which``: None (every stored run), a :class:`RunReport`, a
        :class:`~tcplab.sweep.Sweep` (its points, with its parameters), or a
        list of keys. Failed runs are left out unless ``include_failed``
        (they then carry ``error``).
        """
        import pandas as pd

        from .grid import Sweep

        labels: Optional[list[dict]] = None
        if isinstance(which, Sweep):
            norm = self._normalize(which.jobs())
            keys: Optional[list[str]] = [j["key"] for j in norm]
            labels = [dict(j["params"], seed=j["seed"]) for j in norm]
        elif isinstance(which, RunReport):
            keys, labels = which.keys, which.params
        elif which is None:
            keys = None
        else:
            keys = list(which)
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
            rec.update(key=key, status=status, version=version, sim_s=sim_s)
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

    def failures(self) -> "pd.DataFrame":
        """The failed runs: key, parameters, seed, error."""
        import pandas as pd

        recs = [dict(json.loads(p), seed=s, key=k, error=e) for k, p, s, e in
                self._db.execute("SELECT key, params, seed, error FROM runs WHERE status = 'failed' ORDER BY finished")]
        return pd.DataFrame.from_records(recs, columns=None if recs else ["key", "seed", "error"])

    def run_path(self, key: str) -> str:
        """The directory of a stored run (checked against its manifest)."""
        key = self._full_key(key)
        d = run_dir(self.path, key)
        self._check_manifest(d, key)
        return d

    def _full_key(self, key: str) -> str:
        if _KEY_RE.match(key):
            return key
        hits = [k for (k,) in self._db.execute("SELECT key FROM runs WHERE key LIKE ?", (key + "%",))]
        if len(hits) != 1:
            raise KeyError(f"run {key!r}: " + ("not stored" if not hits else f"ambiguous ({len(hits)} runs)"))
        return hits[0]

    def manifest(self, key: str) -> dict:
        key = self._full_key(key)
        return self._check_manifest(run_dir(self.path, key), key)

    def load(self, key: str, verify: bool = True) -> "Results":
        """One stored run as :class:`~tcplab.Results` (time series included),
        checked against its manifest's checksums unless ``verify=False``."""
        from ..results import Results

        key = self._full_key(key)
        d = run_dir(self.path, key)
        if not os.path.isdir(d):
            raise KeyError(f"run {key}: not stored in {self.path}")
        m = self._check_manifest(d, key, deep=verify)
        if m["status"] != "ok":
            raise CampaignError(f"run {key} failed, it has no results: {m.get('error')}")
        try:
            res = Results.load(d)
        except Exception as e:
            raise CampaignError(f"{d}: cannot read the stored run ({type(e).__name__}: {e})") from None
        res.name = key
        return res

    def timeseries(self, key: str, table: str = "flow_ts") -> "pd.DataFrame":
        """One table of one run, read on demand (``flow_ts``, ``queue_ts``, ``flows``, ...)."""
        import pandas as pd

        if table not in TABLES:
            raise ValueError(f"table: expected one of {', '.join(TABLES)}, got {table!r}")
        key = self._full_key(key)
        d = run_dir(self.path, key)
        m = self._check_manifest(d, key)
        name = f"{table}.parquet"
        info = m["files"].get(name)
        if info is None:
            raise CampaignError(f"run {key} has no {table} ({m.get('status')})")
        p = os.path.join(d, name)
        with open(p, "rb") as fh:
            data = fh.read()
        if hashlib.sha256(data).hexdigest() != info["sha256"]:
            raise CampaignError(f"{p}: checksum mismatch (damaged); run `tcplab sweep --verify` to rerun it")
        import io

        return pd.read_parquet(io.BytesIO(data))

    def aggregate(self, which: Any = None, by: Optional[Sequence[str]] = None,
                  metrics: Optional[Sequence[str]] = None, confidence: float = 0.95) -> "pd.DataFrame":
        """Means across seeds with Student-t confidence intervals; see :func:`tcplab.sweep.aggregate`."""
        from .query import aggregate

        return aggregate(self.results(which), by=by, metrics=metrics, confidence=confidence)

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM runs").fetchone()[0])

    def __repr__(self) -> str:
        return f"<Campaign {self.path}: {len(self)} runs>"
