"""Measure tcplab's own overhead on a sweep of many small runs (a benchmark: it prints, never asserts).

    python -m tcplab.devtools.overhead [--runs 200] [--duration 5s] [--workers N] [--repeat K] [--no-fsync] [--json]
    tcplab bench --campaign [same options]

The sweep is ``--runs`` one-flow 10 Mbit/s dumbbells (RTT 20 ms, buffers of
2, 3, ... packets, one seed each; 5 s simulated is about a millisecond in
the core) into a fresh campaign directory, the way ``tcplab sweep`` runs
it: the sweep's run descriptions are built and validated first
(``expand_s``), then the campaign is opened, the sweep recorded and
``Campaign.run`` called, and the campaign closed. ``wall_s`` is the wall
time of that last part: opening the campaign, hashing and planning,
starting the pool, scheduling chunks, encoding and writing segments,
flushing, indexing, closing the index.

``core_s`` is the time spent inside the simulator, summed over runs: the
core times each run from parsing its RunSpec to collecting its results
(building and running the world), in the worker that runs it. Overhead is
the share of the sweep's core-seconds (``wall_s`` x workers) not spent
there: planning, starting the workers, computing the index metrics,
encoding and writing segments, flushing, indexing, closing the index, and
cores left idle; ``overhead_with_expand`` counts the expansion too. Imports
are done before timing and reported as ``warmup_s``: they are a process's
start-up, paid once, not a sweep's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time


def measure(runs: int = 200, rate: str = "10Mbps", duration: str = "5s", workers: int | None = None,
            fsync: bool = True, directory: str | None = None) -> dict:
    """One sweep of ``runs`` distinct tiny runs into a fresh campaign; its timings."""
    t = time.perf_counter()
    import tcplab

    from ..sweep import Campaign, Sweep
    from ..sweep.worker import warm_up

    warm_up()
    warmup_s = time.perf_counter() - t
    base = tcplab.Dumbbell(n_flows=1, bottleneck_rate=rate, rtt="20ms", buffer="1BDP", duration=duration,
                           name="overhead")
    own = directory is None
    d = directory or tempfile.mkdtemp(prefix="tcplab-overhead-")
    path = os.path.join(d, "campaign")
    try:
        t0 = time.perf_counter()
        sw = Sweep(base, grid={"buffer": [2 + i for i in range(runs)]}, seeds=1, name="overhead")
        jobs = sw.jobs()  # validates every point, as `tcplab sweep` does before anything runs
        t1 = time.perf_counter()
        camp = Campaign(path)
        camp.save_sweep(sw)
        rep = camp.run(jobs, workers=workers, progress=False, fsync=fsync)
        camp.close()  # closing the campaign is part of the sweep too
        t2 = time.perf_counter()
        if rep.ran != runs or rep.failures:
            raise RuntimeError(f"the benchmark sweep did not run cleanly: {rep.summary()}")
        core, wall, expand, w = rep.runs_wall_s, t2 - t1, t1 - t0, rep.workers
        return {"runs": runs, "rate": rate, "duration": duration, "workers": w, "fsync": fsync,
                "wall_s": round(wall, 6), "core_s": round(core, 6),
                "per_run_core_ms": round(1e3 * core / runs, 3),
                "overhead": round(1.0 - core / (wall * w), 4),
                "per_run_overhead_ms": round(1e3 * (wall * w - core) / runs, 3),
                "expand_s": round(expand, 4),
                "overhead_with_expand": round(1.0 - core / ((wall + expand) * w), 4),
                "warmup_s": round(warmup_s, 4)}
    finally:
        if own:
            shutil.rmtree(d, ignore_errors=True)


def run_benchmark(runs: int = 200, duration: str = "5s", workers: int | None = None, repeat: int = 3,
                  fsync: bool = True, rate: str = "10Mbps") -> dict:
    """``repeat`` measurements (after one unreported warm-up sweep) and their spread."""
    first = measure(min(runs, 20), rate, duration, workers, fsync)  # first-use costs (imports, page cache)
    reps = [measure(runs, rate, duration, workers, fsync) for _ in range(repeat)]
    for r in reps:
        r["warmup_s"] = first["warmup_s"]
    ov = [r["overhead"] for r in reps]
    return {"benchmark": "campaign-overhead", "runs": runs, "duration": duration, "rate": rate,
            "workers": reps[0]["workers"], "fsync": fsync, "repeats": reps,
            "overhead_median": statistics.median(ov), "overhead_min": min(ov), "overhead_max": max(ov)}


def print_table(res: dict) -> None:
    print(f"campaign overhead: {res['runs']} runs of a 1-flow {res['rate']} dumbbell, {res['duration']} simulated, "
          f"{res['workers']} worker(s), fsync {'on' if res['fsync'] else 'off'}")
    hdr = (f"{'rep':>3} {'runs':>5} {'wall s':>7} {'core s':>7} {'core ms/run':>11} {'overhead':>8} "
           f"{'ovh ms/run':>10} {'expand s':>8} {'ovh+expand':>10}")
    print(hdr)
    print("-" * len(hdr))
    for i, r in enumerate(res["repeats"], 1):
        print(f"{i:>3} {r['runs']:>5} {r['wall_s']:7.3f} {r['core_s']:7.3f} {r['per_run_core_ms']:11.2f} "
              f"{100 * r['overhead']:7.1f}% {r['per_run_overhead_ms']:10.3f} {r['expand_s']:8.3f} "
              f"{100 * r['overhead_with_expand']:9.1f}%")
    print(f"overhead: median {100 * res['overhead_median']:.1f} % (min {100 * res['overhead_min']:.1f}, "
          f"max {100 * res['overhead_max']:.1f}); overhead = 1 - core / (wall x workers); "
          f"imports before timing: {res['repeats'][0]['warmup_s']:.2f} s (first sweep of a process only)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", type=int, default=200, help="runs in the sweep (default 200)")
    p.add_argument("--duration", default="5s", help="simulated time per run (default 5s: about 1 ms in the core)")
    p.add_argument("--rate", default="10Mbps", help="bottleneck rate (default 10Mbps)")
    p.add_argument("--workers", type=int, help="local worker processes (default: all cores)")
    p.add_argument("--repeat", type=int, default=3, help="measured sweeps (default 3)")
    p.add_argument("--no-fsync", action="store_true", help="do not flush to disk (not power-loss safe)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tcplab.devtools.overhead", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = p.parse_args(argv)
    res = run_benchmark(a.runs, a.duration, a.workers, max(1, a.repeat), not a.no_fsync, a.rate)
    if a.json:
        print(json.dumps(res, indent=2))
    else:
        print_table(res)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
