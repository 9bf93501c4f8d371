#!/usr/bin/env python3
"""AReno's paper form against Reno across RTTs: the "What to expect" numbers
of docs/algorithms/areno.md.

Two modes, both on a single drop-tail bottleneck with SACK recovery, goodput
over the second half of the run:

* ``rtt`` (default): N flows with a round-trip propagation delay of 30 ms and
  N with 300 ms (bottleneck 20 ms plus 2.5 or 70 ms on each of the four
  access-link crossings), buffer 0.2 BDP at the mean RTT (165 ms), starts
  uniform in [0, 2) s drawn from the seed. Per configuration it prints the
  ratio of the 30 ms flows' mean goodput to the 300 ms flows' (the range
  over the seeds) and the 300 ms flows' mean goodput.
* ``reno``: one flow of each configuration against one NewReno flow, both
  at 110 ms (bottleneck 100 ms plus 2.5 ms per access crossing), buffer
  0.2 BDP of the bottleneck's 100 ms; it prints both flows' goodput.

Configurations: ``reno`` (NewReno), ``paper`` (``areno`` variant ``paper``,
its defaults), ``old-seed`` (the paper form with the defaults it had before
0.3.0: ``rtt_unit = rtt_min``, ``exponent = -1``, alpha = 10, beta = 0.1),
``areno`` (the 2006 form, the default variant)::

    python scripts/areno_rtt_fairness.py                      # 1 + 1 flows, 100 Mbit/s, 120 s, seeds 1-5
    python scripts/areno_rtt_fairness.py --flows 5 --seeds 1
    python scripts/areno_rtt_fairness.py --rate 1000 --flows 10 --duration 600 --seeds 1   # long
    python scripts/areno_rtt_fairness.py --mode reno --configs paper,areno,reno

Runs one simulation at a time; a 100 Mbit/s, 120 s run of two flows takes a
few seconds.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

import tcplab
from tcplab import Dumbbell

CONFIGS = {
    "reno": ("newreno", {}),
    "paper": ("areno", {"variant": "paper"}),
    "old-seed": ("areno", {"variant": "paper", "rtt_unit": "rtt_min", "exponent": -1, "alpha": 10, "beta": 0.1}),
    "areno": ("areno", {}),
}


def rtt_classes(config: str, flows: int, mbps: float, duration: float, seed: int) -> tuple[float, float]:
    """Mean goodput (bit/s) of the 30 ms flows and of the 300 ms flows."""
    algorithm, params = CONFIGS[config]
    n = 2 * flows
    buffer = max(1, round(0.2 * mbps * 1e6 * 0.165 / 12000))  # 0.2 BDP at the mean RTT, 165 ms
    sc = Dumbbell(
        n, f"{mbps}Mbps", "20ms", buffer,
        algorithm=algorithm, params=params, recovery="sack",
        duration=f"{duration}s", measure_start=f"{duration / 2}s",
        start=[float(s) for s in np.random.default_rng(seed).uniform(0.0, 2.0, size=n)],
        access_delay=["2.5ms"] * flows + ["70ms"] * flows,
        seed=seed, sample_interval="1s",
    )
    g = tcplab.run(sc).flows.goodput_bps.to_numpy()
    return float(g[:flows].mean()), float(g[flows:].mean())


def against_reno(config: str, mbps: float, duration: float, seed: int) -> tuple[float, float]:
    """Goodput (bit/s) of one `config` flow and one NewReno flow at 110 ms."""
    algorithm, params = CONFIGS[config]
    sc = Dumbbell(
        2, f"{mbps}Mbps", "100ms", "0.2BDP",
        algorithm=[algorithm, "newreno"], params=[params, {}], recovery="sack",
        duration=f"{duration}s", measure_start=f"{duration / 2}s",
        start=[float(s) for s in np.random.default_rng(seed).uniform(0.0, 2.0, size=2)],
        access_delay="2.5ms", seed=seed, sample_interval="1s",
    )
    g = tcplab.run(sc).flows.goodput_bps.to_numpy()
    return float(g[0]), float(g[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["rtt", "reno"], default="rtt")
    ap.add_argument("--configs", default=None, help="comma-separated, from: " + ", ".join(CONFIGS))
    ap.add_argument("--flows", type=int, default=1, help="rtt mode: flows per RTT class")
    ap.add_argument("--rate", type=float, default=100.0, help="bottleneck, Mbit/s")
    ap.add_argument("--duration", type=float, default=120.0, help="seconds; goodput over the second half")
    ap.add_argument("--seeds", default="1-5", help="e.g. 1-5 or 1,3")
    a = ap.parse_args(argv)
    # Each seed draws other start times, which is what varies the flows' phase.
    warnings.filterwarnings("ignore", category=tcplab.PhaseLockWarning)
    if "-" in a.seeds:
        lo, hi = (int(x) for x in a.seeds.split("-"))
        seeds = list(range(lo, hi + 1))
    else:
        seeds = [int(x) for x in a.seeds.split(",")]
    default = "reno,paper,old-seed" if a.mode == "rtt" else "paper,areno,reno"
    configs = (a.configs or default).split(",")
    for c in configs:
        if c not in CONFIGS:
            ap.error(f"--configs: unknown {c!r}, choose from {', '.join(CONFIGS)}")
    print(f"tcplab {tcplab.__version__}, mode {a.mode}, {a.rate:g} Mbit/s, {a.duration:g} s, seeds {seeds}")
    for c in configs:
        if a.mode == "rtt":
            runs = [rtt_classes(c, a.flows, a.rate, a.duration, s) for s in seeds]
            ratios = [short / long for short, long in runs]
            longs = [long / 1e6 for _, long in runs]
            print(f"{c:9s} {a.flows} + {a.flows}: 30/300 ms ratio {min(ratios):.2f}-{max(ratios):.2f}"
                  f" (per seed {', '.join(f'{r:.2f}' for r in ratios)}), 300 ms flows"
                  f" {min(longs):.1f}-{max(longs):.1f} Mbit/s each")
        else:
            runs = [against_reno(c, a.rate, a.duration, s) for s in seeds]
            mine = [x / 1e6 for x, _ in runs]
            reno = [y / 1e6 for _, y in runs]
            print(f"{c:9s} vs newreno at 110 ms: {c} {np.mean(mine):.1f} Mbit/s, newreno {np.mean(reno):.1f}"
                  f" (per seed {', '.join(f'{x:.1f}/{y:.1f}' for x, y in zip(mine, reno, strict=True))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
