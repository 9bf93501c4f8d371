"""What a worker does with one run: simulate it, encode and store its results.

This module is imported in pool workers and on Dask workers, so it imports
only the standard library at load time; pyarrow and the core come in when a
run is executed.

A job is a plain dict (it crosses processes and machines)::

    {"key": hex run key, "params": {...}, "seed": int, "spec": RunSpec dict,
     "version": tcplab version of the client, "bottleneck": [link names]}

:func:`execute` returns the run's manifest (``run.json``) and, unless it
stored them itself, the encoded files. :func:`commit` puts a run in a
campaign directory atomically: every file is written (and fsynced) into a
fresh directory under ``tmp/``, which is then renamed to
``runs/<key[:2]>/<key>``. A reader therefore sees a whole run or none of it.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import shutil
import socket
import threading
import time
import traceback
import uuid
from typing import Any, Optional

#: Table files of a stored run (the layout of Results.save, readable by Results.load).
TABLES = ("flows", "links", "files", "flow_ts", "queue_ts")
MANIFEST = "run.json"


def run_dir(root: str, key: str) -> str:
    return os.path.join(root, "runs", key[:2], key)


def _fin(v: Any) -> Optional[float]:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


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


def _arrow_tables(raw: dict) -> dict:
    """The core's columns as Arrow tables with the columns Results adds
    (``flow_name``/``link_name`` as dictionaries, ``files.flow_name``),
    built without pandas: this is most of a small run's storing cost."""
    import numpy as np
    import pyarrow as pa

    def table(cols: dict) -> "pa.Table":
        return pa.table({k: (v if isinstance(v, np.ndarray) else pa.array(list(v))) for k, v in cols.items()})

    flows, links = raw.get("flows", {}), raw.get("links", {})
    fnames = pa.array([str(x) for x in flows.get("name", [])], pa.string())
    lnames = pa.array([str(x) for x in links.get("name", [])], pa.string())
    out = {t: table(raw.get(t, {})) for t in TABLES}
    ft = out["flow_ts"]
    if "flow" in ft.column_names and len(fnames):
        idx = pa.array(np.asarray(raw["flow_ts"]["flow"]).astype("int32"))
        out["flow_ts"] = ft.append_column("flow_name", pa.DictionaryArray.from_arrays(idx, fnames))
    qt = out["queue_ts"]
    if "link" in qt.column_names and len(lnames):
        idx = pa.array(np.asarray(raw["queue_ts"]["link"]).astype("int32"))
        out["queue_ts"] = qt.append_column("link_name", pa.DictionaryArray.from_arrays(idx, lnames))
    fl = out["files"]
    if "flow" in fl.column_names and len(fnames):
        names = [fnames[int(i)].as_py() for i in np.asarray(raw["files"]["flow"])]
        out["files"] = fl.add_column(1, "flow_name", pa.array(names, pa.string()))
    return out


def _summary(raw: dict, spec: dict, name: str) -> dict:
    """Results.summary() computed from the core's columns (same shape)."""
    flows, links = raw["flows"], raw["links"]
    fl = [{"id": int(flows["flow"][i]), "name": str(flows["name"][i]), "algorithm": str(flows["algorithm"][i]),
           "goodput_bps": _fin(flows["goodput_bps"][i]), "retransmits": int(flows["retransmits"][i]),
           "timeouts": int(flows["timeouts"][i])} for i in range(len(flows["name"]))]
    lk = [{"name": str(links["name"][i]), "utilization": _fin(links["utilization"][i]),
           "drops": int(links["drops"][i])} for i in range(len(links["name"]))]
    meta = {}
    for k, v in dict(raw.get("meta", {})).items():
        v = v.item() if hasattr(v, "item") else v
        meta[k] = None if isinstance(v, float) and not math.isfinite(v) else v
    meta.setdefault("duration", spec.get("duration"))
    meta.setdefault("measure_start", spec.get("measure_start", 0.0))
    return {"scenario": name, "flows": fl, "links": lk, "meta": meta}


def _encode_tables(raw: dict, spec: dict, name: str = "run") -> dict[str, bytes]:
    """The files of a stored run: Parquet tables, summary.json, spec.json
    (the layout of Results.save, so Results.load reads it)."""
    import pyarrow.parquet as pq

    out = {}
    for t, table in _arrow_tables(raw).items():
        buf = io.BytesIO()
        # compression pays only on long tables; tiny ones are written faster plain
        pq.write_table(table, buf, compression="zstd" if table.num_rows > 4096 else "none")
        out[f"{t}.parquet"] = buf.getvalue()
    out["summary.json"] = (json.dumps(_summary(raw, spec, name), indent=2) + "\n").encode()
    out["spec.json"] = (json.dumps(spec, indent=1) + "\n").encode()
    return out


def execute(job: dict, root: Optional[str] = None, fsync: bool = True) -> dict:
    """Simulate one job. With ``root``, store it there and return the
    manifest; without, return ``{"manifest": ..., "files": {name: bytes}}``
    for the caller to :func:`commit`. Never raises for a failing run: the
    manifest says ``status = "failed"`` with the error."""
    t0 = time.perf_counter()
    manifest: dict = {
        "format": "tcplab-run", "key": job["key"], "params": job["params"], "seed": job["seed"],
        "version": job["version"], "host": socket.gethostname(), "pid": os.getpid(),
    }
    files: dict[str, bytes] = {}
    sim_s = 0.0
    try:
        import tcplab
        from tcplab import _core  # type: ignore[attr-defined]

        if tcplab.__version__ != job["version"]:
            raise RuntimeError(f"this worker runs tcplab {tcplab.__version__}, the client {job['version']}; "
                               "install the same version on every worker")
        spec_json = json.dumps(job["spec"])
        ts = time.perf_counter()
        raw = _core.run(spec_json)
        sim_s = time.perf_counter() - ts
        files = _encode_tables(raw, job["spec"], job["key"])
        manifest.update(status="ok", error=None, metrics=metrics_from_raw(raw, job.get("bottleneck") or []),
                        core_wall_s=_fin(raw["meta"].get("wall_s")))
    except Exception as e:  # a failing run is recorded, the sweep goes on
        files = {"spec.json": (json.dumps(job["spec"], indent=1) + "\n").encode()}
        tb = traceback.format_exception_only(type(e), e)
        manifest.update(status="failed", error="".join(tb).strip(), metrics=None, core_wall_s=None)
    manifest["sim_s"] = sim_s
    manifest["finished"] = time.time()
    manifest["files"] = {n: {"size": len(b), "sha256": hashlib.sha256(b).hexdigest()} for n, b in files.items()}
    manifest["task_s"] = time.perf_counter() - t0
    if root is not None:
        commit(root, manifest, files, fsync)
        return manifest
    return {"manifest": manifest, "files": files}


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


def commit(root: str, manifest: dict, files: dict[str, bytes], fsync: bool = True) -> str:
    """Atomically place one run in the campaign at ``root``; returns its directory.

    If the run is already there (a concurrent or orphaned worker stored the
    same deterministic run first), the new copy is discarded.
    """
    key = manifest["key"]
    final = run_dir(root, key)
    tmp = os.path.join(root, "tmp", f"{key}.{socket.gethostname()}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
    os.makedirs(tmp)
    try:
        for name, data in files.items():
            _write(os.path.join(tmp, name), data, fsync)
        # the manifest goes last and lists every other file with its checksum
        _write(os.path.join(tmp, MANIFEST), (json.dumps(manifest, indent=1, allow_nan=False) + "\n").encode(), fsync)
        if fsync:
            _fsync_dir(tmp)
        os.makedirs(os.path.dirname(final), exist_ok=True)
        try:
            os.rename(tmp, final)
        except OSError:
            if os.path.exists(os.path.join(final, MANIFEST)):
                shutil.rmtree(tmp, ignore_errors=True)
                return final
            raise
        if fsync:
            _fsync_dir(os.path.dirname(final))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def _watch_parent(ppid: int) -> None:
    while True:
        time.sleep(0.2)
        if os.getppid() != ppid:
            os._exit(0)


def syncfs(path: str) -> None:
    """Flush the filesystem holding ``path`` to stable storage (Linux
    ``syncfs``; elsewhere ``sync``): one call makes every run written since
    durable, instead of one fsync per file."""
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


def pool_initializer() -> None:
    """Pool workers exit when their parent dies (e.g. a sweep killed with
    SIGKILL), instead of finishing orphaned runs."""
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    import tcplab  # noqa: F401  (warm the imports once per worker)
    import pyarrow.parquet  # noqa: F401
