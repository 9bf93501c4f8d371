"""Measure tcplab's own overhead on a sweep of many small runs.

    python -m tcplab.sweep.overhead [--runs 200] [--rate 10Mbps] [--duration 60s] [--workers N] [--no-fsync]

The sweep is ``--runs`` one-flow dumbbells (RTT 20 ms, buffers spread from
0.1 to 2 BDP, one seed each) into a fresh campaign directory. Overhead is
the share of the sweep's core-seconds (wall time x workers) *not* spent
inside the simulator (``_core.run``, timed in the worker): starting the
pool, building and hashing run descriptions, scheduling, converting and
encoding results to Parquet, writing and fsyncing files, indexing,
progress. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time


def measure(runs: int = 200, rate: str = "10Mbps", duration: str = "60s", workers: int | None = None,
            fsync: bool = True, directory: str | None = None) -> dict:
    import tcplab

    from . import Campaign, Sweep

    base = tcplab.Dumbbell(n_flows=1, bottleneck_rate=rate, rtt="20ms", buffer="1BDP", duration=duration,
                           name="overhead")
    buffers = [2 + i for i in range(runs)]  # packets: 200 distinct runs
    own = directory is None
    d = directory or tempfile.mkdtemp(prefix="tcplab-overhead-")
    path = os.path.join(d, "campaign")
    try:
        t0 = time.perf_counter()
        sw = Sweep(base, grid={"buffer": buffers}, seeds=1, name="overhead")
        camp = Campaign(path)
        rep = camp.run(sw, workers=workers, progress=False, fsync=fsync)
        wall = time.perf_counter() - t0
        camp.close()
        assert rep.ran == runs and not rep.failures, rep.summary()
        sim = rep.sim_s
        return {"runs": runs, "rate": rate, "duration": duration, "workers": rep.workers, "fsync": fsync,
                "wall_s": round(wall, 3), "simulator_s": round(sim, 3),
                "mean_run_simulator_ms": round(1e3 * sim / runs, 2),
                "overhead": round(1.0 - sim / (wall * rep.workers), 4)}
    finally:
        if own:
            shutil.rmtree(d, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tcplab.sweep.overhead", description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--rate", default="10Mbps")
    p.add_argument("--duration", default="60s")
    p.add_argument("--workers", type=int)
    p.add_argument("--no-fsync", action="store_true")
    a = p.parse_args(argv)
    print(json.dumps(measure(a.runs, a.rate, a.duration, a.workers, not a.no_fsync)))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
