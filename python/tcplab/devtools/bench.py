"""``tcplab bench``: a fixed suite of standard scenarios, timed.

The scenarios are defined once, in the Rust core
(``tcplab_core::scenarios::bench``), and ``cargo bench -p tcplab-core`` runs
the same ones without Python:

- S1: one NewReno flow, 200 Mbit/s, RTT 100 ms, B = 0.1 BDP, 2000 s, traces
  every 10 ms (a Table I cell of mv-highspeed);
- S2: one CUBIC flow (the Table I cell: 2005 variant, SACK), same network,
  B = BDP, traces every 10 ms;
- S3: 10 CUBIC flows (Linux, SACK), 1 Gbit/s, RTT 100 ms, B = 0.1 BDP,
  2000 s, traces every 10 ms;
- S4: 200 NewReno flows, 200 Mbit/s, RTT 100 ms, B = 0.1 BDP, 600 s
  (mv-buffers Fig. 8: starts in [0, 10) s, access delays in (0, 10 ms));
- S5: the ssm-interactions parking lot at full scale (1 Gbit/s, 2 MB
  buffers, 100 short-lived and 40 long-lived flows, 600 s, all Reno with
  SACK, configuration 1). Its generator is Python's (``tcplab.generate``), so
  this module builds it and ``cargo bench`` skips it; its packets/s count
  data packets over the 8 backbone links;
- S6: S3 with FQ-CoDel (RFC 8290, Linux defaults, limit 0.1 BDP) on the
  bottleneck: a queue discipline's cost per packet against S3's fast
  drop-tail FIFO (docs/queues.md).

``--scaling flows|rate|window|algorithm|all`` runs the scaling curves
instead (cost per packet against the number of flows, 1 to 10,000; the
bottleneck rate, 10 Mbit/s to 100 Gbit/s at fixed simulated time; the
window, 10 to 100,000 packets; the congestion control: every algorithm of
the catalog, and NewReno with the k-NN loss classifier, on S3's network),
and ``--memory`` measures peak memory against simulated time (S1 for 2000 s
and 20,000 s, with and without traces).

Each run executes in a fresh child process that imports only the compiled
core, so its peak memory (``VmHWM``: the interpreter, numpy and the run) is
its own. Figures per run:

- ``wall_s``: wall time of the core's run call (building the run and
  converting its results included); ``core_wall_s``: the event loop alone;
- ``packets_per_s``: data packets through the bottleneck per wall-second;
- ``events_per_s``: simulation events per wall-second;
- ``ns_per_packet_hop``: wall nanoseconds per packet per link traversed
  (data and ACKs, all links), the whole run's (``wall_s``);
- ``core_ns_per_packet_hop``: the event loop's, ``core_wall_s`` over
  ``measured_packet_hops`` (the packet-hops after the warm-up, if any);
  the scaling curves report this one, as their smallest points last
  milliseconds;
- ``warmup_s``: simulated seconds at the start left out of the event
  loop's figures (``core_wall_s``, ``core_ns_per_packet_hop`` and the
  ``measured_*`` counts); the other figures are the whole run's. The flows
  curve's points have 10 s: with thousands of flows the cost per
  packet-hop rises for about that long, as the windows grow to their
  sawtooth and the packets in flight outgrow the caches, and a short run
  from the start would report that cheap beginning as the cost of a long
  run (see docs/performance.md, "The flows curve after a warm-up");
- ``peak_rss_mb``: peak resident memory of the child process.

``--rounds N`` runs each scaling curve N times with its points interleaved
and prints, besides the ratio of each point's fastest run, the ratio within
each round: a ratio of a 20 ms run against an 18 s one moves with the
machine's load (memory-bound points most), and paired rounds show by how
much.

``--json PATH`` writes everything, with the machine and the commit, for
tracking over time (``--json`` alone prints it instead of the table).

``tcplab bench --campaign`` measures the campaign layer instead: a sweep of
200 tiny runs (about 1 ms each in the core) into a fresh campaign, printing
runs, wall time, core time, overhead % and overhead per run (see
:mod:`tcplab.devtools.overhead`; options ``--runs``, ``--duration``,
``--workers``, ``--repeat``, ``--no-fsync``).

``tcplab bench --ns3 [SCENARIO]`` times a one-flow dumbbell (S1, or a point
of the window or rate curve) in ns-3 (the ns-3 project's wheel, in the
interpreter given with ``--ns3-python``) and in tcplab on the same machine;
see :mod:`tcplab.devtools.ns3compare`.

``tcplab bench --compare BEFORE.json AFTER.json`` compares two reports of
``--json`` (see :mod:`tcplab.devtools.benchcompare`).

``tcplab bench --profile SCENARIO`` profiles one scenario (any of the
above, or a scaling point) under Linux ``perf`` and writes a flamegraph;
see :mod:`tcplab.devtools.profile`.

Speed is measured here, never asserted in tests: a slow machine gives slower
figures, not failures. ``--quick`` shortens every run (to check that the
suite runs, e.g. in CI), so its figures are not comparable with full runs.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

from .measure import AXES, bench_core_missing, measure, s5_scenario


def run_suite(quick: bool = False, only: list[str] | None = None, seconds: float | None = None,
              best_of: int = 1, log=None) -> tuple[list[dict], list[dict]]:
    """Runs the standard scenarios; returns (result rows, skipped placeholders)."""
    from .. import _core

    rows, skipped = [], []
    sc: Mapping[str, Any]  # a row of the core's bench suite, or S5 made in Python
    for sc in _core.bench_suite(quick, seconds):
        if only and sc["name"] not in only:
            continue
        if sc["spec_json"] is None and sc["name"] == "S5":
            sc = s5_scenario(quick, seconds)
        if sc["spec_json"] is None:
            skipped.append({"scenario": sc["name"], "description": sc["description"], "reason": sc["skip"]})
            if log:
                log(f"{sc['name']}: skipped: {sc['skip']}")
            continue
        if log:
            log(f"{sc['name']}: {sc['description']} ...")
        row = measure(sc, best_of)
        row["quick"] = quick
        rows.append(row)
    return rows, skipped


def run_scaling(axis: str, quick: bool = False, best_of: int = 1, log=None, rounds: int = 1) -> list[dict]:
    """Runs the points of one scaling curve; each row has `axis_value`.

    With `rounds` > 1 the whole curve is run that many times, one point
    after the other in each round (interleaved, so a machine that slows
    down for a while slows every point of a round, not all the runs of
    one point). Each row then reports its fastest run, as with one round,
    and `core_ns_per_packet_hop_rounds`, its figure in each round; use
    :func:`round_flatness` for the curve's ratio in each round."""
    from .. import _core

    if rounds < 1:
        raise ValueError(f"rounds: must be at least 1, got {rounds}")
    scs = list(_core.bench_scaling(axis, quick))
    per_point: list[list[dict]] = [[] for _ in scs]
    for k in range(rounds):
        for i, sc in enumerate(scs):
            if log:
                log((f"round {k + 1}/{rounds}: " if rounds > 1 else "") + f"{sc['name']}: {sc['description']} ...")
            # Tiny points are repeated (best of up to 5) so timer noise does not dominate.
            per_point[i].append(measure(sc, best_of, min_core_s=0.0 if quick else 0.5))
    rows = []
    for runs in per_point:
        row = dict(min(runs, key=lambda r: r["core_wall_s"]))
        row["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
        row["runs"] = sum(r["runs"] for r in runs)
        row["core_ns_per_packet_hop_rounds"] = [r["core_ns_per_packet_hop"] for r in runs]
        row["quick"] = quick
        rows.append(row)
    return rows


def flatness(rows: list[dict]) -> float:
    """Largest over smallest event-loop ns per packet-hop along a curve."""
    v = [r["core_ns_per_packet_hop"] for r in rows if r["measured_packet_hops"] > 0]
    return max(v) / min(v) if v else float("nan")


def round_flatness(rows: list[dict]) -> list[float]:
    """The curve's largest over smallest ns per packet-hop in each round of
    :func:`run_scaling` (its points measured minutes, not a whole curve,
    apart)."""
    per_round = [r["core_ns_per_packet_hop_rounds"] for r in rows if r["measured_packet_hops"] > 0]
    return [max(v) / min(v) for v in zip(*per_round, strict=True)]


def run_memory(quick: bool = False, log=None) -> list[dict]:
    """Peak memory against simulated time: S1 for T and 10 T (2000 s and
    20,000 s; 20 s and 200 s with --quick), with traces off and every 10 ms.
    Without traces the peak must not grow with T; with traces it grows by
    the sampled columns alone (`trace_bytes_per_row`, about 52 bytes per
    sample: 7 flow columns and 4 queue columns)."""
    from .. import _core

    base = 20.0 if quick else 2000.0
    rows = []
    for traces in (False, True):
        for t in (base, 10 * base):
            (s1,) = [s for s in _core.bench_suite(False, t) if s["name"] == "S1"]
            assert s1["spec_json"] is not None  # S1 is never skipped
            spec = json.loads(s1["spec_json"])
            if not traces:
                spec["sample_interval"] = 0.0
            sc = dict(s1, spec_json=json.dumps(spec),
                      name=f"S1 {t:g}s " + ("traces 10ms" if traces else "no traces"))
            if log:
                log(f"memory: {sc['name']} ...")
            row = measure(sc)
            row["traces"] = traces
            row["quick"] = quick
            rows.append(row)
    return rows


def memory_summary(rows: list[dict]) -> dict:
    """Peak RSS ratios long/short run, without and with traces."""
    out: dict[str, Any] = {}
    for traces in (False, True):
        a, b = [r for r in rows if r["traces"] == traces]
        key = "traces" if traces else "no_traces"
        out[f"{key}_peak_ratio"] = b["peak_rss_mb"] / a["peak_rss_mb"]
        if traces and b["trace_rows"] > a["trace_rows"]:
            out["trace_bytes_per_row"] = ((b["peak_rss_mb"] - a["peak_rss_mb"]) * 2**20
                                          / (b["trace_rows"] - a["trace_rows"]))
    return out


def run_campaign(runs: int = 200, duration: str = "5s", workers: int | None = None, repeat: int = 3,
                 fsync: bool = True) -> dict:
    """The campaign-layer benchmark: tcplab's own overhead on a sweep of tiny runs."""
    from .overhead import run_benchmark

    return run_benchmark(runs=runs, duration=duration, workers=workers, repeat=repeat, fsync=fsync)


def machine() -> dict:
    """Where the figures were taken: CPU model, cores, Python, platform."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}


def commit() -> str | None:
    """The git commit of the source tree tcplab runs from, if it is a checkout."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             timeout=10)
        if out.returncode == 0:
            dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=10).stdout.strip()
            return out.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return None


def _fmt(x: float, scale: float = 1.0, digits: int = 2) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x / scale:.{digits}f}"


def _print_rows(title: str, rows: list[dict], hop_key: str = "ns_per_packet_hop") -> None:
    print(title)
    w = max([16] + [len(r["scenario"]) for r in rows])
    hdr = (f"{'scenario':<{w}} {'sim s':>8} {'wall s':>8} {'core s':>8} {'pkts/s':>9} {'events/s':>9} "
           f"{'ns/pkt-hop':>10} {'peak MB':>8}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        warm = r.get("warmup_s") or 0.0
        sim = f"{warm:g}+{r['simulated_s'] - warm:g}" if warm else f"{r['simulated_s']:g}"
        print(f"{r['scenario']:<{w}} {sim:>8} {r['wall_s']:>8.2f} {r['core_wall_s']:>8.2f} "
              f"{_fmt(r['packets_per_s'], 1e6):>8}M {_fmt(r['events_per_s'], 1e6):>8}M "
              f"{_fmt(r[hop_key], 1, 1):>10} {r['peak_rss_mb']:>8.1f}")
    if any(r.get("warmup_s") for r in rows):
        print("  sim s W+M: a warm-up of W simulated seconds, then M measured: core s and the event loop's "
              "ns/pkt-hop cover the M seconds alone")


def _alone(p: argparse.ArgumentParser, args: argparse.Namespace, mode: str, why: str, also: tuple = ()) -> None:
    """Refuses `mode` (--compare, --profile, --ns3) combined with the suite's
    own options, or with the options named in `also`."""
    given = {"--scaling": args.scaling, "--memory": args.memory, "--all": args.all, "--only": args.only,
             "--campaign": args.campaign, "--rounds": args.rounds > 1, "--best-of": args.best_of > 1,
             "--ns3": args.ns3, "--profile": args.profile is not None, "--quick": args.quick,
             "--seconds": args.seconds is not None}
    base = ("--scaling", "--memory", "--all", "--only", "--campaign", "--rounds", "--best-of")
    clash = [o for o in base + also if o != mode and given[o]]
    if clash:
        p.error(f"{mode}: {why}; drop {', '.join(clash)}")


def _compare(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--compare BEFORE AFTER``: two reports side by side."""
    _alone(p, args, "--compare", "reads two reports and runs nothing",
           ("--ns3", "--profile", "--quick", "--seconds"))
    from .benchcompare import CompareError, compare, load, print_table

    try:
        res = compare(load(args.compare[0]), load(args.compare[1]))
        if args.json and args.json != "-":
            with open(args.json, "w") as f:
                json.dump(res, f, indent=2)
    except CompareError as e:
        print(f"tcplab bench: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"tcplab bench: error: --json: cannot write {args.json!r}: {e.strerror}", file=sys.stderr)
        return 2
    if args.json == "-":
        print(json.dumps(res, indent=2))
    else:
        print_table(res)
    return 0


def _profile(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--profile SCENARIO``: one scenario under perf."""
    _alone(p, args, "--profile", "profiles one scenario on its own", ("--ns3",))
    from .profile import ProfileError, check_writable, print_report, profile, write_all

    try:
        if args.json and args.json != "-":
            check_writable("--json", args.json)
        res = profile(args.profile, args.quick, args.seconds, args.perf,
                      499 if args.frequency is None else args.frequency, args.svg, args.folded,
                      None if args.json == "-" else (lambda m: print(m, file=sys.stderr, flush=True)))
        if args.json and args.json != "-":
            write_all([("--json", args.json, json.dumps(res, indent=2))])
    except ProfileError as e:
        print(f"tcplab bench: error: {e}", file=sys.stderr)
        return 2
    if args.json == "-":
        print(json.dumps(res, indent=2))
        return 0
    print_report(res)
    return 0


def _ns3(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--ns3 [SCENARIO]``: the same dumbbell in ns-3 and in tcplab."""
    _alone(p, args, "--ns3", "runs its comparison on its own", ("--quick",))
    if args.seconds is not None and not args.seconds > 0:
        p.error(f"--seconds: must be positive, got {args.seconds}")
    from .ns3compare import Ns3Unavailable, main_args

    try:
        return main_args(args.seconds, args.ns3_python, args.json == "-", None if args.json == "-" else args.json,
                         None if args.json == "-" else (lambda m: print(m, file=sys.stderr, flush=True)),
                         args.ns3_sack, args.ns3)
    except (Ns3Unavailable, ValueError) as e:
        print(f"tcplab bench: error: {e}", file=sys.stderr)
        return 2


def _print_report(report: dict, quick: bool) -> None:
    """The tables of a suite, curve or memory report."""
    m = report["machine"]
    print(f"tcplab bench: {m['cpu']} ({m['cores']} cores), commit {report['commit'] or 'unknown'}, "
          f"{report.get('build', 'unknown')} build"
          + ("  [QUICK: shortened runs, figures not comparable]" if quick else ""))
    if report["scenarios"] or report["skipped"]:
        _print_rows("\nstandard scenarios", report["scenarios"])
        for s in report["skipped"]:
            print(f"{s['scenario']:<16} skipped: {s['reason']}")
        for r in report["scenarios"]:
            print(f"  {r['scenario']}: {r['description']}")
    for axis, cur in report.get("scaling", {}).items():
        _print_rows(f"\nscaling: {axis} (ns/pkt-hop of the event loop)", cur["points"], "core_ns_per_packet_hop")
        print(f"  largest / smallest ns per packet-hop: {cur['flatness']:.2f}"
              + (" (fastest run of each point); in each round: "
                 + ", ".join(f"{x:.2f}" for x in cur["round_flatness"])
                 + f" (median {statistics.median(cur['round_flatness']):.2f})"
                 if len(cur["round_flatness"]) > 1 else ""))
    if "memory" in report:
        mem = report["memory"]
        _print_rows("\nmemory against simulated time", mem["runs"])
        print(f"  peak ratio 10x longer run: {mem['no_traces_peak_ratio']:.2f} without traces, "
              f"{mem['traces_peak_ratio']:.2f} with traces every 10 ms"
              + (f" ({mem['trace_bytes_per_row']:.0f} bytes per sampled row)" if "trace_bytes_per_row" in mem else ""))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="tcplab bench",
        description="Time the standard scenarios S1-S6 (defined in the core, shared with `cargo bench -p "
                    "tcplab-core`), the scaling curves (--scaling) and memory against simulated time (--memory). "
                    "Each run is a fresh child process; figures are printed, never asserted.",
        epilog="Examples: `tcplab bench` (S1-S6, about 2.5 minutes); `tcplab bench --only S1 --json s1.json`; "
               "`tcplab bench --scaling all`; `tcplab bench --memory`; `tcplab bench --quick --all` (CI: checks "
               "that everything runs, in seconds); `tcplab bench --compare a.json b.json`; "
               "`tcplab bench --profile flows=10000 --seconds 4`. See docs/performance.md.")
    p.add_argument("--json", nargs="?", const="-", metavar="PATH",
                   help="write all figures, with machine and commit, as JSON to PATH (no PATH: print it instead "
                        "of the tables)")
    p.add_argument("--quick", action="store_true",
                   help="shortened runs: checks the suite runs, not how fast (figures not comparable)")
    p.add_argument("--only", metavar="S1,S3", help="run only these standard scenarios (comma-separated)")
    p.add_argument("--seconds", type=float, metavar="T", help="simulated duration of every standard scenario")
    p.add_argument("--scaling", choices=AXES + ("all",),
                   help="run a scaling curve (flows 1-10,000; rate 10 Mbit/s-100 Gbit/s; window 10-100,000 "
                        "packets; algorithm: every congestion control, and the k-NN loss classifier) or all four, "
                        "instead of the standard scenarios unless --only is given")
    p.add_argument("--memory", action="store_true",
                   help="measure peak memory of S1 at 2000 s and 20,000 s, with and without traces "
                        "(instead of the standard scenarios unless --only is given)")
    p.add_argument("--all", action="store_true",
                   help="the standard scenarios, every scaling curve and the memory runs")
    p.add_argument("--best-of", type=int, default=1, metavar="N",
                   help="run each scenario N times and report the fastest (default 1)")
    p.add_argument("--rounds", type=int, default=1, metavar="N",
                   help="run each scaling curve N times, its points interleaved, and report the ratio of "
                        "each round besides that of the fastest runs (default 1)")
    p.add_argument("--campaign", action="store_true",
                   help="measure the campaign layer's overhead on a sweep of tiny runs instead")
    p.add_argument("--ns3", nargs="?", const="S1", metavar="SCENARIO",
                   help="time a one-flow dumbbell in ns-3 and in tcplab on this machine instead: S1 (default) "
                        "or a window/rate curve point such as window=10000 (--seconds T simulated, default 100 "
                        "for S1, 20 otherwise; ns-3 from the ns-3 project's wheel, `pip install ns3`)")
    p.add_argument("--ns3-python", metavar="PATH",
                   help="with --ns3: the Python interpreter that has ns-3 installed (default: this one)")
    p.add_argument("--ns3-sack", action="store_true",
                   help="with --ns3: SACK on the ns-3 side even if the flow has none (ns-3's default; tcplab's "
                        "S1 flow stays NewReno)")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"),
                   help="compare two `tcplab bench --json` reports instead: each scenario's and point's ns per "
                        "packet-hop and peak memory, before -> after, with the change")
    p.add_argument("--profile", metavar="SCENARIO",
                   help="profile one scenario (S1-S6 or a scaling point such as flows=10000, algorithm=vegas) "
                        "under Linux perf instead: a flamegraph (SVG) and the functions with the most samples "
                        "(--seconds T simulated; --quick)")
    p.add_argument("--svg", metavar="PATH", help="with --profile: where to write the flamegraph (default "
                                                 "profile-SCENARIO.svg)")
    p.add_argument("--folded", metavar="PATH", help="with --profile: also write the folded stacks (flamegraph.pl "
                                                    "and inferno read them)")
    p.add_argument("--perf", metavar="PATH", help="with --profile: the perf binary (default: perf on PATH)")
    p.add_argument("--frequency", type=int, default=None, metavar="HZ",
                   help="with --profile: samples per second (default 499)")
    from .overhead import add_arguments

    add_arguments(p.add_argument_group("options of --campaign"))  # type: ignore[arg-type]
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error(f"--rounds: must be at least 1, got {args.rounds}")
    for opt, val in (("--ns3-python", args.ns3_python), ("--ns3-sack", args.ns3_sack)):
        if val and not args.ns3:
            p.error(f"{opt}: applies to --ns3")
    if args.compare:
        return _compare(p, args)
    missing = None if args.campaign else bench_core_missing()
    if missing:
        print(f"tcplab bench: error: {missing}", file=sys.stderr)
        return 2
    for opt, val in (("--svg", args.svg), ("--folded", args.folded), ("--perf", args.perf),
                     ("--frequency", args.frequency is not None)):
        if val and args.profile is None:
            p.error(f"{opt}: applies to --profile")
    if args.profile is not None:
        return _profile(p, args)
    if args.ns3:
        return _ns3(p, args)
    if args.all:
        args.scaling = args.scaling or "all"
        args.memory = True
    if args.rounds > 1 and not args.scaling:
        p.error("--rounds: applies to the scaling curves; give --scaling or --all")
    to_stdout = args.json == "-"
    if args.campaign:
        from .overhead import print_table

        res = run_campaign(args.runs, args.duration, args.workers, max(1, args.repeat), not args.no_fsync)
        if to_stdout:
            print(json.dumps(res, indent=2))
        else:
            print_table(res)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(res, f, indent=2)
        return 0

    log = None if to_stdout else (lambda m: print(m, file=sys.stderr, flush=True))
    only = [s.strip() for s in args.only.split(",")] if args.only else None
    report: dict[str, Any] = {
        "tool": "tcplab bench",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit(),
        "machine": machine(),
        "quick": args.quick,
        "scenarios": [],
        "skipped": [],
    }
    try:
        from .. import _core

        report["core_version"] = _core.version()
        report["build"] = _core.build()
    except Exception:  # pragma: no cover
        pass
    if (not args.scaling and not args.memory) or only or args.all:
        report["scenarios"], report["skipped"] = run_suite(args.quick, only, args.seconds, args.best_of, log)
    if args.scaling:
        report["scaling"] = {}
        for axis in AXES if args.scaling == "all" else (args.scaling,):
            rows = run_scaling(axis, args.quick, args.best_of, log, args.rounds)
            report["scaling"][axis] = {"points": rows, "flatness": flatness(rows),
                                       "round_flatness": round_flatness(rows)}
    if args.memory:
        rows = run_memory(args.quick, log)
        report["memory"] = {"runs": rows, **memory_summary(rows)}

    if to_stdout:
        print(json.dumps(report, indent=2))
        return 0
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    _print_report(report, args.quick)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
