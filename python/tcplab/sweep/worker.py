"""What a worker does with a chunk of runs: simulate them, store them as one segment.

This module is imported in pool workers and on Dask workers, so it imports
only the standard library at load time; the core comes in when a chunk is
executed.

A job is a plain dict (it crosses processes and machines)::

    {"key": hex run key, "params": {...}, "seed": int, "spec_json": the
     RunSpec's canonical JSON (what the core runs), "version": tcplab
     version of the client, "bottleneck": [link names],
     "line": the job as the core takes it}

Everything but the params comes from the core when the job is planned
(``_core.plan_job``: the run key, the canonical spec and the job's line,
crates/tcplab-store/src/job.rs); jobs sent to Dask workers are cut to their
key and line.

:func:`execute_chunk` runs a list of jobs and stores their results as one
**segment**: a directory ``segments/<id>/`` holding one Parquet file per
table (``flows``, ``links``, ``files``, ``flow_ts``, ``queue_ts``, ``cc_ts``,
``qdisc_ts``; every run's rows, with a leading ``run`` column naming the run
key) and ``specs.parquet`` (each run's RunSpec, zstd-compressed) and
``segment.json``, the manifest: per run its key, parameters,
seed, version, status, error, metrics, meta, the row range of each table
and the names of its cc_ts and qdisc_ts variables; per file its size and
SHA-256; and last ``segment.sha256``, the SHA-256 of the manifest's bytes.
A segment is written into a fresh directory under ``tmp/`` and renamed into
``segments/`` in one ``rename``, so a reader sees a whole segment or none of
it.

The runs, their metrics and the segment (Parquet tables, manifest,
checksums, the atomic commit) are done by the core
(crates/tcplab-store: ``_core.Segment``), so a run costs microseconds to
store, not a Python object per column. Local pool workers run the same code
in a loop of their own (:mod:`.execute`, ``_core.fork_worker``);
:func:`commit_segment` stores a segment whose files were shipped to the
client (Dask with ``store_on="client"``).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import time
import uuid
from collections.abc import Callable
from typing import Any

#: Table files of a segment (the tables of a Results); every stored run has rows in each.
TABLES = ("flows", "links", "files", "flow_ts", "queue_ts")
#: Tables stored when the core returns them: ``cc_ts`` (the congestion controls' variables; its
#: ``variable_names`` list is kept in each run's record as ``cc_variables``) and ``qdisc_ts`` (the
#: queue disciplines' series, its names as ``qdisc_variables``). Segments written before one was
#: stored lack it (its runs load without it). Tables only gain tables and columns: the links
#: columns of the disciplines are absent from earlier segments, and Results fills them in.
OPTIONAL_TABLES = ("cc_ts", "qdisc_ts")
ALL_TABLES = TABLES + OPTIONAL_TABLES
#: Columns of a core table that are not columns (another length): kept in the run's record instead.
_NOT_COLUMNS = {"cc_ts": ("variable_names", "cc_variables"), "qdisc_ts": ("variable_names", "qdisc_variables")}
#: A segment's manifest, written after the tables.
MANIFEST = "segment.json"
#: The SHA-256 of the manifest's bytes (64 hex digits and a newline), written last: the manifest holds the
#: checksums of the other files, this one the manifest's, so every stored byte is covered (campaign format 3).
MANIFEST_SUM = "segment.sha256"
SEGMENT_FORMAT = "tcplab-segment"
#: The version of the segments Python writes itself (records of runs whose worker died, which keep their
#: RunSpec in the manifest). The core writes version 2: the RunSpecs in ``specs.parquet``.
SEGMENT_FORMAT_VERSION = 1
#: The column of every table naming the run key of a row.
RUN_COLUMN = "run"


def segment_dir(root: str, seg: str) -> str:
    return os.path.join(root, "segments", seg)


def execute_chunk(jobs: list, root: str | None = None, fsync: bool = True,
                  budget_s: float | None = None, should_stop: Callable[[], bool] | None = None,
                  progress: Callable[[int], None] | None = None) -> dict:
    """Simulate ``jobs`` in order and store them as one segment.

    With ``root``, the segment is committed there and its summary returned
    (the manifest without each run's RunSpec, meta, row ranges and cc
    variable names); without, ``{"manifest": ..., "files": {name: bytes}}``
    is returned for the caller to :func:`commit_segment`. Never raises for a
    failing run: its record says ``status = "failed"`` with the error. With
    ``budget_s``, the chunk stops starting new runs once that much time has
    passed, and with ``should_stop`` once it returns true (at least one run
    is done either way); the jobs not run are not in the manifest and the
    caller schedules them again. ``progress(i)`` is called with ``i + 1``
    before job ``i`` starts and with ``-(runs done)`` before the segment is
    stored.

    Ctrl-C (KeyboardInterrupt, in the main thread) stops the running run
    within a fraction of a second; it leaves no record, the runs done before
    it are stored as usual and the result says ``"interrupted": True`` (the
    caller raises KeyboardInterrupt once it has them); with none done, the
    KeyboardInterrupt is raised here.
    """
    from tcplab import _core

    t0 = time.perf_counter()
    seg = _core.Segment()
    interrupted = False
    for job in jobs:
        if len(seg) and ((budget_s is not None and time.perf_counter() - t0 > budget_s)
                         or (should_stop is not None and should_stop())):
            break
        if progress is not None:
            progress(len(seg) + 1)
        try:
            seg.run(job["line"])
        except KeyboardInterrupt:
            if not len(seg):
                raise
            interrupted = True
            break
    if progress is not None:
        progress(-len(seg))
    if root is not None:
        out = json.loads(seg.commit(root, fsync))
    else:
        manifest, files = seg.finish()
        out = {"manifest": json.loads(manifest), "files": files}
    if interrupted:
        out["interrupted"] = True
    return out


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
        text = (json.dumps(manifest, separators=(",", ":"), allow_nan=False, check_circular=False) + "\n").encode()
        _write(os.path.join(tmp, MANIFEST), text, fsync)
        _write(os.path.join(tmp, MANIFEST_SUM), manifest_sum(text), fsync)
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


def manifest_sum(manifest: bytes) -> bytes:
    """The content of a segment's ``segment.sha256`` for its manifest's bytes (as the core writes it)."""
    import hashlib

    return (hashlib.sha256(manifest).hexdigest() + "\n").encode()


def read_table(data: bytes | bytearray | memoryview) -> Any:
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


def warm_up() -> None:
    """Load the core (done before timing a sweep, and before forking pool workers, which inherit it)."""
    from tcplab import _core  # noqa: F401
