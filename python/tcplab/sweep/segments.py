"""A campaign's segments on disk: checked, adopted, quarantined and read.

A segment (``segments/<id>/``, written by crates/tcplab-store through
:mod:`.worker`) holds a chunk of runs: one Parquet file per table and a
checksummed manifest. This layer checks segments against their manifests,
adopts those a killed sweep stored without indexing, moves damaged ones to
``quarantine/`` and reads runs back in the shape ``tcplab._core.run`` gives.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .._files import write_bytes_atomically
from .index import (
    _KEY_RE,
    _ROOT_ENTRIES,
    _SEG_RE,
    INDEX,
    MARKER,
    SPECS,
    SUM,
    CampaignError,
    CampaignIndex,
    DamagedSegmentError,
    _warn,
)
from .lock import CampaignLock, release_brief, try_briefly
from .worker import (
    _NOT_COLUMNS,
    ALL_TABLES,
    MANIFEST,
    MANIFEST_SUM,
    SEGMENT_FORMAT,
    TABLES,
    read_rows,
    read_table,
    segment_dir,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..results import Results


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


class CampaignSegments(CampaignIndex):
    """The segment part of :class:`~tcplab.sweep.Campaign` (its base class)."""

    _lock: CampaignLock

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
            if not isinstance(r, dict) or not _KEY_RE.match(str(r.get("key"))) \
                    or r.get("status") not in ("ok", "failed") \
                    or (r["status"] == "ok"
                        and not all(isinstance((r.get("rows") or {}).get(t), list) for t in TABLES)):
                which = str(r.get("key") if isinstance(r, dict) else r)[:32]
                raise CampaignError(f"{mpath}: incomplete manifest (run {which})")
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
        or list of str}, "meta": {...}}`` (``cc_ts`` and ``qdisc_ts`` with their ``variable_names``), the same
        values and dtypes. ``tables``: which (default: all stored). Checked against the segment's checksums unless
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

    @staticmethod
    def _same_text(path: str, text: str) -> bool:
        """Whether ``path`` holds ``text`` and its checksum matches."""
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return False
        return data == text.encode("utf-8") and _checksum_problem(path, data, path + SUM) is None
