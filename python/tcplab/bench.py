"""``tcplab bench``: a fixed suite of standard scenarios, timed.

Each scenario runs in a fresh child process that imports only the compiled
core, so the reported peak memory (``ru_maxrss`` of that child) is the run's
own: the interpreter, numpy and the simulation, not the CLI's pandas or
matplotlib. Figures printed per scenario:

- ``wall_s``: wall time of the core's run call (building the run included);
- ``packets_per_s``: data packets through the bottleneck per wall-second;
- ``events_per_s``: simulation events per wall-second;
- ``ns_per_packet_hop``: wall nanoseconds per packet per link traversed
  (data and ACKs, all links);
- ``peak_rss_mb``: peak resident memory of the child process.

``tcplab bench --campaign`` measures the campaign layer instead: a sweep of
200 tiny runs (about 1 ms each in the core) into a fresh campaign, printing
runs, wall time, core time, overhead % and overhead per run (see
:mod:`tcplab.sweep.overhead`; options ``--runs``, ``--duration``,
``--workers``, ``--repeat``, ``--no-fsync``).

Speed is measured here, never asserted in tests: a slow machine gives slower
figures, not failures. ``--quick`` shortens every scenario (to check that the
suite runs, e.g. in CI), so its figures are not comparable with full runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any

_CHILD = r"""
import json, resource, sys, time
from tcplab import _core
spec = sys.stdin.read()
t0 = time.perf_counter()
r = _core.run(spec)
wall = time.perf_counter() - t0
links = r["links"]
print(json.dumps({
    "wall_s": wall,
    "events": int(r["meta"]["events"]),
    "data_packets_out": [int(x) for x in links["data_packets_out"]],
    "packets_out_total": int(sum(int(x) for x in links["packets_out"])),
    "names": list(links["name"]),
    "goodput_bps": [float(x) for x in r["flows"]["goodput_bps"]],
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,  # KiB on Linux
}))
"""


def _scenarios(quick: bool) -> list[tuple[str, str, Any]]:
    from .scenario import Dumbbell

    dur = "20s" if quick else "2000s"
    win = "10s" if quick else "1000s"
    s1 = Dumbbell(n_flows=1, bottleneck_rate="200Mbps", rtt="100ms", buffer="0.1BDP", algorithm="newreno",
                  recovery="newreno", duration=dur, measure_window=win, sample_interval="10ms", seed=1)
    return [
        ("S1", "one NewReno flow, 200 Mbit/s, RTT 100 ms, B = 0.1 BDP, " + dur + ", traces every 10 ms", s1),
    ]


def _run_child(spec: dict) -> dict:
    proc = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(json.dumps(spec))
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed: {err.strip()}")
    return json.loads(out)


def run_suite(quick: bool = False) -> list[dict]:
    rows = []
    for name, desc, sc in _scenarios(quick):
        spec = sc.to_spec()
        res = _run_child(spec)
        bottleneck = sc.bottleneck_links()[0]
        pkts = res["data_packets_out"][res["names"].index(bottleneck)]
        wall = res["wall_s"]
        rows.append({
            "scenario": name,
            "description": desc,
            "simulated_s": spec["duration"],
            "wall_s": wall,
            "bottleneck_data_packets": pkts,
            "packets_per_s": pkts / wall,
            "events": res["events"],
            "events_per_s": res["events"] / wall,
            "ns_per_packet_hop": wall * 1e9 / max(1, res["packets_out_total"]),
            "peak_rss_mb": res["peak_rss_mb"],
            "quick": quick,
        })
    return rows


def run_campaign(runs: int = 200, duration: str = "5s", workers: int | None = None, repeat: int = 3,
                 fsync: bool = True) -> dict:
    """The campaign-layer benchmark: tcplab's own overhead on a sweep of tiny runs."""
    from .sweep.overhead import run_benchmark

    return run_benchmark(runs=runs, duration=duration, workers=workers, repeat=repeat, fsync=fsync)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tcplab bench", description="Time the standard scenarios.")
    p.add_argument("--json", action="store_true", help="print a JSON list of result objects")
    p.add_argument("--quick", action="store_true", help="shortened scenarios: checks the suite runs, not speed")
    p.add_argument("--campaign", action="store_true",
                   help="measure the campaign layer's overhead on a sweep of tiny runs instead")
    from .sweep.overhead import add_arguments

    add_arguments(p)
    args = p.parse_args(argv)
    if args.campaign:
        from .sweep.overhead import print_table

        res = run_campaign(args.runs, args.duration, args.workers, max(1, args.repeat), not args.no_fsync)
        if args.json:
            print(json.dumps(res, indent=2))
        else:
            print_table(res)
        return 0
    rows = run_suite(args.quick)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    hdr = f"{'scenario':8} {'sim s':>7} {'wall s':>8} {'pkts/s':>10} {'events/s':>10} {'ns/pkt-hop':>10} {'peak MB':>8}"
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        print(f"{r['scenario']:8} {r['simulated_s']:7g} {r['wall_s']:8.2f} {r['packets_per_s'] / 1e6:9.2f}M "
              f"{r['events_per_s'] / 1e6:9.2f}M {r['ns_per_packet_hop']:10.1f} {r['peak_rss_mb']:8.1f}")
    for r in rows:
        print(f"  {r['scenario']}: {r['description']}")
    if args.quick:
        print("(quick mode: shortened runs, figures not comparable with the full suite)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
