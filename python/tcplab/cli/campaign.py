"""``tcplab sweep`` and ``tcplab report``: campaigns (docs/campaigns.md)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .common import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, SET_HELP, _CliError, _warn_phase_lock_cli


def _add_campaign_commands(sub: Any) -> None:
    sw = sub.add_parser("sweep", help="run a parameter sweep into a campaign directory",
                        description="Run a sweep (TOML: base scenario, grid, zip, seeds; see docs/campaigns.md) into "
                                    "a campaign directory. Only runs not stored yet are run; an interrupted sweep "
                                    "resumes where it stopped.")
    sw.add_argument("sweep", nargs="?", help="sweep file (TOML; not needed with --reindex)")
    sw.add_argument("-o", "--out", dest="outdir", help="campaign directory (default: the file's `out`, else "
                                                       "out/<sweep file stem>)")
    sw.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                    help=SET_HELP + "; a sweep file's own keys (seeds, grid.buffer, ...) set the sweep, any other key "
                                    "its base scenario (e.g. --set seeds=5 --set dumbbell.access_delay=uniform)")
    sw.add_argument("--workers", type=int, help="local worker processes (default: the file's, else all cores)")
    sw.add_argument("--scheduler", help="run on a Dask cluster: the scheduler's address, e.g. tcp://host:8786")
    sw.add_argument("--store-on", choices=["worker", "client"], default="worker",
                    help="who writes results: the workers (default; they must see the campaign directory) "
                         "or this process (workers without a shared filesystem)")
    sw.add_argument("--retry-failed", action="store_true", help="run again the runs stored as failed")
    sw.add_argument("--wait", action="store_true",
                    help="if another sweep is running into the campaign, wait for it to finish and then run what "
                         "it leaves (default: refuse at once, naming it)")
    sw.add_argument("--verify", action="store_true",
                    help="check every stored run's checksums first; damaged runs are moved to quarantine/ and rerun")
    sw.add_argument("--reindex", metavar="CAMPAIGN",
                    help="rebuild CAMPAIGN's index from its stored segments (each checked byte for byte) and exit; "
                         "what to do when the index points at the wrong segment")
    sw.add_argument("--no-fsync", action="store_true",
                    help="do not flush results to disk (still atomic and checksummed, but not power-loss safe)")
    sw.add_argument("--dry-run", action="store_true", help="list what would run and exit")
    sw.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bar on stderr (default: when stderr is a terminal)")
    sw.add_argument("--json", action="store_true", help="print the outcome as JSON")
    rp = sub.add_parser("report", help="write a self-contained HTML report",
                        description="Write one self-contained HTML page (figures embedded) for a campaign "
                                    "directory, a `tcplab run` output directory or a reproduction output directory.")
    rp.add_argument("path", help="campaign, run output or reproduction output directory")
    rp.add_argument("-o", "--out", help="HTML file to write (default: PATH/report.html)")


def _campaign_warnings_one_line() -> None:
    import warnings

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        print(f"warning: {message}", file=sys.stderr)

    warnings.showwarning = show  # campaign warnings are for the user: one line each


def _cmd_campaign(args: argparse.Namespace) -> int:
    _campaign_warnings_one_line()
    if args.command == "report":
        return _cmd_report(args)
    return _cmd_sweep(args)


def _cmd_report(args: argparse.Namespace) -> int:
    from ..report import ReportError, write_report
    from ..sweep import CampaignError

    try:
        out = write_report(args.path, args.out)
    except (ReportError, CampaignError) as e:
        raise _CliError(str(e)) from None
    except OSError as e:
        raise _CliError(f"{e.filename or args.path}: {e.strerror or e}", EXIT_FAILURE) from None
    print(out)
    return EXIT_OK


@contextlib.contextmanager
def _environment_failures(path: str) -> Iterator[None]:
    """A full disk, a read-only directory and the like met while working on the campaign at ``path``: the
    store's one-line StorageError (a CampaignError), not a traceback."""
    import sqlite3

    from ..sweep.envfail import storage_error

    try:
        yield
    except (OSError, sqlite3.Error) as e:
        err = storage_error(e, path)
        if err is None:
            raise
        raise err from None


def _cmd_reindex(path: str) -> int:
    """``tcplab sweep --reindex CAMPAIGN``: the index rebuilt from the segments (the fix the store's
    "the index says run ... is here, it is not" message names)."""
    from ..sweep import Campaign, CampaignError

    try:
        with _environment_failures(path):
            with Campaign(path, create=False) as camp:
                camp.reindex()
                n = len(camp)
    except CampaignError as e:
        raise _CliError(str(e), EXIT_FAILURE) from None
    print(f"reindex: {n} run(s) indexed from the segments of {os.path.abspath(path)}", file=sys.stderr)
    return EXIT_OK


def _shadowed_overrides(sweep: Any, overrides: Sequence[str]) -> list[str]:
    """A note for each --set of the base scenario that a grid or zip parameter overrides at every point."""
    from ..overrides import split_sweep_overrides

    _, base = split_sweep_overrides(overrides)
    swept = {tuple(sweep._resolve_key(k)): k for k in sweep.parameters}
    notes = []
    for key, path, _ in base:  # (path within the base scenario)
        for sp, name in swept.items():
            if tuple(path[:len(sp)]) == sp or sp[:len(path)] == tuple(path):
                notes.append(f"note: --set {key}: the sweep's parameter {name!r} sets it at every point, which wins")
                break
    return notes


def _sweep_phase_lock(sweep: Any) -> None:
    """The phase-lock warning for the first point of the sweep that needs it (each point built with the
    first seed; the seeds themselves change nothing there, which the warning says)."""
    for p in sweep.points(seeds=sweep.seeds[:1]):
        sc = sweep.scenario(p)
        where = ", ".join(f"{k}={v!r}" for k, v in p.items() if k != "seed")
        if _warn_phase_lock_cli(sc, sc._first_spec(), f"point ({where}): " if where else "", "another seed"):
            if len(sweep.seeds) > 1:
                print(f"warning: the {len(sweep.seeds)} seeds of such a point give {len(sweep.seeds)} identical runs",
                      file=sys.stderr)
            return


def _cap_workers(workers: int | None, scheduler: str | None) -> int | None:
    """Local workers above the CPUs this process may use: capped to them, with a note. A run is one
    CPU-bound thread, so more processes than CPUs finish no sooner and each holds a run's memory; the
    cap to the runs to do is the sweep's own (Campaign.run)."""
    from ..sweep.execute import default_workers

    cpus = default_workers()
    if workers is None or scheduler or workers <= cpus:
        return workers
    print(f"workers: {workers} asked for, {cpus} used (the CPUs this process may use; a run uses one CPU, "
          "more processes would only share them)", file=sys.stderr)
    return cpus


def _cmd_sweep(args: argparse.Namespace) -> int:
    from ..sweep import load_sweep
    from ..sweep.envfail import StorageError


    if args.reindex is not None:
        return _cmd_reindex(args.reindex)
    path = args.sweep
    if path is None:
        raise _CliError("sweep: give a sweep file (TOML), or --reindex CAMPAIGN")
    if not os.path.isfile(path):
        raise _CliError(f"{path}: no such file" if not os.path.exists(path) else f"{path}: not a sweep file (TOML)")
    try:
        sweep, opts = load_sweep(path, overrides=args.overrides)
    except tomllib.TOMLDecodeError as e:
        raise _CliError(f"{path}: invalid TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise _CliError(f"{path}: not a text file ({e.reason})") from None
    for note in _shadowed_overrides(sweep, args.overrides):
        print(note, file=sys.stderr)
    if args.overrides:
        from ..overrides import seconds_warnings

        def first_point(ov: list[str]) -> Any:
            sw, _ = load_sweep(path, overrides=ov)
            return sw.scenario(next(sw.points())).to_spec()

        for w in seconds_warnings(args.overrides, first_point):
            print(w, file=sys.stderr)
    workers = args.workers if args.workers is not None else opts.get("workers")
    if workers is not None and workers < 1:
        raise _CliError(f"--workers: must be at least 1, got {workers}")
    scheduler = args.scheduler or opts.get("scheduler")
    outdir = args.outdir or opts.get("out") or os.path.join("out", os.path.splitext(os.path.basename(path))[0])
    sweep.validate()  # every point before anything runs (none is held: a sweep may have millions)
    _sweep_phase_lock(sweep)
    workers = _cap_workers(workers, scheduler)
    try:
        with _environment_failures(outdir):
            return _sweep_into(args, sweep, outdir, workers, scheduler)
    except StorageError as e:  # a full disk, a read-only directory, an unreachable scheduler: one line
        raise _CliError(str(e), EXIT_FAILURE) from None


def _sweep_into(args: argparse.Namespace, sweep: Any, outdir: str, workers: int | None,
                scheduler: str | None) -> int:
    from ..sweep import Campaign, CampaignError
    from ..sweep.envfail import StorageError

    try:
        camp = Campaign(outdir)
    except StorageError:
        raise
    except CampaignError as e:
        raise _CliError(str(e)) from None
    with camp:
        if args.verify or not args.dry_run:  # (one sweep at a time: a second refuses, or --wait waits)
            try:
                camp.lock(wait=args.wait)
            except CampaignError as e:
                raise _CliError(str(e), EXIT_FAILURE) from None
        if args.verify:
            problems = camp.verify(fix=True)
            for p in problems:
                print(f"verify: {p}", file=sys.stderr)
            where = " (read-only: nothing moved)" if camp.read_only else "; damaged segments moved to quarantine/"
            print(f"verify: {len(problems)} problem(s){where}" if problems else
                  "verify: every stored file matches its checksum", file=sys.stderr)
        if args.dry_run:  # (counted as the runs are planned, none held)
            total, todo = camp.count_plan(sweep.iter_jobs(), args.retry_failed)
            print(f"{sweep.describe()}; {todo} to run, {total - todo} stored, in {camp.path}")
            return EXIT_OK
        if not args.json:
            print(f"{sweep.describe()} -> {camp.path}" + (f" on Dask at {scheduler}" if scheduler else ""),
                  file=sys.stderr)
        try:
            rep = camp.run(sweep, workers=workers, scheduler=scheduler, progress=args.progress,
                           retry_failed=args.retry_failed, fsync=not args.no_fsync, store_on=args.store_on)
        except StorageError:
            raise
        except CampaignError as e:
            raise _CliError(str(e), EXIT_FAILURE) from None
        except KeyboardInterrupt:
            raise _CliError(f"interrupted: the runs stored so far are kept in {camp.path}; run the same command "
                            "again to finish the sweep", EXIT_INTERRUPTED) from None
    if workers and not scheduler and rep.ran and rep.workers < workers:
        print(f"workers: {rep.workers} of the {workers} asked for ran (one per run to do)", file=sys.stderr)
    if args.json:
        print(json.dumps({"campaign": camp.path, **rep.as_dict()}, indent=2))
    else:
        print(rep.summary())
        print(f"results in {camp.path}/ (tcplab report {camp.path})")
    return EXIT_FAILURE if rep.failures else EXIT_OK
