"""How one benchmark scenario is measured: shared by ``tcplab bench`` and its modes.

A scenario is a row of the core's benchmark suite (``_core.bench_suite``,
``_core.bench_scaling``: ``tcplab_core::scenarios::bench``, compiled in with
the cargo feature ``bench``) or S5, which the Python generator builds
(:func:`s5_scenario`). :func:`measure` runs it in fresh child processes
(:data:`CHILD`: a script that imports only the compiled core, so the peak
memory is the run's own) and returns one result row (:data:`ROW_FIELDS`,
explained in :mod:`tcplab.devtools.bench`). :mod:`tcplab.devtools.profile`
runs the same child under ``perf``; :mod:`tcplab.devtools.ns3compare` measures
its tcplab side with :func:`measure`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

CHILD = r"""
import json, resource, sys, time
from tcplab import _core
def peak_mb():
    # VmHWM: this process's own peak. ru_maxrss is no good after fork+exec on
    # Linux: it keeps the parent's resident size at the fork as a floor.
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux
spec = sys.stdin.read()
warmup = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
t0 = time.perf_counter()
r = _core.bench_run(spec, warmup)
wall = time.perf_counter() - t0
links = r["links"]
warm = r.get("warmup")
print(json.dumps({
    "warmup_events": int(warm["events"]) if warm else 0,
    "warmup_packets_out_total": int(sum(int(x) for x in warm["packets_out"])) if warm else 0,
    "warmup_data_packets_out": [int(x) for x in warm["data_packets_out"]] if warm else [0] * len(links["name"]),
    "wall_s": wall,
    "core_wall_s": float(r["meta"]["wall_s"]),
    "events": int(r["meta"]["events"]),
    "data_packets_out": [int(x) for x in links["data_packets_out"]],
    "packets_out_total": int(sum(int(x) for x in links["packets_out"])),
    "utilization": [float(x) for x in links["utilization"]],
    "names": list(links["name"]),
    "trace_rows": int(len(r["flow_ts"]["time"]) + len(r["queue_ts"]["time"]) + len(r["cc_ts"]["time"])),
    "peak_rss_mb": peak_mb(),
}))
"""

#: Fields of every result row (see the module notes).
ROW_FIELDS = ("scenario", "description", "simulated_s", "wall_s", "core_wall_s", "bottleneck_data_packets",
              "packets_per_s", "events", "events_per_s", "packet_hops", "ns_per_packet_hop", "peak_rss_mb",
              "utilization", "runs", "warmup_s", "measured_packet_hops", "measured_events",
              "measured_bottleneck_data_packets", "core_ns_per_packet_hop")

AXES = ("flows", "rate", "window", "algorithm")


def bench_core_missing() -> str | None:
    """Why the compiled core cannot run the benchmark, or None if it can: its
    benchmark functions come with the cargo feature ``bench`` (on in the
    default build)."""
    from .. import _core

    if hasattr(_core, "bench_suite") and hasattr(_core, "bench_run"):
        return None
    return ("this tcplab extension was built without the cargo feature `bench` (cargo's --no-default-features), "
            "which holds the benchmark's scenarios; build it with the default features (scripts/setup.sh)")


def run_child(spec_json: str, warmup: float = 0.0) -> dict:
    proc = subprocess.Popen([sys.executable, "-c", CHILD, repr(float(warmup))], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(spec_json)
    except BaseException:  # Ctrl-C sent to this process alone: the child's run must not go on without it
        proc.kill()
        proc.wait()
        raise
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed: {err.strip()}")
    return json.loads(out)


def measure(sc: Mapping[str, Any], best_of: int = 1, min_core_s: float = 0.0) -> dict:
    """Runs scenario `sc` (a row of _core.bench_suite/bench_scaling) in child
    processes: `best_of` times, more (up to 5) while its event loop lasts
    less than `min_core_s`; reports the fastest run and the largest peak."""
    spec = json.loads(sc["spec_json"])
    warmup = float(sc.get("warmup") or 0.0)
    runs = []
    while True:
        runs.append(run_child(sc["spec_json"], warmup))
        if len(runs) >= max(1, best_of) and (runs[-1]["core_wall_s"] >= min_core_s or len(runs) >= 5):
            break
    res = min(runs, key=lambda r: r["wall_s"])
    names = sc["bottleneck"] if isinstance(sc["bottleneck"], list) else [sc["bottleneck"]]
    idx = [res["names"].index(n) for n in names]
    pkts = sum(res["data_packets_out"][i] for i in idx)
    wall = res["wall_s"]
    core = min(r["core_wall_s"] for r in runs)
    hops = max(1, res["packets_out_total"])
    # The event loop's figure covers the run after the warm-up (it is all
    # the same run: every child replays it exactly).
    measured_hops = res["packets_out_total"] - res["warmup_packets_out_total"]
    return {
        "scenario": sc["name"],
        "description": sc["description"],
        "simulated_s": spec["duration"],
        "warmup_s": warmup,
        "measured_packet_hops": measured_hops,
        "measured_events": res["events"] - res["warmup_events"],
        "measured_bottleneck_data_packets": pkts - sum(res["warmup_data_packets_out"][i] for i in idx),
        "wall_s": wall,
        "core_wall_s": core,
        "bottleneck_data_packets": pkts,
        "packets_per_s": pkts / wall,
        "events": res["events"],
        "events_per_s": res["events"] / wall,
        "packet_hops": res["packets_out_total"],
        "ns_per_packet_hop": wall * 1e9 / hops,
        "core_ns_per_packet_hop": core * 1e9 / max(1, measured_hops),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
        "utilization": sum(res["utilization"][i] for i in idx) / len(idx),
        "trace_rows": res["trace_rows"],
        "flows": len(spec["flows"]),
        "links": len(spec["links"]),
        "runs": len(runs),
        "axis_value": sc["axis_value"],
    }


def s5_scenario(quick: bool, seconds: float | None) -> dict:
    """S5 from the Python generator: the ssm-interactions parking lot,
    configuration 1, L = 40, all Reno; queues sampled every 0.1 s."""
    from ..generate import Mix, parking_lot_scenario

    dur = seconds if seconds is not None else (5.0 if quick else 600.0)
    fz = parking_lot_scenario(40, seed=1, duration=dur)
    spec = fz.spec(Mix.all("reno"), sample_interval=0.1)
    return {"name": "S5", "spec_json": json.dumps(spec), "skip": None, "bottleneck": fz.backbone,
            "axis_value": None,
            "description": f"ssm-interactions parking lot: 1 Gbit/s, 2 MB buffers, 100 short + 40 long flows, all "
                           f"Reno, {dur:g} s (packets counted over the 8 backbone links)"}


def with_duration(sc: Mapping[str, Any], seconds: float) -> dict:
    """Scenario row `sc` run for `seconds` simulated seconds, measured from
    the middle (as the scaling points), its description saying so."""
    spec = json.loads(sc["spec_json"])
    spec["duration"] = seconds
    spec["measure_start"] = seconds / 2
    # A duration given is run from the start: no warm-up (as cargo bench's --seconds).
    return dict(sc, spec_json=json.dumps(spec), warmup=0.0,
                description=re.sub(r", [0-9.e+]+ s( after a [0-9.e+]+ s warm-up)?$", f", {seconds:g} s",
                                   sc["description"]))
