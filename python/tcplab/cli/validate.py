"""``tcplab validate`` (the Linux kernel against tcplab, docs/validation.md) and
``tcplab conformance`` (BBR's conformance cases)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .common import EXIT_FAILURE, EXIT_OK, EXIT_UNAVAILABLE, _CliError, _core

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _add_conformance_command(sub: Any) -> None:
    c = sub.add_parser("conformance", help="run a conformance suite (bbr: draft-ietf-ccwg-bbr Appendix A and "
                                           "tcp_bbr.c checks); CSV + Markdown report",
                       description="Run the BBR conformance cases (tcplab.conformance; docs/conformance.md) in the "
                                   "simulator and write conformance.csv and report.md. Exit 0 when every case "
                                   "passes (skipped cases allowed), 1 when one fails, 2 for bad input.")
    c.add_argument("suite", help="the suite: bbr")
    c.add_argument("--algorithm", default="both", help="bbr (v1), bbr3 or both (default)")
    c.add_argument("-o", "--out", help="output directory (default: out/conformance-bbr[-quick])")
    c.add_argument("--quick", action="store_true", help="shortened runs; the report says so")
    c.add_argument("--cases", help="comma-separated case ids (default: all)")
    c.add_argument("--impl", help="run this core algorithm under the chosen version's expectations "
                                  "(e.g. cubic, to see the criteria fail)")


def _cmd_conformance(args: argparse.Namespace) -> int:
    from .. import conformance

    try:
        return conformance.main_cli(args)
    except ValueError as e:
        raise _CliError(str(e)) from None


def _add_validate_command(sub: Any) -> None:
    v = sub.add_parser("validate", help="run a dumbbell on the Linux kernel and in tcplab; write a fidelity report",
                       description="Run one to four flows over an emulated bottleneck on the real Linux kernel "
                                   "(needs root and network namespaces) and the same path in tcplab with its Linux "
                                   "profile; write fidelity.csv, overlay figures and report.html (docs/validation.md, "
                                   "'tcplab validate'). Give a scenario file with a [dumbbell] of 1 to 4 flows or "
                                   "the flags.")
    v.add_argument("scenario", nargs="?", help="scenario file (TOML) with a [dumbbell] of 1 to 4 flows of reno or "
                                               "cubic, or one of bbr")
    v.add_argument("--algorithm", help="reno, cubic or bbr (flag form)")
    v.add_argument("--rate", help="bottleneck rate, e.g. 20Mbps (flag form)")
    v.add_argument("--rtt", help="round-trip propagation delay, e.g. 50ms (flag form)")
    v.add_argument("--buffer", help="bottleneck buffer: packets or a BDP fraction, e.g. 1BDP (flag form; default 1BDP)")
    v.add_argument("--duration", help="run length, e.g. 60s (flag form; default 60s)")
    v.add_argument("--seed", type=int, help="tcplab's seed (flag form; default 0)")
    v.add_argument("--flows", help="number of flows sharing the bottleneck, 1 to 4 (flag form; default 1)")
    v.add_argument("-o", "--out", dest="outdir", help="output directory (default: out/validate-<name>)")


def _validate_case(args: argparse.Namespace) -> Any:
    """The validation asked for, from the scenario file or the flags (not both)."""
    from ..validate import fidelity

    flags = [f"--{n}" for n in ("algorithm", "rate", "rtt", "buffer", "duration", "seed", "flows")
             if getattr(args, n) is not None]
    if args.scenario is not None:
        if flags:
            raise _CliError(f"{flags[0]}: give either a scenario file or the flags, not both")
        path = args.scenario
        if not os.path.isfile(path):
            raise _CliError(f"{path}: no such file" if not os.path.exists(path) else f"{path}: not a scenario file")
        try:
            return fidelity.case_from_file(path)
        except tomllib.TOMLDecodeError as e:
            raise _CliError(f"{path}: invalid TOML: {e}") from None
        except UnicodeDecodeError as e:
            raise _CliError(f"{path}: not a text file ({e.reason})") from None
    if not flags:
        raise _CliError("validate: give a scenario file or --algorithm, --rate and --rtt")
    kw = {n: getattr(args, n) for n in ("buffer", "duration", "seed", "flows") if getattr(args, n) is not None}
    return fidelity.case_from_flags(args.algorithm, args.rate, args.rtt, **kw)


def _cmd_validate(args: argparse.Namespace) -> int:
    """`tcplab validate`: check the input, then the machine, then run both sides and report."""
    import subprocess

    from ..validate import fidelity

    case = _validate_case(args)  # bad input is reported even where the kernel side cannot run
    _core()
    # This tcplab must have the algorithm (bbr came later than reno and cubic): refuse before the kernel runs.
    fidelity.sim_scenario(case.algorithm, case.rate_bps, case.rtt_s, case.buffer_packets, case.duration_s,
                          seed=case.seed, cc_params=fidelity.kernel_cc_params(case.algorithm), n_flows=case.n_flows)
    reason: str | None
    try:
        from ..validate import kernel
    except ImportError as e:
        import importlib.util

        missing = importlib.util.find_spec("tcplab.validate.kernel") is None
        reason = ("tcplab.validate.kernel is missing from this installation" if missing
                  else f"tcplab.validate.kernel cannot be imported ({e})")
    else:
        reason = kernel.check_environment(case.algorithm)
    if reason:
        print(f"tcplab validate: cannot run the kernel side: {reason}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    outdir = args.outdir or os.path.join("out", f"validate-{case.name}")
    desc = case.describe()
    print(f"validate {desc}: kernel side ...", file=sys.stderr)
    try:
        kdir = kernel.run_kernel(case.algorithm, case.rate_bps, case.rtt_s, case.buffer_packets, case.duration_s,
                                 os.path.join(outdir, "kernel"), n_flows=case.n_flows)
    except (OSError, RuntimeError, ValueError, subprocess.SubprocessError) as e:
        raise _CliError(f"tcplab validate: the kernel run failed: {e}", EXIT_FAILURE) from None
    print("tcplab side ...", file=sys.stderr)
    res = fidelity.simulate(case.algorithm, case.rate_bps, case.rtt_s, case.buffer_packets, case.duration_s,
                            seed=case.seed, cc_params=fidelity.kernel_cc_params(case.algorithm),
                            n_flows=case.n_flows)
    try:
        table = fidelity.write_report(outdir, kdir, res, desc)
    except fidelity.KernelDirError as e:
        raise _CliError(f"tcplab validate: the kernel run left an unusable directory: {e}", EXIT_FAILURE) from None
    except OSError as e:
        raise _CliError(f"{e.filename or outdir}: cannot write the report: {e.strerror or e}", EXIT_FAILURE) from None
    meta = fidelity.read_meta(kdir)
    for d in fidelity.disturbances(meta):
        print(f"warning: kernel run disturbed: {d}", file=sys.stderr)
    met, judged = fidelity.targets_summary(table)
    print(f"{desc}\n")
    print(fidelity.table_text(table))
    print(f"\n{met} of {judged} targets met; report in {os.path.join(outdir, 'report.html')}")
    return EXIT_OK
