"""Paper reproductions as data.

A paper module declares one :class:`Paper`: its items (:class:`Item`: a
name, the jobs it needs, the builder of its tables and figures), the
function that makes its setup from ``quick`` and its options, and its own
options (:class:`Option`, which ``tcplab reproduce PAPER`` turns into flags
and lists in ``tcplab reproduce PAPER --help``). :meth:`Paper.reproduce` is
the one driver every paper runs through: it checks the items and options,
makes the setup, runs the items' jobs through the campaign
(:func:`tcplab.experiments.runner.run_all`), builds each item from the
runs' extracts, and adds the items to the output directory's index.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .common import check_items, write_index

#: The CLI's placeholder of an option's value, by kind.
_METAVAR = {"int": "N", "float": "X", "list": "A,B,...", "floats": "X,Y,..."}

#: How an option's CLI text becomes its value.
_PARSE: dict[str, Callable[[str], Any]] = {
    "int": int,
    "float": float,
    "str": str,
    "list": lambda text: [p.strip() for p in text.split(",") if p.strip()],
    "floats": lambda text: [float(p) for p in text.split(",") if p.strip()],
}


@dataclass(frozen=True)
class Option:
    """An option of one paper: ``name`` is its keyword in Python
    (``reproduce(..., configs=2)``) and, dashed, its CLI flag (``--configs 2``).
    ``kind``: how the flag's text is read (``int``, ``float``, ``str``,
    ``list``: comma-separated words, ``floats``: comma-separated numbers);
    ``choices``: the values the paper takes (the CLI refuses others; in
    Python the paper's setup checks them, with its reasons)."""

    name: str
    help: str
    kind: str = "str"
    choices: tuple[str, ...] = ()
    metavar: str | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def add_to(self, parser: Any) -> None:
        """Adds the flag to an argparse parser or group (absent unless given)."""
        kw: dict[str, Any] = {"dest": self.name, "default": argparse.SUPPRESS, "help": self.help.replace("%", "%%")}
        if self.choices:
            kw["choices"] = list(self.choices)
        else:
            kw["type"] = _PARSE[self.kind]
            kw["metavar"] = self.metavar or _METAVAR.get(self.kind, "VALUE")
        parser.add_argument(self.flag, **kw)

    def usage(self) -> str:
        """The flag and its values in one word, e.g. ``--setup {paper,linux}`` or ``--seeds N``."""
        if self.choices:
            return f"{self.flag} {{{','.join(self.choices)}}}"
        return f"{self.flag} {self.metavar or _METAVAR.get(self.kind, 'VALUE')}"


#: ``--seeds N`` of the papers whose multi-flow items run over seeds.
SEEDS_OPTION = Option("seeds", "seeds 1..N for every multi-flow item, each with its own access-delay jitter; tables "
                               "give the mean and 95 % confidence interval (default: the paper's choice per item, "
                               "docs/experiments/PAPER.md)", kind="int")
#: ``--setup`` of the papers that run the paper's simulator settings or today's.
SETUP_OPTION = Option("setup", "TCP setup of every flow (initial window, initial ssthresh, RTO, receiver): the "
                               "paper's simulator settings, ns-2's defaults where the paper is silent (paper, the "
                               "default), or today's (linux: initial window 10, the Linux RTO); index.md lists every "
                               "value with its source", choices=("paper", "linux"))


@dataclass(frozen=True)
class Item:
    """One table or figure (or a group of them) of a paper.

    ``build(setup, res, out)``: writes the item's files into ``out`` from
    ``res`` (``{job key: extract}`` of the runs) and returns ``(tables,
    files)`` or ``(tables, files, phase)`` (``phase``: its note on phase
    effects for index.md). ``jobs(setup, items)``: the runs it needs (jobs
    of :mod:`tcplab.experiments.runner`; ``items``: every item asked for,
    for items that share runs; a job whose key an earlier item gave is run
    once). ``label``: the name of its batch of runs when
    the paper runs each item's jobs apart (default: the item's name)."""

    name: str
    build: Callable[[Any, dict, str], tuple]
    jobs: Callable[[Any, Sequence[str]], list]
    label: str | None = None


@dataclass(frozen=True)
class Paper:
    """A paper reproduction (or a study beside the papers).

    ``key``: the name ``tcplab reproduce`` takes; ``summary``: one line for
    the help; ``title``, ``scenario`` (text, or a function of the setup) and
    ``quick_text`` (the QUICK MODE line): index.md's; ``setup(quick,
    **options)``: checks the options' values and makes the setup (an object
    with ``quick`` and ``describe()``, index.md's Settings); ``options``: the
    paper's own options; ``refused``: for options other papers take, why this
    one does not (added to the error); ``prepare(setup, out)``: run before the
    jobs (e.g. writing generated scenarios); ``batches``: ``"paper"`` runs
    every item's jobs as one batch, ``"item"`` one batch per item."""

    key: str
    summary: str
    title: str
    items: tuple[Item, ...]
    setup: Callable[..., Any]
    scenario: str | Callable[[Any], str]
    quick_text: str
    options: tuple[Option, ...] = ()
    refused: Mapping[str, str] = field(default_factory=dict)
    prepare: Callable[[Any, str], None] | None = None
    batches: str = "paper"

    @property
    def item_names(self) -> list[str]:
        return [it.name for it in self.items]

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)

    def check_options(self, options: Mapping[str, Any]) -> None:
        """An option the paper does not declare is an error naming it (and, when the paper says, why)."""
        for k in options:
            if self.option(k) is None:
                why = self.refused.get(k)
                raise ValueError(f"{k}: not an option of {self.key}" + (f"; {why}" if why else "")
                                 + f" (its options: {', '.join(o.name for o in self.options) or 'none'})")

    def reproduce(self, items: Sequence[str] | None = None, quick: bool = False, out: str | None = None,
                  workers: int | None = None, verbose: bool = True, **options: Any) -> dict:
        """Regenerate the paper's ``items`` (default: all) into ``out`` (default ``out/KEY``, with
        ``quick`` ``out/KEY-quick``); ``options``: the paper's own (:attr:`options`). Returns ``{item:
        {"tables": {...DataFrames}, "files": [...]}}``. The runs go to the campaign of the enclosing
        :func:`tcplab.experiments.runner.execution` (``tcplab.experiments.reproduce`` sets
        ``OUT/campaign/``), else to a temporary one."""
        items = check_items(self.key, items, self.item_names)
        self.check_options(options)
        setup = self.setup(quick, **options)
        out = out or os.path.join("out", self.key + ("-quick" if quick else ""))
        os.makedirs(out, exist_ok=True)
        t0 = time.perf_counter()
        if self.prepare is not None:
            self.prepare(setup, out)
        made, runs, packets = self._run_and_build(setup, items, out, workers, verbose)
        wall = time.perf_counter() - t0
        self.write_index(setup, out, items, made, wall, runs, packets)
        if verbose:
            print(f"{self.key}: {runs} runs, {packets / 1e9:.3f} G bottleneck packets, {wall:.1f} s wall; "
                  f"outputs in {out}/ (index.md)", file=sys.stderr)
        return made

    def _run_and_build(self, setup: Any, items: Sequence[str], out: str, workers: int | None,
                       verbose: bool) -> tuple[dict, int, int]:
        """Runs the items' jobs (one batch, or one per item) and builds each item in the paper's order;
        returns (made, runs, bottleneck data packets)."""
        from .runner import run_all

        wanted = [it for it in self.items if it.name in items]
        if self.batches == "item":
            batches = [([it], it.label or it.name) for it in wanted]
        else:
            batches = [(wanted, self.key + (" (quick)" if setup.quick else ""))]
        made: dict[str, dict] = {}
        runs = packets = 0
        for batch, label in batches:
            if verbose and self.batches == "item":
                print(f"{self.key} {label}", file=sys.stderr)
            jobs = _unique([job for it in batch for job in it.jobs(setup, items)])
            res = run_all(jobs, workers=workers, label=label, verbose=verbose)
            runs += len(jobs)
            packets += sum(r.get("bottleneck_packets", 0) for r in res.values())
            for it in batch:
                built = it.build(setup, res, out)
                made[it.name] = {"tables": built[0], "files": built[1]}
                if len(built) > 2 and built[2]:  # (tables, files, the item's note on phase effects)
                    made[it.name]["phase"] = built[2]
        return made, runs, packets

    def write_index(self, setup: Any, out: str, items: Sequence[str], made: dict, wall: float,
                    runs: int | None, packets: int | None) -> None:
        """Adds the ``items`` just made to ``out``'s index.md and index.json (:func:`common.write_index`)."""
        scenario = self.scenario(setup) if callable(self.scenario) else self.scenario
        write_index(out, self.title, self.quick_text if setup.quick else None, runs, packets, wall, scenario,
                    setup.describe(), list(items), made, order=self.item_names)

    # ---------------------------------------------------------------- the command line

    def add_arguments(self, parser: Any) -> None:
        """The paper's own options, as a group of ``parser`` (``tcplab reproduce PAPER --help`` shows them)."""
        group = parser.add_argument_group(f"options of {self.key}")
        for o in self.options:
            o.add_to(group)

    def options_line(self) -> str:
        """The paper's options in one line, for the list of every paper's in ``tcplab reproduce --help``."""
        return ", ".join(o.usage() for o in self.options) or "none"


def _unique(jobs: list) -> list:
    """The jobs, each key once (items that share runs give the same jobs; the first is kept)."""
    seen: set = set()
    out = []
    for j in jobs:
        if j[0] not in seen:
            seen.add(j[0])
            out.append(j)
    return out
