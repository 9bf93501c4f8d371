"""The ``tcplab`` command.

::

    tcplab run SCENARIO.toml [-o OUTDIR] [--json] [--seed N] [--duration T] [--set KEY=VALUE ...] [--[no-]progress] ...
    tcplab generate DESCRIPTION.toml [-o FROZEN.json]
    tcplab replay FROZEN.json --mix reno+cubic [-o OUTDIR] [--json]
    tcplab algorithms [--json]
    tcplab disciplines [--json]
    tcplab bench [--quick] [--json [PATH]] [--only S1,S3] [--scaling flows|rate|window|all] [--memory] [--campaign]
    tcplab sweep SWEEP.toml [-o CAMPAIGN] [--set KEY=VALUE ...] [--workers N | --scheduler ADDRESS] [--retry-failed] ...
    tcplab sweep --reindex CAMPAIGN
    tcplab report CAMPAIGN_OR_OUTPUT_DIR [-o REPORT.html]
    tcplab conformance bbr [--algorithm bbr|bbr3|both] [--out DIR] [--quick] [--cases a,b] [--impl ALG]
    tcplab validate SCENARIO.toml | --algorithm reno --rate 20Mbps --rtt 50ms [--buffer 1BDP] [--duration 60s]
                    [--flows N] [--out DIR]

Exit codes: 0 success; 2 for a problem with the input (scenario file missing,
TOML syntax, invalid scenario, what the core rejects as a run description),
reported as one line ``error: <field>: <problem>`` on stderr; 1 for a failure
of the simulation itself or of writing results; 3 when ``tcplab validate``
cannot run the kernel side here (no root, no network namespaces), said on
stderr as ``tcplab validate: cannot run the kernel side: <reason>``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# Re-exported from tcplab.cli as before the split: _campaign_warnings_one_line (experiments.command) and
# EXIT_UNAVAILABLE (tests).
from .campaign import _add_campaign_commands, _campaign_warnings_one_line, _cmd_campaign  # noqa: F401
from .common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_UNAVAILABLE,  # noqa: F401
    EXIT_USAGE,
    SET_HELP,
    _CliError,
    _core,
    _err,
    _warn_phase_lock_cli,
)
from .validate import _add_conformance_command, _add_validate_command, _cmd_conformance, _cmd_validate


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tcplab", description="Packet-level TCP congestion-control simulator.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser("run", help="run one scenario file",
                       description="Run one scenario (TOML) and write its results.")
    r.add_argument("scenario", help="scenario file (TOML)")
    r.add_argument("-o", "--out", dest="outdir", help="output directory: new, empty or an earlier run's output, "
                                                      "whose files are replaced (default: out/<scenario stem>)")
    r.add_argument("--json", action="store_true", help="print only the summary JSON to stdout (without -o, "
                                                       "nothing is written to disk)")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                   help=SET_HELP + " (e.g. --set dumbbell.buffer=0.5BDP --set run.duration=10s "
                                   "--set 'flows[1].algorithm=cubic')")
    r.add_argument("--seed", type=int, help="override the scenario's seed")
    r.add_argument("--duration", help="override the run duration (e.g. '100s')")
    r.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="simulated time done, wall time and time left on stderr (default: on a terminal, for runs "
                        "estimated to take more than a few seconds)")
    r.add_argument("--no-plot", action="store_true", help="do not write cwnd_queue.png")
    r.add_argument("--loss-trace", action="store_true",
                   help="record every drop, loss and retransmission with its cause (drop_trace.parquet, "
                        "retransmit_trace.parquet; the scenario's [run] loss_trace = true does the same)")
    r.add_argument("--pcap", action="append", metavar="LINK",
                   help="capture the packets on LINK (a link name, or 'bottleneck' for both directions of the "
                        "bottleneck) and write OUT/LINK.pcap for Wireshark/tshark; repeatable; the scenario's "
                        "[run] pcap = [...] does the same; with --json, needs -o (docs/pcap.md)")
    r.add_argument("--compare-analytic", action="store_true",
                   help="for a single Reno/NewReno flow on a dumbbell, print the analytic sawtooth "
                        "prediction (tcplab.analysis.reno_sawtooth_utilization) beside the simulation")

    g = sub.add_parser("generate", help="generate a scenario from a seed and freeze it (JSON)",
                       description="Generate a topology, flows and workload (TOML description, see "
                                   "docs/generate.md) and write the frozen scenario as JSON.")
    g.add_argument("spec", help="generation description (TOML)")
    g.add_argument("-o", "--out", help="frozen scenario file to write (JSON; default: out/<description stem>.json; "
                                      "a missing parent directory is made)")
    g.add_argument("--seed", type=int, help="override the description's seed")

    rr = sub.add_parser("replay", help="run a frozen scenario with a protocol mix",
                        description="Run a frozen scenario (from `tcplab generate`) with a protocol mix: "
                                    "'all-X', 'BASE+X' (group A BASE, group B X) or 'A=alg,B=alg'.")
    rr.add_argument("frozen", help="frozen scenario (JSON)")
    rr.add_argument("--mix", required=True, help="e.g. all-reno, reno+cubic, A=reno,B=htcp")
    rr.add_argument("-o", "--out", dest="outdir", help="output directory: new, empty or an earlier run's output "
                                                       "(default: out/<stem>-<mix>)")
    rr.add_argument("--seed", type=int, help="override the run seed (random link loss)")
    rr.add_argument("--json", action="store_true", help="print only the summary JSON to stdout (without -o, "
                                                        "nothing is written to disk)")
    rr.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="simulated time done, wall time and time left on stderr (default: on a terminal, for runs "
                         "estimated to take more than a few seconds)")

    a = sub.add_parser("algorithms", help="list congestion-control algorithms and their parameters")
    a.add_argument("--json", action="store_true", help="print the list as JSON")

    qd = sub.add_parser("disciplines", help="list queue disciplines (a link's queue) and their parameters")
    qd.add_argument("--json", action="store_true", help="print the list as JSON")

    b = sub.add_parser("bench", help="developer tooling: time the core; see `tcplab bench --help`",
                       add_help=False)
    from ..experiments.command import add_reproduce_command

    add_reproduce_command(sub)
    b.add_argument("--json", nargs="?", const="-", metavar="PATH", help="write results as JSON (no PATH: print them)")
    b.add_argument("--quick", action="store_true", help="a short benchmark")
    _add_campaign_commands(sub)
    _add_validate_command(sub)
    _add_conformance_command(sub)
    return p


def _fmt_num(v: Any, spec: str) -> str:
    try:
        if v is None or v != v:
            return "-"
        return format(v, spec)
    except (TypeError, ValueError):
        return str(v)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        # strict: every row has one cell per header, and right one flag per header.
        return "  ".join(c.rjust(w) if rj else c.ljust(w)
                         for c, w, rj in zip(cells, widths, right, strict=True)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _summary_text(res: Any) -> str:
    summ = res.summary()
    meta = summ["meta"]
    out = [f"scenario {summ['scenario']}: {_fmt_num(meta.get('sim_time'), 'g')} s simulated, "
           f"{_fmt_num(meta.get('events'), ',')} events, {_fmt_num(meta.get('wall_s'), '.2f')} s wall, "
           f"seed {meta.get('seed')}"]
    ms, dur = meta.get("measure_start"), meta.get("duration")
    window = f" over [{_fmt_num(ms, 'g')}, {_fmt_num(dur, 'g')}] s" if ms is not None and dur is not None else ""
    out.append("")
    out.append(f"flows (goodput{window})")
    rows = [[str(f["name"]), str(f["algorithm"]),
             _fmt_num(None if f["goodput_bps"] is None else f["goodput_bps"] / 1e6, ".3f"),
             _fmt_num(f["retransmits"], "d"), _fmt_num(f["timeouts"], "d")] for f in summ["flows"]]
    out.append(_table(["name", "algorithm", "goodput (Mbit/s)", "retransmits", "timeouts"], rows,
                      [False, False, True, True, True]))
    bottleneck = set(res.scenario.bottleneck_links()) if res.scenario is not None else set()
    if not bottleneck and summ["links"]:
        best = max(summ["links"], key=lambda link: link["utilization"] or 0.0)
        bottleneck = {best["name"]}
    links = [link for link in summ["links"]
             if link["name"] in bottleneck or (link["drops"] or 0) > 0 or (link["losses"] or 0) > 0]
    if links:
        out.append("")
        out.append("links (bottleneck and links with drops or losses; drops: the queue's, losses: random loss "
                   "on the wire)")
        if any(link.get("discipline", "droptail") != "droptail" or link.get("sojourn_mean") is not None
               for link in links):
            # Links with a queue discipline: its marks, AQM drops and sojourn times too.
            ms = lambda v: _fmt_num(None if v is None else v * 1e3, ".2f")  # noqa: E731
            rows = [[str(link["name"]), str(link.get("discipline", "droptail")),
                     _fmt_num(link["utilization"], ".4f"), _fmt_num(link["drops"], "d"),
                     _fmt_num(link.get("aqm_drops", 0), "d"), _fmt_num(link["losses"], "d"),
                     _fmt_num(link.get("marks", 0), "d"), ms(link.get("sojourn_mean")), ms(link.get("sojourn_p99"))]
                    for link in links]
            out.append(_table(["name", "discipline", "utilization", "drops", "aqm drops", "losses", "marks",
                               "sojourn mean (ms)", "sojourn p99 (ms)"], rows,
                              [False, False, True, True, True, True, True, True, True]))
        else:
            rows = [[str(link["name"]), _fmt_num(link["utilization"], ".4f"), _fmt_num(link["drops"], "d"),
                     _fmt_num(link["losses"], "d")] for link in links]
            out.append(_table(["name", "utilization", "drops", "losses"], rows, [False, True, True, True]))
    return "\n".join(out)


def _file_field(e: Any, sc: Any) -> Any:
    """Prefix a Scenario error's field with its table in the scenario file."""
    from ..scenario import RUN_KEYS

    head = e.field.split(".")[0].split("[")[0]
    if head in RUN_KEYS:
        return e.with_prefix("run")
    if sc.dumbbell is not None and e.field:
        return e.with_prefix("dumbbell")
    return e


def _core_error_in_file_terms(e: Any, sc: Any) -> str:
    """The core names the run description's fields (``links[0].rate_bps``); a dumbbell file has no
    links list, so its key leads (``dumbbell.bottleneck_rate (links[0].rate_bps): ...``)."""
    from ..scenario import RUN_KEYS

    field, problem = getattr(e, "field", None), getattr(e, "problem", None)
    if not field or problem is None:
        return str(e)
    if field.split(".")[0] in RUN_KEYS:
        return f"run.{field}: {problem}"
    key = sc.dumbbell.field_of(field) if sc.dumbbell is not None else field
    return f"dumbbell.{key} ({field}): {problem}" if key != field else str(e)


def _override_duration(sc: Any, duration: float, quiet: bool) -> None:
    """Set a new duration; a measurement window that no longer fits keeps its
    fraction of the run (noted on stderr)."""
    from ..errors import ScenarioError

    try:
        old = sc._run_settings()
    except ScenarioError as e:
        raise _CliError(str(_file_field(e, sc))) from None
    if not duration > 0:
        raise _CliError(f"--duration: must be positive, got {duration:g} s")
    frac_start = old["measure_start"] / old["duration"]
    sc.duration = duration
    try:
        sc._run_settings()
        return
    except ScenarioError:
        pass
    if sc.measure_window is not None:
        sc.measure_window = duration * (1.0 - frac_start)
    else:
        sc.measure_start = duration * frac_start
    if not quiet:
        print(f"note: the measurement window does not fit in {duration:g} s; measuring over "
              f"[{duration * frac_start:g}, {duration:g}] s (the same fraction of the run)", file=sys.stderr)


#: Events a second the core simulates on a 2020s x86 core (docs/performance.md: 20-40 M), for the
#: order of magnitude `tcplab run` says up front; the true figure depends on the machine and scenario.
EVENTS_PER_S = 25e6
#: Runs estimated longer than this (seconds at EVENTS_PER_S) say their cost before they start.
LONG_RUN_S = 60.0
#: Runs estimated longer than this show their progress when stderr is a terminal (`--progress` forces it).
PROGRESS_AFTER_S = 3.0


def _show_progress(asked: bool | None, cost: dict) -> bool:
    """--progress/--no-progress as given; by default on a terminal for runs estimated to take more than
    PROGRESS_AFTER_S (a short run's line would only flicker), and never when piped."""
    if asked is not None:
        return asked
    return sys.stderr.isatty() and cost["events"] / EVENTS_PER_S >= PROGRESS_AFTER_S


def _run_cost(core: Any, spec: dict) -> dict:
    """The core's up-front estimate of a run (``_core.estimate``): events, memory and an order of
    magnitude of the wall time, as one line; ``long`` when it is worth saying unasked (a run of
    minutes or more, or over a GiB), so that a million-flow run does not start silently."""
    from .._specjson import spec_to_json

    est = core.estimate(spec_to_json(spec, lambda field, problem: _CliError(f"{field}: {problem}")))
    wall = est["events"] / EVENTS_PER_S
    mem = est["memory_bytes"]
    mem_text = next(f"{mem / 2**e:.1f} {u}" for e, u in ((40, "TiB"), (30, "GiB"), (20, "MiB"), (0, "B"))
                    if mem >= 2**e or e == 0)
    if wall >= 3600:
        wall_text = f"{wall / 3600:.1f} h"
    elif wall >= 60:
        wall_text = f"{wall / 60:.0f} min"
    else:
        wall_text = f"{wall:.0f} s"
    text = (f"about {est['events']:.2g} events and {mem_text} of memory, roughly {wall_text} "
            f"at {EVENTS_PER_S / 1e6:.0f} M events/s (Ctrl-C stops it)")
    return {"text": text, "long": wall >= LONG_RUN_S or mem >= 2**30, **est}


def _cmd_run(args: argparse.Namespace) -> int:
    from ..errors import ScenarioError
    from ..scenario import load_scenario
    from ..units import parse_time

    path = args.scenario
    if not os.path.exists(path):
        raise _CliError(f"{path}: no such file")
    if os.path.isdir(path):
        raise _CliError(f"{path}: is a directory, expected a scenario file (TOML)")
    try:
        sc = load_scenario(path, overrides=args.overrides)
    except tomllib.TOMLDecodeError as e:
        raise _CliError(f"{path}: invalid TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise _CliError(f"{path}: not a text file ({e.reason})") from None
    if args.overrides:
        from ..overrides import seconds_warnings

        for w in seconds_warnings(args.overrides, lambda ov: load_scenario(path, overrides=ov).to_spec()):
            print(w, file=sys.stderr)
    if args.seed is not None:
        if args.seed < 0:
            raise _CliError(f"--seed: must be a non-negative integer, got {args.seed}")
        sc.seed = args.seed
    if args.duration is not None:
        try:
            d = parse_time(args.duration, "--duration")
        except ScenarioError as e:
            raise _CliError(str(e)) from None
        _override_duration(sc, d, quiet=args.json)
    if args.loss_trace:
        sc.loss_trace = True
    n_file_pcap = len(sc.pcap) if isinstance(sc.pcap, list) else 0
    if args.pcap:
        if args.json and args.outdir is None:  # (--json alone writes nothing: the capture would be lost)
            raise _CliError("--pcap: with --json, give -o OUT for the pcap files (--json alone writes nothing)")
        sc.pcap = [*(sc.pcap or []), *(p for p in args.pcap if p not in (sc.pcap or []))]
    try:
        spec = sc.to_spec()
    except ScenarioError as e:  # after --seed/--duration: name the field as the file does
        m = re.match(r"^pcap\[(\d+)\]$", e.field)
        if m and int(m.group(1)) >= n_file_pcap:  # one of --pcap's
            raise _CliError(f"--pcap: {e.problem}") from None
        raise _CliError(str(_file_field(e, sc))) from None
    # --json without -o is for scripts that read the summary: nothing is written to disk.
    outdir = None if args.json and args.outdir is None else (
        args.outdir or os.path.join("out", os.path.splitext(os.path.basename(path))[0]))
    if outdir is not None:
        _check_outdir(outdir)  # before the run, not after it

    core = _core()  # a clear error if the compiled core is missing
    import tcplab

    try:
        cost = _run_cost(core, spec)
        progress = _show_progress(args.progress, cost)
        if (progress or cost["long"]) and not cost["over_limit"] and not args.json:  # (else refused)
            print(f"running {sc.name} ({spec['duration']:g} s simulated): {cost['text']}", file=sys.stderr)
        res = tcplab.run(spec, progress=progress)
    except core.SpecError as e:
        raise _CliError(_core_error_in_file_terms(e, sc)) from None
    res.scenario = sc
    res.name = sc.name

    try:
        pcaps = _write_run(res, outdir, args, spec)
    except OSError as e:
        raise _CliError(f"{e.filename or outdir}: cannot write results: {e.strerror or e}", EXIT_FAILURE) from None
    overflow = res.packet_trace.attrs.get("overflow", 0)
    if overflow and not args.json:
        limit = spec.get("pcap_limit", core.DEFAULT_PCAP_LIMIT)
        print(f"note: the packet capture stopped at pcap_limit ({limit:,} packets); "
              f"{overflow:,} more were not recorded", file=sys.stderr)

    comparison = _analytic_comparison(sc, res) if args.compare_analytic else None
    if args.json:
        summ = res.summary()
        if comparison is not None:
            summ["analytic"] = comparison
        print(json.dumps(summ, indent=2))
    else:
        print(_summary_text(res))
        if sc.loss_trace:
            print()
            print(_accounting_text(res))
        if args.compare_analytic:
            print()
            print(_analytic_text(comparison))
        for p in pcaps:
            print(f"packet trace: {p} (tshark -r {p}, or open it in Wireshark)")
        print(f"\nresults written to {outdir}/")
    _warn_phase_lock_cli(sc, spec)
    return EXIT_OK



def _write_run(res: Any, outdir: str | None, args: argparse.Namespace, spec: dict) -> list[str]:
    """A run's tables, summary, figure and packet traces into ``outdir`` (None: nothing written,
    --json without -o); the pcap files written."""
    if outdir is None:
        return []
    res.save(outdir)
    png = os.path.join(outdir, "cwnd_queue.png")
    if not args.no_plot:
        if len(res.flow_ts) == 0 and not args.json:
            print("note: no time series (sample_interval = 0); cwnd_queue.png shows no cwnd", file=sys.stderr)
        from ..plot import plot_cwnd_queue

        plot_cwnd_queue(res, png)
    return res.write_pcaps(outdir) if spec.get("pcap") else []


def _accounting_text(res: Any) -> str:
    """Each flow's retransmissions sorted by what they repaired (the loss trace's accounting)."""
    acc = res.retransmission_accounting()
    names = dict(zip(res.flows["flow"], res.flows["name"], strict=True))
    lines = ["retransmissions (loss trace): flow, lost copies, repairs, needless after a timeout "
             "(timer / go-back-N), needless started by duplicate ACKs"]
    for _, a in acc.iterrows():
        lines.append(f"  {names[a['flow']]}: {a['lost_copies']} lost, {a['repairs']} repaired, "
                     f"{a['needless_rto']} / {a['needless_after_rto']} needless after a timeout, "
                     f"{a['needless_dupack']} needless by duplicate ACKs")
    return "\n".join(lines)


def _analytic_comparison(sc: Any, res: Any) -> dict | None:
    """The single-flow Reno sawtooth prediction for a one-flow Reno/NewReno
    dumbbell, beside the simulated bottleneck utilization; None where the
    model does not apply."""
    from ..analysis import reno_sawtooth_utilization
    db = sc.dumbbell
    if db is None or db.n_flows != 1:
        return None
    if str(res.flows["algorithm"].iloc[0]) != "newreno":
        return None
    buf = db.buffer_packets
    if buf is None:
        return None
    T = sc.path_rtt(0)
    predicted = reno_sawtooth_utilization(db.capacity_bps, T, buf, db.packet_bytes)
    link = res.links[res.links["name"] == sc.bottleneck_links()[0]].iloc[0]
    simulated = float(link["utilization"])
    return {
        "model": "reno_sawtooth_utilization",
        "path_rtt_s": T,
        "buffer_packets": buf,
        "predicted_utilization": predicted,
        "simulated_utilization": simulated,
        "relative_difference": (simulated - predicted) / predicted,
    }


def _analytic_text(c: dict | None) -> str:
    if c is None:
        return "analytic: no model applies (the sawtooth model covers one Reno/NewReno flow on a dumbbell)"
    return (f"analytic sawtooth (T = {c['path_rtt_s'] * 1e3:g} ms, B = {c['buffer_packets']:g} packets): "
            f"utilization {c['predicted_utilization']:.4f}; simulated {c['simulated_utilization']:.4f} "
            f"({100 * c['relative_difference']:+.2f} %)")


def _cmd_algorithms(args: argparse.Namespace) -> int:
    return _print_catalog(_core().algorithms(), args.json)


def _cmd_disciplines(args: argparse.Namespace) -> int:
    return _print_catalog(_core().disciplines(), args.json)


def _print_catalog(entries: list, as_json: bool) -> int:
    """A catalog of the core (algorithms, disciplines): name, aliases,
    description, source if any, and a table of the parameters."""
    if as_json:
        print(json.dumps(entries, indent=2, default=str))
        return EXIT_OK
    width = _text_width()

    def para(text: str, indent: str) -> None:
        print(textwrap.fill(text, width, initial_indent=indent, subsequent_indent=indent,
                            break_long_words=False, break_on_hyphens=False))

    for a in entries:
        aliases = f" (aliases: {', '.join(a.get('aliases', []))})" if a.get("aliases") else ""
        para(f"{a['name']}{aliases}", "")
        if a.get("description"):
            para(a["description"], "    ")
        if a.get("source"):
            para(f"source: {a['source']}", "    ")
        params = a.get("params", [])
        if params:
            print("    parameters:")
        for p in params:  # one block each: a table of them ran to 700 characters a line
            para(f"{p.get('name')} = {p.get('default')}", "      ")
            if p.get("description"):
                para(str(p["description"]), "          ")
            if p.get("source"):
                para(f"source: {p['source']}", "          ")
        print()
    return EXIT_OK


def _text_width() -> int:
    """Columns to wrap text to: the terminal's (at least 60), 100 when stdout is not a terminal."""
    if not sys.stdout.isatty():
        return 100
    return max(60, shutil.get_terminal_size((100, 24)).columns)


def _check_outdir(outdir: str) -> None:
    """A run's -o directory must be new, empty or an earlier run's output
    (tcplab.results.check_output_dir): never a user's files overwritten."""
    from ..results import check_output_dir

    try:
        check_output_dir(outdir)
    except FileExistsError as e:
        raise _CliError(f"{e.filename}: {e.strerror}") from None


def _load_toml(path: str) -> dict:
    if not os.path.isfile(path):
        raise _CliError(f"{path}: no such file")
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise _CliError(f"{path}: invalid TOML: {e}") from None


def _cmd_generate(args: argparse.Namespace) -> int:
    from ..errors import ScenarioError
    from ..generate import generate_from_dict

    doc = _load_toml(args.spec)
    if args.seed is not None:
        if args.seed < 0:
            raise _CliError(f"--seed: must be a non-negative integer, got {args.seed}")
        doc["seed"] = args.seed
    _core()
    try:
        fz = generate_from_dict(doc)
    except ScenarioError as e:
        raise _CliError(f"{args.spec}: {e}") from None
    out = args.out or os.path.join("out", os.path.splitext(os.path.basename(args.spec))[0] + ".json")
    try:
        parent = os.path.dirname(out)
        if parent and not os.path.isdir(parent):
            os.makedirs(parent, exist_ok=True)
        fz.save(out)
    except OSError as e:
        raise _CliError(f"{out}: cannot write: {e.strerror or e}", EXIT_FAILURE) from None
    n = len(fz.flows)
    files = sum(len(f["app"].get("files", [])) for f in fz.spec_base["flows"])
    print(f"{out}: {len(fz.topology['routers'])} routers, {len(fz.spec_base['links'])} links, {n} flows, "
          f"{files} files, groups {', '.join(fz.groups)}", file=sys.stderr)
    return EXIT_OK


def _cmd_replay(args: argparse.Namespace) -> int:
    from ..errors import ScenarioError
    from ..generate import load_frozen, parse_mix

    core = _core()
    import tcplab

    if not os.path.isfile(args.frozen):
        raise _CliError(f"{args.frozen}: no such file")
    try:
        fz = load_frozen(args.frozen)
        mix = parse_mix(args.mix, fz.groups)
        spec = fz.spec(mix, seed=args.seed)
    except ScenarioError as e:
        raise _CliError(str(e)) from None
    name = f"{os.path.splitext(os.path.basename(args.frozen))[0]}-{mix.name}"
    outdir = None if args.json and args.outdir is None else (args.outdir or os.path.join("out", name))
    if outdir is not None:  # (--json without -o writes nothing)
        _check_outdir(outdir)
    cost = _run_cost(core, spec)
    progress = _show_progress(args.progress, cost)
    if (progress or cost["long"]) and not cost["over_limit"] and not args.json:  # (else refused)
        print(f"replaying {name} ({spec['duration']:g} s simulated): {cost['text']}", file=sys.stderr)
    res = tcplab.run(spec, progress=progress)
    res.name = name
    try:
        if outdir is not None:
            res.save(outdir)
    except OSError as e:
        raise _CliError(f"{e.filename or outdir}: cannot write results: {e.strerror or e}", EXIT_FAILURE) from None
    from ..interactions import group_comparison

    groups = group_comparison(fz.flow_frame(), res.flows, res.files, fz.groups)
    summ = res.summary()
    if args.json:
        summ["groups"] = json.loads(groups.to_json(orient="records"))  # (NaN as null)
        print(json.dumps(summ))
    else:
        bb = res.links[res.links["name"].isin(fz.backbone)]
        print(f"{res.name}: {len(res.flows)} flows, backbone utilization {bb['utilization'].mean():.3f}, "
              f"{int(res.files['transfer_time'].notna().sum()) if len(res.files) else 0} files finished; "
              f"results in {outdir}/")
        print()
        print(_groups_text(groups, mix.name, summ["meta"]))
    return EXIT_OK


def _groups_text(groups: Any, mix: str, meta: dict) -> str:
    """replay's closing table: each protocol group (and traffic class) side by side."""
    ms, dur = meta.get("measure_start"), meta.get("duration")
    window = f", goodput over [{_fmt_num(ms, 'g')}, {_fmt_num(dur, 'g')}] s" if ms is not None and dur else ""
    rows = [[str(g["group"]), str(g["class"]), str(g["algorithm"]), str(g["flows"]),
             _fmt_num(g["goodput_mean_mbps"], ".3f"), _fmt_num(g["goodput_total_mbps"], ".2f"),
             _fmt_num(g["jain"], ".3f"), _fmt_num(g["loss_pct"], ".3f"), str(g["retransmits"]), str(g["timeouts"]),
             f"{g['files_done']}/{g['files']}"] for g in groups.to_dict("records")]
    return (f"groups of mix {mix}{window}\n"
            + _table(["group", "class", "algorithm", "flows", "mean (Mbit/s)", "total (Mbit/s)", "Jain", "loss %",
                      "retransmits", "timeouts", "files done"], rows,
                     [False, False, False, True, True, True, True, True, True, True, True]))


def _cmd_bench(argv: Sequence[str]) -> int:
    try:
        from ..devtools.bench import main as bench_main
    except ImportError as e:
        raise _CliError(f"tcplab.devtools.bench is not available ({e})", EXIT_FAILURE) from None
    rc = bench_main(list(argv))
    return int(rc or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tcplab`` command; returns the exit code. Ctrl-C, whatever the command does
    then, ends it within about a second with one line on stderr and exit code 130 (a run in the core
    polls for it: crates/tcplab-py/src/interrupt.rs)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # (while parsing or importing; a command's own is caught in _main)
        _err("interrupted")
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    # `bench` owns its flags (tcplab.devtools.bench.main parses them); every other
    # command must parse completely.
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "bench":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.version:
        import tcplab

        print(f"tcplab {tcplab.__version__}")
        return EXIT_OK
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE

    from ..errors import ScenarioError

    try:
        import tcplab

        spec_error = getattr(tcplab, "SpecError", None) or ()
        sim_error = getattr(tcplab, "SimulationError", None) or ()
    except Exception:  # pragma: no cover
        spec_error, sim_error = (), ()
    try:
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "algorithms":
            return _cmd_algorithms(args)
        if args.command == "disciplines":
            return _cmd_disciplines(args)
        if args.command == "reproduce":
            from ..experiments.command import cmd_reproduce

            return cmd_reproduce(args)
        if args.command == "generate":
            return _cmd_generate(args)
        if args.command == "replay":
            return _cmd_replay(args)
        if args.command == "bench":
            return _cmd_bench(argv[argv.index("bench") + 1:])
        if args.command in ("sweep", "report"):
            return _cmd_campaign(args)
        if args.command == "validate":
            return _cmd_validate(args)
        if args.command == "conformance":
            return _cmd_conformance(args)
        parser.error(f"unknown command {args.command}")  # pragma: no cover
    except _CliError as e:
        _err(str(e))
        return e.code
    except ScenarioError as e:
        _err(str(e))
        return EXIT_USAGE
    except spec_error as e:
        _err(str(e))
        return EXIT_USAGE
    except sim_error as e:
        _err(f"simulation failed: {e}")
        return EXIT_FAILURE
    except KeyboardInterrupt:
        _err("interrupted")
        return EXIT_INTERRUPTED
    return EXIT_OK
