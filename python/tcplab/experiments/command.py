"""``tcplab reproduce PAPER [ITEM ...] [options] [the paper's options]``: the command line of the paper
reproductions.

Parsed in two steps: ``tcplab``'s parser takes PAPER and the options every
paper has (given before or after PAPER); the paper's own parser, made from
its :class:`~tcplab.experiments.paper.Paper` (``PAPER.options``), takes the
items and options after PAPER, so that each paper declares its options and
``tcplab reproduce PAPER --help`` lists them. An option another paper has is
refused with the options this one takes.
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import experiments


def add_reproduce_command(sub: Any) -> None:
    """The ``reproduce`` subcommand of ``tcplab``'s parser (``sub``: its subparsers)."""
    rp = sub.add_parser("reproduce", help="regenerate a paper's tables and figures",
                        usage="tcplab reproduce PAPER [ITEM ...] [--quick] [-o OUT] [options] [the paper's options]",
                        description="Regenerate the tables and figures of a paper of docs/papers/ "
                                    "(full length by default; --quick for a shortened check). Every run is stored "
                                    "in the campaign OUT/campaign/, so an interrupted reproduction, run again, "
                                    "resumes: only the runs not stored yet are run (docs/campaigns.md). Each paper "
                                    "has its own options (below); `tcplab reproduce PAPER --help` lists its items "
                                    "and explains them.")
    rp.add_argument("paper", nargs="?", help="paper key, e.g. mv-highspeed (`tcplab reproduce --list` lists them)")
    # the items and the rest are the paper's to parse (cmd_reproduce): its own options are declared by it
    rp.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    _reproduce_options(rp)
    rp.format_help = _with_papers_options(rp.format_help)  # (--help, and the CLI reference of the docs)


def _with_papers_options(format_help: Any) -> Any:
    """``format_help`` of the reproduce parser, its text followed by every paper's own options (the paper
    modules are imported only when the help is shown, not for every command)."""

    def full() -> str:
        return (format_help().rstrip() + "\n\neach paper's own options (`tcplab reproduce PAPER --help` explains "
                "them; a paper refuses the others):\n" + experiments.options_help() + "\n")

    return full


def _reproduce_options(parser: Any) -> None:
    """The options of ``tcplab reproduce`` every paper takes (before or after PAPER)."""
    parser.add_argument("--quick", action="store_true", help="shortened runs for checking; every output says so")
    parser.add_argument("-o", "--out", help="output directory (default: out/<paper>, with --quick "
                                            "out/<paper>-quick); its index.md lists every item made into it (items "
                                            "made earlier stay listed); its runs are stored in OUT/campaign/ "
                                            "(`tcplab report OUT` lists them)")
    parser.add_argument("--workers", type=int, help="worker processes (default: all local cores)")
    parser.add_argument("--list", action="store_true", help="list the paper's items (without PAPER: the papers) "
                                                            "and exit")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run on a Dask cluster (scheduler address, e.g. tcp://host:8786) instead of local cores")
    parser.add_argument("--store-on", choices=["client", "worker"],
                        help="with --scheduler, who writes the runs into OUT/campaign/: this process (default; the "
                             "workers need no shared filesystem) or the workers (they must see OUT)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="a progress bar on stderr: runs done of total, failures, time left (default: when "
                             "stderr is a terminal)")
    parser.add_argument("--fresh", action="store_true",
                        help="start over: delete the campaign OUT/campaign/ and run everything again (default: "
                             "reuse the runs stored there)")


def _paper_arguments(args: argparse.Namespace) -> tuple[Any, argparse.Namespace]:
    """The paper of ``tcplab reproduce PAPER ...`` and its arguments: the items and options after PAPER,
    parsed with the paper's own options (its ``PAPER.options``) beside the common ones."""
    from ..cli import _CliError

    paper = experiments.paper_of(args.paper)
    pp = argparse.ArgumentParser(
        prog=f"tcplab reproduce {paper.key}",
        description=f"{paper.key}: {paper.summary}. Items: {', '.join(paper.item_names)}. Every run is stored in "
                    "the campaign OUT/campaign/; run again, an interrupted reproduction resumes.")
    pp.add_argument("items", nargs="*", help=f"items to regenerate (default: all): {', '.join(paper.item_names)}")
    _reproduce_options(pp)
    paper.add_arguments(pp)
    declared = {o.flag for o in paper.options}
    for word in args.rest:
        flag = word.split("=", 1)[0]
        name = flag[2:].replace("-", "_")
        if flag.startswith("--") and flag not in declared and any(
                experiments.paper_of(k).option(name) for k in experiments.PAPERS):
            why = paper.refused.get(name)
            raise _CliError(f"{flag}: not an option of {paper.key}" + (f"; {why}" if why else "")
                            + f" (its options: {', '.join(o.flag for o in paper.options) or 'none'}; "
                              f"`tcplab reproduce {paper.key} --help`)")
    return paper, pp.parse_args(args.rest, namespace=args)


def cmd_reproduce(args: argparse.Namespace) -> int:
    """``tcplab reproduce``: runs the paper's items (or lists papers or items); returns the exit code. Bad
    input raises the CLI's error (exit 2), failed runs or a campaign problem too (exit 1)."""
    from ..cli import EXIT_FAILURE, EXIT_OK, _campaign_warnings_one_line, _CliError
    from ..sweep import CampaignError
    from .runner import RunsFailed

    try:
        if args.paper is None:
            if not args.list:
                raise _CliError(f"reproduce: give a paper, one of {', '.join(experiments.PAPERS)} "
                                "(`tcplab reproduce --help`)")
            for key in experiments.PAPERS:
                print(f"{key}: {experiments.paper_of(key).summary}")
            return EXIT_OK
        paper, args = _paper_arguments(args)
        if args.list:
            for it in paper.item_names:
                print(it)
            return EXIT_OK
        if args.workers is not None and args.workers < 1:
            raise _CliError(f"--workers: must be at least 1, got {args.workers}")
        kw: dict = {o.name: getattr(args, o.name) for o in paper.options if hasattr(args, o.name)}
        if args.store_on:
            kw["store_on"] = args.store_on
        _campaign_warnings_one_line()
        experiments.reproduce(paper.key, items=args.items or None, quick=args.quick, out=args.out,
                              workers=args.workers, scheduler=args.scheduler, resume=not args.fresh,
                              progress=args.progress, **kw)
    except (RunsFailed, CampaignError) as e:
        raise _CliError(str(e), EXIT_FAILURE) from None
    except ValueError as e:
        raise _CliError(str(e)) from None
    return EXIT_OK
