"""What a worker does with a chunk of runs: simulate them, store them as one segment.

This module is imported in pool workers and on Dask workers, so it imports
only the standard library at load time; numpy, pyarrow and the core come in
when a chunk is executed.

A job is a plain dict (it crosses processes and machines)::

    {"key": hex run key, "params": {...}, "seed": int, "spec": RunSpec dict,
     "spec_json": its canonical JSON (what the core runs), "version": tcplab
     version of the client, "bottleneck": [link names]}

(jobs sent to local workers leave out ``"spec"``: the JSON text is enough).

:func:`execute_chunk` runs a list of jobs and writes their results as one
**segment**: a directory ``segments/<id>/`` holding one Parquet file per
table (``flows``, ``links``, ``files``, ``flow_ts``, ``queue_ts``, ``cc_ts``;
every run's rows, with a leading ``run`` column naming the run key) and
``segment.json``, the manifest, written last: per run its key, parameters,
seed, version, status, error, metrics, meta, RunSpec, the row range of each
table and the names of its cc_ts variables; per file its size and SHA-256.
:func:`commit_segment` writes everything into a fresh directory under
``tmp/`` and renames it into ``segments/`` in one ``rename``, so a reader
sees a whole segment or none of it.

Per run, the hot path only keeps references to the core's numpy columns; a
chunk's columns are concatenated and encoded once (no pandas, no per-run
Arrow tables), so storing costs about 0.15 ms per run (docs/campaigns.md,
Overhead). :func:`pool_worker` is the loop of a local pool worker.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import math
import operator
import os
import shutil
import socket
import threading
import time
import traceback
import uuid
from typing import Any, Callable, Optional

#: Table files of a segment (the tables of a Results); every stored run has rows in each.
TABLES = ("flows", "links", "files", "flow_ts", "queue_ts")
#: Tables stored when the core returns them: ``cc_ts`` (the congestion controls' variables; its
#: ``variable_names`` list is kept in each run's record as ``cc_variables``). Segments written
#: before it was stored lack it.
OPTIONAL_TABLES = ("cc_ts",)
ALL_TABLES = TABLES + OPTIONAL_TABLES
#: Columns of a core table that are not columns (another length): kept in the run's record instead.
_NOT_COLUMNS = {"cc_ts": ("variable_names", "cc_variables")}
#: A segment's manifest, written last.
MANIFEST = "segment.json"
SEGMENT_FORMAT = "tcplab-segment"
SEGMENT_FORMAT_VERSION = 1
#: The column of every table naming the run key of a row.
RUN_COLUMN = "run"
#: Tables of a segment bigger than this (in memory) are compressed (zstd), bytes.
COMPRESS_MIN_BYTES = 1 << 20


def segment_dir(root: str, seg: str) -> str:
    return os.path.join(root, "segments", seg)


def _fin(v: Any) -> Optional[float]:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _py(v: Any) -> Any:
    """numpy scalar -> Python scalar; NaN/inf -> None (JSON has no NaN)."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        try:
            v = v.item()
        except (ValueError, AttributeError):
            pass
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def metrics_from_raw(raw: dict, bottleneck: list) -> dict:
    """Per-run totals and per-flow goodput: what the campaign's index keeps."""
    flows = raw["flows"]
    links = raw["links"]
    names = [str(x) for x in flows["name"]]
    gp = [float(x) for x in flows["goodput_bps"]]
    lnames = [str(x) for x in links["name"]]
    util = [float(x) for x in links["utilization"]]
    b = None
    for name in bottleneck or []:
        if name in lnames:
            b = lnames.index(name)
            break
    if b is None and lnames:
        b = max(range(len(lnames)), key=lambda i: util[i])
    s1, s2 = sum(gp), sum(x * x for x in gp)
    m = {
        "total_goodput_bps": s1,
        "jain_index": (s1 * s1 / (len(gp) * s2)) if s2 > 0 else None,
        "retransmits": int(sum(int(x) for x in flows["retransmits"])),
        "timeouts": int(sum(int(x) for x in flows["timeouts"])),
        "bottleneck": lnames[b] if b is not None else None,
        "utilization": _fin(util[b]) if b is not None else None,
        "drops": int(links["drops"][b]) if b is not None else None,
        "queue_mean_packets": _fin(links["queue_mean_packets"][b]) if b is not None else None,
        "events": int(raw["meta"].get("events", 0)),
        "flow_goodput_bps": {n: _fin(g) for n, g in zip(names, gp)},
    }
    return {k: (_fin(v) if isinstance(v, float) else v) for k, v in m.items()}


_DTYPE = operator.attrgetter("dtype")


def _nrows(cols: dict) -> int:
    for v in cols.values():
        return len(v)
    return 0


def _concat_table(parts: list, keys: list) -> Any:
    """One Arrow table from the runs' columns (``parts``: ``[(run index, {col: array or list})]``),
    with a leading dictionary-encoded ``run`` column."""
    import numpy as np
    import pyarrow as pa

    counts = [_nrows(cols) for _, cols in parts]
    runs = pa.DictionaryArray.from_arrays(
        pa.array(np.repeat(np.asarray([i for i, _ in parts], dtype="int32"), counts), pa.int32()),
        pa.array(keys, pa.string()))
    if not parts:
        return pa.table({RUN_COLUMN: runs})

    names = list(parts[0][1])
    if all(list(cols) == names for _, cols in parts[1:]):  # the usual case: one concatenation per column
        arrays: dict = {RUN_COLUMN: runs}
        for name in names:
            vals = [cols[name] for _, cols in parts]
            types = set(map(type, vals))  # (set/map: this loop runs per column and run, so it is kept in C)
            if types == {np.ndarray}:
                if len(vals) == 1:
                    arrays[name] = pa.array(vals[0])
                    continue
                if len(set(map(_DTYPE, vals))) == 1:
                    arrays[name] = pa.array(np.concatenate(vals))
                    continue
            elif np.ndarray not in types:
                flat = list(itertools.chain.from_iterable(vals))
                try:
                    arrays[name] = pa.array(flat, pa.string())
                except (TypeError, pa.ArrowException):
                    arrays[name] = pa.array(flat)
                continue
            break  # mixed types between runs
        else:
            return pa.table(arrays)
    # columns differ between runs (not produced by one core version): per-run tables, unified
    tabs = []
    for (i, cols), n in zip(parts, counts):
        t = pa.table({k: (v if isinstance(v, np.ndarray) else pa.array(list(v))) for k, v in cols.items()})
        tabs.append(t.add_column(0, RUN_COLUMN, pa.DictionaryArray.from_arrays(
            pa.array(np.full(n, i, dtype="int32"), pa.int32()), pa.array(keys, pa.string()))))
    return pa.concat_tables(tabs, promote_options="default")


def _encode(collected: list, keys: list) -> tuple[dict, dict]:
    """The segment's Parquet files ``{name: bytes}`` and each run's row ranges ``{run index: {table: [start, n]}}``."""
    import pyarrow.parquet as pq

    files: dict[str, bytes] = {}
    rows: dict[int, dict] = {i: {} for i, _ in collected}
    for t in ALL_TABLES:
        if t in TABLES:
            parts = [(i, raw.get(t) or {}) for i, raw in collected]
        else:  # optional: the runs that have it (all of them, from one core)
            parts = [(i, raw[t]) for i, raw in collected if isinstance(raw.get(t), dict)]
            if not parts:
                continue
        skip = _NOT_COLUMNS.get(t)
        if skip is not None:
            parts = [(i, {k: v for k, v in cols.items() if k != skip[0]}) for i, cols in parts]
        start = 0
        for i, cols in parts:
            n = _nrows(cols)
            rows[i][t] = [start, n]
            start += n
        table = _concat_table(parts, keys)
        buf = io.BytesIO()
        # zstd where it saves real space (it doubles the cost of writing a chunk of tiny runs, to save
        # kilobytes); dictionary encoding, which is cheap, is kept everywhere
        big = table.nbytes > COMPRESS_MIN_BYTES
        pq.write_table(table, buf, compression="zstd" if big else "none", write_statistics=big)
        files[f"{t}.parquet"] = buf.getvalue()
    return files, rows


def _meta(raw: dict) -> dict:
    return {k: _py(v) for k, v in dict(raw.get("meta", {})).items()}


def execute_chunk(jobs: list, root: Optional[str] = None, fsync: bool = True,
                  budget_s: Optional[float] = None, should_stop: Optional[Callable[[], bool]] = None,
                  progress: Optional[Callable[[int], None]] = None) -> dict:
    """Simulate ``jobs`` in order and store them as one segment.

    With ``root``, the segment is committed there and its manifest returned
    (its :func:`summary`); without, ``{"manifest": ..., "files": {name: bytes}}`` is returned for
    the caller to :func:`commit_segment`. Never raises for a failing run: its
    record says ``status = "failed"`` with the error. With ``budget_s``, the
    chunk stops starting new runs once that much time has passed, and with
    ``should_stop`` once it returns true (at least one run is done either
    way); the jobs not run are not in the manifest and the caller schedules
    them again. ``progress(i)`` is called with ``i + 1`` before job ``i``
    starts and with ``-(runs done)`` before the segment is encoded.
    """
    t0 = time.perf_counter()
    records: list[dict] = []
    collected: list[tuple[int, dict]] = []
    here: Optional[str] = None
    import_error = None
    try:
        import tcplab
        from tcplab import _core  # type: ignore[attr-defined]

        here = tcplab.__version__
    except Exception as e:  # pragma: no cover - a broken installation on a worker
        import_error = f"cannot import tcplab on this worker: {type(e).__name__}: {e}"
    for job in jobs:
        if records and ((budget_s is not None and time.perf_counter() - t0 > budget_s)
                        or (should_stop is not None and should_stop())):
            break
        if progress is not None:
            progress(len(records) + 1)
        ts = time.perf_counter()
        rec: dict = {"key": job["key"], "params": job["params"], "seed": job["seed"], "version": job["version"],
                     "spec_json": job.get("spec_json") or json.dumps(job["spec"])}
        sim_s = 0.0
        try:
            if import_error is not None:
                raise RuntimeError(import_error)
            if job["version"] != here:
                raise RuntimeError(f"this worker runs tcplab {here}, the client {job['version']}; "
                                   "install the same version on every worker")
            spec_json = job.get("spec_json") or json.dumps(job["spec"])
            tc = time.perf_counter()
            raw = _core.run(spec_json)
            sim_s = time.perf_counter() - tc
            rec.update(status="ok", error=None, metrics=metrics_from_raw(raw, job.get("bottleneck") or []),
                       meta=_meta(raw))
            for t, (col, field) in _NOT_COLUMNS.items():
                if isinstance(raw.get(t), dict) and col in raw[t]:
                    rec[field] = [str(x) for x in raw[t][col]]
            collected.append((len(records), raw))
        except Exception as e:  # a failing run is recorded, the sweep goes on
            tb = traceback.format_exception_only(type(e), e)
            rec.update(status="failed", error="".join(tb).strip(), metrics=None, meta=None)
        rec["sim_s"] = sim_s
        rec["finished"] = time.time()
        rec["task_s"] = time.perf_counter() - ts
        records.append(rec)
    if progress is not None:
        progress(-len(records))
    keys = [r["key"] for r in records]
    files: dict[str, bytes] = {}
    if collected:
        files, rows = _encode(collected, keys)
        for i, r in rows.items():
            records[i]["rows"] = r
    manifest = {
        "format": SEGMENT_FORMAT, "format_version": SEGMENT_FORMAT_VERSION, "id": uuid.uuid4().hex,
        "host": socket.gethostname(), "pid": os.getpid(), "created": time.time(), "runs": records,
        "files": {n: {"size": len(b), "sha256": hashlib.sha256(b).hexdigest()} for n, b in files.items()},
    }
    manifest["task_s"] = time.perf_counter() - t0
    if root is not None:
        commit_segment(root, manifest, files, fsync)
        return summary(manifest)
    return {"manifest": manifest, "files": files}


#: What a run's record in a manifest holds beyond what the index and the scheduler need.
_STORED_ONLY = ("spec_json", "meta", "rows", "cc_variables")


def summary(manifest: dict) -> dict:
    """A stored segment's manifest without what only the stored copy needs (each run's RunSpec, meta and
    row ranges): what travels back from a worker that stored the segment itself, a fifth of the size."""
    return dict(manifest, runs=[{k: v for k, v in r.items() if k not in _STORED_ONLY} for r in manifest["runs"]])


def _write(path: str, data: bytes, fsync: bool) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        if fsync:
            fh.flush()
            os.fsync(fh.fileno())


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def commit_segment(root: str, manifest: dict, files: dict[str, bytes], fsync: bool = True) -> str:
    """Atomically place one segment in the campaign at ``root``; returns its directory.

    The files go into ``tmp/<id>.<host>.<pid>.<rand>/`` (the manifest last,
    listing every other file with its checksum), which is renamed to
    ``segments/<id>``. With ``fsync``, files and directories are flushed
    before and after the rename.
    """
    seg = manifest["id"]
    final = segment_dir(root, seg)
    tmp = os.path.join(root, "tmp", f"{seg}.{socket.gethostname()}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
    os.makedirs(tmp)
    try:
        for name, data in files.items():
            _write(os.path.join(tmp, name), data, fsync)
        _write(os.path.join(tmp, MANIFEST),
               (json.dumps(manifest, separators=(",", ":"), allow_nan=False, check_circular=False) + "\n").encode(),
               fsync)
        if fsync:
            _fsync_dir(tmp)
        os.makedirs(os.path.dirname(final), exist_ok=True)
        os.rename(tmp, final)
        if fsync:
            _fsync_dir(os.path.dirname(final))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def read_table(data: bytes) -> Any:
    """A segment table's Parquet bytes as an Arrow table (every run's rows)."""
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(data))


def read_rows(data: Any, start: int, n: int) -> dict:
    """One run's columns (``{name: numpy array or list of str}``, as the core returned them) from a
    segment table: its Parquet bytes or the table :func:`read_table` made of them."""
    import pyarrow as pa

    table = (read_table(data) if isinstance(data, (bytes, bytearray, memoryview)) else data).slice(start, n)
    out: dict = {}
    for name in table.column_names:
        if name == RUN_COLUMN:
            continue
        col = table.column(name)
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type) or pa.types.is_dictionary(col.type):
            out[name] = col.to_pylist()
        else:
            out[name] = col.to_numpy()
    return out


def _watch_parent(ppid: int) -> None:
    while True:
        time.sleep(0.2)
        if os.getppid() != ppid:
            os._exit(0)


def syncfs(path: str) -> None:
    """Flush the filesystem holding ``path`` to stable storage (Linux
    ``syncfs``; elsewhere ``sync``): one call makes every segment written
    since durable, instead of one fsync per file."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.syncfs
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        os.sync()
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        if fn(fd) != 0:  # pragma: no cover
            os.sync()
    finally:
        os.close(fd)


_warm_pid: Optional[int] = None


def warm_up() -> None:
    """Import and initialise what a chunk needs (pyarrow's first array
    imports pandas, ~0.3 s): done once in the parent before forking workers,
    and once per worker process (after a fork too: pyarrow sets itself up
    again in a new process)."""
    global _warm_pid
    if _warm_pid == os.getpid():
        return
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet  # noqa: F401

    import tcplab  # noqa: F401
    from tcplab import _core  # type: ignore[attr-defined]  # noqa: F401

    pq = pyarrow.parquet
    pq.write_table(pa.table({"x": pa.array(np.zeros(1)), "s": pa.array(["a"], pa.string())}), io.BytesIO(),
                   compression="none")
    _warm_pid = os.getpid()


def pool_initializer() -> None:
    """Pool workers exit when their parent dies (e.g. a sweep killed with
    SIGKILL), instead of finishing orphaned chunks."""
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    warm_up()


def pool_worker(conn: Any, stop: Any, started: Any, slot: int, root: Optional[str], fsync: bool) -> None:
    """The loop of a local pool worker (see :class:`.execute.LocalPool`).

    It receives ``(jobs, budget_s)`` on ``conn`` and runs the jobs with
    :func:`execute_chunk`, storing a segment at least every ``budget_s`` and
    sending ``(last, what execute_chunk returned)`` for each (``{"error":
    text}`` if it raised); ``None`` or a closed pipe ends it. Between runs it
    reads ``stop[slot]`` (set by the parent: store what is done, hand back
    the runs not started) and writes its progress into ``started[slot]``
    (``i + 1`` while job ``i`` of the chunk runs, ``-(runs started)`` while
    storing), so that when a worker dies the parent knows which run it was
    in. Ctrl-C is the parent's to handle.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    pool_initializer()

    def should_stop() -> bool:
        return stop[slot] != 0

    try:
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                break
            if msg is None:
                break
            jobs, budget_s = msg
            offset = 0
            while True:
                def progress(i: int, offset: int = offset) -> None:
                    started[slot] = offset + i if i > 0 else i - offset

                try:
                    out = execute_chunk(jobs[offset:], root, fsync, budget_s, should_stop, progress)
                except Exception as e:
                    conn.send((True, {"error": f"{type(e).__name__}: {e}"}))
                    break
                offset += len((out["manifest"] if "manifest" in out else out)["runs"])
                last = offset >= len(jobs) or should_stop()
                conn.send((last, out))
                if last:
                    break
    finally:
        os._exit(0)  # no interpreter teardown: nothing is left to flush, and it takes milliseconds
